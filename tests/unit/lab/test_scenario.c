/* The scenario parser: every step and expectation kind, every rejection
 * with its file:line, the self-test files of tests/lab, and the annotated
 * example of docs/scenarios.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_testutil.h"
#include "qphs.h"
#include "scenario/scenario.h"
#include "unit.h"

/* A valid scenario with one placeholder line each for extra hosts, a step
 * and an expectation; a fragment replaces its placeholder on that line. */
static const char TEMPLATE[] =
	"{\n"                                                     /* 1 */
	"  \"description\": \"t\",\n"                             /* 2 */
	"  \"source\": \"unit test\",\n"                          /* 3 */
	"  \"hosts\": { @H@ \"a\": {}, \"b\": {}, \"c\": {} },\n" /* 4 */
	"  \"steps\": [\n"                                        /* 5 */
	"    @S@\n"                                               /* 6 */
	"    { \"do\": \"connect\", \"name\": \"c1\", \"from\": \"a\", \"to\": \"b\" }\n"
	"  ],\n"
	"  \"expect\": [\n"                                       /* 9 */
	"    @E@\n"                                               /* 10 */
	"    { \"host\": \"a\", \"code\": \"OK\" }\n"
	"  ]\n"
	"}\n";

static int placeholder_line(const char *ph)
{
	const char *at = strstr(TEMPLATE, ph);
	int line = 1;

	for (const char *p = TEMPLATE; p < at; p++)
		line += *p == '\n';
	return line;
}

static char *fill(const char *h, const char *s, const char *e)
{
	const char *ph[] = {"@H@", "@S@", "@E@"}, *val[] = {h, s, e};

	return plan_test_fill(TEMPLATE, ph, val);
}

static int parse(const char *text, struct qplab_plan **plan, struct qplab_errors *errs)
{
	return qplab_scenario_parse("t.json", text, strlen(text), plan, errs);
}

/* Every step kind the schema has parses, into the kind it names. */
static const struct {
	const char *frag;
	enum qplab_step_kind kind;
} step_ok[] = {
	{"{ \"do\": \"connect\", \"from\": \"a\", \"to\": \"c\", \"deadline_ms\": 9000 },", QPLAB_STEP_CONNECT},
	{"{ \"do\": \"connect\", \"from\": \"a\", \"to_address\": \"unroutable\" },", QPLAB_STEP_CONNECT},
	{"{ \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\", \"to_device\": \"mlx5_9\" },", QPLAB_STEP_CONNECT},
	{"{ \"do\": \"connect_both\", \"hosts\": [\"a\", \"b\"], \"rounds\": 50, \"barrier_ms\": 100 },", QPLAB_STEP_CONNECT_BOTH},
	{"{ \"do\": \"disconnect\", \"from\": \"a\", \"to\": \"b\" },", QPLAB_STEP_DISCONNECT},
	{"{ \"do\": \"link_down\", \"host\": \"b\" },", QPLAB_STEP_LINK_DOWN},
	{"{ \"do\": \"link_up\", \"host\": \"b\" },", QPLAB_STEP_LINK_UP},
	{"{ \"do\": \"netem_on\", \"host\": \"b\", \"netem\": { \"loss_pct\": 100, \"traffic\": \"roce\" } },", QPLAB_STEP_NETEM_ON},
	{"{ \"do\": \"netem_off\", \"host\": \"b\" },", QPLAB_STEP_NETEM_OFF},
	{"{ \"do\": \"set_mtu\", \"host\": \"b\", \"mtu\": 1500 },", QPLAB_STEP_SET_MTU},
	{"{ \"do\": \"delete_device\", \"host\": \"b\" },", QPLAB_STEP_DELETE_DEVICE},
	{"{ \"do\": \"blackhole\", \"host\": \"a\", \"peer\": \"b\" },", QPLAB_STEP_BLACKHOLE},
	{"{ \"do\": \"unblackhole\", \"host\": \"a\", \"peer\": \"b\" },", QPLAB_STEP_UNBLACKHOLE},
	{"{ \"do\": \"kill_agent\", \"host\": \"b\" },", QPLAB_STEP_KILL_AGENT},
	{"{ \"do\": \"start_agent\", \"host\": \"b\" },", QPLAB_STEP_START_AGENT},
	{"{ \"do\": \"restart_agent\", \"host\": \"b\", \"down_ms\": 50 },", QPLAB_STEP_RESTART_AGENT},
	{"{ \"do\": \"raw_frame\", \"to\": \"b\", \"hex\": \"01 00 00 00 00 00 00 00 ff\" },", QPLAB_STEP_RAW_FRAME},
	{"{ \"do\": \"raw_frame\", \"to\": \"b\", \"kind\": \"truncate\" },", QPLAB_STEP_RAW_FRAME},
	{"{ \"do\": \"raw_frame\", \"from\": \"a\", \"to\": \"b\", \"kind\": \"stale_ack\" },", QPLAB_STEP_RAW_FRAME},
	{"{ \"do\": \"raw_frame\", \"from\": \"a\", \"to\": \"b\", \"kind\": \"oversize\" },", QPLAB_STEP_RAW_FRAME},
	{"{ \"do\": \"raw_frame\", \"from\": \"c\", \"to\": \"b\", \"hex\": \"03 00 00 00 00 00 00 00 03 7b 7d\" },", QPLAB_STEP_RAW_FRAME},
	{"{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"bytes\": 65536 },", QPLAB_STEP_DATAPATH},
	{"{ \"do\": \"wait\", \"host\": \"a\", \"until\": { \"endpoint\": \"DESTROYING\" }, \"deadline_ms\": 3000 },", QPLAB_STEP_WAIT},
	{"{ \"do\": \"snapshot\", \"name\": \"mid\" },", QPLAB_STEP_SNAPSHOT},
	{"{ \"do\": \"region\", \"host\": \"b\", \"access\": [\"remote_read\"] },", QPLAB_STEP_REGION},
	{"{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"rkey\": \"stale\" },", QPLAB_STEP_DATAPATH},
	{"{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"verb\": \"send\" },", QPLAB_STEP_DATAPATH},
	{"{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"verb\": \"write\" },", QPLAB_STEP_DATAPATH},
	{"{ \"do\": \"connect\", \"from\": \"a\", \"to_address\": \"unresolvable\" },", QPLAB_STEP_CONNECT},
	{"{ \"do\": \"add_address\", \"host\": \"b\" },", QPLAB_STEP_ADD_ADDRESS},
	{"{ \"do\": \"remove_address\", \"host\": \"b\" },", QPLAB_STEP_REMOVE_ADDRESS},
	{"{ \"do\": \"restore_address\", \"host\": \"b\" },", QPLAB_STEP_RESTORE_ADDRESS},
	{"{ \"do\": \"disable_ipv6\", \"host\": \"b\" },", QPLAB_STEP_DISABLE_IPV6},
	{"{ \"do\": \"firewall_drop\", \"host\": \"b\" },", QPLAB_STEP_FIREWALL_DROP},
	{"{ \"do\": \"firewall_reject\", \"host\": \"b\" },", QPLAB_STEP_FIREWALL_REJECT},
	{"{ \"do\": \"firewall_off\", \"host\": \"b\" },", QPLAB_STEP_FIREWALL_OFF},
	{"{ \"do\": \"noop\", \"name\": \"n\" },", QPLAB_STEP_NOOP},
};

START_TEST(scenario_parses_region_and_datapath_words)
{
	struct qplab_plan *plan;
	struct qplab_errors errs = {0};
	int rc = parse(fill("", "{ \"do\": \"region\", \"host\": \"b\", \"access\": "
				"[\"remote_read\", \"local_write\"] }, { \"do\": \"datapath\", "
				"\"from\": \"a\", \"to\": \"b\", \"rkey\": \"bad\" }, "
				"{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", "
				"\"verb\": \"send\" }, { \"do\": \"connect\", \"from\": \"a\", "
				"\"to\": \"b\", \"peer_posts\": true },", ""), &plan, &errs);

	ck_assert_msg(rc == 0, "%s", errs.n ? errs.msgs[0] : "?");
	ck_assert_int_eq(plan->steps[0].access, QPHS_ACCESS_REMOTE_READ | QPHS_ACCESS_LOCAL_WRITE);
	ck_assert_int_eq(plan->steps[0].host, 1);
	ck_assert_int_eq(plan->steps[1].rkey_mode, QPHS_RKEY_BAD);
	ck_assert_int_eq(plan->steps[1].verb, QPHS_DATA_CHECK);
	ck_assert_int_eq(plan->steps[2].rkey_mode, QPHS_RKEY_DESCRIPTOR);
	ck_assert_int_eq(plan->steps[2].verb, QPHS_DATA_SEND);
	ck_assert(!plan->steps[2].peer_posts);
	ck_assert(plan->steps[3].peer_posts);
	qplab_plan_free(plan);
	qplab_errors_free(&errs);
	rc = parse(fill("", "{ \"do\": \"datapath\", \"name\": \"w\", \"from\": \"a\", \"to\": "
			"\"b\", \"verb\": \"write\", \"bytes\": 512 }, { \"do\": \"verify\", "
			"\"host\": \"b\", \"of\": \"w\" },", ""), &plan, &errs);
	ck_assert_msg(rc == 0, "%s", errs.n ? errs.msgs[0] : "?");
	ck_assert_int_eq(plan->steps[1].kind, QPLAB_STEP_VERIFY);
	ck_assert_int_eq(plan->steps[1].of, 0);
	ck_assert_int_eq(plan->steps[0].verb, QPHS_DATA_WRITE);
	qplab_plan_free(plan);
	qplab_errors_free(&errs);
}
END_TEST

/* on_posted: the hosts land in the step; {} still asks for the line. */
START_TEST(scenario_parses_datapath_on_posted)
{
	struct qplab_plan *plan;
	struct qplab_errors errs = {0};
	int rc = parse(fill("", "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", "
				"\"on_posted\": { \"kill_agent\": \"b\", \"netem_off\": \"b\" } }, "
				"{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", "
				"\"on_posted\": {} },", ""), &plan, &errs);

	ck_assert_msg(rc == 0, "%s", errs.n ? errs.msgs[0] : "?");
	ck_assert(plan->steps[0].on_posted);
	ck_assert_int_eq(plan->steps[0].posted_kill, 1);
	ck_assert_int_eq(plan->steps[0].posted_netem_off, 1);
	ck_assert(plan->steps[1].on_posted);
	ck_assert_int_eq(plan->steps[1].posted_kill, -1);
	ck_assert_int_eq(plan->steps[1].posted_netem_off, -1);
	ck_assert(!plan->steps[2].on_posted);
	ck_assert_int_eq(plan->steps[2].posted_kill, -1);
	qplab_plan_free(plan);
	qplab_errors_free(&errs);
}
END_TEST

START_TEST(scenario_parses_every_step_kind)
{
	struct qplab_plan *plan;
	struct qplab_errors errs = {0};
	int rc = parse(fill("", step_ok[_i].frag, ""), &plan, &errs);

	ck_assert_msg(rc == 0, "%s: %s", step_ok[_i].frag, errs.n ? errs.msgs[0] : "?");
	ck_assert_int_eq(plan->nsteps, 2);
	ck_assert_int_eq(plan->steps[0].kind, step_ok[_i].kind);
	ck_assert_int_eq(plan->steps[0].line, placeholder_line("@S@"));
	qplab_plan_free(plan);
	qplab_errors_free(&errs);
}
END_TEST

START_TEST(scenario_step_fields_land_in_the_plan)
{
	struct qplab_plan *plan;
	int rc = parse(fill("", "{ \"do\": \"raw_frame\", \"to\": \"c\", \"hex\": \"0a0B ff\" },"
			    "{ \"do\": \"connect_both\", \"hosts\": [\"b\", \"c\"], \"rounds\": 50 },", ""),
		       &plan, NULL);

	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(plan->steps[0].to, 2);
	ck_assert_int_eq(plan->steps[0].frame_len, 3);
	ck_assert_int_eq(plan->steps[0].frame[1], 0x0b);
	ck_assert_int_eq(plan->steps[1].hosts[0], 1);
	ck_assert_int_eq(plan->steps[1].hosts[1], 2);
	ck_assert_uint_eq(plan->steps[1].nhosts, 2);
	ck_assert_int_eq(plan->steps[1].rounds, 50);
	ck_assert_int_eq(plan->steps[1].barrier_ms, 200);
	ck_assert_int_eq(plan->steps[0].from, -1); /* c's own agent sends it */
	qplab_plan_free(plan);
	/* With from: b's agent sends a's daemon the named frame. */
	rc = parse(fill("", "{ \"do\": \"raw_frame\", \"from\": \"b\", \"to\": \"a\", \"kind\": \"trailing\" },", ""),
		   &plan, NULL);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(plan->steps[0].from, 1);
	ck_assert_int_eq(plan->steps[0].to, 0);
	ck_assert_str_eq(plan->steps[0].frame_kind, "trailing");
	ck_assert_ptr_null(plan->steps[0].frame);
	qplab_plan_free(plan);
}
END_TEST

/* connect_both takes a ring of three (or more) hosts, in the order given. */
START_TEST(scenario_connect_both_takes_three_hosts)
{
	struct qplab_plan *plan;
	int rc = parse(fill("", "{ \"do\": \"connect_both\", \"hosts\": [\"c\", \"a\", \"b\"] },", ""), &plan,
		       NULL);

	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(plan->steps[0].nhosts, 3);
	ck_assert_int_eq(plan->steps[0].hosts[0], 2);
	ck_assert_int_eq(plan->steps[0].hosts[1], 0);
	ck_assert_int_eq(plan->steps[0].hosts[2], 1);
	ck_assert_int_eq(plan->steps[0].rounds, 1);
	qplab_plan_free(plan);
}
END_TEST

/* Every assertion kind parses and counts as one assertion. */
static const char *const expect_ok[] = {
	"{ \"host\": \"a\", \"qp_states\": { \"all\": \"RTS\" } },",
	"{ \"host\": \"a\", \"qp_states\": [\"RTS\", \"ERR\"] },",
	"{ \"host\": \"a\", \"qp_count\": 2 },",
	"{ \"host\": \"a\", \"endpoint\": \"CONNECTED_WAIT_READY_ACK\" },",
	"{ \"hosts\": \"all\", \"endpoints\": 1 },",
	"{ \"host\": \"a\", \"step\": \"c1\", \"code\": \"ERR_REJECT_HANDSHAKE\" },",
	"{ \"host\": \"b\", \"reply_msg_sent\": { \"prefix\": \"QP count mismatch\", \"contains\": \"MC_NUM_QP_PER_EP\" } },",
	"{ \"host\": \"a\", \"reply_msg_received\": { \"exact\": \"\" } },",
	"{ \"host\": \"a\", \"error_text\": { \"regex\": \"Connection timed out \\\\[110\\\\]$\" } },",
	"{ \"host\": \"a\", \"datapath\": \"failed\" },",
	"{ \"host\": \"a\", \"datapath_qps\": { \"all\": \"ok\" } },",
	"{ \"host\": \"a\", \"datapath_qp_count\": 8 },",
	"{ \"host\": \"a\", \"datapath_qps\": [\"ok\", \"failed\", \"not_run\"] },",
	"{ \"host\": \"a\", \"datapath_failed_qp\": 1 },",
	"{ \"host\": \"a\", \"datapath_failed_qp\": \"none\" },",
	"{ \"host\": \"a\", \"wc_status\": \"IBV_WC_RETRY_EXC_ERR\" },",
	"{ \"host\": \"a\", \"wc_status\": { \"any_of\": [\"IBV_WC_RETRY_EXC_ERR\"], \"or_none_within_ms\": 10000 } },",
	"{ \"host\": \"a\", \"time_ms\": { \"rtr\": { \"min\": 800, \"max\": 3000 } } },",
	"{ \"host\": \"a\", \"gid_index\": 1 },",
	"{ \"host\": \"a\", \"path_mtu\": 1024 },",
	"{ \"host\": \"a\", \"gid_reason\": { \"prefix\": \"auto: index 1 ranks routable with netdev\" } },",
	"{ \"host\": \"a\", \"peer_ready_ack\": false },",
	"{ \"hosts\": [\"a\", \"b\"], \"daemon_alive\": true },",
	"{ \"hosts\": \"all\", \"leftover_qps\": 0 },",
	"{ \"hosts\": \"all\", \"leftover_objects\": 0 },",
	"{ \"host\": \"b\", \"frame_outcome\": \"closed\" },",
	"{ \"host\": \"a\", \"cases\": [ { \"when\": \"rxe_netns\", \"why\": \"w\", \"datapath\": \"ok\" },"
	" { \"when\": [\"!rxe_netns\", \"kernel < 7.1\"], \"why\": \"w\", \"datapath\": \"failed\" },"
	" { \"when\": \"quirk=e810\", \"why\": \"w\", \"code\": \"ERR_MODIFY_QP\" },"
	" { \"when\": \"driver=rxe\", \"why\": \"w\", \"code\": \"OK\" },"
	" { \"when\": \"otherwise\", \"why\": \"w\", \"code\": \"OK\" } ] },",
};

START_TEST(scenario_parses_every_expectation_kind)
{
	struct qplab_plan *plan;
	struct qplab_errors errs = {0};
	int rc = parse(fill("", "", expect_ok[_i]), &plan, &errs);

	ck_assert_msg(rc == 0, "%s: %s", expect_ok[_i], errs.n ? errs.msgs[0] : "?");
	ck_assert_int_eq(plan->nexpect, 2);
	ck_assert_int_eq(plan->expect[0].line, placeholder_line("@E@"));
	if (plan->expect[0].ncases)
		ck_assert_int_eq(plan->expect[0].ncases, 5);
	else
		ck_assert_int_eq(plan->expect[0].a.nfields, 1);
	qplab_plan_free(plan);
	qplab_errors_free(&errs);
}
END_TEST

/* Rejections: fragment at placeholder -> the message at that line. */
static const struct {
	const char *h, *s, *e; /* fragments */
	const char *ph;        /* the placeholder whose line the error names */
	const char *says;      /* a part of the message */
} reject[] = {
	{NULL, "{ \"do\": \"verify\", \"host\": \"b\", \"of\": \"c1\" },", NULL, "@S@", "is not an earlier datapath step with \"verb\": \"write\""},
	{NULL, "{ \"do\": \"datapath\", \"name\": \"w\", \"from\": \"a\", \"to\": \"c\", \"verb\": \"write\" }, { \"do\": \"verify\", \"host\": \"b\", \"of\": \"w\" },", NULL, "@S@", "wrote to another host"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"verb\": \"write\", \"read_only\": true },", NULL, "@S@", "is not \"read_only\""},
	{NULL, "{ \"do\": \"verify\", \"host\": \"b\" },", NULL, "@S@", "of"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"rkey\": \"old\" },", NULL, "@S@", "\"rkey\" is one of descriptor, bad, stale, not \"old\""},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"verb\": \"recv\" },", NULL, "@S@", "\"verb\" is one of check, write, send"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"verb\": \"send\", \"rkey\": \"bad\" },", NULL, "@S@", "a \"send\" datapath takes no"},
	{NULL, "{ \"do\": \"region\", \"host\": \"b\", \"access\": [\"remote_read\", \"remote_read\"] },", NULL, "@S@", "names \"remote_read\" twice"},
	{NULL, "{ \"do\": \"region\", \"host\": \"b\", \"access\": [\"remote_write\"] },", NULL, "@S@", "\"remote_write\" needs \"local_write\""},
	{NULL, "{ \"do\": \"region\", \"host\": \"b\", \"access\": [\"remote\"] },", NULL, "@S@", "\"access\"[0] is one of"},
	{NULL, "{ \"do\": \"region\", \"host\": \"b\", \"access\": [1] },", NULL, "@S@", "\"access\"[0] is one of"},
	{NULL, "{ \"do\": \"region\", \"host\": \"b\" },", NULL, "@S@", "access"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"verb\": \"burst\" },", NULL, "@S@", "a \"burst\" datapath needs \"count\" (1..65535)"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"count\": 4 },", NULL, "@S@", "\"count\" belongs to a \"burst\" datapath only"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"verb\": \"burst\", \"count\": 0 },", NULL, "@S@", "count"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"verb\": \"burst\", \"count\": 4, \"rkey\": \"bad\" },", NULL, "@S@", "a \"burst\" datapath takes no"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"verb\": \"burst\", \"count\": 4, \"on_posted\": {} },", NULL, "@S@", "a \"burst\" datapath takes no \"on_posted\""},
	{NULL, "{ \"do\": \"fan_in\", \"from\": \"a\", \"to\": \"b\" },", NULL, "@S@", "fan_in needs \"count\" (1..256)"},
	{NULL, "{ \"do\": \"fan_in\", \"from\": \"a\", \"to\": \"b\", \"count\": 257 },", NULL, "@S@", "count"},
	{NULL, "{ \"do\": \"fan_in\", \"from\": [\"a\", \"b\"], \"to\": \"b\", \"count\": 2 },", NULL, "@S@", "fan_in: \"to\" is one of \"from\""},
	{NULL, "{ \"do\": \"fan_in\", \"from\": [\"a\", \"a\"], \"to\": \"b\", \"count\": 2 },", NULL, "@S@", "fan_in names host \"a\" twice"},
	{NULL, "{ \"do\": \"fan_in\", \"from\": [], \"to\": \"b\", \"count\": 2 },", NULL, "@S@", "fan_in: \"from\" names 1 to"},
	{NULL, NULL, "{ \"host\": \"a\", \"error_text\": { \"regex\": \"a(b\" } },", "@E@", "bad regex"},
	/* glibc's regcomp copies repeated expressions: 128 stacked '+' took it
	 * past 2 GB (fuzz-long); refused before it compiles (13 '+': 2^13 copies) */
	{NULL, NULL, "{ \"host\": \"a\", \"error_text\": { \"regex\": \"x+++++++++++++\" } },", "@E@", "regex in error_text refused: its repetitions multiply past 4096"},
	{NULL, NULL, "{ \"host\": \"a\", \"error_text\": { \"regex\": \"(a{100}){100}\" } },", "@E@", "multiply past 4096"},
	{NULL, NULL, "{ \"host\": \"a\", \"error_text\": { \"regex\": \"a{99999999}\" } },", "@E@", "multiply past 4096"},
	{NULL, NULL, "{ \"host\": \"a\", \"datapath_qps\": { \"all\": \"fine\" } },", "@E@", "all \"fine\" is not one of: ok, failed, not_run"},
	{NULL, NULL, "{ \"host\": \"a\", \"datapath_qps\": [\"ok\", \"RTS\"] },", "@E@", "datapath_qps[1] \"RTS\" is not one of"},
	{NULL, NULL, "{ \"host\": \"a\", \"datapath_qps\": \"ok\" },", "@E@", "datapath_qps is {\"all\": RESULT} or [RESULT, ...]"},
	{NULL, NULL, "{ \"host\": \"a\", \"datapath_qps\": { \"every\": \"ok\" } },", "@E@", "unknown key \"every\""},
	{NULL, NULL, "{ \"host\": \"a\", \"datapath_failed_qp\": \"all\" },", "@E@", "datapath_failed_qp is a QP index (0..254) or \"none\""},
	{NULL, NULL, "{ \"host\": \"a\", \"datapath_failed_qp\": 255 },", "@E@", "datapath_failed_qp"},
	{NULL, NULL, "{ \"host\": \"a\", \"datapath_qp_count\": -1 },", "@E@", "datapath_qp_count"},
	{NULL, NULL, "{ \"host\": \"a\", \"qp_count\": { \"min\": 2 } },", "@E@", "qp_count is N or {\"min\": N, \"max\": N}, both bounds given"},
	{NULL, NULL, "{ \"host\": \"a\", \"qp_count\": { \"min\": 3, \"max\": 2 } },", "@E@", "qp_count: min above max"},
	{NULL, NULL, "{ \"host\": \"a\", \"qp_count\": { \"min\": 0, \"most\": 2 } },", "@E@", "unknown key \"most\""},
	{NULL, NULL, "{ \"host\": \"a\", \"code\": \"ERR_NO_SUCH_THING\" },", "@E@", "not an error name"},
	{NULL, NULL, "{ \"host\": \"a\", \"code\": \"stall\" },", "@E@", "not an error name"},
	{"\"d\": { \"fault\": { \"name\": \"stal\" } },", NULL, NULL, "@H@", "unknown fault \"stal\""},
	{"\"d\": { \"fault\": { \"name\": \"ERR_REPLY_TIMEOUT\" } },", NULL, NULL, "@H@", "unknown fault"},
	{"\"d\": { \"fault\": { \"name\": \"delay\" } },", NULL, NULL, "@H@", "needs \"ms\""},
	{"\"d\": { \"fault\": { \"name\": \"stall\", \"text\": \"x\" } },", NULL, NULL, "@H@", "\"reject\" only"},
	{"\"d\": { \"fault\": { \"name\": \"close\", \"types\": [\"handshake\"] } },", NULL, NULL, "@H@", "fault types are"},
	{"\"d\": { \"fault\": { \"name\": \"close\", \"count\": 1 } },", NULL, NULL, "@H@", "unknown key \"count\""},
	{NULL, NULL, "{ \"host\": \"a\", \"cases\": [ { \"when\": \"rxe_netns\", \"datapath\": \"ok\" } ] },", "@E@", "has no \"why\""},
	{NULL, "{ \"do\": \"connect\", \"from\": \"a\", \"to\": \"z\" },", NULL, "@S@", "unknown host \"z\""},
	{NULL, NULL, "{ \"host\": \"z\", \"code\": \"OK\" },", "@E@", "unknown host \"z\""},
	{NULL, NULL, "{ \"host\": \"a\", \"step\": \"nope\", \"code\": \"OK\" },", "@E@", "unknown step \"nope\""},
	{NULL, NULL, "{ \"host\": \"a\", \"hw_counters\": { \"sent_pkts\": 1 } },", "@E@", "it needs \"step\""},
	{NULL, NULL, "{ \"host\": \"a\", \"step\": \"c1\", \"hw_counters\": { \"Sent-Pkts\": 1 } },", "@E@", "is not a counter name"},
	{NULL, NULL, "{ \"host\": \"a\", \"step\": \"c1\", \"hw_counters\": { \"sent_pkts\": -1 } },", "@E@", "a change is >= 0"},
	{NULL, NULL, "{ \"host\": \"a\", \"step\": \"c1\", \"hw_counters\": { \"sent_pkts\": \"1\" } },", "@E@", "is N or"},
	{NULL, NULL, "{ \"host\": \"a\", \"step\": \"c1\", \"hw_counters\": { \"sent_pkts\": { \"min\": 3, \"max\": 2 } } },", "@E@", "min above max"},
	{NULL, NULL, "{ \"host\": \"a\", \"step\": \"c1\", \"hw_counters\": { } },", "@E@", "names no counter"},
	{NULL, "{ \"do\": \"wait\", \"host\": \"a\", \"deadline_ms\": 100, \"until\": { \"hw_counters\": { \"sent_pkts\": 1 } } },", NULL, "@S@", "cannot assert hw_counters"},
	{NULL, "{ \"do\": \"teleport\", \"host\": \"a\" },", NULL, "@S@", "unknown step \"teleport\""},
	{NULL, "{ \"do\": \"blackhole\", \"host\": \"a\", \"peer\": \"q\" },", NULL, "@S@", "unknown host \"q\""},
	{NULL, "{ \"do\": \"link_down\", \"host\": \"a\", \"colour\": 1 },", NULL, "@S@", "unknown key \"colour\""},
	{NULL, "{ \"do\": \"raw_frame\", \"to\": \"a\", \"kind\": \"stall\" },", NULL, "@S@", "bad-frame kind"},
	{NULL, "{ \"do\": \"raw_frame\", \"to\": \"a\", \"hex\": \"0g\" },", NULL, "@S@", "hex digits"},
	{NULL, "{ \"do\": \"raw_frame\", \"to\": \"a\", \"hex\": \"00\", \"kind\": \"truncate\" },", NULL, "@S@", "exactly one"},
	{NULL, "{ \"do\": \"raw_frame\", \"from\": \"a\", \"to\": \"a\", \"kind\": \"truncate\" },", NULL, "@S@", "\"from\" is a host other than \"to\""},
	{NULL, "{ \"do\": \"raw_frame\", \"from\": \"b\", \"to\": \"b\", \"hex\": \"00\" },", NULL, "@S@", "\"from\" is a host other than \"to\""},
	{NULL, "{ \"do\": \"raw_frame\", \"from\": \"z\", \"to\": \"a\", \"kind\": \"truncate\" },", NULL, "@S@", "\"z\""},
	{NULL, "{ \"do\": \"raw_frame\", \"from\": \"b\", \"to\": \"a\", \"kind\": \"stall\" },", NULL, "@S@", "bad-frame kind"},
	{NULL, "{ \"do\": \"raw_frame\", \"from\": \"b\", \"to\": \"a\" },", NULL, "@S@", "exactly one"},
	{NULL, "{ \"do\": \"raw_frame\", \"from\": \"b\", \"kind\": \"truncate\" },", NULL, "@S@", "missing required key \"to\""},
	{NULL, "{ \"do\": \"raw_frame\", \"to\": \"a\", \"kind\": \"stale_ack\" },", NULL, "@S@", "missing required key \"from\""},
	{NULL, "{ \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\", \"to_device\": \"rxe 1\" },", NULL, "@S@", "to_device is a device name"},
	{NULL, "{ \"do\": \"connect\", \"from\": \"a\", \"to_address\": \"unowned\", \"to_device\": \"rxe1\" },", NULL, "@S@", "goes with \"to\""},
	{NULL, "{ \"do\": \"connect\", \"from\": \"a\", \"to_address\": \"unowned\", \"peer_posts\": true },", NULL, "@S@", "peer_posts goes with \"to\""},
	{NULL, "{ \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\", \"peer_posts\": 1 },", NULL, "@S@", "peer_posts"},
	{NULL, "{ \"do\": \"raw_frame\", \"from\": \"a\", \"to\": \"a\", \"kind\": \"stale_ack\" },", NULL, "@S@", "another host"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"on_posted\": { \"kill_agent\": \"a\" } },", NULL, "@S@", "kills the host that waits"},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"on_posted\": { \"kill\": \"b\" } },", NULL, "@S@", "unknown key \"kill\""},
	{NULL, "{ \"do\": \"datapath\", \"from\": \"a\", \"to\": \"b\", \"on_posted\": { \"netem_off\": \"q\" } },", NULL, "@S@", "unknown host \"q\""},
	{NULL, "{ \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\", \"on_posted\": {} },", NULL, "@S@", "unknown key \"on_posted\""},
	{NULL, "{ \"do\": \"wait\", \"host\": \"a\", \"until\": { \"endpoint\": \"none\" } },", NULL, "@S@", "deadline_ms"},
	{NULL, "{ \"do\": \"snapshot\", \"name\": \"x\" }, { \"do\": \"snapshot\", \"name\": \"x\" },", NULL, "@S@", "used twice"},
	{NULL, NULL, "{ \"host\": \"a\", \"cases\": [ { \"when\": \"kernel == 6.12\", \"why\": \"w\", \"code\": \"OK\" } ] },", "@E@", "never an exact release"},
	{NULL, NULL, "{ \"host\": \"a\", \"cases\": [ { \"when\": \"rxe_nets\", \"why\": \"w\", \"code\": \"OK\" } ] },", "@E@", "unknown key \"rxe_nets\""},
	{NULL, NULL, "{ \"host\": \"a\", \"cases\": [ { \"when\": \"otherwise\", \"why\": \"w\", \"code\": \"OK\" }, { \"when\": \"ipv6\", \"why\": \"w\", \"code\": \"OK\" } ] },", "@E@", "\"otherwise\" stands alone"},
	{NULL, NULL, "{ \"host\": \"a\", \"code\": \"OK\", \"cases\": [ { \"when\": \"ipv6\", \"why\": \"w\", \"code\": \"OK\" } ] },", "@E@", "not both"},
	{NULL, NULL, "{ \"host\": \"a\", \"qp_states\": { \"all\": \"READY\" } },", "@E@", "not one of"},
	{NULL, NULL, "{ \"host\": \"a\", \"wc_status\": \"IBV_WC_NOPE\" },", "@E@", "ibv_wc_status"},
	{NULL, NULL, "{ \"host\": \"a\", \"time_ms\": { \"warp\": { \"max\": 1 } } },", "@E@", "unknown timing"},
	{NULL, NULL, "{ \"host\": \"a\", \"gid_index\": \"1\" },", "@E@", "must be an integer"},
	{NULL, NULL, "{ \"host\": \"a\", \"peer_ready_ack\": 0 },", "@E@", "peer_ready_ack"},
	{NULL, NULL, "{ \"host\": \"a\", \"gid_reason\": \"auto\" },", "@E@", "gid_reason"},
	{NULL, NULL, "{ \"host\": \"a\" },", "@E@", "asserts nothing"},
	{NULL, NULL, "{ \"host\": \"a\", \"hosts\": \"all\", \"code\": \"OK\" },", "@E@", "exactly one"},
	{"\"d\": { \"env\": { \"PATH\": \"/bin\" } },", NULL, NULL, "@H@", "MC_*"},
	{"\"d\": { \"agent\": { \"reset_policy\": \"sometimes\" } },", NULL, NULL, "@H@", "reset_policy"},
	{"\"d\": { \"agent\": { \"qp_retry_cnt\": 8 } },", NULL, NULL, "@H@", "0..7"},
	{"\"d\": { \"impl\": \"moonlight\" },", NULL, NULL, "@H@", "one of qplab, mooncake-compat, mooncake"},
	{NULL, NULL, "{ \"host\": \"a\", \"cases\": [ { \"when\": \"impl:z=qplab\", \"why\": \"w\", \"code\": \"OK\" } ] },", "@E@", "no host \"z\""},
	{NULL, NULL, "{ \"host\": \"a\", \"cases\": [ { \"when\": \"impl=moon\", \"why\": \"w\", \"code\": \"OK\" } ] },", "@E@", "the implementations are"},
	{NULL, NULL, "{ \"host\": \"a\", \"cases\": [ { \"when\": \"impl:=qplab\", \"why\": \"w\", \"code\": \"OK\" } ] },", "@E@", "want impl:HOST=NAME"},
	{"\"D\": {},", NULL, NULL, "@H@", "host name"},
	{"\"a\": {},", NULL, NULL, "@H@", "duplicate key \"a\""},
	{NULL, "{ 'do': \"link_up\", \"host\": \"a\" },", NULL, "@S@", "double quotes"},
	{NULL, "{ \"do\": \"link_up\", \"host\": 'a' },", NULL, "@S@", "syntax error"},
	{NULL, "{ \"do\": \"set_mtu\", \"host\": \"a\", \"mtu\": NaN },", NULL, "@S@", "not a JSON value"},
	{NULL, "{ \"do\": \"link_up\", \"host\": \"a\", },", NULL, "@S@", "syntax error"},
	{NULL, "{ \"do\": \"connect_both\", \"hosts\": [\"a\"] },", NULL, "@S@", "2 to 8 hosts"},
	{NULL, "{ \"do\": \"connect_both\", \"hosts\": [\"a\", \"b\", \"a\"] },", NULL, "@S@", "names host \"a\" twice"},
	{NULL, "{ \"do\": \"connect_both\", \"hosts\": [\"a\", 2] },", NULL, "@S@",
	 "\"hosts[1]\" must be a string, not an integer"},
	{NULL, NULL, "{ \"host\": \"a\", \"wc_status\": { \"any_of\": [null] } },", "@E@",
	 "\"any_of[0]\" must be a string, not null"},
	{NULL, NULL, "{ \"hosts\": [\"a\", null], \"code\": \"OK\" },", "@E@",
	 "\"hosts[1]\" must be a string, not null"},
	{NULL, NULL, "{ \"host\": \"a\", \"qp_states\": [\"RTS\", 3] },", "@E@",
	 "\"qp_states[1]\" must be a string, not an integer"},
	{NULL, NULL, "{ \"host\": \"a\", \"cases\": [ { \"when\": [null], \"why\": \"w\", "
	 "\"code\": \"OK\" } ] },", "@E@", "\"when[0]\" must be a string, not null"},
};

/* A link's "between" with a null (once a crash: the name went to strcmp). */
START_TEST(scenario_link_between_null_is_an_error_at_its_line)
{
	static const char text[] = "{ \"description\": \"t\", \"source\": \"u\",\n"
				   "  \"hosts\": { \"a\": {}, \"b\": {} },\n"
				   "  \"links\": [ { \"between\": [null, \"b\"] } ],\n"
				   "  \"steps\": [ { \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\" } ],\n"
				   "  \"expect\": [ { \"host\": \"a\", \"code\": \"OK\" } ] }\n";
	struct qplab_plan *plan = (void *)1;
	struct qplab_errors errs = {0};

	ck_assert_int_lt(parse(text, &plan, &errs), 0);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msgs[0], "t.json:3: \"between[0]\" must be a string, not null");
	qplab_errors_free(&errs);
}
END_TEST

START_TEST(scenario_rejects_with_file_and_line)
{
	struct qplab_plan *plan = (void *)1;
	struct qplab_errors errs = {0};
	char want[64];
	int rc = parse(fill(reject[_i].h, reject[_i].s, reject[_i].e), &plan, &errs);

	ck_assert_int_lt(rc, 0);
	unit_hit(rc);
	ck_assert_ptr_null(plan);
	ck_assert_uint_ge(errs.n, 1);
	snprintf(want, sizeof(want), "t.json:%d: ", placeholder_line(reject[_i].ph));
	ck_assert_msg(!strncmp(errs.msgs[0], want, strlen(want)), "case %d: '%s' does not start with '%s'",
		      _i, errs.msgs[0], want);
	ck_assert_msg(strstr(errs.msgs[0], reject[_i].says), "case %d: '%s' does not say '%s'", _i,
		      errs.msgs[0], reject[_i].says);
	qplab_errors_free(&errs);
}
END_TEST

START_TEST(scenario_reports_every_error_in_line_order)
{
	struct qplab_errors errs = {0};
	struct qplab_plan *plan;
	int rc = parse(fill("\"d\": { \"mtu\": 1 },", "{ \"do\": \"link_up\", \"host\": \"z\" },",
			    "{ \"host\": \"a\", \"code\": \"NOPE\" },"),
		       &plan, &errs);
	int last = 0;

	ck_assert_int_eq(rc, QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_uint_eq(errs.n, 3);
	for (size_t i = 0; i < errs.n; i++) {
		int line = atoi(errs.msgs[i] + strlen("t.json:"));
		ck_assert_int_gt(line, last);
		last = line;
	}
	qplab_errors_free(&errs);
}
END_TEST

START_TEST(scenario_empty_or_comment_only_file_is_a_syntax_error)
{
	static const char *const texts[] = {"", "// nothing\n/* at all */\n\n"};
	struct qplab_errors errs = {0};
	struct qplab_plan *plan;

	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(parse(texts[i], &plan, &errs), QPHS_ERR_MALFORMED_JSON);
		ck_assert_uint_eq(errs.n, 1);
		ck_assert_ptr_nonnull(strstr(errs.msgs[0], "syntax error: the file ends inside a value"));
		qplab_errors_free(&errs);
	}
}
END_TEST

/* A description is written into results.json as it stands: bytes that are
 * not UTF-8 are the file's error, with the line they are on. */
START_TEST(scenario_files_must_be_utf8)
{
	static const struct {
		const char *from, *to, *want;
	} cases[] = {
		{"\"description\": \"t\"", "\"description\": \"caf\xC3\xA9\"", NULL},
		{"\"description\": \"t\"", "\"description\": \"t\xFF\"",
		 "t.json:2: column 20: byte 0xff is not UTF-8"},
		{"\"source\": \"unit test\"", "\"source\": \"unit \xC0\xAF\"",
		 "t.json:3: column 19: byte 0xc0 is not UTF-8"},
		{"\"source\": \"unit test\",", "\"source\": \"unit test\", // \xED\xA0\x80",
		 "t.json:3: column 29: byte 0xed is not UTF-8"},
	};
	struct qplab_errors errs = {0};
	struct qplab_plan *plan;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[sizeof(TEMPLATE) + 64], *at;
		const char *t = fill("", "", "");

		at = strstr(t, cases[i].from);
		ck_assert_ptr_nonnull(at);
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - t), t, cases[i].to,
			 at + strlen(cases[i].from));
		if (!cases[i].want) {
			ck_assert_int_eq(parse(text, &plan, &errs), 0);
			ck_assert_str_eq(plan->description, "caf\xC3\xA9");
			qplab_plan_free(plan);
			continue;
		}
		ck_assert_int_eq(parse(text, &plan, &errs), QPHS_ERR_MALFORMED_JSON);
		ck_assert_uint_eq(errs.n, 1);
		ck_assert_msg(strstr(errs.msgs[0], cases[i].want), "'%s'", errs.msgs[0]);
		qplab_errors_free(&errs);
	}
}
END_TEST

START_TEST(scenario_size_limits_are_errors_not_slowness)
{
	size_t big = QPLAB_SCENARIO_MAX_BYTES + 1, n = 0;
	char *text = malloc(big + 64);
	struct qplab_errors errs = {0};
	struct qplab_plan *plan;

	memset(text, ' ', big);
	ck_assert_int_eq(qplab_scenario_parse("t.json", text, big, &plan, &errs), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_str_eq(errs.msgs[0], "t.json: larger than 1048576 bytes");
	qplab_errors_free(&errs);
	/* An env of 2000 keys: refused at the key past the cap, with its line. */
	n = (size_t)sprintf(text, "{ \"hosts\": { \"a\": { \"env\": {\n");
	for (int i = 0; i < 2000; i++)
		n += (size_t)sprintf(text + n, "\"MC_K%d\": 1,\n", i);
	n += (size_t)sprintf(text + n, "\"MC_END\": 1 } } } }\n");
	ck_assert_int_eq(qplab_scenario_parse("t.json", text, n, &plan, &errs), QPHS_ERR_MALFORMED_JSON);
	ck_assert_str_eq(errs.msgs[0], "t.json:1026: more than 1024 keys in one object");
	qplab_errors_free(&errs);
	free(text);
}
END_TEST

START_TEST(scenario_requires_source_and_description)
{
	const char *text = "{ \"hosts\": { \"a\": {} }, \"steps\": [ { \"do\": \"link_up\", \"host\": \"a\" } ],\n"
			   "  \"expect\": [ { \"host\": \"a\", \"daemon_alive\": true } ] }";
	struct qplab_errors errs = {0};
	struct qplab_plan *plan;

	ck_assert_int_lt(parse(text, &plan, &errs), 0);
	ck_assert_uint_eq(errs.n, 2);
	ck_assert_ptr_nonnull(strstr(errs.msgs[0], "\"description\""));
	ck_assert_ptr_nonnull(strstr(errs.msgs[1], "\"source\""));
	qplab_errors_free(&errs);
}
END_TEST

START_TEST(scenario_unterminated_comment_names_its_line)
{
	const char *text = "{\n \"description\": \"x\"\n /* never closed\n\n";
	struct qplab_errors errs = {0};
	struct qplab_plan *plan;

	ck_assert_int_eq(parse(text, &plan, &errs), QPHS_ERR_MALFORMED_JSON);
	unit_hit(QPHS_ERR_MALFORMED_JSON);
	ck_assert_str_eq(errs.msgs[0], "t.json:3: unterminated /* comment");
	qplab_errors_free(&errs);
}
END_TEST

/* The line of the first line of path holding marker, or 0. */
static int marker_line(const char *path, const char *marker)
{
	char buf[1024];
	int line = 0;
	FILE *f = fopen(path, "r");

	ck_assert_msg(f != NULL, "cannot open %s (run from the checkout root)", path);
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		if (strstr(buf, marker)) {
			fclose(f);
			return line;
		}
	}
	fclose(f);
	return 0;
}

static const struct {
	const char *file, *says;
	int rc;
} lab_files[] = {
	{"tests/lab/bad-syntax.json", "syntax error", QPHS_ERR_MALFORMED_JSON},
	{"tests/lab/unknown-key.json", "unknown key \"deadline\"", QPHS_ERR_INVALID_ARGUMENT},
	{"tests/lab/duplicate-key.json", "duplicate key \"mtu\"", QPHS_ERR_INVALID_ARGUMENT},
};

START_TEST(scenario_lab_selftest_files_are_rejected_at_their_line)
{
	struct qplab_errors errs = {0};
	struct qplab_plan *plan;
	char want[128];
	int line = marker_line(lab_files[_i].file, "<- error");
	int rc = qplab_scenario_load(lab_files[_i].file, &plan, &errs);

	ck_assert_int_gt(line, 0);
	ck_assert_int_eq(rc, lab_files[_i].rc);
	unit_hit(rc);
	ck_assert_uint_eq(errs.n, 1);
	snprintf(want, sizeof(want), "%s:%d: ", lab_files[_i].file, line);
	ck_assert_msg(!strncmp(errs.msgs[0], want, strlen(want)), "'%s' vs '%s'", errs.msgs[0], want);
	ck_assert_ptr_nonnull(strstr(errs.msgs[0], lab_files[_i].says));
	qplab_errors_free(&errs);
}
END_TEST

START_TEST(scenario_wrong_expectation_file_parses)
{
	struct qplab_plan *plan;
	struct qplab_errors errs = {0};

	ck_assert_int_eq(qplab_scenario_load("tests/lab/wrong-expectation.json", &plan, &errs), 0);
	ck_assert_str_eq(plan->id, "lab/wrong-expectation");
	ck_assert_int_eq(plan->nexpect, 3);
	ck_assert_int_eq(plan->expect[1].nhosts, 2);
	ck_assert(qplab_plan_has_tag(plan, "selftest"));
	qplab_plan_free(plan);
}
END_TEST

/* The runner's own self-test scenarios parse (the bad ones are above). */
static const char *const lab_good[] = {"tests/lab/wrong-expectation.json", "tests/lab/healthy.json",
				       "tests/lab/interrupt.json"};

START_TEST(scenario_lab_selftest_scenarios_parse)
{
	struct qplab_plan *plan;
	struct qplab_errors errs = {0};

	ck_assert_msg(qplab_scenario_load(lab_good[_i], &plan, &errs) == 0, "%s",
		      errs.n ? errs.msgs[0] : "?");
	ck_assert(qplab_plan_has_tag(plan, "selftest"));
	qplab_plan_free(plan);
}
END_TEST

START_TEST(scenario_missing_file_is_one_error)
{
	struct qplab_plan *plan;
	struct qplab_errors errs = {0};

	ck_assert_int_eq(qplab_scenario_load("tests/lab/no-such-file.json", &plan, &errs),
			 QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msgs[0], "tests/lab/no-such-file.json: No such file or directory");
	qplab_errors_free(&errs);
}
END_TEST

/* The first ```json block of docs/scenarios.md: the annotated example. */
static char *doc_example(size_t *len)
{
	FILE *f = fopen("docs/scenarios.md", "r");
	char line[2048];
	char *out = NULL;
	size_t n = 0;
	int in = 0;

	ck_assert_msg(f != NULL, "docs/scenarios.md missing (run from the checkout root)");
	while (fgets(line, sizeof(line), f)) {
		if (!in && !strncmp(line, "```json", 7)) {
			in = 1;
			continue;
		}
		if (in && !strncmp(line, "```", 3))
			break;
		if (in) {
			out = realloc(out, n + strlen(line) + 1);
			memcpy(out + n, line, strlen(line) + 1);
			n += strlen(line);
		}
	}
	fclose(f);
	*len = n;
	return out;
}

START_TEST(scenario_doc_example_parses)
{
	size_t len;
	char *text = doc_example(&len);
	struct qplab_plan *plan;
	struct qplab_errors errs = {0};
	int rc;

	ck_assert_ptr_nonnull(text);
	rc = qplab_scenario_parse("docs/scenarios.md example", text, len, &plan, &errs);
	ck_assert_msg(rc == 0, "%s", errs.n ? errs.msgs[0] : "?");
	/* The example exercises the schema: hosts, links, keyed rows, steps. */
	ck_assert_uint_ge(plan->nhosts, 2);
	ck_assert_uint_ge(plan->nlinks, 1);
	ck_assert_uint_ge(plan->nsteps, 5);
	int keyed = 0;
	for (size_t i = 0; i < plan->nexpect; i++)
		keyed += plan->expect[i].ncases > 0;
	ck_assert_int_ge(keyed, 1);
	qplab_plan_free(plan);
	free(text);
}
END_TEST

Suite *suite_scenario(void)
{
	Suite *s = suite_create("scenario");
	TCase *tc = unit_tcase(s, "kinds", 10);

	tcase_add_loop_test(tc, scenario_parses_every_step_kind, 0, sizeof(step_ok) / sizeof(step_ok[0]));
	tcase_add_test(tc, scenario_parses_region_and_datapath_words);
	tcase_add_test(tc, scenario_parses_datapath_on_posted);
	tcase_add_test(tc, scenario_step_fields_land_in_the_plan);
	tcase_add_test(tc, scenario_connect_both_takes_three_hosts);
	tcase_add_loop_test(tc, scenario_parses_every_expectation_kind, 0,
			    sizeof(expect_ok) / sizeof(expect_ok[0]));
	tc = unit_tcase(s, "rejects", 10);
	tcase_add_loop_test(tc, scenario_rejects_with_file_and_line, 0, sizeof(reject) / sizeof(reject[0]));
	tcase_add_test(tc, scenario_link_between_null_is_an_error_at_its_line);
	tcase_add_test(tc, scenario_reports_every_error_in_line_order);
	tcase_add_test(tc, scenario_requires_source_and_description);
	tcase_add_test(tc, scenario_empty_or_comment_only_file_is_a_syntax_error);
	tcase_add_test(tc, scenario_size_limits_are_errors_not_slowness);
	tcase_add_test(tc, scenario_files_must_be_utf8);
	tcase_add_test(tc, scenario_unterminated_comment_names_its_line);
	tc = unit_tcase(s, "files", 10);
	tcase_add_loop_test(tc, scenario_lab_selftest_files_are_rejected_at_their_line, 0,
			    sizeof(lab_files) / sizeof(lab_files[0]));
	tcase_add_test(tc, scenario_wrong_expectation_file_parses);
	tcase_add_loop_test(tc, scenario_lab_selftest_scenarios_parse, 0, sizeof(lab_good) / sizeof(lab_good[0]));
	tcase_add_test(tc, scenario_missing_file_is_one_error);
	tcase_add_test(tc, scenario_doc_example_parses);
	return s;
}
