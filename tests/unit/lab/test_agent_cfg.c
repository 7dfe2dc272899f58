/* `qplab agent --config` (harness/agent/agent_cfg.c): what each key sets,
 * and every kind of bad value refused with a message naming its key. */
#include <string.h>

#include "agent/agent.h"
#include "unit.h"

static int apply(struct agent *a, const char *json, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	qphs_config_init(&a->cfg);
	err[0] = '\0';
	return agent_apply_config(a, json, err, errlen);
}

START_TEST(agent_config_sets_options_hooks_and_fault)
{
	struct agent a;
	char err[256];

	ck_assert_int_eq(apply(&a, "{\"agent\": {\"ready_ack\": false, \"qp_retry_cnt\": 3, "
			       "\"reset_policy\": \"reuse\", \"delay_passive_rtr_ms\": 40, "
			       "\"delay_active_rtr_ms\": 70, "
			       "\"sq_psn\": 4096, \"rq_psn\": 16777215, "
			       "\"advertise\": {\"qpn\": 0, \"gid\": \"::1\", \"qp_count\": 3}}, "
			       "\"fault\": {\"name\": \"delay\", \"ms\": 25, \"types\": [\"probe\"]}}",
			       err, sizeof(err)), 0);
	ck_assert(!a.cfg.ready_ack);
	ck_assert_int_eq(a.cfg.qp_retry_cnt, 3);
	ck_assert_int_eq(a.cfg.reset_policy, QPHS_RESET_REUSE);
	ck_assert_int_eq(a.hooks.passive_rtr_delay_ms, 40);
	ck_assert_int_eq(a.hooks.active_reply_delay_ms, 70);
	ck_assert(a.hooks.advertise_qpn_set && a.hooks.advertise_qpn == 0);
	ck_assert_str_eq(a.hooks.advertise_gid, "::1");
	ck_assert_int_eq(a.hooks.advertise_qp_count, 3);
	ck_assert_uint_eq(a.hooks.sq_psn, 4096);
	ck_assert_uint_eq(a.hooks.rq_psn, 16777215);
	ck_assert_int_eq(a.fault.kind, QPHS_FAULT_DELAY);
	ck_assert_int_eq(a.fault.delay_ms, 25);
	ck_assert_uint_eq(a.fault.types, 1u << QPHS_HS_PROBE);
}
END_TEST

static const struct {
	const char *json, *says;
} bad[] = {
	{"{\"agent\": {\"ready_ack\": 1}}", "--config: \"ready_ack\" must be true or false, not an integer"},
	{"{\"agent\": {\"qp_timeout\": \"14\"}}", "--config: \"qp_timeout\" must be an integer, not a string"},
	{"{\"agent\": {\"advertise\": {\"qpn\": 4294967296}}}", "--config: \"qpn\" must be in 0..4294967295"},
	{"{\"agent\": {\"qp_count\": 2147483648}}", "--config: unknown key \"qp_count\" in agent"},
	{"{\"agent\": {\"advertise\": {\"qp_count\": 2147483648}}}", "--config: \"qp_count\" must be in"},
	{"{\"agent\": {\"quirk\": \"a-name-longer-than-the-field-holds-by-far\"}}", "--config: \"quirk\" is longer than"},
	{"{\"agent\": {\"reset_policy\": \"sometimes\"}}", "not reuse or reconstruct"},
	{"{\"fault\": {\"ms\": 5}}", "--config: fault needs \"name\""},
	{"{\"fault\": {\"name\": \"close\", \"types\": [\"probe\", null]}}", "--config: \"types[1]\" must be a string, not null"},
	{"{\"fault\": {\"name\": \"close\", \"seed\": -1}}", "--config: \"seed\" must be in 0.."},
	{"{\"colour\": 1}", "--config: unknown key \"colour\""},
	{"{\"agent\": {\"sq_psn\": 16777216}}", "--config: \"sq_psn\" must be in 0..16777215"},
	{"{\"agent\": {\"rq_psn\": -1}}", "--config: \"rq_psn\" must be in 0..16777215"},
	{"{\"agent\": {}} trailing", "--config: not JSON"},
	{"[]", "--config: not a JSON object"},
};

START_TEST(agent_config_refuses_bad_values_naming_the_key)
{
	struct agent a;
	char err[256];

	ck_assert_int_eq(apply(&a, bad[_i].json, err, sizeof(err)), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_msg(strstr(err, bad[_i].says), "%s: '%s' does not say '%s'", bad[_i].json, err,
		      bad[_i].says);
}
END_TEST

/* rdma_max (agent_cgroup.c): set with each limit, or -1 for "max"; a
 * negative limit or an unknown key is refused naming it. */
START_TEST(agent_config_rdma_max)
{
	struct agent a;
	char err[256];

	ck_assert_int_eq(apply(&a, "{\"agent\": {}}", err, sizeof(err)), 0);
	ck_assert(!a.rdma_max_set);
	ck_assert_int_eq(apply(&a, "{\"agent\": {\"rdma_max\": {\"hca_object\": 4}}}", err,
			       sizeof(err)), 0);
	ck_assert(a.rdma_max_set);
	ck_assert_int_eq(a.rdma_max_object, 4);
	ck_assert_int_eq(a.rdma_max_handle, -1);
	ck_assert_int_eq(apply(&a, "{\"agent\": {\"rdma_max\": {\"hca_handle\": 0}}}", err,
			       sizeof(err)), 0);
	ck_assert_int_eq(a.rdma_max_handle, 0);
	ck_assert_int_eq(a.rdma_max_object, -1);
	ck_assert_int_eq(apply(&a, "{\"agent\": {\"rdma_max\": {\"hca_object\": -1}}}", err,
			       sizeof(err)), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_msg(strstr(err, "\"hca_object\" must be in 0..1000000"), "%s", err);
	ck_assert_int_eq(apply(&a, "{\"agent\": {\"rdma_max\": {\"qp\": 1}}}", err, sizeof(err)),
			 QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_msg(strstr(err, "unknown key \"qp\" in rdma_max"), "%s", err);
}
END_TEST

Suite *suite_agent_cfg(void)
{
	Suite *s = suite_create("agent_cfg");
	TCase *tc = unit_tcase(s, "config", 5);

	tcase_add_test(tc, agent_config_sets_options_hooks_and_fault);
	tcase_add_test(tc, agent_config_rdma_max);
	tcase_add_loop_test(tc, agent_config_refuses_bad_values_naming_the_key, 0,
			    (int)(sizeof(bad) / sizeof(bad[0])));
	return s;
}
