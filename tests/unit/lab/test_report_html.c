/* report.html: untrusted strings escaped, failures first with one column
 * per kernel, and the timeline's arrows, boxes, bands and duration bars
 * where the geometry of report_html.h puts them.  The results documents
 * are hand-written JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/report.h"
#include "report/report_html.h"
#include "unit.h"

static json_object *parse(const char *text)
{
	json_object *o = json_tokener_parse(text);

	ck_assert_msg(o != NULL, "test JSON does not parse");
	return o;
}

static int timeline_to(FILE *f, json_object *sc)
{
	html_timeline(f, sc);
	return 0;
}

/* What write makes of o, as a string (caller frees). */
static char *render(int (*write)(FILE *, json_object *), json_object *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(write(f, o), 0);
	fclose(f);
	return buf;
}

static char *page_of(json_object *doc)
{
	return render(qplab_html_write, doc);
}

static char *timeline_of(json_object *sc)
{
	return render(timeline_to, sc);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The numeric attribute name="..." of the element that starts at the
 * first occurrence of tag (within that element). */
static double attr(const char *svg, const char *tag, const char *name)
{
	const char *el = strstr(svg, tag), *end, *a;
	char key[32];

	ck_assert_msg(el != NULL, "no element %s", tag);
	end = strchr(el, '>');
	snprintf(key, sizeof(key), " %s=\"", name);
	a = strstr(el, key);
	ck_assert_msg(a && a < end, "%s has no %s", tag, name);
	return strtod(a + strlen(key), NULL);
}

static bool starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

static bool utf8_valid(const unsigned char *s)
{
	while (*s) {
		int n = *s < 0x80 ? 0 : (*s & 0xe0) == 0xc0 ? 1 : (*s & 0xf0) == 0xe0 ? 2 : (*s & 0xf8) == 0xf0 ? 3 : -1;

		if (n < 0)
			return false;
		s++;
		for (int i = 0; i < n; i++, s++)
			if ((*s & 0xc0) != 0x80)
				return false;
	}
	return true;
}

#define NEAR(got, want) ck_assert_msg((got) > (want)-0.06 && (got) < (want) + 0.06, "%s: %.2f, want %.2f", #got, (got), (want))

/* The documented geometry (report_html.h), for n lanes and a span. */
static double lane(int i, int n)
{
	return TL_LEFT + (TL_WIDTH - TL_LEFT - TL_GUTTER) * (i + 0.5) / n;
}

static double at(double ms, double span)
{
	double scale = TL_PLOT / span < TL_MAX_SCALE ? TL_PLOT / span : TL_MAX_SCALE;

	return TL_TOP + ms * scale;
}

static const char EVENTS[] =
	"{\"id\":\"basic/hs\",\"status\":\"pass\",\"hosts\":{\"a\":{},\"b\":{}},\"steps\":["
	"{\"index\":0,\"name\":\"c\",\"do\":\"connect\",\"line\":5,\"on\":[\"a\",\"b\"],"
	"\"started_ms\":0,\"ended_ms\":100,\"hosts\":{"
	"\"a\":{\"time_ms\":{\"step\":90,\"rtr\":3},\"events\":["
	"{\"what\":\"tcp_connect\",\"start_ms\":0,\"end_ms\":2,\"peer\":\"b\"},"
	"{\"what\":\"request\",\"start_ms\":2,\"end_ms\":60,\"peer\":\"b\"},"
	"{\"what\":\"reset\",\"start_ms\":60,\"end_ms\":61,\"peer\":null},"
	"{\"what\":\"init\",\"start_ms\":61,\"end_ms\":63,\"peer\":null},"
	"{\"what\":\"rtr\",\"start_ms\":63,\"end_ms\":66,\"peer\":null},"
	"{\"what\":\"rts\",\"start_ms\":66,\"end_ms\":67,\"peer\":null},"
	"{\"what\":\"ready_ack\",\"start_ms\":67,\"end_ms\":80,\"peer\":\"b\"}]},"
	"\"b\":{\"events\":["
	"{\"what\":\"reset\",\"start_ms\":10,\"end_ms\":11,\"peer\":null},"
	"{\"what\":\"init\",\"start_ms\":11,\"end_ms\":14,\"peer\":null},"
	"{\"what\":\"rtr\",\"start_ms\":14,\"end_ms\":30,\"peer\":null},"
	"{\"what\":\"rts\",\"start_ms\":30.5,\"end_ms\":31,\"peer\":null}]}}},"
	"{\"index\":1,\"name\":null,\"do\":\"link_down\",\"line\":6,\"on\":[\"b\"],"
	"\"started_ms\":100,\"ended_ms\":150,\"hosts\":{}},"
	"{\"index\":2,\"name\":\"s\",\"do\":\"snapshot\",\"started_ms\":150,\"ended_ms\":150,\"hosts\":{"
	"\"a\":{\"events\":[{\"what\":\"tcp_connect\",\"start_ms\":0,\"end_ms\":2,\"peer\":\"b\"}]}}}]}";

START_TEST(html_timeline_draws_events_at_their_times)
{
	json_object *sc = parse(EVENTS);
	char *svg = timeline_of(sc);
	double span = 150, xa = lane(0, 2), xb = lane(1, 2);

	/* Hand arithmetic for these numbers: 420-44-100 = 276 px of lanes,
	 * a at 44+69 = 113, b at 44+207 = 251; 360/150 > 2, so 2 px per ms. */
	NEAR(xa, 113.0);
	NEAR(at(60, span), 150.0);
	NEAR(attr(svg, "class=\"arrow out\" data-what=\"request\" data-host=\"a\" data-peer=\"b\"", "x1"), xa);
	NEAR(attr(svg, "class=\"arrow out\" data-what=\"request\" data-host=\"a\" data-peer=\"b\"", "y1"), at(2, span));
	NEAR(attr(svg, "class=\"arrow out\" data-what=\"request\" data-host=\"a\" data-peer=\"b\"", "x2"), xb);
	NEAR(attr(svg, "class=\"arrow out\" data-what=\"request\" data-host=\"a\" data-peer=\"b\"", "y2"), at(2, span));
	/* The reply comes back from b when the request ended. */
	NEAR(attr(svg, "class=\"arrow back\" data-what=\"request\" data-host=\"b\" data-peer=\"a\"", "x1"), xb);
	NEAR(attr(svg, "class=\"arrow back\" data-what=\"request\" data-host=\"b\" data-peer=\"a\"", "y1"), at(60, span));
	NEAR(attr(svg, "class=\"arrow back\" data-what=\"request\" data-host=\"b\" data-peer=\"a\"", "x2"), xa);
	/* The ready-ACK leaves a when it began and reaches b when it ended. */
	NEAR(attr(svg, "class=\"arrow one\" data-what=\"ready_ack\" data-host=\"a\" data-peer=\"b\"", "y1"), at(67, span));
	NEAR(attr(svg, "class=\"arrow one\" data-what=\"ready_ack\" data-host=\"a\" data-peer=\"b\"", "x2"), xb);
	NEAR(attr(svg, "class=\"arrow one\" data-what=\"ready_ack\" data-host=\"a\" data-peer=\"b\"", "y2"), at(80, span));
	/* Once, though the snapshot's report carries it again. */
	ck_assert_uint_eq(count(svg, "class=\"arrow out\" data-what=\"tcp_connect\""), 1);
	/* Transitions: boxes on their host's lane, as tall as they took. */
	NEAR(attr(svg, "class=\"box\" data-host=\"b\" data-what=\"rtr\"", "x"), xb - TL_BOX_W / 2);
	NEAR(attr(svg, "class=\"box\" data-host=\"b\" data-what=\"rtr\"", "y"), at(14, span));
	NEAR(attr(svg, "class=\"box\" data-host=\"b\" data-what=\"rtr\"", "height"), at(30, span) - at(14, span));
	NEAR(attr(svg, "class=\"box\" data-host=\"b\" data-what=\"rts\"", "y"), at(30.5, span)); /* a fraction */
	NEAR(attr(svg, "class=\"box\" data-host=\"a\" data-what=\"init\"", "x"), xa - TL_BOX_W / 2);
	NEAR(attr(svg, "class=\"box\" data-host=\"a\" data-what=\"init\"", "y"), at(61, span));
	ck_assert_uint_eq(count(svg, "class=\"box\""), 8);
	/* Steps as bands; the fault as a mark on b's lane when it began. */
	NEAR(attr(svg, "class=\"band\" data-step=\"0\"", "y"), at(0, span));
	NEAR(attr(svg, "class=\"band\" data-step=\"0\"", "height"), at(100, span) - at(0, span));
	NEAR(attr(svg, "class=\"band odd\" data-step=\"1\"", "y"), at(100, span));
	ck_assert_ptr_nonnull(strstr(svg, "class=\"fault\" data-host=\"b\" data-what=\"link_down\""));
	{
		char d[64];

		snprintf(d, sizeof(d), "d=\"M%.1f %.1fL", xb, at(100, span) - 5);
		ck_assert_msg(strstr(svg, d) != NULL, "no fault mark %s", d);
	}
	/* Events replace the duration bars; no "laid back to back" note. */
	ck_assert_ptr_null(strstr(svg, "class=\"dur\""));
	ck_assert_ptr_null(strstr(svg, "back to back"));
	free(svg);
	json_object_put(sc);
}
END_TEST

static const char DURATIONS[] =
	"{\"id\":\"basic/hs\",\"status\":\"pass\",\"hosts\":{\"a\":{},\"b\":{}},\"steps\":["
	"{\"index\":0,\"name\":\"c\",\"do\":\"connect\",\"started_ms\":0,\"ended_ms\":100,\"hosts\":{"
	"\"a\":{\"time_ms\":{\"step\":90,\"tcp_connect\":2,\"handshake\":50,\"reset\":1,\"init\":2,"
	"\"rtr\":3,\"rts\":1,\"ready_ack\":10,\"total\":70}},"
	"\"b\":{\"time_ms\":{\"step\":90,\"tcp_connect\":null,\"handshake\":null,\"reset\":null,"
	"\"init\":null,\"rtr\":null,\"rts\":null,\"ready_ack\":null}}}},"
	"{\"index\":1,\"do\":\"datapath\",\"started_ms\":100,\"ended_ms\":100,\"hosts\":{"
	"\"a\":{\"time_ms\":{\"step\":0,\"rtr\":3}}}}]}";

START_TEST(html_timeline_without_events_draws_durations_as_bars)
{
	json_object *sc = parse(DURATIONS);
	char *svg = timeline_of(sc);
	double span = 100, th = 9; /* 198 px for 7 bars: capped at 9 each */
	double left = lane(0, 2) - (TL_WIDTH - TL_LEFT - TL_GUTTER) / 4 + 3;

	NEAR(attr(svg, "class=\"band\" data-step=\"0\"", "height"), at(100, span) - at(0, span));
	/* rtr is a's fifth duration: below four bars of th. */
	NEAR(attr(svg, "class=\"dur\" data-host=\"a\" data-what=\"rtr\"", "y"), at(0, span) + 1 + 4 * th);
	NEAR(attr(svg, "class=\"dur\" data-host=\"a\" data-what=\"rtr\"", "x"), left);
	/* As long as 3 ms against the longest, handshake's 50 ms. */
	NEAR(attr(svg, "class=\"dur\" data-host=\"a\" data-what=\"rtr\"", "width"),
	     3.0 / 50.0 * ((TL_WIDTH - TL_LEFT - TL_GUTTER) / 2 - 6));
	ck_assert_ptr_nonnull(strstr(svg, ">rtr 3 ms</text>"));
	ck_assert_ptr_nonnull(strstr(svg, "a duration: when in the step is not recorded"));
	/* Seven, none in the datapath step that repeats the setup's times. */
	ck_assert_uint_eq(count(svg, "class=\"dur\" data-host=\"a\""), 7);
	ck_assert_uint_eq(count(svg, "class=\"dur\" data-host=\"b\""), 0);
	ck_assert_ptr_null(strstr(svg, "class=\"box\""));
	free(svg);
	json_object_put(sc);
}
END_TEST

/* Results from before started_ms: steps laid back to back from
 * time_ms.step, and the figure says so. */
START_TEST(html_timeline_old_results_lay_steps_back_to_back)
{
	json_object *sc = parse("{\"id\":\"x/y\",\"hosts\":{\"a\":{}},\"steps\":["
				"{\"do\":\"connect\",\"hosts\":{\"a\":{\"time_ms\":{\"step\":40}}}},"
				"{\"do\":\"datapath\",\"hosts\":{\"a\":{\"time_ms\":{\"step\":60}}}}]}");
	char *svg = timeline_of(sc);

	NEAR(attr(svg, "class=\"band odd\" data-step=\"1\"", "y"), at(40, 100));
	NEAR(attr(svg, "class=\"band odd\" data-step=\"1\"", "height"), at(100, 100) - at(40, 100));
	ck_assert_ptr_nonnull(strstr(svg, "steps laid back to back"));
	free(svg);
	json_object_put(sc);
}
END_TEST

static const char EVIL[] = "<script>alert('x')</script> \"q\" & \xff\xfe\xc0\xaf end\x01\0z";

/* Two kernels; mtu/b fails on the second; gid/c carries what a peer may
 * send: markup, quotes, ampersands, invalid UTF-8, a lone surrogate. */
static json_object *two_kernels(void)
{
	json_object *doc = parse(
		"{\"schema_version\":1,\"runs\":["
		"{\"kernel\":\"6.12.1\",\"backend\":\"shared\",\"summary\":{\"total\":3,\"pass\":3},\"scenarios\":["
		"{\"id\":\"basic/a\",\"status\":\"pass\",\"elapsed_ms\":1000,\"steps\":[],\"expectations\":[]},"
		"{\"id\":\"gid/c\",\"status\":\"pass\",\"steps\":[],\"expectations\":[]},"
		"{\"id\":\"mtu/b\",\"status\":\"pass\",\"steps\":[],\"expectations\":[]}]},"
		"{\"kernel\":\"7.2.0\",\"backend\":\"netns\",\"summary\":{\"total\":3,\"pass\":2,\"fail\":1},\"scenarios\":["
		"{\"id\":\"basic/a\",\"status\":\"pass\",\"steps\":[],\"expectations\":[]},"
		"{\"id\":\"gid/c\",\"status\":\"pass\",\"description\":\"lone \\ud800 surrogate\","
		"\"logs\":{\"a\":\"javascript:alert(1)\",\"b\":\"../../etc/passwd\"},"
		"\"pcaps\":[\"kernel-7/pcap/c a.pcap\",{\"path\":\"x\\\" onclick=\\\"y\",\"host\":\"b\"}],"
		"\"ablation\":\"<b>sensitive</b>\","
		"\"hosts\":{\"a\":{\"reply_msg_received\":null}},\"steps\":[],\"expectations\":[]},"
		"{\"id\":\"mtu/b\",\"status\":\"fail\",\"steps\":[],\"expectations\":["
		"{\"line\":9,\"label\":\"a label\",\"step\":null,\"ok\":false,\"hosts\":[{\"host\":\"a\",\"ok\":false,"
		"\"checks\":[{\"what\":\"qp_count\",\"expected\":\"3\",\"observed\":\"2\",\"ok\":false}]}]}]}]}]}");
	json_object *runs, *sc, *hosts, *a;

	/* Bytes JSON text cannot hold as such: made directly. */
	json_object_object_get_ex(doc, "runs", &runs);
	json_object_object_get_ex(json_object_array_get_idx(runs, 1), "scenarios", &sc);
	json_object_object_get_ex(json_object_array_get_idx(sc, 1), "hosts", &hosts);
	json_object_object_get_ex(hosts, "a", &a);
	json_object_object_add(a, "reply_msg_received", json_object_new_string_len(EVIL, sizeof(EVIL) - 1));
	return doc;
}

START_TEST(html_page_escapes_every_string_from_the_results)
{
	json_object *doc = two_kernels();
	char *page = page_of(doc);

	ck_assert_ptr_null(strstr(page, "<script>alert"));
	ck_assert_ptr_nonnull(strstr(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &quot;q&quot; &amp; "
					   "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end\xef\xbf\xbd\xef\xbf\xbdz"));
	ck_assert_ptr_nonnull(strstr(page, "&lt;b&gt;sensitive&lt;/b&gt;"));
	ck_assert_msg(utf8_valid((const unsigned char *)page), "the page is not valid UTF-8");
	/* Links: relative only, nothing that breaks out of the attribute. */
	ck_assert_ptr_null(strstr(page, "href=\"javascript:"));
	ck_assert_ptr_nonnull(strstr(page, "href=\"javascript%3Aalert%281%29\""));
	ck_assert_ptr_nonnull(strstr(page, "href=\"#\" title=\"../../etc/passwd\""));
	ck_assert_ptr_nonnull(strstr(page, "href=\"kernel-7/pcap/c%20a.pcap\""));
	ck_assert_ptr_nonnull(strstr(page, "href=\"x%22%20onclick%3D%22y\""));
	ck_assert_ptr_null(strstr(page, "\" onclick="));
	/* Self-contained: our one script, nothing loaded from anywhere. */
	ck_assert_uint_eq(count(page, "<script"), 1);
	ck_assert_ptr_null(strstr(page, "src=\""));
	ck_assert_ptr_null(strstr(page, "url("));
	ck_assert_ptr_null(strstr(page, "http:"));
	ck_assert_ptr_null(strstr(page, "https:"));
	ck_assert_ptr_nonnull(strstr(page, "Content-Security-Policy\" content=\"default-src 'none'"));
	free(page);
	json_object_put(doc);
}
END_TEST

START_TEST(html_page_lists_failures_first_one_row_per_scenario)
{
	json_object *doc = two_kernels();
	char *page = page_of(doc);
	const char *first = strstr(page, "<details class=\"sc"), *second;

	ck_assert_uint_eq(count(page, "<details class=\"sc"), 3);
	ck_assert_ptr_nonnull(first);
	ck_assert_msg(starts(first, "<details class=\"sc bad\" id=\"sc-0\" data-id=\"mtu/b\" data-topic=\"mtu\" "
				    "data-verdicts=\"pass fail\" open>"), "first row: %.120s", first);
	second = strstr(first + 1, "<details class=\"sc");
	ck_assert_msg(starts(second, "<details class=\"sc\" id=\"sc-1\" data-id=\"basic/a\""), "%.80s", second);
	/* One verdict column per kernel, in run order. */
	ck_assert_ptr_nonnull(strstr(first, "<span class=\"k\"><span class=\"v pass\">pass</span></span>"
					    "<span class=\"k\"><span class=\"v fail\">fail</span></span>"));
	ck_assert_ptr_nonnull(strstr(page, "<p class=\"failed\">Failed: <a href=\"#sc-0\">mtu/b</a></p>"));
	/* Expected against observed, per host. */
	ck_assert_ptr_nonnull(strstr(first, "<td>qp_count</td><td>3</td><td>2</td>"));
	ck_assert_ptr_nonnull(strstr(page, "3 scenarios on 2 kernels"));
	ck_assert_ptr_nonnull(strstr(page, "data-topic=\"gid\""));
	free(page);
	json_object_put(doc);
}
END_TEST

START_TEST(html_href_keeps_links_relative)
{
	static const char *const cases[][2] = {
		{"logs/agent-a.log", "logs/agent-a.log"},
		{"kernel-7/logs/job-1/agent-a.log", "kernel-7/logs/job-1/agent-a.log"},
		{"/etc/passwd", "#"},
		{"..", "#"},
		{"a/../../b", "#"},
		{"data:text/html,<x>", "data%3Atext/html%2C%3Cx%3E"},
		{"", "#"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		html_href(f, cases[i][0]);
		fclose(f);
		ck_assert_str_eq(buf, cases[i][1]);
		free(buf);
	}
}
END_TEST

static int run_report(const char *args, char *out, size_t outlen)
{
	const char *dir = getenv("QPLAB_BUILD");
	char cmd[1024];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "%s/qplab report %s 2>&1", dir && *dir ? dir : "build", args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, outlen - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

START_TEST(html_report_command_writes_the_page_of_a_results_file)
{
	char dir[128], path[256], args[600], out[2048];
	json_object *doc = two_kernels();
	struct stat st;

	snprintf(dir, sizeof(dir), "/tmp/qplab-unit-html-%d", (int)getpid());
	ck_assert_int_eq(qplab_report_mkdir(dir), 0);
	snprintf(path, sizeof(path), "%s/results.json", dir);
	ck_assert_int_eq(qplab_results_save(path, doc), 0);
	snprintf(args, sizeof(args), "%s", path);
	ck_assert_int_eq(run_report(args, out, sizeof(out)), 0);
	snprintf(path, sizeof(path), "%s/report.html", dir);
	ck_assert_msg(strstr(out, path) != NULL, "says %s", out);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_gt(st.st_size, 2000);
	unlink(path);
	snprintf(args, sizeof(args), "%s/results.json --out %s/other.html", dir, dir);
	ck_assert_int_eq(run_report(args, out, sizeof(out)), 0);
	snprintf(path, sizeof(path), "%s/other.html", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/results.json", dir);
	unlink(path);
	/* Not there, not a results file, usage errors. */
	ck_assert_int_eq(run_report(path, out, sizeof(out)), 1);
	ck_assert_ptr_nonnull(strstr(out, "cannot read"));
	ck_assert_int_eq(run_report("/proc/self/status", out, sizeof(out)), 1);
	ck_assert_int_eq(run_report("", out, sizeof(out)), 2);
	ck_assert_int_eq(run_report("--bogus x.json", out, sizeof(out)), 2);
	ck_assert_int_eq(run_report("a.json b.json", out, sizeof(out)), 2);
	ck_assert_int_eq(run_report("x.json --out", out, sizeof(out)), 2);
	ck_assert_int_eq(run_report("--help", out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "usage: qplab report"));
	rmdir(dir);
	json_object_put(doc);
}
END_TEST

Suite *suite_report_html(void)
{
	Suite *s = suite_create("report_html");
	TCase *tc = unit_tcase(s, "timeline", 20);

	tcase_add_test(tc, html_timeline_draws_events_at_their_times);
	tcase_add_test(tc, html_timeline_without_events_draws_durations_as_bars);
	tcase_add_test(tc, html_timeline_old_results_lay_steps_back_to_back);
	tc = unit_tcase(s, "page", 20);
	tcase_add_test(tc, html_page_escapes_every_string_from_the_results);
	tcase_add_test(tc, html_page_lists_failures_first_one_row_per_scenario);
	tcase_add_test(tc, html_href_keeps_links_relative);
	tcase_add_test(tc, html_report_command_writes_the_page_of_a_results_file);
	return s;
}
