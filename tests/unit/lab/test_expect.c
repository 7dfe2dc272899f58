/* Expectations over facts: pass and fail per assertion kind, keyed rows,
 * kernel ranges, the diagnostic's expected and observed values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/expect.h"
#include "qphs.h"
#include "unit.h"

static struct qplab_plan *plan_with(const char *hosts, const char *expect)
{
	char text[8192];
	struct qplab_plan *plan;
	struct qplab_errors errs = {0};

	snprintf(text, sizeof(text),
		 "{ \"description\": \"t\", \"source\": \"unit test\",\n"
		 "  \"hosts\": { %s },\n"
		 "  \"steps\": [ { \"do\": \"connect\", \"name\": \"c\", \"from\": \"a\", \"to\": \"b\" } ],\n"
		 "  \"expect\": [ %s ] }\n",
		 hosts, expect);
	int rc = qplab_scenario_parse("t.json", text, strlen(text), &plan, &errs);
	ck_assert_msg(rc == 0, "%s", errs.n ? errs.msgs[0] : "?");
	return plan;
}

/* Healthy facts for host h: two QPs in RTS, connected, OK. */
static void healthy(struct qplab_facts *f)
{
	qplab_facts_init(f);
	snprintf(f->endpoint, sizeof(f->endpoint), "CONNECTED");
	f->endpoints = 1;
	f->nqp = 2;
	snprintf(f->qp_states[0], QPLAB_QP_STATE_LEN, "RTS");
	snprintf(f->qp_states[1], QPLAB_QP_STATE_LEN, "RTS");
	snprintf(f->code, sizeof(f->code), "OK");
	qplab_facts_set(&f->reply_received, "");
	qplab_facts_set(&f->error_text, "Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: "
					 "Connection timed out [110]");
	snprintf(f->datapath, sizeof(f->datapath), "ok");
	snprintf(f->wc_status, sizeof(f->wc_status), "IBV_WC_SUCCESS");
	f->time_ms[QPLAB_TIME_RTR] = 1003;
	f->gid_index = 1;
	qplab_facts_set(&f->gid_reason, "auto: index 1 ranks routable with netdev; 0 of 3 skipped");
	f->path_mtu = 1024;
	f->peer_ready_ack = 0;
	f->daemon_alive = 1;
	f->leftover_qps = 0;
	f->leftover_objects = 0;
	snprintf(f->frame_outcome, sizeof(f->frame_outcome), "closed");
}

static const struct qplab_runinfo RUN = {.backend = "netns", .kernel = "6.12.48+deb13-amd64",
					 .driver = "rxe", .time_multiplier = 1};

/* One expectation over host a's final facts: does it pass? */
static const struct {
	const char *expect;
	bool pass;
} cases[] = {
	{"\"qp_states\": { \"all\": \"RTS\" }", true},
	{"\"qp_states\": { \"all\": \"RESET\" }", false},
	{"\"qp_states\": [\"RTS\", \"RTS\"]", true},
	{"\"qp_states\": [\"RTS\"]", false},
	{"\"qp_count\": 2", true},
	{"\"qp_count\": 3", false},
	{"\"qp_count\": { \"min\": 0, \"max\": 2 }", true},
	{"\"qp_count\": { \"min\": 2, \"max\": 2 }", true},
	{"\"qp_count\": { \"min\": 3, \"max\": 4 }", false},
	{"\"qp_count\": { \"min\": 0, \"max\": 1 }", false},
	{"\"endpoint\": \"CONNECTED\"", true},
	{"\"endpoint\": \"DESTROYING\"", false},
	{"\"endpoints\": 1", true},
	{"\"code\": \"OK\"", true},
	{"\"code\": \"ERR_REJECT_HANDSHAKE\"", false},
	{"\"reply_msg_received\": { \"exact\": \"\" }", true},
	{"\"reply_msg_sent\": { \"exact\": \"\" }", false}, /* not collected */
	{"\"error_text\": { \"prefix\": \"Failed to modify QP to RTR, check mtu\" }", true},
	{"\"error_text\": { \"prefix\": \"Failed to modify QP to RTS\" }", false},
	{"\"error_text\": { \"contains\": \"timed out\", \"regex\": \"\\\\[110\\\\]$\" }", true},
	{"\"error_text\": { \"regex\": \"\\\\[111\\\\]$\" }", false},
	{"\"datapath\": \"ok\"", true},
	{"\"wc_status\": \"IBV_WC_SUCCESS\"", true},
	{"\"wc_status\": { \"any_of\": [\"IBV_WC_RETRY_EXC_ERR\"], \"or_none_within_ms\": 5000 }", false},
	{"\"time_ms\": { \"rtr\": { \"min\": 800, \"max\": 3000 } }", true},
	{"\"time_ms\": { \"rtr\": { \"max\": 500 } }", false},
	{"\"time_ms\": { \"handshake\": { \"max\": 500 } }", false}, /* not collected */
	{"\"gid_index\": 1", true},
	{"\"path_mtu\": 4096", false},
	{"\"gid_reason\": { \"prefix\": \"auto: index 1 ranks routable with netdev\" }", true},
	{"\"gid_reason\": { \"contains\": \"private IPv4\" }", false},
	{"\"peer_ready_ack\": false", true},
	{"\"peer_ready_ack\": true", false},
	{"\"daemon_alive\": true", true},
	{"\"daemon_alive\": false", false},
	{"\"leftover_qps\": 0, \"leftover_objects\": 0", true},
	{"\"frame_outcome\": \"replied\"", false},
};

START_TEST(expect_each_assertion_passes_or_fails)
{
	char exp[1024];
	struct qplab_plan *plan;
	struct qplab_scenario_facts sf;
	struct qplab_verdict *v;

	snprintf(exp, sizeof(exp), "{ \"host\": \"a\", %s }", cases[_i].expect);
	plan = plan_with("\"a\": {}, \"b\": {}", exp);
	ck_assert_int_eq(qplab_scenario_facts_init(&sf, 2, 1), 0);
	healthy(&sf.final[0]);
	int failed = qplab_expect_eval(plan, &RUN, &sf, &v);
	ck_assert_msg(failed == (cases[_i].pass ? 0 : 1), "%s: %d failed", cases[_i].expect, failed);
	ck_assert(v[0].ok == cases[_i].pass);
	ck_assert_uint_ge(v[0].hosts[0].nchecks, 1);
	qplab_verdicts_free(v, plan->nexpect);
	qplab_scenario_facts_free(&sf);
	qplab_plan_free(plan);
}
END_TEST

/* Facts of a datapath over 8 QPs whose QP 3 failed: 0..2 ok, 4..7 not run. */
static void qp3_failed(struct qplab_facts *f)
{
	healthy(f);
	snprintf(f->datapath, sizeof(f->datapath), "failed");
	f->dp_nqp = 8;
	for (int i = 0; i < 8; i++) {
		snprintf(f->dp_qps[i].result, sizeof(f->dp_qps[i].result), "%s",
			 i < 3 ? "ok" : i == 3 ? "failed" : "not_run");
		f->dp_qps[i].qpn = 40 + i;
		snprintf(f->dp_qps[i].read_wc, sizeof(f->dp_qps[i].read_wc), "%s",
			 i < 3 ? "IBV_WC_SUCCESS" : i == 3 ? "IBV_WC_WR_FLUSH_ERR" : "none");
		snprintf(f->dp_qps[i].write_wc, sizeof(f->dp_qps[i].write_wc), "%s",
			 i < 3 ? "IBV_WC_SUCCESS" : "none");
	}
	f->dp_failed_qp = 3;
}

/* Per-QP datapath assertions over qp3_failed (all: over the same facts
 * with every QP ok and none failed). */
static const struct {
	const char *expect;
	bool pass, all_ok;
} dp_cases[] = {
	{"\"datapath_failed_qp\": 3", true, false},
	{"\"datapath_failed_qp\": 2", false, false},
	{"\"datapath_failed_qp\": \"none\"", false, true},
	{"\"datapath_qps\": { \"all\": \"ok\" }", false, true},
	{"\"datapath_qps\": [\"ok\", \"ok\", \"ok\", \"failed\", \"not_run\", \"not_run\", "
	 "\"not_run\", \"not_run\"]", true, false},
	{"\"datapath_qps\": [\"ok\", \"ok\", \"ok\", \"failed\"]", false, false},
	{"\"datapath_qp_count\": 8", true, true},
	{"\"datapath_qp_count\": 2", false, false},
};

START_TEST(expect_datapath_per_qp)
{
	char exp[1024];
	struct qplab_plan *plan;
	struct qplab_scenario_facts sf;
	struct qplab_verdict *v;

	snprintf(exp, sizeof(exp), "{ \"host\": \"a\", %s }", dp_cases[_i].expect);
	plan = plan_with("\"a\": {}, \"b\": {}", exp);
	ck_assert_int_eq(qplab_scenario_facts_init(&sf, 2, 1), 0);
	qp3_failed(&sf.final[0]);
	ck_assert_int_eq(qplab_expect_eval(plan, &RUN, &sf, &v), dp_cases[_i].pass ? 0 : 1);
	if (!strcmp(v[0].hosts[0].checks[0].what, "datapath_failed_qp") && !dp_cases[_i].pass)
		ck_assert_str_eq(v[0].hosts[0].checks[0].observed,
				 "QP 3 (qp_num 43): write none, read IBV_WC_WR_FLUSH_ERR");
	qplab_verdicts_free(v, plan->nexpect);
	/* Every QP ok. */
	for (int i = 0; i < 8; i++)
		snprintf(sf.final[0].dp_qps[i].result, sizeof(sf.final[0].dp_qps[i].result), "ok");
	sf.final[0].dp_failed_qp = QPLAB_NO_FAILED_QP;
	ck_assert_int_eq(qplab_expect_eval(plan, &RUN, &sf, &v), dp_cases[_i].all_ok ? 0 : 1);
	qplab_verdicts_free(v, plan->nexpect);
	/* Not collected (a protocol 2 agent): every per-QP assertion fails. */
	qplab_facts_free(&sf.final[0]);
	healthy(&sf.final[0]);
	ck_assert_int_eq(qplab_expect_eval(plan, &RUN, &sf, &v), 1);
	ck_assert_str_eq(v[0].hosts[0].checks[0].observed, "(not collected)");
	qplab_verdicts_free(v, plan->nexpect);
	qplab_scenario_facts_free(&sf);
	qplab_plan_free(plan);
}
END_TEST

START_TEST(expect_diagnostic_has_expected_and_observed_per_host)
{
	struct qplab_plan *plan = plan_with("\"a\": {}, \"b\": {}",
					    "{ \"hosts\": \"all\", \"qp_states\": { \"all\": \"RTS\" } }");
	struct qplab_scenario_facts sf;
	struct qplab_verdict *v;

	qplab_scenario_facts_init(&sf, 2, 1);
	healthy(&sf.final[0]);
	healthy(&sf.final[1]);
	snprintf(sf.final[1].qp_states[1], QPLAB_QP_STATE_LEN, "ERR");
	ck_assert_int_eq(qplab_expect_eval(plan, &RUN, &sf, &v), 1);
	ck_assert_uint_eq(v[0].nhosts, 2);
	ck_assert(v[0].hosts[0].ok);
	ck_assert(!v[0].hosts[1].ok);
	ck_assert_str_eq(v[0].hosts[1].checks[0].what, "qp_states");
	ck_assert_str_eq(v[0].hosts[1].checks[0].expected, "all RTS");
	ck_assert_str_eq(v[0].hosts[1].checks[0].observed, "RTS,ERR");
	qplab_verdicts_free(v, plan->nexpect);
	qplab_scenario_facts_free(&sf);
	qplab_plan_free(plan);
}
END_TEST

START_TEST(expect_step_facts_are_separate_from_final)
{
	struct qplab_plan *plan = plan_with("\"a\": {}, \"b\": {}",
					    "{ \"host\": \"a\", \"step\": \"c\", \"code\": \"ERR_CONNECT_REFUSED\" }");
	struct qplab_scenario_facts sf;
	struct qplab_verdict *v;

	qplab_scenario_facts_init(&sf, 2, 1);
	healthy(&sf.final[0]); /* final: OK */
	snprintf(qplab_facts_at(&sf, 0, 0)->code, sizeof(sf.final[0].code), "ERR_CONNECT_REFUSED");
	ck_assert_int_eq(qplab_expect_eval(plan, &RUN, &sf, &v), 0);
	qplab_verdicts_free(v, plan->nexpect);
	qplab_scenario_facts_free(&sf);
	qplab_plan_free(plan);
}
END_TEST

static const char KEYED[] =
	"{ \"host\": \"a\", \"cases\": ["
	" { \"when\": \"rxe_netns\", \"why\": \"per-netns sockets\", \"datapath\": \"ok\" },"
	" { \"when\": [\"!rxe_netns\", \"kernel < 7.1\"], \"why\": \"init_net socket only\", \"datapath\": \"failed\" },"
	" { \"when\": \"quirk=e810\", \"why\": \"E810 RESET rule\", \"code\": \"ERR_MODIFY_QP\" } ] }";

/* Which row applies: capabilities, kernel, quirk profile. */
static const struct {
	const char *kernel;
	bool netns;
	const char *quirk;
	int row; /* -1 = none */
} rows[] = {
	{"7.1.0", true, "", 0},
	{"6.12.48+deb13-amd64", false, "", 1},
	{"6.1.0-28-amd64", false, "", 1},
	{"7.1.0", false, "", -1},
	{"7.2-rc1", false, "e810", 2},
	{"6.12.48", true, "e810", 0}, /* first matching row wins */
	{"garbage", false, "", -1},
};

START_TEST(expect_chooses_the_keyed_row)
{
	static const char *const caps[] = {"rxe_netns", NULL};
	struct qplab_plan *plan = plan_with("\"a\": {}, \"b\": {}", KEYED);
	struct qplab_runinfo run = RUN;
	const struct qplab_case *row;

	run.kernel = rows[_i].kernel;
	run.caps = rows[_i].netns ? caps : NULL;
	snprintf(plan->hosts[0].agent.quirk, sizeof(plan->hosts[0].agent.quirk), "%s",
		 rows[_i].quirk);
	row = qplab_expect_row(&plan->expect[0], &run, plan, 0);
	if (rows[_i].row < 0)
		ck_assert_ptr_null(row);
	else
		ck_assert_ptr_eq(row, &plan->expect[0].cases[rows[_i].row]);
	qplab_plan_free(plan);
}
END_TEST

/* The hosts backend: each host's row by its own machine's kernel (a on
 * 6.1, b on 7.2), the run's kernel for a host without one. */
static const char KEYED_KERNEL[] =
	"{ \"hosts\": [\"a\", \"b\"], \"cases\": ["
	" { \"when\": \"kernel >= 6.12\", \"why\": \"new\", \"datapath\": \"ok\" },"
	" { \"when\": \"kernel < 6.12\", \"why\": \"old\", \"datapath\": \"failed\" } ] }";

START_TEST(expect_kernel_rows_per_host)
{
	struct qplab_plan *plan = plan_with("\"a\": {}, \"b\": {}", KEYED_KERNEL);
	struct qplab_runinfo run = RUN;

	run.kernel = "mixed";
	ck_assert_ptr_null(qplab_expect_row(&plan->expect[0], &run, plan, 0));
	run.host_kernel[0] = "6.1.0-57-amd64";
	run.host_kernel[1] = "7.2.13+deb14-amd64";
	ck_assert_ptr_eq(qplab_expect_row(&plan->expect[0], &run, plan, 0), &plan->expect[0].cases[1]);
	ck_assert_ptr_eq(qplab_expect_row(&plan->expect[0], &run, plan, 1), &plan->expect[0].cases[0]);
	run.host_kernel[1] = NULL;
	run.kernel = "6.12.48+deb13-amd64";
	ck_assert_ptr_eq(qplab_expect_row(&plan->expect[0], &run, plan, 1), &plan->expect[0].cases[0]);
	qplab_plan_free(plan);
}
END_TEST

/* Rows keyed by implementation: the row's own host (impl=), or a named
 * one (impl:HOST=).  The host key "impl" sets it; qplab is the default. */
static const char KEYED_IMPL[] =
	"{ \"hosts\": [\"a\", \"b\"], \"cases\": ["
	" { \"when\": \"impl:b=mooncake-compat\", \"why\": \"b does not negotiate\", \"path_mtu\": 512 },"
	" { \"when\": \"impl=qplab\", \"why\": \"both negotiate\", \"path_mtu\": 1024 } ] }";

START_TEST(expect_rows_keyed_by_impl)
{
	struct qplab_plan *plan = plan_with("\"a\": {}, \"b\": { \"impl\": \"mooncake-compat\" }",
					    KEYED_IMPL);
	struct qplab_runinfo run = RUN;

	ck_assert_str_eq(plan->hosts[0].impl, "qplab");
	ck_assert_str_eq(plan->hosts[1].impl, "mooncake-compat");
	/* b is mooncake-compat: the first row holds for a's and b's checks. */
	ck_assert_ptr_eq(qplab_expect_row(&plan->expect[0], &run, plan, 0),
			 &plan->expect[0].cases[0]);
	ck_assert_ptr_eq(qplab_expect_row(&plan->expect[0], &run, plan, 1),
			 &plan->expect[0].cases[0]);
	/* Both qplab: the second row, for each host on its own. */
	snprintf(plan->hosts[1].impl, sizeof(plan->hosts[1].impl), "qplab");
	ck_assert_ptr_eq(qplab_expect_row(&plan->expect[0], &run, plan, 1),
			 &plan->expect[0].cases[1]);
	qplab_plan_free(plan);
}
END_TEST

START_TEST(expect_keyed_verdict_names_the_row_and_host_quirk_applies)
{
	struct qplab_plan *plan = plan_with("\"a\": { \"agent\": { \"quirk\": \"e810\" } }, \"b\": {}", KEYED);
	struct qplab_runinfo run = RUN;
	struct qplab_scenario_facts sf;
	struct qplab_verdict *v;

	run.kernel = "7.1.0";
	qplab_scenario_facts_init(&sf, 2, 1);
	healthy(&sf.final[0]); /* code OK, but the e810 row wants ERR_MODIFY_QP */
	ck_assert_int_eq(qplab_expect_eval(plan, &run, &sf, &v), 1);
	ck_assert_str_eq(v[0].hosts[0].row->when_text, "quirk=e810");
	ck_assert_str_eq(v[0].hosts[0].row->why, "E810 RESET rule");
	ck_assert_str_eq(v[0].hosts[0].checks[0].observed, "OK");
	qplab_verdicts_free(v, plan->nexpect);
	qplab_scenario_facts_free(&sf);
	qplab_plan_free(plan);
}
END_TEST

START_TEST(expect_no_applicable_row_fails)
{
	struct qplab_plan *plan = plan_with("\"a\": {}, \"b\": {}", KEYED);
	struct qplab_runinfo run = RUN;
	struct qplab_scenario_facts sf;
	struct qplab_verdict *v;

	run.kernel = "7.1.0"; /* no rxe_netns, not < 7.1, no quirk */
	qplab_scenario_facts_init(&sf, 2, 1);
	healthy(&sf.final[0]);
	ck_assert_int_eq(qplab_expect_eval(plan, &run, &sf, &v), 1);
	ck_assert_ptr_null(v[0].hosts[0].row);
	ck_assert_str_eq(v[0].hosts[0].checks[0].what, "row");
	qplab_verdicts_free(v, plan->nexpect);
	qplab_scenario_facts_free(&sf);
	qplab_plan_free(plan);
}
END_TEST

static const struct {
	const char *release;
	int v[3];
	int cmp;
} kernels[] = {
	{"6.12.48+deb13-amd64", {6, 12, 0}, 1}, {"6.12.0", {6, 12, 0}, 0}, {"6.1.0-28-amd64", {6, 12, 0}, -1},
	{"7.1-rc5", {7, 1, 0}, 0},              {"10.0.0", {7, 1, 0}, 1},  {"v7.1", {7, 1, 0}, -2},
};

START_TEST(expect_kernel_versions_compare_numerically)
{
	ck_assert_int_eq(qplab_kernel_cmp(kernels[_i].release, kernels[_i].v), kernels[_i].cmp);
}
END_TEST

START_TEST(expect_none_within_needs_the_full_wait)
{
	struct qplab_plan *plan = plan_with(
		"\"a\": {}, \"b\": {}",
		"{ \"host\": \"a\", \"wc_status\": { \"any_of\": [\"IBV_WC_RETRY_EXC_ERR\"], \"or_none_within_ms\": 5000 } }");
	struct qplab_facts f;
	struct qplab_check *c;
	size_t n;

	healthy(&f);
	snprintf(f.wc_status, sizeof(f.wc_status), "none");
	f.wc_waited_ms = 4000;
	ck_assert(!qplab_assert_eval(&plan->expect[0].a, &f, 1, NULL, NULL));
	f.wc_waited_ms = 5000;
	ck_assert(qplab_assert_eval(&plan->expect[0].a, &f, 1, &c, &n));
	ck_assert_str_eq(c[0].expected, "IBV_WC_RETRY_EXC_ERR or none within 5000 ms");
	ck_assert_str_eq(c[0].observed, "none within 5000 ms");
	free(c);
	snprintf(f.wc_status, sizeof(f.wc_status), "IBV_WC_RETRY_EXC_ERR");
	ck_assert(qplab_assert_eval(&plan->expect[0].a, &f, 1, NULL, NULL));
	qplab_facts_free(&f);
	qplab_plan_free(plan);
}
END_TEST

START_TEST(expect_time_multiplier_stretches_max_only)
{
	struct qplab_plan *plan = plan_with(
		"\"a\": {}, \"b\": {}", "{ \"host\": \"a\", \"time_ms\": { \"rtr\": { \"min\": 800, \"max\": 1000 } } }");
	struct qplab_facts f;

	healthy(&f); /* rtr 1003 ms */
	ck_assert(!qplab_assert_eval(&plan->expect[0].a, &f, 1, NULL, NULL));
	ck_assert(qplab_assert_eval(&plan->expect[0].a, &f, 3, NULL, NULL));
	f.time_ms[QPLAB_TIME_RTR] = 300; /* below min: multiplier does not help */
	ck_assert(!qplab_assert_eval(&plan->expect[0].a, &f, 3, NULL, NULL));
	qplab_facts_free(&f);
	qplab_plan_free(plan);
}
END_TEST

START_TEST(expect_observed_text_is_quoted_and_escaped)
{
	struct qplab_plan *plan = plan_with("\"a\": {}, \"b\": {}",
					    "{ \"host\": \"a\", \"reply_msg_received\": { \"exact\": \"x\" } }");
	struct qplab_facts f;
	struct qplab_check *c;
	size_t n;

	healthy(&f);
	qplab_facts_set(&f.reply_received, "line1\n\"q\"");
	ck_assert(!qplab_assert_eval(&plan->expect[0].a, &f, 1, &c, &n));
	ck_assert_str_eq(c[0].observed, "\"line1\\x0a\\x22q\\x22\"");
	free(c);
	qplab_facts_free(&f);
	qplab_plan_free(plan);
}
END_TEST

START_TEST(expect_hw_counters_are_the_step_change)
{
	struct qplab_plan *plan = plan_with(
		"\"a\": {}, \"b\": {}",
		"{ \"host\": \"a\", \"step\": \"c\", \"hw_counters\": { \"completer_retry_err\": 1, "
		"\"retry_exceeded_err\": { \"min\": 1, \"max\": 2 }, \"rcvd_seq_err\": { \"max\": 0 } } }");
	struct qplab_facts f;
	struct qplab_check *c;
	size_t n;

	ck_assert(qplab_plan_uses_hwc(plan));
	healthy(&f);
	/* Not collected: every counter check fails and says why. */
	snprintf(f.hwc_error, sizeof(f.hwc_error), "unknown op");
	ck_assert(!qplab_assert_eval(&plan->expect[0].a, &f, 1, &c, &n));
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(c[0].what, "hw_counters.completer_retry_err");
	ck_assert_str_eq(c[0].expected, "+1");
	ck_assert_str_eq(c[0].observed, "(not collected: unknown op)");
	free(c);
	f.nhwc = 3;
	snprintf(f.hwc[0].name, sizeof(f.hwc[0].name), "completer_retry_err");
	f.hwc[0].delta = 1;
	snprintf(f.hwc[1].name, sizeof(f.hwc[1].name), "retry_exceeded_err");
	f.hwc[1].delta = 1;
	snprintf(f.hwc[2].name, sizeof(f.hwc[2].name), "rcvd_seq_err");
	f.hwc[2].delta = 0;
	ck_assert(qplab_assert_eval(&plan->expect[0].a, &f, 1, NULL, NULL));
	/* retry_cnt 2 counts two retries: the exact value catches it, and no
	 * time multiplier widens it. */
	f.hwc[0].delta = 2;
	ck_assert(!qplab_assert_eval(&plan->expect[0].a, &f, 3, &c, &n));
	ck_assert(!c[0].ok && c[1].ok && c[2].ok);
	ck_assert_str_eq(c[0].observed, "+2");
	ck_assert_str_eq(c[1].expected, "+1..2");
	ck_assert_str_eq(c[2].expected, "<= +0");
	free(c);
	/* A counter the device does not have. */
	f.nhwc = 2;
	ck_assert(!qplab_assert_eval(&plan->expect[0].a, &f, 1, &c, &n));
	ck_assert_str_eq(c[2].observed, "(the device has no such counter)");
	free(c);
	qplab_facts_free(&f);
	qplab_plan_free(plan);
}
END_TEST

Suite *suite_expect(void)
{
	Suite *s = suite_create("expect");
	TCase *tc = unit_tcase(s, "assertions", 10);

	tcase_add_loop_test(tc, expect_each_assertion_passes_or_fails, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_loop_test(tc, expect_datapath_per_qp, 0, sizeof(dp_cases) / sizeof(dp_cases[0]));
	tcase_add_test(tc, expect_diagnostic_has_expected_and_observed_per_host);
	tcase_add_test(tc, expect_step_facts_are_separate_from_final);
	tcase_add_test(tc, expect_none_within_needs_the_full_wait);
	tcase_add_test(tc, expect_time_multiplier_stretches_max_only);
	tcase_add_test(tc, expect_observed_text_is_quoted_and_escaped);
	tcase_add_test(tc, expect_hw_counters_are_the_step_change);
	tc = unit_tcase(s, "keys", 10);
	tcase_add_loop_test(tc, expect_chooses_the_keyed_row, 0, sizeof(rows) / sizeof(rows[0]));
	tcase_add_test(tc, expect_rows_keyed_by_impl);
	tcase_add_test(tc, expect_kernel_rows_per_host);
	tcase_add_test(tc, expect_keyed_verdict_names_the_row_and_host_quirk_applies);
	tcase_add_test(tc, expect_no_applicable_row_fails);
	tcase_add_loop_test(tc, expect_kernel_versions_compare_numerically, 0,
			    sizeof(kernels) / sizeof(kernels[0]));
	return s;
}
