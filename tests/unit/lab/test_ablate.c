/* The `ablate` key (harness/scenario/scenario_ablate.c): what the parser
 * accepts and refuses (each refusal at its FILE:LINE), the ablated twin,
 * the verdicts and how TAP, results and JUnit show them, and every
 * catalogue file that carries the key. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan_testutil.h"
#include "qphs.h"
#include "report/report.h"
#include "run/run_args.h"
#include "scenario/scenario.h"
#include "unit.h"

/* A scenario whose line 2 is the ablate key (@A@) and whose hosts (line
 * 5: @H@ is b's body) and steps (line 9: @S@) take fragments. */
static const char TEMPLATE[] =
	"{\n"                                                          /* 1 */
	"  @A@\n"                                                      /* 2 */
	"  \"description\": \"t\", \"source\": \"unit test\",\n"       /* 3 */
	"  \"tags\": [\"x\", \"y\"],\n"                                /* 4 */
	"  \"hosts\": { \"a\": {}, \"b\": {@H@} },\n"                  /* 5 */
	"  \"links\": [ { \"between\": [\"a\", \"b\"], \"mtu\": 1500 } ],\n" /* 6 */
	"  \"steps\": [\n"                                             /* 7 */
	"    { \"do\": \"connect\", \"name\": \"c\", \"from\": \"a\", \"to\": \"b\" },\n" /* 8 */
	"    @S@\n"                                                    /* 9 */
	"    { \"do\": \"datapath\", \"name\": \"dp\", \"from\": \"a\", \"to\": \"b\" }\n" /* 10 */
	"  ],\n"                                                       /* 11 */
	"  \"expect\": [\n"                                            /* 12 */
	"    { \"host\": \"a\", \"step\": \"c\", \"code\": \"OK\" },\n" /* 13 */
	"    { \"host\": \"a\", \"step\": \"dp\", \"datapath\": \"ok\" },\n" /* 14 */
	"    { \"hosts\": \"all\", \"leftover_qps\": 0 }\n"            /* 15 */
	"  ]\n"
	"}\n";

static char *fill(const char *a, const char *h, const char *s)
{
	const char *ph[] = {"@A@", "@H@", "@S@"}, *val[] = {a, h, s};

	return plan_test_fill(TEMPLATE, ph, val);
}

#define KILL_B "{ \"do\": \"kill_agent\", \"name\": \"k\", \"host\": \"b\" },"

/* The parse fails with exactly one message, which starts with want. */
static void parse_fails(const char *text, const char *want)
{
	struct qplab_errors errs = {0};
	struct qplab_plan *p = NULL;
	int rc = qplab_scenario_parse("t.json", text, strlen(text), &p, &errs);

	ck_assert_int_eq(rc, QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_null(p);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_msg(!strncmp(errs.msgs[0], want, strlen(want)), "got \"%s\", want \"%s...\"", errs.msgs[0], want);
	qplab_errors_free(&errs);
}

START_TEST(ablate_absent_is_unmarked_and_empty_is_no_fault)
{
	struct qplab_plan *p = plan_test_parse(fill(NULL, NULL, NULL));

	ck_assert_int_eq(p->ablate_mode, QPLAB_ABLATE_UNMARKED);
	ck_assert_uint_eq(p->nablate, 0);
	qplab_plan_free(p);
	/* MC_NUM_QP_PER_EP=2 and ready_ack true are the library's defaults. */
	p = plan_test_parse(fill("\"ablate\": [],", "\"env\": { \"MC_NUM_QP_PER_EP\": 2 }, \"agent\": { \"ready_ack\": true }",
			  NULL));
	ck_assert_int_eq(p->ablate_mode, QPLAB_ABLATE_NONE);
	ck_assert_ptr_null(p->doc);
	qplab_plan_free(p);
}
END_TEST

START_TEST(ablate_list_lands_in_the_plan)
{
	struct qplab_plan *p = plan_test_parse(fill("\"ablate\": [\"/steps/1\", \"/hosts/b/env/MC_MTU\", "
					     "{ \"set\": \"/hosts/b/mtu\", \"to\": 9000 }, \"/tags/0\"],",
					     "\"env\": { \"MC_MTU\": 1024 }", KILL_B));

	ck_assert_int_eq(p->ablate_mode, QPLAB_ABLATE_LIST);
	ck_assert_uint_eq(p->nablate, 4);
	ck_assert_str_eq(p->ablate[0].pointer, "/steps/1");
	ck_assert_int_eq(p->ablate[0].step, 1);
	ck_assert_ptr_null(p->ablate[0].to);
	ck_assert_int_eq(p->ablate[1].step, -1);
	ck_assert_str_eq(p->ablate[2].pointer, "/hosts/b/mtu");
	ck_assert_str_eq(p->ablate[2].to, "9000");
	ck_assert_int_eq(p->ablate[2].line, 2);
	ck_assert_ptr_nonnull(p->doc);
	qplab_plan_free(p);
}
END_TEST

/* Every refusal names the file and the line of the entry (2 here) or of
 * what makes [] untrue. */
static const struct {
	const char *a, *h, *s, *want;
} refuse[] = {
	{"\"ablate\": [\"/steps/7\"],", NULL, NULL, "t.json:2: \"/steps/7\" does not resolve"},
	{"\"ablate\": [\"/hosts/b/env\"],", NULL, NULL, "t.json:2: \"/hosts/b/env\" does not resolve"},
	{"\"ablate\": [\"/steps/01\"],", NULL, NULL, "t.json:2: \"/steps/01\" does not resolve"},
	{"\"ablate\": [{ \"set\": \"/hosts/b/mtu\" }],", NULL, NULL, "t.json:2: a \"set\" needs \"to\""},
	{"\"ablate\": [{ \"set\": \"/hosts/c/mtu\", \"to\": 1 }],", NULL, NULL,
	 "t.json:2: \"/hosts/c/mtu\" does not resolve in this file, nor does an object"},
	{"\"ablate\": [{ \"set\": \"/steps/9\", \"to\": 1 }],", NULL, NULL, "t.json:2: \"/steps/9\" does not resolve"},
	{"\"ablate\": [{ \"set\": 3, \"to\": 1 }],", NULL, NULL, "t.json:2: "},
	{"\"ablate\": [{ \"set\": \"/tags\", \"to\": 1, \"x\": 2 }],", NULL, NULL, "t.json:2: "},
	{"\"ablate\": [5],", NULL, NULL, "t.json:2: an ablate entry is a JSON pointer"},
	{"\"ablate\": [\"steps/0\"],", NULL, NULL, "t.json:2: \"steps/0\" is not a JSON pointer"},
	{"\"ablate\": [\"\"],", NULL, NULL, "t.json:2: \"\" is not a JSON pointer"},
	{"\"ablate\": [\"/ablate/0\"],", NULL, NULL, "t.json:2: \"/ablate/0\": ablate does not point into itself"},
	{"\"ablate\": [\"/tags/0\", \"/tags/0\"],", NULL, NULL, "t.json:2: \"/tags/0\" is listed twice"},
	{"\"ablate\": \"/steps/0\",", NULL, NULL, "t.json:2: "},
	{"\"ablate\": [],", "\"fault\": { \"name\": \"stall\" }", NULL,
	 "t.json:2: \"ablate\": [] declares that the scenario has no fault, but host b has the agent fault \"stall\" (line 5)"},
	{"\"ablate\": [],", "\"env\": { \"MC_MTU\": 1024 }", NULL, "t.json:2: \"ablate\": [] declares that the scenario has no fault, but host b sets MC_MTU=1024"},
	{"\"ablate\": [],", "\"agent\": { \"ready_ack\": false }", NULL, "t.json:2: \"ablate\": [] declares that the scenario has no fault, but host b sets agent option ready_ack"},
	{"\"ablate\": [],", "\"agent\": { \"advertise\": { \"gid\": \"fe80::1\" } }", NULL, "t.json:2: \"ablate\": [] declares that the scenario has no fault, but host b sets agent option advertise_gid"},
	{"\"ablate\": [],", NULL, KILL_B, "t.json:2: \"ablate\": [] declares that the scenario has no fault, but step 2 is a kill_agent (line 9)"},
	{"\"ablate\": [],", NULL, "{ \"do\": \"raw_frame\", \"to\": \"b\", \"kind\": \"garbage\" },",
	 "t.json:2: \"ablate\": [] declares that the scenario has no fault, but step 2 is a raw_frame (line 9)"},
	{"\"ablate\": [],", NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"rkey\": \"bad\" },",
	 "t.json:2: \"ablate\": [] declares that the scenario has no fault, but step 2 is a datapath with a non-default rkey (line 9)"},
	{"\"ablate\": [],", NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"on_posted\": { \"kill_agent\": \"b\" } },",
	 "t.json:2: \"ablate\": [] declares that the scenario has no fault, but step 2 kills a host's agent on_posted (line 9)"},
	{"\"ablate\": [],", NULL, "{ \"do\": \"region\", \"host\": \"b\", \"access\": [\"local_write\"] },",
	 "t.json:2: \"ablate\": [] declares that the scenario has no fault, but step 2 registers a region with reduced access"},
	{"\"ablate\": [],", NULL, "{ \"do\": \"connect\", \"from\": \"a\", \"to_address\": \"unowned\" },",
	 "t.json:2: \"ablate\": [] declares that the scenario has no fault, but step 2 connects to_address"},
	{"\"ablate\": [],", NULL, "{ \"do\": \"set_mtu\", \"host\": \"b\", \"mtu\": 1200 },",
	 "t.json:2: \"ablate\": [] declares that the scenario has no fault, but step 2 is a set_mtu"},
	{"\"ablate\": [],", NULL, "{ \"do\": \"noop\", \"host\": \"b\" },", "t.json:9: unknown key \"host\""},
};

START_TEST(ablate_refusals_name_file_and_line)
{
	parse_fails(fill(refuse[_i].a, refuse[_i].h, refuse[_i].s), refuse[_i].want);
}
END_TEST

START_TEST(ablate_empty_refused_for_link_netem)
{
	char text[8192];
	char *at;

	snprintf(text, sizeof(text), "%s", fill("\"ablate\": [],", NULL, NULL));
	at = strstr(text, "\"mtu\": 1500 }");
	ck_assert_ptr_nonnull(at);
	memcpy(at, "\"netem\": {}  }", 14); /* same length: the lines stay */
	parse_fails(text, "t.json:2: \"ablate\": [] declares that the scenario has no fault, but link 1 has netem (line 6)");
}
END_TEST

static struct qplab_plan *twin_of(struct qplab_plan *p)
{
	struct qplab_errors errs = {0};
	struct qplab_plan *t = NULL;

	ck_assert_msg(qplab_plan_ablate(p, &t, &errs) == 0, "%s", errs.n ? errs.msgs[0] : "no message");
	qplab_errors_free(&errs);
	ck_assert_ptr_nonnull(t);
	return t;
}

START_TEST(twin_removes_a_member)
{
	struct qplab_plan *p = plan_test_parse(fill("\"ablate\": [\"/hosts/b/env/MC_MTU\"],",
					     "\"env\": { \"MC_MTU\": 1024, \"MC_IB_TC\": 3 }", NULL));
	struct qplab_plan *t = twin_of(p);

	ck_assert_uint_eq(p->hosts[1].nenv, 2);
	ck_assert_uint_eq(t->hosts[1].nenv, 1);
	ck_assert_str_eq(t->hosts[1].env[0].name, "MC_IB_TC");
	ck_assert_int_eq(t->ablate_mode, QPLAB_ABLATE_UNMARKED); /* the twin has no key */
	ck_assert(t->is_twin);
	ck_assert_str_eq(t->id, p->id);
	ck_assert_uint_eq(t->nexpect, p->nexpect);
	qplab_plan_free(t);
	qplab_plan_free(p);
}
END_TEST

START_TEST(twin_removes_array_elements_at_once)
{
	/* /expect/0 and /expect/1 both go: removing one must not shift the other. */
	struct qplab_plan *p = plan_test_parse(fill("\"ablate\": [\"/expect/0\", \"/expect/1\", \"/tags/0\"],", NULL, NULL));
	struct qplab_plan *t = twin_of(p);

	ck_assert_uint_eq(t->nexpect, 1);
	ck_assert_int_eq(t->expect[0].step, -1); /* the final-report one is left */
	ck_assert_uint_eq(t->ntags, 1);
	ck_assert_str_eq(t->tags[0], "y");
	qplab_plan_free(t);
	qplab_plan_free(p);
}
END_TEST

START_TEST(twin_step_becomes_noop_under_its_name)
{
	struct qplab_plan *p = plan_test_parse(fill("\"ablate\": [\"/steps/0\"],", NULL, KILL_B));
	struct qplab_plan *t = twin_of(p);

	ck_assert_uint_eq(t->nsteps, p->nsteps);
	ck_assert_int_eq(t->steps[0].kind, QPLAB_STEP_NOOP);
	ck_assert_str_eq(t->steps[0].name, "c");
	ck_assert_int_eq(t->steps[1].kind, QPLAB_STEP_KILL_AGENT);
	ck_assert(t->step_ablated[0]);
	ck_assert(!t->step_ablated[1]);
	/* The expectation after step "c" is not evaluated in the twin. */
	ck_assert_uint_eq(t->nexpect, p->nexpect - 1);
	ck_assert_uint_eq(t->nexpect_ablated, 1);
	ck_assert_int_eq(t->expect[0].step, 2);
	qplab_plan_free(t);
	qplab_plan_free(p);
}
END_TEST

START_TEST(twin_sets_and_adds_values)
{
	struct qplab_plan *p = plan_test_parse(fill("\"ablate\": [{ \"set\": \"/hosts/b/mtu\", \"to\": 9000 }, "
					     "{ \"set\": \"/links/0/mtu\", \"to\": 4200 }],", NULL, NULL));
	struct qplab_plan *t = twin_of(p);

	ck_assert_int_eq(p->hosts[1].mtu, -1);
	ck_assert_int_eq(t->hosts[1].mtu, 9000); /* added: b had no mtu */
	ck_assert_int_eq(t->links[0].mtu, 4200); /* replaced */
	qplab_plan_free(t);
	qplab_plan_free(p);
}
END_TEST

START_TEST(twin_that_does_not_parse_names_the_pointer)
{
	/* Without "from" a connect is invalid: the error names that entry's line. */
	char text[8192];
	struct qplab_errors errs = {0};
	struct qplab_plan *t = NULL, *p;

	snprintf(text, sizeof(text), "%s",
		 fill("\"ablate\": [\"/tags/1\",\n  \"/steps/0/from\"],", NULL, NULL));
	p = plan_test_parse(text);
	ck_assert_int_eq(qplab_plan_ablate(p, &t, &errs), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_null(t);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_msg(!strncmp(errs.msgs[0], "t.json:3: ablate \"/steps/0/from\": the scenario without it does not parse: ",
			       strlen("t.json:3: ablate \"/steps/0/from\": the scenario without it does not parse: ")),
		      "%s", errs.msgs[0]);
	ck_assert_ptr_nonnull(strstr(errs.msgs[0], "from"));
	qplab_errors_free(&errs);
	qplab_plan_free(p);
}
END_TEST

START_TEST(noop_step_is_accepted_in_files)
{
	struct qplab_plan *p = plan_test_parse(fill(NULL, NULL, "{ \"do\": \"noop\", \"name\": \"n\", \"deadline_ms\": 5 },"));

	ck_assert_int_eq(p->steps[1].kind, QPLAB_STEP_NOOP);
	ck_assert_str_eq(qplab_step_kind_name(QPLAB_STEP_NOOP), "noop");
	qplab_plan_free(p);
}
END_TEST

/* The verdict table of docs/scenarios.md. */
static const struct {
	int mode, status, twin;
	enum qplab_ablation want;
} verdicts[] = {
	{QPLAB_ABLATE_LIST, QPLAB_PASS, QPLAB_FAIL, QPLAB_ABL_SENSITIVE},
	{QPLAB_ABLATE_LIST, QPLAB_PASS, QPLAB_PASS, QPLAB_ABL_INSENSITIVE},
	{QPLAB_ABLATE_LIST, QPLAB_PASS, QPLAB_ERROR, QPLAB_ABL_ERROR},
	{QPLAB_ABLATE_LIST, QPLAB_PASS, QPLAB_SKIP, QPLAB_ABL_ERROR},
	{QPLAB_ABLATE_LIST, QPLAB_PASS, -1, QPLAB_ABL_NOT_RUN},
	{QPLAB_ABLATE_LIST, QPLAB_FAIL, -1, QPLAB_ABL_NOT_RUN},
	{QPLAB_ABLATE_LIST, QPLAB_SKIP, -1, QPLAB_ABL_NOT_RUN},
	{QPLAB_ABLATE_LIST, QPLAB_ERROR, -1, QPLAB_ABL_NOT_RUN},
	{QPLAB_ABLATE_NONE, QPLAB_PASS, -1, QPLAB_ABL_NO_FAULT},
	{QPLAB_ABLATE_UNMARKED, QPLAB_PASS, -1, QPLAB_ABL_UNMARKED},
	{QPLAB_ABLATE_UNMARKED, QPLAB_FAIL, -1, QPLAB_ABL_UNMARKED},
};

START_TEST(ablation_verdicts)
{
	ck_assert_int_eq(qplab_ablation_verdict(verdicts[_i].mode, verdicts[_i].status, verdicts[_i].twin),
			 verdicts[_i].want);
}
END_TEST

START_TEST(ablation_names_round_trip)
{
	for (int v = 0; v < QPLAB_ABL_COUNT; v++)
		ck_assert_int_eq(qplab_ablation_by_name(qplab_ablation_name(v)), v);
	ck_assert_str_eq(qplab_ablation_name(QPLAB_ABL_NO_FAULT), "no fault");
	ck_assert_ptr_null(qplab_ablation_name(QPLAB_ABL_COUNT));
	ck_assert_int_eq(qplab_ablation_by_name("vacuous"), -1);
}
END_TEST

/* A twin's result entry with one failed expectation. */
static json_object *twin_result(const char *status)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "{\"status\":\"%s\",\"elapsed_ms\":4321,\"expectations\":["
		 "{\"line\":13,\"ok\":false,\"step\":\"c\",\"hosts\":[{\"host\":\"a\",\"ok\":false,\"checks\":["
		 "{\"what\":\"code\",\"expected\":\"ERR_REJECT_HANDSHAKE\",\"observed\":\"OK\",\"ok\":false},"
		 "{\"what\":\"qp_count\",\"expected\":\"2\",\"observed\":\"2\",\"ok\":true}]},"
		 "{\"host\":\"b\",\"ok\":true,\"checks\":[]}]},"
		 "{\"line\":15,\"ok\":true,\"hosts\":[]}]}", status);
	return json_tokener_parse(text);
}

START_TEST(ablation_json_says_what_failed_in_the_twin)
{
	struct qplab_plan *p = plan_test_parse(fill("\"ablate\": [\"/steps/1\", { \"set\": \"/hosts/b/mtu\", \"to\": 9000 }],",
					     NULL, KILL_B));
	json_object *tw = twin_result("fail"), *a = qplab_ablation_json(p, QPLAB_ABL_SENSITIVE, tw), *v, *f;

	ck_assert_str_eq(json_object_get_string(json_object_object_get(a, "verdict")), "sensitive");
	v = json_object_object_get(a, "removed");
	ck_assert_uint_eq(json_object_array_length(v), 2);
	ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(v, 0)), "/steps/1");
	ck_assert_int_eq(json_object_get_int(json_object_object_get(json_object_array_get_idx(v, 1), "to")), 9000);
	v = json_object_object_get(a, "failed");
	ck_assert_uint_eq(json_object_array_length(v), 1); /* host b held */
	f = json_object_array_get_idx(v, 0);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(f, "host")), "a");
	ck_assert_int_eq(json_object_get_int(json_object_object_get(f, "line")), 13);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(f, "why")),
			 "code: expected ERR_REJECT_HANDSHAKE, observed OK");
	ck_assert_int_eq(json_object_get_int(json_object_object_get(a, "twin_ms")), 4321);
	json_object_put(a);
	json_object_put(tw);
	/* No twin ran: the verdict and the list only. */
	a = qplab_ablation_json(p, QPLAB_ABL_NOT_RUN, NULL);
	ck_assert(!json_object_object_get_ex(a, "failed", NULL));
	ck_assert(!json_object_object_get_ex(a, "twin_ms", NULL));
	json_object_put(a);
	qplab_plan_free(p);
}
END_TEST

/* TAP of one passing scenario entry carrying verdict v (NULL: none). */
static char *tap_of(const char *v, bool ablate, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct qplab_tap t;
	json_object *sc = json_tokener_parse("{\"name\":\"basic/x\",\"status\":\"pass\",\"elapsed_ms\":1000}");

	if (v) {
		json_object *a = json_object_new_object();

		json_object_object_add(a, "verdict", json_object_new_string(v));
		json_object_object_add(sc, "ablation", a);
	}
	qplab_tap_begin(&t, f, 1);
	t.ablate = ablate;
	qplab_tap_result(&t, sc);
	*rc = qplab_tap_end(&t);
	fclose(f);
	json_object_put(sc);
	return buf;
}

START_TEST(tap_shows_the_verdict_only_with_ablate)
{
	int rc;
	char *out = tap_of(NULL, false, &rc);

	ck_assert_ptr_nonnull(strstr(out, "\nok 1 - basic/x\n"));
	ck_assert_ptr_null(strstr(out, "ablation"));
	ck_assert_int_eq(rc, 0);
	free(out);
	out = tap_of("sensitive", true, &rc);
	ck_assert_ptr_nonnull(strstr(out, "\nok 1 - basic/x [ablation: sensitive]\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n# ablation: 1 sensitive, 0 insensitive, 0 error, 0 no fault, 0 unmarked, 0 not run\n"));
	ck_assert_int_eq(rc, 0);
	free(out);
	out = tap_of("insensitive", true, &rc);
	ck_assert_ptr_nonnull(strstr(out, "\nnot ok 1 - basic/x [ablation: insensitive]\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n# ablation: 0 sensitive, 1 insensitive, 0 error, 0 no fault, 0 unmarked, 0 not run\n"));
	ck_assert_int_eq(rc, 1);
	free(out);
	out = tap_of("no fault", true, &rc);
	ck_assert_ptr_nonnull(strstr(out, "\nok 1 - basic/x [ablation: no fault]\n"));
	ck_assert_int_eq(rc, 0);
	free(out);
}
END_TEST

START_TEST(junit_carries_the_verdict)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_object *doc = json_tokener_parse(
		"{\"runs\":[{\"summary\":{\"total\":1},\"scenarios\":[{\"name\":\"basic/x\",\"status\":\"pass\","
		"\"ablation\":{\"verdict\":\"insensitive\",\"removed\":[\"/steps/0\"]}}]}]}");

	ck_assert_int_eq(qplab_junit_write(f, doc), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "<property name=\"ablation\" value=\"insensitive\"/>"));
	ck_assert_ptr_nonnull(strstr(buf, "<system-out>ablation: insensitive"));
	free(buf);
	json_object_put(doc);
}
END_TEST

START_TEST(html_shows_the_ablation_object)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_object *doc = json_tokener_parse(
		"{\"schema_version\":1,\"runs\":[{\"kernel\":\"7.2.0\",\"backend\":\"netns\",\"summary\":"
		"{\"total\":1,\"pass\":1},\"scenarios\":[{\"id\":\"basic/x\",\"status\":\"pass\",\"steps\":[],"
		"\"expectations\":[],\"ablation\":{\"verdict\":\"sensitive\",\"removed\":[\"/steps/1\","
		"{\"set\":\"/hosts/b/mtu\",\"to\":9000}],\"failed\":[{\"line\":13,\"host\":\"a\","
		"\"why\":\"code: expected <E>, observed OK\"}],\"twin_ms\":1500}}]}]}");

	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(qplab_html_write(f, doc), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "ablation: <b>sensitive</b> without"));
	ck_assert_ptr_nonnull(strstr(buf, "/steps/1"));
	ck_assert_ptr_nonnull(strstr(buf, "(twin 1.5 s)"));
	ck_assert_ptr_nonnull(strstr(buf, "line 13, host a: code: expected &lt;E&gt;, observed OK"));
	free(buf);
	json_object_put(doc);
}
END_TEST

START_TEST(run_takes_ablate)
{
	struct qplab_run_opts o;
	char err[256];

	ck_assert_int_eq(plan_test_run_args("scenarios --ablate --kernel 7", &o, err, sizeof(err)), 0);
	ck_assert(o.ablate);
	ck_assert_uint_eq(o.npaths, 1);
	ck_assert_int_eq(plan_test_run_args("scenarios", &o, err, sizeof(err)), 0);
	ck_assert(!o.ablate);
}
END_TEST

/* Every catalogue file marks its fault (an `ablate` list, or [] for a
 * healthy path); each pointer resolves (the parse says so) and the twin
 * parses. */
static void check_tree(const char *dir, int *files, int *lists)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	ck_assert_msg(d != NULL, "%s", dir);
	while ((e = readdir(d))) {
		char path[1024];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			check_tree(path, files, lists);
			continue;
		}
		if (!strstr(e->d_name, ".json") || strcmp(strstr(e->d_name, ".json"), ".json"))
			continue;
		struct qplab_errors errs = {0};
		struct qplab_plan *p = NULL, *t = NULL;

		ck_assert_msg(qplab_scenario_load(path, &p, &errs) == 0, "%s", errs.n ? errs.msgs[0] : path);
		(*files)++;
		ck_assert_msg(p->ablate_mode != QPLAB_ABLATE_UNMARKED,
			      "%s: no \"ablate\" key (every catalogue scenario marks its fault)", path);
		if (p->ablate_mode == QPLAB_ABLATE_LIST) {
			(*lists)++;
			ck_assert_msg(qplab_plan_ablate(p, &t, &errs) == 0, "%s", errs.n ? errs.msgs[0] : path);
			ck_assert_uint_eq(t->nsteps, p->nsteps);
		}
		qplab_plan_free(t);
		qplab_plan_free(p);
		qplab_errors_free(&errs);
	}
	closedir(d);
}

START_TEST(catalogue_every_scenario_marks_its_fault)
{
	int files = 0, lists = 0;

	check_tree("scenarios", &files, &lists);
	ck_assert_int_ge(files, 78);
	/* the healthy paths are few: basic/connect-2qp, both-directions,
	 * datapath-sizes, datapath-mooncake-peer, simopen/pair-50-rounds,
	 * quirks/reset-reset */
	ck_assert_int_ge(lists, files - 6);
}
END_TEST

START_TEST(lab_selftest_ablate_files)
{
	struct qplab_errors errs = {0};
	struct qplab_plan *p = NULL, *t = NULL;

	/* vacuous: its twin parses; `qplab run --ablate` must find it insensitive. */
	ck_assert_int_eq(qplab_scenario_load("tests/lab/ablate-vacuous.json", &p, &errs), 0);
	ck_assert_int_eq(qplab_plan_ablate(p, &t, &errs), 0);
	qplab_plan_free(t);
	qplab_plan_free(p);
	/* A fault under "ablate": [] is refused at the key's line. */
	ck_assert_int_eq(qplab_scenario_load("tests/lab/ablate-false-no-fault.json", &p, &errs),
			 QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_ptr_nonnull(strstr(errs.msgs[0], "tests/lab/ablate-false-no-fault.json:"));
	ck_assert_ptr_nonnull(strstr(errs.msgs[0], "declares that the scenario has no fault, but step 1 is a kill_agent"));
	qplab_errors_free(&errs);
}
END_TEST

Suite *suite_ablate(void)
{
	Suite *s = suite_create("ablate");
	TCase *tc = unit_tcase(s, "parse", 10);

	tcase_add_test(tc, ablate_absent_is_unmarked_and_empty_is_no_fault);
	tcase_add_test(tc, ablate_list_lands_in_the_plan);
	tcase_add_loop_test(tc, ablate_refusals_name_file_and_line, 0, sizeof(refuse) / sizeof(refuse[0]));
	tcase_add_test(tc, ablate_empty_refused_for_link_netem);
	tcase_add_test(tc, noop_step_is_accepted_in_files);
	tc = unit_tcase(s, "twin", 10);
	tcase_add_test(tc, twin_removes_a_member);
	tcase_add_test(tc, twin_removes_array_elements_at_once);
	tcase_add_test(tc, twin_step_becomes_noop_under_its_name);
	tcase_add_test(tc, twin_sets_and_adds_values);
	tcase_add_test(tc, twin_that_does_not_parse_names_the_pointer);
	tc = unit_tcase(s, "verdict", 10);
	tcase_add_loop_test(tc, ablation_verdicts, 0, sizeof(verdicts) / sizeof(verdicts[0]));
	tcase_add_test(tc, ablation_names_round_trip);
	tcase_add_test(tc, ablation_json_says_what_failed_in_the_twin);
	tcase_add_test(tc, tap_shows_the_verdict_only_with_ablate);
	tcase_add_test(tc, junit_carries_the_verdict);
	tcase_add_test(tc, run_takes_ablate);
	tcase_add_test(tc, html_shows_the_ablation_object);
	tc = unit_tcase(s, "files", 30);
	tcase_add_test(tc, catalogue_every_scenario_marks_its_fault);
	tcase_add_test(tc, lab_selftest_ablate_files);
	return s;
}
