/* Reports: TAP that prove accepts, the wrong-expectation diagnostic,
 * junit.xml that is well-formed, results.json that round-trips and merges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qphs.h"
#include "report/report.h"
#include "unit.h"

/* The self-test with a deliberately wrong expectation, its facts those of
 * a healthy connect, evaluated: a ready-made failing scenario. */
struct fixture {
	struct qplab_plan *plan;
	struct qplab_scenario_facts sf;
	struct qplab_verdict *v;
	json_object *sc;
};

static void healthy(struct qplab_facts *f, const char *error_text)
{
	snprintf(f->endpoint, sizeof(f->endpoint), "CONNECTED");
	f->nqp = 2;
	snprintf(f->qp_states[0], QPLAB_QP_STATE_LEN, "RTS");
	snprintf(f->qp_states[1], QPLAB_QP_STATE_LEN, "RTS");
	snprintf(f->code, sizeof(f->code), "OK");
	qplab_facts_set(&f->reply_received, "");
	qplab_facts_set(&f->error_text, error_text);
	f->daemon_alive = 1;
}

static const struct qplab_runinfo RUN = {.backend = "netns", .kernel = "7.1.0", .driver = "rxe",
					 .time_multiplier = 1};

static void fixture_up(struct fixture *fx, const char *error_text)
{
	struct qplab_errors errs = {0};
	struct qplab_scenario_result r = {0};

	memset(fx, 0, sizeof(*fx));
	ck_assert_int_eq(qplab_scenario_load("tests/lab/wrong-expectation.json", &fx->plan, &errs), 0);
	qplab_scenario_facts_init(&fx->sf, 2, 1);
	for (int h = 0; h < 2; h++)
		healthy(&fx->sf.final[h], error_text);
	healthy(qplab_facts_at(&fx->sf, 0, 0), error_text);
	fx->sf.step_started_ms[0] = 12;
	fx->sf.step_ended_ms[0] = 340;
	ck_assert_int_eq(qplab_expect_eval(fx->plan, &RUN, &fx->sf, &fx->v), 2);
	r.plan = fx->plan;
	r.status = QPLAB_FAIL;
	r.elapsed_s = 1.25;
	r.facts = &fx->sf;
	r.verdicts = fx->v;
	fx->sc = qplab_result_json(&r);
	ck_assert_ptr_nonnull(fx->sc);
}

static void fixture_down(struct fixture *fx)
{
	json_object_put(fx->sc);
	qplab_verdicts_free(fx->v, fx->plan->nexpect);
	qplab_scenario_facts_free(&fx->sf);
	qplab_plan_free(fx->plan);
}

/* A passing and a skipped scenario entry, hand-made. */
static json_object *simple(const char *name, const char *status, const char *reason)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(name));
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "file", json_object_new_string("scenarios/x.json"));
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "reason", reason ? json_object_new_string(reason) : NULL);
	json_object_object_add(o, "elapsed_ms", json_object_new_int(500));
	json_object_object_add(o, "expectations", json_object_new_array());
	return o;
}

START_TEST(report_diagnostic_shows_expected_and_observed_per_host)
{
	struct fixture fx;
	char *d;

	fixture_up(&fx, "");
	d = qplab_result_diagnostic(fx.sc);
	ck_assert_ptr_nonnull(strstr(d, "tests/lab/wrong-expectation.json:14: expectation \"wrong on purpose\" after step c failed"));
	ck_assert_ptr_nonnull(strstr(d, "  host a: code: expected ERR_REJECT_HANDSHAKE, observed OK\n"));
	ck_assert_ptr_nonnull(strstr(d, "  host a: reply_msg_received: expected prefix \"QP count mismatch"));
	ck_assert_ptr_nonnull(strstr(d, "  host a: qp_states: expected all RESET, observed RTS,RTS\n"));
	ck_assert_ptr_nonnull(strstr(d, "  host b: qp_states: expected all RESET, observed RTS,RTS\n"));
	ck_assert_ptr_null(strstr(d, "\"right\"")); /* a passing expectation is not shown */
	free(d);
	fixture_down(&fx);
}
END_TEST

/* Runs a TAP stream through prove; returns its exit status, or -1 when
 * prove is not installed. */
static int prove(const char *tap_path)
{
	char cmd[512];
	int st;

	if (system("command -v prove >/dev/null 2>&1") != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "prove --exec cat %s >%s.out 2>&1", tap_path, tap_path);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	ck_assert_ptr_nonnull(f);
	fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

static void tmp_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "/tmp/qplab-unit-report-%d-%s", (int)getpid(), name);
}

START_TEST(report_tap_stream_is_valid_tap)
{
	struct fixture fx;
	struct qplab_tap t;
	char path[128];
	FILE *f;
	json_object *ok = simple("basic/connect", "pass", NULL);
	json_object *skip = simple("transport/loss#1", "skip", "netem # missing");

	fixture_up(&fx, "");
	tmp_path(path, sizeof(path), "stream.tap");
	f = fopen(path, "w");
	qplab_tap_begin(&t, f, 3);
	qplab_tap_result(&t, ok);
	qplab_tap_result(&t, fx.sc);
	qplab_tap_result(&t, skip);
	ck_assert_int_eq(qplab_tap_end(&t), 1);
	fclose(f);

	char *text = slurp(path);
	ck_assert(!strncmp(text, "TAP version 13\n1..3\nok 1 - basic/connect\n", 41));
	ck_assert_ptr_nonnull(strstr(text, "\nnot ok 2 - lab/wrong-expectation\n# tests/lab/wrong-expectation.json:14:"));
	ck_assert_ptr_nonnull(strstr(text, "\n#   host b: qp_states: expected all RESET, observed RTS,RTS\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nok 3 - transport/loss\\#1 # SKIP netem   missing\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n# [2/3] lab/wrong-expectation fail in 1.2 s,"));
	ck_assert_ptr_nonnull(strstr(text, "\n# skipped: transport/loss#1 (netem # missing)\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n# summary: 3 of 3 scenarios in "));
	ck_assert_ptr_nonnull(strstr(text, "\n# failed: lab/wrong-expectation\n"));
	/* Every line is a test line, the version, the plan or a comment. */
	for (char *line = text; *line; line = strchr(line, '\n') + 1) {
		ck_assert_msg(!strncmp(line, "ok ", 3) || !strncmp(line, "not ok ", 7) || !strncmp(line, "# ", 2) ||
				      !strncmp(line, "TAP version 13\n", 15) || !strncmp(line, "1..3\n", 5),
			      "stray line: %.60s", line);
	}
	int st = prove(path);
	if (st >= 0) {
		char out[160];
		snprintf(out, sizeof(out), "%s.out", path);
		char *po = slurp(out);
		ck_assert_msg(st == 1, "prove exit %d: %s", st, po);
		ck_assert_msg(strstr(po, "Failed 1/3 subtests") != NULL, "%s", po);
		ck_assert_msg(strstr(po, "less 1 skipped subtest") != NULL, "%s", po);
		free(po);
		unlink(out);
	}
	free(text);
	unlink(path);
	json_object_put(ok);
	json_object_put(skip);
	fixture_down(&fx);
}
END_TEST

START_TEST(report_tap_all_pass_satisfies_prove_and_bail_out_is_tap)
{
	struct qplab_tap t;
	char path[128];
	FILE *f;
	json_object *ok = simple("basic/connect", "pass", NULL);

	tmp_path(path, sizeof(path), "pass.tap");
	f = fopen(path, "w");
	qplab_tap_begin(&t, f, 2);
	qplab_tap_result(&t, ok);
	qplab_tap_result(&t, ok);
	ck_assert_int_eq(qplab_tap_end(&t), 0);
	fclose(f);
	int st = prove(path);
	ck_assert(st == 0 || st == -1);

	f = fopen(path, "w");
	qplab_tap_begin(&t, f, 2);
	qplab_tap_result(&t, ok);
	qplab_tap_bail(&t, "topology setup failed: rdma link add: EEXIST");
	ck_assert_int_eq(qplab_tap_end(&t), 1); /* fewer than planned */
	fclose(f);
	char *text = slurp(path);
	ck_assert_ptr_nonnull(strstr(text, "\nBail out! topology setup failed: rdma link add: EEXIST\n"));
	free(text);
	st = prove(path);
	ck_assert(st != 0);
	json_object_put(ok);
	unlink(path);
	snprintf(path + strlen(path), 8, ".out");
	unlink(path);
}
END_TEST

START_TEST(report_junit_is_well_formed_and_escaped)
{
	struct fixture fx;
	char path[128], cmd[300];
	json_object *doc = qplab_results_doc(), *run = qplab_results_run(&RUN, "2026-11-30T04:00:00Z");

	fixture_up(&fx, "<tag> & \"quote\" 'apos' \x01 end");
	/* A failing reply text reaches the diagnostic: make it hostile. */
	json_object_object_add(fx.sc, "reason", json_object_new_string("a <b> & c"));
	qplab_results_run_add(run, fx.sc);
	qplab_results_add_run(doc, run);
	tmp_path(path, sizeof(path), "junit.xml");
	ck_assert_int_eq(qplab_junit_save(path, doc), 0);
	char *x = slurp(path);
	ck_assert(!strncmp(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"qplab\" tests=\"1\" failures=\"1\"", 80));
	ck_assert_ptr_nonnull(strstr(x, "<testcase classname=\"qplab.lab\" name=\"wrong-expectation\""));
	ck_assert_ptr_nonnull(strstr(x, "a &lt;b&gt; &amp; c"));
	ck_assert_ptr_null(strstr(x, "<b>"));
	ck_assert_ptr_nonnull(strstr(x, "<property name=\"kernel\" value=\"7.1.0\"/>"));
	snprintf(cmd, sizeof(cmd), "command -v xmllint >/dev/null 2>&1 || exit 0; xmllint --noout %s", path);
	ck_assert_int_eq(system(cmd), 0);
	free(x);
	unlink(path);
	json_object_put(run);
	json_object_put(doc);
	fixture_down(&fx);
}
END_TEST

static json_object *path_get(json_object *o, const char *const *keys)
{
	for (; *keys && o; keys++) {
		json_object *v = NULL;
		if (json_object_is_type(o, json_type_array))
			v = json_object_array_get_idx(o, (size_t)atoi(*keys));
		else
			json_object_object_get_ex(o, *keys, &v);
		o = v;
	}
	return o;
}

START_TEST(report_results_json_round_trips_and_merges)
{
	struct fixture fx;
	char path[128], err[256];
	static const char *const caps[] = {"rxe_netns", NULL};
	struct qplab_runinfo info = RUN;
	json_object *doc = qplab_results_doc(), *run, *back, *other;

	info.caps = caps;
	run = qplab_results_run(&info, "2026-11-30T04:00:00Z");
	fixture_up(&fx, "Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: x");
	qplab_results_run_add(run, fx.sc);
	qplab_results_run_finish(run, 2.5);
	qplab_results_add_run(doc, run);
	tmp_path(path, sizeof(path), "results.json");
	ck_assert_int_eq(qplab_results_save(path, doc), 0);
	ck_assert_int_eq(qplab_results_load(path, &back, err, sizeof(err)), 0);

	static const char *const k_schema[] = {"schema_version", NULL};
	static const char *const k_kernel[] = {"runs", "0", "kernel", NULL};
	static const char *const k_caps[] = {"runs", "0", "capabilities", "0", NULL};
	static const char *const k_fail[] = {"runs", "0", "summary", "fail", NULL};
	static const char *const k_status[] = {"runs", "0", "scenarios", "0", "status", NULL};
	static const char *const k_code[] = {"runs", "0", "scenarios", "0", "hosts", "a", "code", NULL};
	static const char *const k_text[] = {"runs", "0", "scenarios", "0", "hosts", "b", "error_text", NULL};
	static const char *const k_gid[] = {"runs", "0", "scenarios", "0", "hosts", "b", "gid_index", NULL};
	static const char *const k_step[] = {"runs", "0", "scenarios", "0", "steps", "0", "hosts", "a", "code", NULL};
	static const char *const k_obs[] = {"runs", "0", "scenarios", "0", "expectations", "0", "hosts", "0", "checks", "0", "observed", NULL};
	ck_assert_int_eq(json_object_get_int(path_get(back, k_schema)), QPLAB_RESULTS_SCHEMA_VERSION);
	ck_assert_str_eq(json_object_get_string(path_get(back, k_kernel)), "7.1.0");
	ck_assert_str_eq(json_object_get_string(path_get(back, k_caps)), "rxe_netns");
	ck_assert_int_eq(json_object_get_int(path_get(back, k_fail)), 1);
	ck_assert_str_eq(json_object_get_string(path_get(back, k_status)), "fail");
	ck_assert_str_eq(json_object_get_string(path_get(back, k_code)), "OK");
	ck_assert_str_eq(json_object_get_string(path_get(back, k_text)),
			 "Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: x");
	ck_assert(json_object_is_type(path_get(back, k_gid), json_type_null)); /* not collected */
	ck_assert_str_eq(json_object_get_string(path_get(back, k_step)), "OK");
	ck_assert_str_eq(json_object_get_string(path_get(back, k_obs)), "OK");
	static const char *const k_started[] = {"runs", "0", "scenarios", "0", "steps", "0", "started_ms", NULL};
	static const char *const k_ended[] = {"runs", "0", "scenarios", "0", "steps", "0", "ended_ms", NULL};
	static const char *const k_on0[] = {"runs", "0", "scenarios", "0", "steps", "0", "on", "0", NULL};
	static const char *const k_on1[] = {"runs", "0", "scenarios", "0", "steps", "0", "on", "1", NULL};
	ck_assert_int_eq(json_object_get_int(path_get(back, k_started)), 12);
	ck_assert_int_eq(json_object_get_int(path_get(back, k_ended)), 340);
	ck_assert_str_eq(json_object_get_string(path_get(back, k_on0)), "a"); /* from, then to */
	ck_assert_str_eq(json_object_get_string(path_get(back, k_on1)), "b");

	/* A second kernel's file merges into an array of two runs. */
	ck_assert_int_eq(qplab_results_load(path, &other, err, sizeof(err)), 0);
	ck_assert_int_eq(qplab_results_merge(back, other), 0);
	static const char *const k_runs[] = {"runs", NULL};
	ck_assert_uint_eq(json_object_array_length(path_get(back, k_runs)), 2);
	ck_assert_int_eq(qplab_results_save(path, back), 0);
	char *text = slurp(path);
	ck_assert_ptr_null(strstr(text, "\\/")); /* slashes stay readable */
	free(text);
	FILE *mem = tmpfile();
	ck_assert_int_eq(qplab_junit_write(mem, back), 0);
	fclose(mem);
	json_object_put(other);
	json_object_put(back);
	unlink(path);
	json_object_put(run);
	json_object_put(doc);
	fixture_down(&fx);
}
END_TEST

START_TEST(report_results_load_refuses_other_schemas)
{
	char path[128], err[256];
	json_object *doc;
	FILE *f;

	tmp_path(path, sizeof(path), "old.json");
	f = fopen(path, "w");
	fputs("{\"schema_version\": 99, \"runs\": []}", f);
	fclose(f);
	ck_assert_int_eq(qplab_results_load(path, &doc, err, sizeof(err)), QPHS_ERR_INVALID_ARGUMENT);
	unit_hit(QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(err, "schema_version 1"));
	f = fopen(path, "w");
	fputs("{\"schema_version\": 1, ", f);
	fclose(f);
	ck_assert_int_eq(qplab_results_load(path, &doc, err, sizeof(err)), QPHS_ERR_MALFORMED_JSON);
	unit_hit(QPHS_ERR_MALFORMED_JSON);
	unlink(path);
}
END_TEST

/* U+FFFD, written out: what each byte that breaks UTF-8 must become. */
#define FFFD "\xEF\xBF\xBD"

START_TEST(report_utf8_repair_replaces_each_bad_byte)
{
	static const char *const cases[][2] = {
		{"plain text", NULL},
		{"caf\xC3\xA9 \xF0\x9F\x98\x80", NULL},
		{"\xFF", FFFD},
		{"a\xFE\xFF" "b", "a" FFFD FFFD "b"},
		{"\xC0\xAF", FFFD FFFD},			/* overlong '/' */
		{"\xED\xA0\x80!", FFFD FFFD FFFD "!"},		/* a surrogate */
		{"\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD},	/* above U+10FFFF */
		{"ok \xC3", "ok " FFFD},			/* cut in the middle */
		{"\xC3\xA9\xA9", "\xC3\xA9" FFFD},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out;
		int rc = qplab_utf8_repair(cases[i][0], strlen(cases[i][0]), &out);

		ck_assert_int_eq(rc, cases[i][1] ? 1 : 0);
		if (cases[i][1])
			ck_assert_str_eq(out, cases[i][1]);
		else
			ck_assert_ptr_null(out);
		free(out);
	}
}
END_TEST

/* A peer's reply_msg is whatever bytes it sent: results.json must still be
 * JSON that our own reader (and any strict one) takes back. */
START_TEST(report_results_with_bad_utf8_still_load)
{
	char path[128], err[256];
	json_object *doc = qplab_results_doc(), *run = json_object_new_object(), *sc, *back;
	json_object *v;

	json_object_object_add(run, "scenarios", sc = json_object_new_array());
	json_object_array_add(sc, v = json_object_new_object());
	json_object_object_add(v, "diagnostic", json_object_new_string("peer said \xFF\xFE: ok"));
	json_object_object_add(v, "id", json_object_new_string("basic/\xC3\xA9"));
	ck_assert_int_eq(qplab_results_add_run(doc, run), 0);
	json_object_put(run);
	tmp_path(path, sizeof(path), "utf8.json");
	ck_assert_int_eq(qplab_results_save(path, doc), 0);
	ck_assert_int_eq(qplab_results_load(path, &back, err, sizeof(err)), 0);
	v = json_object_array_get_idx(
		json_object_object_get(json_object_array_get_idx(json_object_object_get(back, "runs"), 0),
				       "scenarios"),
		0);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(v, "diagnostic")),
			 "peer said " FFFD FFFD ": ok");
	ck_assert_str_eq(json_object_get_string(json_object_object_get(v, "id")), "basic/\xC3\xA9");
	json_object_put(back);
	json_object_put(doc);
	unlink(path);
}
END_TEST

START_TEST(report_outputs_land_in_the_out_dir)
{
	char dir[128], path[200], err[256];
	json_object *doc = qplab_results_doc(), *back;
	struct stat st;

	tmp_path(dir, sizeof(dir), "outdir/lab");
	ck_assert_int_eq(qplab_report_write_outputs(dir, doc, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/results.json", dir);
	ck_assert_int_eq(qplab_results_load(path, &back, err, sizeof(err)), 0);
	json_object_put(back);
	unlink(path);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_gt(st.st_size, 40);
	unlink(path);
	snprintf(path, sizeof(path), "%s/report.html", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_gt(st.st_size, 1000);
	unlink(path);
	rmdir(dir);
	tmp_path(dir, sizeof(dir), "outdir");
	rmdir(dir);
	ck_assert_int_eq(qplab_report_write_outputs("/proc/qplab-no", doc, err, sizeof(err)),
			 QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(err, "/proc/qplab-no"));
	json_object_put(doc);
}
END_TEST

START_TEST(report_mkdir_makes_parents)
{
	char dir[128], deep[200];
	struct stat st;

	tmp_path(dir, sizeof(dir), "out");
	snprintf(deep, sizeof(deep), "%s/a/b", dir);
	ck_assert_int_eq(qplab_report_mkdir(deep), 0);
	ck_assert_int_eq(qplab_report_mkdir(deep), 0); /* exists: fine */
	ck_assert_int_eq(stat(deep, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	rmdir(deep);
	snprintf(deep, sizeof(deep), "%s/a", dir);
	rmdir(deep);
	rmdir(dir);
}
END_TEST

Suite *suite_report(void)
{
	Suite *s = suite_create("report");
	TCase *tc = unit_tcase(s, "tap", 20);

	tcase_add_test(tc, report_diagnostic_shows_expected_and_observed_per_host);
	tcase_add_test(tc, report_tap_stream_is_valid_tap);
	tcase_add_test(tc, report_tap_all_pass_satisfies_prove_and_bail_out_is_tap);
	tc = unit_tcase(s, "files", 20);
	tcase_add_test(tc, report_junit_is_well_formed_and_escaped);
	tcase_add_test(tc, report_results_json_round_trips_and_merges);
	tcase_add_test(tc, report_results_load_refuses_other_schemas);
	tcase_add_test(tc, report_mkdir_makes_parents);
	tcase_add_test(tc, report_outputs_land_in_the_out_dir);
	tcase_add_test(tc, report_utf8_repair_replaces_each_bad_byte);
	tcase_add_test(tc, report_results_with_bad_utf8_still_load);
	return s;
}
