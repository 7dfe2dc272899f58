/* One scenario's row of report.html: its verdict per run (kernel) on one
 * line, and below it, per run, what was expected against what each host
 * showed, the ablation verdict, the timeline, the logs and captures. */
#include <string.h>

#include "cli/jread.h"
#include "report.h"
#include "report_html.h"

static const char *status_of(json_object *sc)
{
	const char *s = jstr(sc, "status");

	for (int i = 0; i < 4; i++)
		if (s && !strcmp(s, qplab_status_name((enum qplab_status)i)))
			return s;
	return "error";
}

static bool is_bad(json_object *sc)
{
	return sc && (!strcmp(status_of(sc), "fail") || !strcmp(status_of(sc), "error"));
}

static void check_rows(FILE *f, json_object *hv)
{
	json_object *checks = jarr(hv, "checks");
	size_t n = checks ? json_object_array_length(checks) : 0;

	for (size_t c = 0; c < n; c++) {
		json_object *k = json_object_array_get_idx(checks, c), *ok;
		bool good = json_object_object_get_ex(k, "ok", &ok) && json_object_get_boolean(ok);

		fprintf(f, "<tr class=\"%s\">", good ? "ok" : "bad");
		if (c == 0) {
			fprintf(f, "<td rowspan=\"%zu\" class=\"host\">", n);
			html_str(f, jstr(hv, "host"));
			if (jstr(hv, "key")) {
				fputs("<br><span class=\"key\">when ", f);
				html_str(f, jstr(hv, "key"));
				fputs("</span>", f);
			}
			fputs("</td>", f);
		}
		fputs("<td>", f);
		html_str(f, jstr(k, "what"));
		fputs("</td><td>", f);
		html_str(f, jstr(k, "expected"));
		fputs("</td><td>", f);
		html_str(f, jstr(k, "observed"));
		fputs("</td></tr>\n", f);
	}
	if (n == 0) {
		fputs("<tr class=\"ok\"><td class=\"host\">", f);
		html_str(f, jstr(hv, "host"));
		fputs("</td><td colspan=\"3\">nothing to check</td></tr>\n", f);
	}
}

/* One expectation: its line, label and step, then per host each check,
 * expected against observed. */
static void expectation(FILE *f, json_object *e)
{
	json_object *ok, *hosts = jarr(e, "hosts");
	bool good = json_object_object_get_ex(e, "ok", &ok) && json_object_get_boolean(ok);

	fprintf(f, "<div class=\"exp %s\"><div class=\"eh\">%s line %ld", good ? "ok" : "bad",
		good ? "held" : "FAILED", jint(e, "line", 0));
	if (jstr(e, "label")) {
		fputs(": ", f);
		html_str(f, jstr(e, "label"));
	}
	if (jstr(e, "step")) {
		fputs(" <span class=\"step\">after step ", f);
		html_str(f, jstr(e, "step"));
		fputs("</span>", f);
	}
	fputs("</div>\n<table class=\"checks\"><colgroup><col class=\"c-host\"><col class=\"c-what\"><col><col>"
	      "</colgroup><tr><th>host</th><th>check</th><th>expected</th><th>observed</th></tr>\n", f);
	for (size_t h = 0; hosts && h < json_object_array_length(hosts); h++)
		check_rows(f, json_object_array_get_idx(hosts, h));
	fputs("</table></div>\n", f);
}

/* Failed expectations in the open; the ones that held behind a fold. */
static void expectations(FILE *f, json_object *sc)
{
	json_object *es = jarr(sc, "expectations"), *ok;
	size_t n = es ? json_object_array_length(es) : 0, held = 0;

	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(es, i);

		if (json_object_object_get_ex(e, "ok", &ok) && json_object_get_boolean(ok))
			held++;
		else
			expectation(f, e);
	}
	if (!held)
		return;
	fprintf(f, "<details class=\"held\"><summary>%zu expectation%s held</summary>\n", held,
		held == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(es, i);

		if (json_object_object_get_ex(e, "ok", &ok) && json_object_get_boolean(ok))
			expectation(f, e);
	}
	fputs("</details>\n", f);
}

/* The final facts per host: every key that was collected. */
static void facts(FILE *f, json_object *sc)
{
	json_object *hosts = jobj(sc, "hosts");

	if (!hosts)
		return;
	fputs("<details class=\"facts\"><summary>final facts per host</summary>\n", f);
	json_object_object_foreach(hosts, name, fa) {
		fputs("<dl><dt class=\"host\">", f);
		html_str(f, name);
		fputs("</dt>", f);
		if (!fa || !json_object_is_type(fa, json_type_object)) {
			fputs("<dd>nothing collected</dd></dl>\n", f);
			continue;
		}
		json_object_object_foreach(fa, key, val) {
			if (!val || !strcmp(key, "time_ms") || !strcmp(key, "events"))
				continue;
			fputs("<dd><span class=\"fk\">", f);
			html_str(f, key);
			fputs("</span> ", f);
			html_json(f, val);
			fputs("</dd>", f);
		}
		fputs("</dl>\n", f);
	}
	fputs("</details>\n", f);
}

/* "ablation": a word (older results) or the object --ablate writes: the
 * verdict, what was removed, and what failed in the twin. */
static void ablation(FILE *f, json_object *sc)
{
	json_object *a, *removed, *failed;
	const char *reason;

	if (!json_object_object_get_ex(sc, "ablation", &a) || !a)
		return;
	fputs("<p class=\"ablation\">ablation: <b>", f);
	if (!json_object_is_type(a, json_type_object)) {
		html_json(f, a);
		fputs("</b></p>\n", f);
		return;
	}
	html_str(f, jread_str_or(a, "verdict", "?"));
	fputs("</b>", f);
	removed = jread_array_or_null(a, "removed");
	for (size_t i = 0; removed && i < json_object_array_length(removed); i++) {
		fputs(i ? ", " : " without <span class=\"ab\">", f);
		html_json(f, json_object_array_get_idx(removed, i));
	}
	if (removed && json_object_array_length(removed))
		fputs("</span>", f);
	if (jread_int_or(a, "twin_ms", -1) >= 0)
		fprintf(f, " (twin %.1f s)", (int)jread_int_or(a, "twin_ms", 0) / 1000.0);
	if ((reason = jread_str_or(a, "reason", NULL))) {
		fputs(": ", f);
		html_str(f, reason);
	}
	failed = jread_array_or_null(a, "failed");
	for (size_t i = 0; failed && i < json_object_array_length(failed); i++) {
		json_object *e = jread_object_at(failed, i);

		fprintf(f, "<br>line %d, host ", (int)jread_int_or(e, "line", 0));
		html_str(f, jread_str_or(e, "host", "?"));
		fputs(": ", f);
		html_str(f, jread_str_or(e, "why", "?"));
	}
	fputs("</p>\n", f);
}

static void link(FILE *f, const char *path, const char *label, const char *title)
{
	fputs("<a href=\"", f);
	html_href(f, path);
	fputs("\" title=\"", f);
	html_str(f, title ? title : path);
	fputs("\">", f);
	html_str(f, label);
	fputs("</a> ", f);
}

/* "logs" (host -> path) and "pcaps" (paths, or objects with "path"),
 * relative to the directory of results.json and this page. */
static void files(FILE *f, json_object *sc)
{
	json_object *logs = jobj(sc, "logs"), *pcaps = jarr(sc, "pcaps");

	if (!logs && !pcaps)
		return;
	fputs("<p class=\"files\">", f);
	if (logs) {
		fputs("logs: ", f);
		json_object_object_foreach(logs, host, path) {
			char label[200];

			if (!path || !json_object_is_type(path, json_type_string))
				continue;
			snprintf(label, sizeof(label), "agent %s", host);
			link(f, json_object_get_string(path), label, json_object_get_string(path));
		}
	}
	if (pcaps) {
		fputs("captures: ", f);
		for (size_t i = 0; i < json_object_array_length(pcaps); i++) {
			json_object *p = json_object_array_get_idx(pcaps, i);
			const char *path = json_object_is_type(p, json_type_string) ? json_object_get_string(p)
											: jstr(p, "path");
			const char *name = jstr(p, "host") ? jstr(p, "host") : jstr(p, "name");
			const char *slash = path ? strrchr(path, '/') : NULL;

			if (path)
				link(f, path, name ? name : slash ? slash + 1 : path, path);
		}
	}
	fputs("</p>\n", f);
}

static void run_column(FILE *f, json_object *run, json_object *sc)
{
	fputs("<div class=\"kcol\"><h3>", f);
	html_str(f, jstr(run, "kernel"));
	if (!sc) {
		fputs("</h3><p class=\"none\">not run on this kernel</p></div>\n", f);
		return;
	}
	fprintf(f, " <span class=\"v %s\">%s</span> <span class=\"t\">%.1f s</span></h3>\n", status_of(sc),
		status_of(sc), (double)jint(sc, "elapsed_ms", 0) / 1000.0);
	if (jstr(sc, "reason")) {
		fputs("<p class=\"reason\">", f);
		html_str(f, jstr(sc, "reason"));
		fputs("</p>\n", f);
	}
	ablation(f, sc);
	expectations(f, sc);
	html_timeline(f, sc);
	facts(f, sc);
	files(f, sc);
	fputs("</div>\n", f);
}

/* The description, source, file and tags, from the first run that has it. */
static void about(FILE *f, json_object *sc)
{
	json_object *tags = jarr(sc, "tags");

	fputs("<p class=\"what\">", f);
	html_str(f, jstr(sc, "description"));
	fputs("</p>\n<p class=\"src\"><b>Source:</b> ", f);
	html_str(f, jstr(sc, "source"));
	fputs("</p>\n<p class=\"file\">", f);
	html_str(f, jstr(sc, "file"));
	for (size_t i = 0; tags && i < json_object_array_length(tags); i++) {
		fputs(" <span class=\"tag\">", f);
		html_json(f, json_object_array_get_idx(tags, i));
		fputs("</span>", f);
	}
	fputs("</p>\n", f);
}

static void verdict_attr(FILE *f, json_object **sc, size_t nruns)
{
	const char *seen[4] = {0};
	size_t n = 0;

	for (size_t r = 0; r < nruns; r++) {
		const char *s = sc[r] ? status_of(sc[r]) : NULL;
		bool dup = false;

		for (size_t i = 0; s && i < n; i++)
			dup |= !strcmp(seen[i], s);
		if (s && !dup && n < 4) {
			fprintf(f, "%s%s", n ? " " : "", s);
			seen[n++] = s;
		}
	}
}

void html_scenario_row(FILE *f, json_object *runs, json_object **sc, size_t nruns, int index)
{
	json_object *first = NULL;
	bool bad = false;
	char topic[128];
	long ms = 0;

	for (size_t r = 0; r < nruns; r++) {
		first = first ? first : sc[r];
		bad |= is_bad(sc[r]);
		ms += sc[r] ? jint(sc[r], "elapsed_ms", 0) : 0;
	}
	html_topic(jstr(first, "id"), topic, sizeof(topic));
	fprintf(f, "<details class=\"sc%s\" id=\"sc-%d\" data-id=\"", bad ? " bad" : "", index);
	html_str(f, jstr(first, "id"));
	fputs("\" data-topic=\"", f);
	html_str(f, topic);
	fputs("\" data-verdicts=\"", f);
	verdict_attr(f, sc, nruns);
	fprintf(f, "\"%s>\n<summary class=\"row\"><span class=\"id\"><b>", bad ? " open" : "");
	html_str(f, jstr(first, "id"));
	fputs("</b> <span class=\"desc\">", f);
	html_str(f, jstr(first, "description"));
	fputs("</span></span>", f);
	for (size_t r = 0; r < nruns; r++)
		fprintf(f, "<span class=\"k\"><span class=\"v %s\">%s</span></span>", sc[r] ? status_of(sc[r]) : "absent",
			sc[r] ? status_of(sc[r]) : "-");
	fprintf(f, "<span class=\"t\">%.1f s</span></summary>\n<div class=\"body\">\n", (double)ms / 1000.0);
	about(f, first);
	fputs("<div class=\"kernels\">\n", f);
	for (size_t r = 0; r < nruns; r++)
		run_column(f, json_object_array_get_idx(runs, r), sc[r]);
	fputs("</div></div></details>\n", f);
}
