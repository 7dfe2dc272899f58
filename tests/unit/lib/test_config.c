/* MC_* configuration: Mooncake's defaults, strict ranges, clear messages. */
#include <stdlib.h>
#include <string.h>

#include "qphs.h"
#include "unit.h"

/* A fake environment: "NAME=value" strings, NULL-terminated. */
static const char *fake_lookup(const char *name, void *user)
{
	const char *const *env = user;
	size_t n = strlen(name);

	for (; *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

/* Field by field: the struct has padding, so memcmp would compare garbage. */
static int same_config(const struct qphs_config *a, const struct qphs_config *b)
{
	return a->handshake_port == b->handshake_port && a->min_rpc_port == b->min_rpc_port &&
	       a->max_rpc_port == b->max_rpc_port && a->listen_backlog == b->listen_backlog &&
	       a->connect_timeout_s == b->connect_timeout_s && a->max_length == b->max_length &&
	       a->use_ipv6 == b->use_ipv6 && a->ib_port == b->ib_port &&
	       a->gid_index == b->gid_index && a->pkey_index == b->pkey_index &&
	       a->ib_tc == b->ib_tc && a->ib_sl == b->ib_sl && a->mtu == b->mtu &&
	       a->num_qp_per_ep == b->num_qp_per_ep && a->max_cqe_per_ctx == b->max_cqe_per_ctx &&
	       a->max_sge == b->max_sge && a->max_wr == b->max_wr && a->max_inline == b->max_inline;
}

static int apply(struct qphs_config *cfg, const char *const *env, char *err, size_t len)
{
	qphs_config_init(cfg);
	return qphs_config_from_env(cfg, fake_lookup, (void *)env, err, len);
}

START_TEST(config_defaults_are_mooncakes)
{
	struct qphs_config c;
	char err[256] = "";

	qphs_config_init(&c);
	ck_assert_int_eq(c.handshake_port, 12001);
	ck_assert_int_eq(c.min_rpc_port, 15000);
	ck_assert_int_eq(c.max_rpc_port, 17000);
	ck_assert_int_eq(c.listen_backlog, 128);
	ck_assert_int_eq(c.connect_timeout_s, 5);
	ck_assert_uint_eq(c.max_length, 1u << 20);
	ck_assert(!c.use_ipv6);
	ck_assert_int_eq(c.ib_port, 1);
	ck_assert_int_eq(c.gid_index, -1);
	ck_assert_int_eq(c.mtu, 4096);
	ck_assert_int_eq(c.num_qp_per_ep, 2);
	ck_assert_int_eq(c.max_cqe_per_ctx, 4096);
	ck_assert_int_eq(c.max_sge, 4);
	ck_assert_int_eq(c.max_wr, 256);
	ck_assert_int_eq(c.max_inline, 64);
	ck_assert_int_eq(c.qp_timeout, 14);
	ck_assert_int_eq(c.qp_retry_cnt, 7);
	ck_assert_int_eq(c.qp_rnr_retry, 7);
	ck_assert_int_eq(c.reply_timeout_ms, 60000);
	ck_assert_int_eq(c.reset_policy, QPHS_RESET_RECONSTRUCT);
	ck_assert_int_eq(qphs_config_validate(&c, err, sizeof(err)), 0);
}
END_TEST

START_TEST(config_reads_every_variable)
{
	static const char *const env[] = {
		"MC_HANDSHAKE_PORT=13000", "MC_MIN_RPC_PORT=20000", "MC_MAX_RPC_PORT=20010",
		"MC_HANDSHAKE_LISTEN_BACKLOG=7", "MC_HANDSHAKE_CONNECT_TIMEOUT=1",
		"MC_HANDSHAKE_MAX_LENGTH=2097152", "MC_USE_IPV6=1", "MC_IB_PORT=2",
		"MC_GID_INDEX=3", "MC_PKEY_INDEX=4", "MC_IB_TC=106", "MC_IB_SL=5",
		"MC_MTU=1024", "MC_NUM_QP_PER_EP=8", "MC_MAX_CQE_PER_CTX=100",
		"MC_MAX_SGE=2", "MC_MAX_WR=64", "MC_MAX_INLINE=0", NULL};
	struct qphs_config c;
	char err[256] = "";

	ck_assert_int_eq(apply(&c, env, err, sizeof(err)), 0);
	ck_assert_int_eq(c.handshake_port, 13000);
	ck_assert_int_eq(c.min_rpc_port, 20000);
	ck_assert_int_eq(c.max_rpc_port, 20010);
	ck_assert_int_eq(c.listen_backlog, 7);
	ck_assert_int_eq(c.connect_timeout_s, 1);
	ck_assert_uint_eq(c.max_length, 2097152);
	ck_assert(c.use_ipv6);
	ck_assert_int_eq(c.ib_port, 2);
	ck_assert_int_eq(c.gid_index, 3);
	ck_assert_int_eq(c.pkey_index, 4);
	ck_assert_int_eq(c.ib_tc, 106);
	ck_assert_int_eq(c.ib_sl, 5);
	ck_assert_int_eq(c.mtu, 1024);
	ck_assert_int_eq(c.num_qp_per_ep, 8);
	ck_assert_int_eq(c.max_cqe_per_ctx, 100);
	ck_assert_int_eq(c.max_sge, 2);
	ck_assert_int_eq(c.max_wr, 64);
	ck_assert_int_eq(c.max_inline, 0);
}
END_TEST

START_TEST(config_aliases_apply_when_the_primary_is_unset)
{
	static const char *const env[] = {"MC_MIN_PRC_PORT=16000", "MC_MAX_PRC_PORT=16001",
					  "NCCL_IB_GID_INDEX=1", NULL};
	static const char *const both[] = {"MC_GID_INDEX=2", "NCCL_IB_GID_INDEX=1", NULL};
	struct qphs_config c;

	ck_assert_int_eq(apply(&c, env, NULL, 0), 0);
	ck_assert_int_eq(c.min_rpc_port, 16000);
	ck_assert_int_eq(c.max_rpc_port, 16001);
	ck_assert_int_eq(c.gid_index, 1);
	ck_assert_int_eq(apply(&c, both, NULL, 0), 0);
	ck_assert_int_eq(c.gid_index, 2);
}
END_TEST

START_TEST(config_ipv6_zero_means_off)
{
	static const char *const off[] = {"MC_USE_IPV6=0", NULL};
	static const char *const empty[] = {"MC_USE_IPV6=", NULL};
	struct qphs_config c;

	ck_assert_int_eq(apply(&c, off, NULL, 0), 0);
	ck_assert(!c.use_ipv6);
	ck_assert_int_eq(apply(&c, empty, NULL, 0), 0);
	ck_assert(c.use_ipv6);
}
END_TEST

/* One row per invalid value: the code and words the message must carry. */
static const struct {
	const char *env;
	int code;
	const char *must_say;
} bad_rows[] = {
	{"MC_MTU=1500", QPHS_ERR_CONFIG_RANGE, "MC_MTU=1500 is out of range (accepted: one of 512, 1024, 2048, 4096)"},
	{"MC_MTU=abc", QPHS_ERR_CONFIG_SYNTAX, "MC_MTU=\"abc\" is not a decimal integer"},
	{"MC_MTU=", QPHS_ERR_CONFIG_SYNTAX, "MC_MTU=\"\""},
	{"MC_MTU=4096x", QPHS_ERR_CONFIG_SYNTAX, "4096x"},
	{"MC_MTU= 4096", QPHS_ERR_CONFIG_SYNTAX, "MC_MTU"},
	{"MC_NUM_QP_PER_EP=0", QPHS_ERR_CONFIG_RANGE, "MC_NUM_QP_PER_EP=0 is out of range (accepted: 1..255)"},
	{"MC_NUM_QP_PER_EP=256", QPHS_ERR_CONFIG_RANGE, "1..255"},
	{"MC_HANDSHAKE_MAX_LENGTH=1048575", QPHS_ERR_CONFIG_RANGE, "1048576..134217728"},
	{"MC_HANDSHAKE_MAX_LENGTH=134217729", QPHS_ERR_CONFIG_RANGE, "MC_HANDSHAKE_MAX_LENGTH"},
	{"MC_HANDSHAKE_PORT=0", QPHS_ERR_CONFIG_RANGE, "1..65535"},
	{"MC_HANDSHAKE_PORT=65536", QPHS_ERR_CONFIG_RANGE, "MC_HANDSHAKE_PORT"},
	{"MC_MIN_RPC_PORT=40000", QPHS_ERR_CONFIG_RANGE, "ephemeral range"},
	{"MC_MAX_RPC_PORT=1000", QPHS_ERR_CONFIG_RANGE, "MC_MAX_RPC_PORT"},
	{"MC_MIN_PRC_PORT=99999999999999999999", QPHS_ERR_CONFIG_SYNTAX, "MC_MIN_PRC_PORT"},
	{"MC_HANDSHAKE_CONNECT_TIMEOUT=3600", QPHS_ERR_CONFIG_RANGE, "1..3599"},
	{"MC_HANDSHAKE_LISTEN_BACKLOG=-5", QPHS_ERR_CONFIG_RANGE, "MC_HANDSHAKE_LISTEN_BACKLOG"},
	{"MC_IB_PORT=0", QPHS_ERR_CONFIG_RANGE, "MC_IB_PORT"},
	{"MC_GID_INDEX=256", QPHS_ERR_CONFIG_RANGE, "-1 (automatic) or 0..255"},
	{"MC_GID_INDEX=-2", QPHS_ERR_CONFIG_RANGE, "MC_GID_INDEX"},
	{"NCCL_IB_GID_INDEX=x", QPHS_ERR_CONFIG_SYNTAX, "NCCL_IB_GID_INDEX"},
	{"MC_PKEY_INDEX=65536", QPHS_ERR_CONFIG_RANGE, "MC_PKEY_INDEX"},
	{"MC_IB_TC=256", QPHS_ERR_CONFIG_RANGE, "MC_IB_TC"},
	{"MC_IB_SL=16", QPHS_ERR_CONFIG_RANGE, "0..15"},
	{"MC_MAX_CQE_PER_CTX=0", QPHS_ERR_CONFIG_RANGE, "MC_MAX_CQE_PER_CTX"},
	{"MC_MAX_SGE=0", QPHS_ERR_CONFIG_RANGE, "MC_MAX_SGE"},
	{"MC_MAX_WR=70000", QPHS_ERR_CONFIG_RANGE, "MC_MAX_WR"},
	{"MC_MAX_INLINE=-1", QPHS_ERR_CONFIG_RANGE, "0..65535"},
};

START_TEST(config_rejects_invalid_value_naming_it)
{
	const char *env[] = {bad_rows[_i].env, NULL};
	struct qphs_config c, before;
	char err[256] = "";
	int rc;

	qphs_config_init(&before);
	rc = apply(&c, env, err, sizeof(err));
	ck_assert_msg(rc == bad_rows[_i].code, "%s: got %s (%s)", bad_rows[_i].env,
		      qphs_errname(rc), err);
	ck_assert_msg(strstr(err, bad_rows[_i].must_say), "%s: message '%s' lacks '%s'",
		      bad_rows[_i].env, err, bad_rows[_i].must_say);
	/* Nothing of a failed read reaches the caller's struct. */
	ck_assert(same_config(&c, &before));
	unit_hit(rc);
}
END_TEST

START_TEST(config_rejects_min_port_above_max)
{
	static const char *const env[] = {"MC_MIN_RPC_PORT=17000", "MC_MAX_RPC_PORT=16000", NULL};
	struct qphs_config c;
	char err[256] = "";

	ck_assert_int_eq(apply(&c, env, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	ck_assert_ptr_nonnull(strstr(err, "MC_MIN_RPC_PORT=17000 is above MC_MAX_RPC_PORT=16000"));
	ck_assert_int_eq(c.min_rpc_port, 15000);
}
END_TEST

START_TEST(config_ignores_other_variables)
{
	static const char *const env[] = {"MC_RETRY_CNT=banana", "MC_IB_PKEY_INDEX=x",
					  "MC_LEGACY_RPC_PORT_BINDING=1", NULL};
	struct qphs_config c;

	ck_assert_int_eq(apply(&c, env, NULL, 0), 0);
	ck_assert_int_eq(c.pkey_index, 0);
}
END_TEST

START_TEST(config_validate_names_the_field)
{
	struct qphs_config c;
	char err[256] = "";

	qphs_config_init(&c);
	c.mtu = 1500;
	ck_assert_int_eq(qphs_config_validate(&c, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	ck_assert_ptr_nonnull(strstr(err, "MC_MTU"));
	qphs_config_init(&c);
	c.qp_retry_cnt = 8;
	ck_assert_int_eq(qphs_config_validate(&c, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	ck_assert_ptr_nonnull(strstr(err, "qp_retry_cnt = 8"));
	qphs_config_init(&c);
	c.reset_policy = (enum qphs_reset_policy)7;
	ck_assert_int_eq(qphs_config_validate(&c, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	unit_hit(QPHS_ERR_CONFIG_RANGE);
}
END_TEST

/* The QP pool is off unless asked for; a negative size is refused. */
START_TEST(config_qp_pool_off_by_default_and_checked)
{
	struct qphs_config c;
	char err[256] = "";

	qphs_config_init(&c);
	ck_assert_int_eq(c.qp_pool_size, 0);
	c.qp_pool_size = 512;
	ck_assert_int_eq(qphs_config_validate(&c, err, sizeof(err)), 0);
	c.qp_pool_size = -1;
	ck_assert_int_eq(qphs_config_validate(&c, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	ck_assert_ptr_nonnull(strstr(err, "qp_pool_size = -1"));
	unit_hit(QPHS_ERR_CONFIG_RANGE);
}
END_TEST

/* The accept thread asks for nice -20 by default; the field takes -20..0
 * and nothing above (a daemon thread is never made to yield more). */
START_TEST(config_accept_thread_nice_defaults_and_range)
{
	struct qphs_config c;
	char err[256] = "";

	qphs_config_init(&c);
	ck_assert_int_eq(c.accept_thread_nice, -20);
	c.accept_thread_nice = 0;
	ck_assert_int_eq(qphs_config_validate(&c, err, sizeof(err)), 0);
	c.accept_thread_nice = 1;
	ck_assert_int_eq(qphs_config_validate(&c, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	ck_assert_ptr_nonnull(strstr(err, "accept_thread_nice = 1"));
	c.accept_thread_nice = -21;
	ck_assert_int_eq(qphs_config_validate(&c, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	ck_assert_ptr_nonnull(strstr(err, "accept_thread_nice = -21"));
	unit_hit(QPHS_ERR_CONFIG_RANGE);
}
END_TEST

Suite *suite_config(void)
{
	Suite *s = suite_create("config");
	TCase *tc = unit_tcase(s, "env", 5);

	tcase_add_test(tc, config_defaults_are_mooncakes);
	tcase_add_test(tc, config_reads_every_variable);
	tcase_add_test(tc, config_aliases_apply_when_the_primary_is_unset);
	tcase_add_test(tc, config_ipv6_zero_means_off);
	tcase_add_loop_test(tc, config_rejects_invalid_value_naming_it, 0,
			    (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	tcase_add_test(tc, config_rejects_min_port_above_max);
	tcase_add_test(tc, config_ignores_other_variables);
	tcase_add_test(tc, config_validate_names_the_field);
	tcase_add_test(tc, config_qp_pool_off_by_default_and_checked);
	tcase_add_test(tc, config_accept_thread_nice_defaults_and_range);
	return s;
}
