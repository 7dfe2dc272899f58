/*
 * MC_* configuration: Mooncake's defaults and ranges (config.h GlobalConfig,
 * config.cpp loadGlobalConfig), checked
 * strictly.  Where Mooncake logs "Ignore value from environment variable" and
 * keeps the default, we fail with a message naming the variable, the value
 * and the accepted range: a typo in MC_MTU should not silently become 4096.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/config.h"
#include "qphs/error.h"

enum var_kind {
	VAR_INT,   /* decimal integer in [min, max] */
	VAR_MTU,   /* one of 512, 1024, 2048, 4096 */
	VAR_BOOL,  /* set and not "0" = on */
	VAR_PORT,  /* 1024..65535, not 32768..60999 (the ephemeral range) */
	VAR_GID,   /* -1 (auto) or 0..255 */
};

struct var_row {
	const char *name;
	const char *alias;
	enum var_kind kind;
	size_t offset;
	int size;
	int64_t min, max;
};

#define FIELD(f) offsetof(struct qphs_config, f), (int)sizeof(((struct qphs_config *)0)->f)

static const struct var_row var_rows[] = {
	{"MC_HANDSHAKE_PORT", NULL, VAR_INT, FIELD(handshake_port), 1, 65535},
	{"MC_MIN_RPC_PORT", "MC_MIN_PRC_PORT", VAR_PORT, FIELD(min_rpc_port), 1024, 65535},
	{"MC_MAX_RPC_PORT", "MC_MAX_PRC_PORT", VAR_PORT, FIELD(max_rpc_port), 1024, 65535},
	{"MC_HANDSHAKE_LISTEN_BACKLOG", NULL, VAR_INT, FIELD(listen_backlog), 1, 65535},
	{"MC_HANDSHAKE_CONNECT_TIMEOUT", NULL, VAR_INT, FIELD(connect_timeout_s), 1, 3599},
	{"MC_HANDSHAKE_MAX_LENGTH", NULL, VAR_INT, FIELD(max_length), 1 << 20, 128 << 20},
	{"MC_USE_IPV6", NULL, VAR_BOOL, FIELD(use_ipv6), 0, 1},
	{"MC_IB_PORT", NULL, VAR_INT, FIELD(ib_port), 1, 255},
	{"MC_GID_INDEX", "NCCL_IB_GID_INDEX", VAR_GID, FIELD(gid_index), -1, 255},
	{"MC_PKEY_INDEX", NULL, VAR_INT, FIELD(pkey_index), 0, 65535},
	{"MC_IB_TC", NULL, VAR_INT, FIELD(ib_tc), 0, 255},
	{"MC_IB_SL", NULL, VAR_INT, FIELD(ib_sl), 0, 15},
	{"MC_MTU", NULL, VAR_MTU, FIELD(mtu), 512, 4096},
	{"MC_NUM_QP_PER_EP", NULL, VAR_INT, FIELD(num_qp_per_ep), 1, 255},
	{"MC_MAX_CQE_PER_CTX", NULL, VAR_INT, FIELD(max_cqe_per_ctx), 1, 65535},
	{"MC_MAX_SGE", NULL, VAR_INT, FIELD(max_sge), 1, 65535},
	{"MC_MAX_WR", NULL, VAR_INT, FIELD(max_wr), 1, 65535},
	{"MC_MAX_INLINE", NULL, VAR_INT, FIELD(max_inline), 0, 65535},
};

void qphs_config_init(struct qphs_config *cfg)
{
	*cfg = (struct qphs_config){
		.handshake_port = 12001,
		.min_rpc_port = 15000,
		.max_rpc_port = 17000,
		.listen_backlog = 128,
		.connect_timeout_s = 5,
		.max_length = 1u << 20,
		.use_ipv6 = false,
		.ib_port = 1,
		.gid_index = -1,
		.pkey_index = 0,
		.ib_tc = 0,
		.ib_sl = 0,
		.mtu = 4096,
		.num_qp_per_ep = 2,
		.max_cqe_per_ctx = 4096,
		.max_sge = 4,
		.max_wr = 256,
		.max_inline = 64,
		.request_timeout_ms = 5000,
		.write_timeout_ms = 5000,
		.reply_timeout_ms = 60000,
		.max_connections = 1024,
		.max_conns_per_source = 128,
		.max_requests_per_source = 128,
		.memory_budget_kib = 64 << 10,
		.max_small_body = 64 << 10,
		.max_body_keys = 32 << 10,
		.qp_timeout = 14,
		.qp_retry_cnt = 7,
		.qp_rnr_retry = 7,
		.mtu_negotiation = true,
		.ready_ack = true,
		.strict_reset = true,
		.passive_build_first = false,
		.checksum_extension = true,
		.reset_policy = QPHS_RESET_RECONSTRUCT,
		.quirk_profile = "",
		.rd_atomic_clamp = true,
		.mtu_reread = true,
		.connect_attempts = 5,
		.worker_threads = 4,
		.qp_pool_size = 0,
		.accept_thread_nice = -20,
	};
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void store(struct qphs_config *cfg, const struct var_row *row, int64_t v)
{
	char *p = (char *)cfg + row->offset;

	switch (row->size) {
	case 1: *(uint8_t *)p = (uint8_t)v; break; /* bool */
	case 2: *(uint16_t *)p = (uint16_t)v; break;
	case 4: *(int32_t *)p = (int32_t)v; break;
	default: *(uint64_t *)p = (uint64_t)v; break;
	}
}

static int64_t load(const struct qphs_config *cfg, const struct var_row *row)
{
	const char *p = (const char *)cfg + row->offset;

	switch (row->size) {
	case 1: return *(const uint8_t *)p;
	case 2: return *(const uint16_t *)p;
	case 4: return *(const int32_t *)p;
	default: return (int64_t)*(const uint64_t *)p;
	}
}

/* An exact decimal integer: optional sign, digits, nothing else. */
static int parse_int(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!*s || (*s != '-' && *s != '+' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static const char *range_text(const struct var_row *row, char *buf, size_t len)
{
	switch (row->kind) {
	case VAR_MTU: return "one of 512, 1024, 2048, 4096";
	case VAR_PORT: return "1024..65535, outside the ephemeral range 32768..60999";
	case VAR_GID: return "-1 (automatic) or 0..255";
	case VAR_BOOL: return "any value; \"0\" means off";
	case VAR_INT: break;
	}
	snprintf(buf, len, "%" PRId64 "..%" PRId64, row->min, row->max);
	return buf;
}

static int check_value(const struct var_row *row, int64_t v)
{
	switch (row->kind) {
	case VAR_MTU: return v == 512 || v == 1024 || v == 2048 || v == 4096;
	case VAR_PORT:
		return v >= row->min && v <= row->max && !(v >= 32768 && v <= 60999);
	case VAR_BOOL: return v == 0 || v == 1;
	case VAR_GID:
	case VAR_INT: break;
	}
	return v >= row->min && v <= row->max;
}

static const char *env_getenv(const char *name, void *user)
{
	(void)user;
	return getenv(name);
}

static int apply_row(struct qphs_config *cfg, const struct var_row *row,
		     qphs_env_lookup_fn lookup, void *user, char *err, size_t errlen)
{
	const char *name = row->name;
	const char *val = lookup(name, user);
	char rbuf[64];
	int64_t v;

	if (!val && row->alias) {
		name = row->alias;
		val = lookup(name, user);
	}
	if (!val)
		return 0;
	if (row->kind == VAR_BOOL) {
		store(cfg, row, strcmp(val, "0") != 0);
		return 0;
	}
	if (parse_int(val, &v) != 0) {
		set_err(err, errlen, "%s=\"%s\" is not a decimal integer (accepted: %s)",
			name, val, range_text(row, rbuf, sizeof(rbuf)));
		return QPHS_ERR_CONFIG_SYNTAX;
	}
	if (!check_value(row, v)) {
		set_err(err, errlen, "%s=%s is out of range (accepted: %s)", name,
			val, range_text(row, rbuf, sizeof(rbuf)));
		return QPHS_ERR_CONFIG_RANGE;
	}
	store(cfg, row, v);
	return 0;
}

int qphs_config_from_env(struct qphs_config *cfg, qphs_env_lookup_fn lookup,
			 void *user, char *err, size_t errlen)
{
	struct qphs_config next = *cfg;
	int rc;

	if (!lookup)
		lookup = env_getenv;
	for (size_t i = 0; i < sizeof(var_rows) / sizeof(var_rows[0]); i++) {
		rc = apply_row(&next, &var_rows[i], lookup, user, err, errlen);
		if (rc)
			return rc;
	}
	if (next.min_rpc_port > next.max_rpc_port) {
		set_err(err, errlen,
			"MC_MIN_RPC_PORT=%u is above MC_MAX_RPC_PORT=%u (accepted: min <= max)",
			next.min_rpc_port, next.max_rpc_port);
		return QPHS_ERR_CONFIG_RANGE;
	}
	*cfg = next;
	return 0;
}

struct api_row {
	const char *name;
	size_t offset;
	int min, max;
};

#define AFIELD(f) offsetof(struct qphs_config, f)
static const struct api_row api_rows[] = {
	{"request_timeout_ms", AFIELD(request_timeout_ms), 1, 3600000},
	{"write_timeout_ms", AFIELD(write_timeout_ms), 1, 3600000},
	{"reply_timeout_ms", AFIELD(reply_timeout_ms), 1, 3600000},
	{"max_connections", AFIELD(max_connections), 1, 1 << 20},
	{"max_conns_per_source", AFIELD(max_conns_per_source), 1, 1 << 20},
	{"max_requests_per_source", AFIELD(max_requests_per_source), 1, 1 << 20},
	{"memory_budget_kib", AFIELD(memory_budget_kib), 1 << 10, 1 << 30},
	{"max_small_body", AFIELD(max_small_body), 4096, 128 << 20},
	{"max_body_keys", AFIELD(max_body_keys), 16, 1 << 24},
	{"accept_thread_nice", AFIELD(accept_thread_nice), -20, 0},
	{"qp_timeout", AFIELD(qp_timeout), 0, 31},
	{"qp_retry_cnt", AFIELD(qp_retry_cnt), 0, 7},
	{"qp_rnr_retry", AFIELD(qp_rnr_retry), 0, 7},
	{"qp_pool_size", AFIELD(qp_pool_size), 0, 65535},
};

int qphs_config_validate(const struct qphs_config *cfg, char *err, size_t errlen)
{
	char rbuf[64];

	for (size_t i = 0; i < sizeof(var_rows) / sizeof(var_rows[0]); i++) {
		const struct var_row *row = &var_rows[i];
		int64_t v = load(cfg, row);

		if (!check_value(row, v)) {
			set_err(err, errlen, "%s (%s) = %" PRId64 " is out of range (accepted: %s)",
				row->name, "option", v, range_text(row, rbuf, sizeof(rbuf)));
			return QPHS_ERR_CONFIG_RANGE;
		}
	}
	for (size_t i = 0; i < sizeof(api_rows) / sizeof(api_rows[0]); i++) {
		int v = *(const int *)((const char *)cfg + api_rows[i].offset);

		if (v < api_rows[i].min || v > api_rows[i].max) {
			set_err(err, errlen, "option %s = %d is out of range (accepted: %d..%d)",
				api_rows[i].name, v, api_rows[i].min, api_rows[i].max);
			return QPHS_ERR_CONFIG_RANGE;
		}
	}
	if (cfg->min_rpc_port > cfg->max_rpc_port) {
		set_err(err, errlen, "min_rpc_port %u is above max_rpc_port %u",
			cfg->min_rpc_port, cfg->max_rpc_port);
		return QPHS_ERR_CONFIG_RANGE;
	}
	if (cfg->reset_policy != QPHS_RESET_RECONSTRUCT && cfg->reset_policy != QPHS_RESET_REUSE) {
		set_err(err, errlen, "option reset_policy = %d is not reuse or reconstruct",
			(int)cfg->reset_policy);
		return QPHS_ERR_CONFIG_RANGE;
	}
	return 0;
}
