/* Assertion blocks: the checks an expectation, a keyed row or a `wait`
 * step makes, each validated against its vocabulary at parse time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "scenario_int.h"

static const char *const qp_states[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", NULL};
/* The library's endpoint status names (Mooncake's RdmaEndPoint::Status,
 * qphs_ep_status_name), and NONE: no endpoint for that peer. */
static const char *const endpoint_states[] = {"NONE", "INITIALIZING", "UNCONNECTED", "CONNECTING",
					      "CONNECTED_WAIT_READY_ACK", "CONNECTED", "DESTROYING",
					      "DESTROYED", NULL};
static const char *const datapath_results[] = {"ok", "failed", "not_run", NULL};
static const char *const frame_outcomes[] = {"closed", "replied", "silent", NULL};
/* enum ibv_wc_status, spelled as libibverbs spells it. */
static const char *const wc_names[] = {
	"IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_EEC_OP_ERR",
	"IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_MW_BIND_ERR", "IBV_WC_BAD_RESP_ERR",
	"IBV_WC_LOC_ACCESS_ERR", "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR",
	"IBV_WC_REM_OP_ERR", "IBV_WC_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR",
	"IBV_WC_LOC_RDD_VIOL_ERR", "IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR",
	"IBV_WC_INV_EECN_ERR", "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
	"IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR", "IBV_WC_TM_ERR",
	"IBV_WC_TM_RNDV_INCOMPLETE", NULL};

#define ASSERT_KEYS                                                                  \
	"qp_states", "qp_count", "endpoint", "endpoints", "code", "reply_msg_sent",   \
		"reply_msg_received", "error_text", "datapath", "wc_status", "time_ms", \
		"gid_index", "gid_reason", "path_mtu", "peer_path_mtu", "peer_ready_ack", \
		"warning", "log",                                                     \
		"datapath_restored", "datapath_peer_checksum", "daemon_alive",       \
		"leftover_qps", "leftover_objects", "frame_outcome", "hw_counters",        \
		"datapath_qps", "datapath_qp_count", "datapath_failed_qp"

bool qplab__sc_in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

void qplab__sc_assert_init(struct qplab_assert *a)
{
	memset(a, 0, sizeof(*a));
	a->nqp_each = a->qp_count = a->endpoints = -1;
	a->qp_count_min = a->qp_count_max = -1;
	a->wc_none_within_ms = -1;
	for (int t = 0; t < QPLAB_TIME_COUNT; t++)
		a->time[t].min = a->time[t].max = -1;
	a->gid_index = a->path_mtu = a->peer_path_mtu = a->daemon_alive = -1;
	a->peer_ready_ack = -1;
	a->datapath_restored = a->datapath_peer_checksum = -1;
	a->ndp_each = a->dp_qp_count = a->dp_failed_qp = -1;
	a->leftover_qps = a->leftover_objects = -1;
}

static void free_match(struct qplab_text_match *m)
{
	if (m->regex)
		regfree(&m->re);
	free(m->exact);
	free(m->prefix);
	free(m->contains);
	free(m->regex);
}

void qplab__sc_assert_free(struct qplab_assert *a)
{
	free(a->qp_each);
	free(a->wc_any);
	free(a->hwc);
	free(a->dp_each);
	free_match(&a->reply_sent);
	free_match(&a->reply_received);
	free_match(&a->error_text);
	free_match(&a->gid_reason);
	free_match(&a->warning);
	free_match(&a->log);
	qplab__sc_assert_init(a);
}

/* A word from list, at key; stored in dst. */
static void enum_key(struct sc_ctx *ctx, json_object *o, const char *path, const char *key,
		     const char *const *list, char *dst, size_t dstlen, int *nfields)
{
	const char *s;
	char sub[SC_PATH_MAX];

	if (!qplab__sc_str(ctx, o, path, key, false, &s))
		return;
	qplab__sc_join(sub, sizeof(sub), path, key);
	if (!qplab__sc_in_list(list, s)) {
		char words[256] = "";
		for (size_t i = 0; list[i] && strlen(words) < 200; i++)
			snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%s",
				 i ? ", " : "", list[i]);
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "%s \"%s\" is not one of: %s", key, s, words);
		return;
	}
	snprintf(dst, dstlen, "%s", s);
	(*nfields)++;
}

/* glibc's regcomp copies a repeated expression once per repetition ("X+"
 * is "XX*", "X{m,n}" n copies), so nested or stacked repetitions grow its
 * memory geometrically: 128 '+' after one atom took it past 2 GB (fuzz-long,
 * scenario_parse).  A regex whose repetitions multiply past REGEX_COST, or
 * that is longer than REGEX_MAX, is refused before regcomp sees it.  The
 * product over every repetition (not only nested ones) bounds the copies;
 * the catalogue's regexes cost at most 10. */
#define REGEX_MAX 1024
#define REGEX_COST 4096

static const char *regex_too_costly(const char *re)
{
	size_t len = strlen(re);
	unsigned long cost = 1;

	if (len > REGEX_MAX)
		return "longer than 1024 bytes";
	for (size_t i = 0; i < len; i++) {
		unsigned long f = 1;

		if (re[i] == '\\' && i + 1 < len) {
			i++;
			continue;
		}
		if (re[i] == '[') { /* a bracket expression repeats nothing */
			size_t j = i + 1;
			if (j < len && re[j] == '^')
				j++;
			if (j < len && re[j] == ']')
				j++;
			while (j < len && re[j] != ']')
				j++;
			i = j;
			continue;
		}
		if (re[i] == '+')
			f = 2;
		else if (re[i] == '{') {
			unsigned long n = 0, hi = 0;
			size_t j = i + 1;
			for (; j < len && (re[j] == ',' || (re[j] >= '0' && re[j] <= '9')); j++) {
				if (re[j] == ',') {
					n = 0;
					continue;
				}
				n = n * 10 + (unsigned long)(re[j] - '0');
				if (n > 100000)
					n = 100000;
				if (n > hi)
					hi = n;
			}
			f = hi + 1;
		}
		if (f > 1 && (cost *= f) > REGEX_COST)
			return "its repetitions multiply past 4096 copies (glibc's regcomp copies "
			       "a repeated expression per repetition)";
	}
	return NULL;
}

static void text_match(struct sc_ctx *ctx, json_object *o, const char *path, const char *key,
		       struct qplab_text_match *m, int *nfields)
{
	static const char *const keys[] = {"exact", "prefix", "contains", "regex", NULL};
	json_object *v = qplab__sc_get(ctx, o, path, key, json_type_object, false);
	char sub[SC_PATH_MAX];
	const char *s;

	if (!v)
		return;
	qplab__sc_join(sub, sizeof(sub), path, key);
	int line = qplab__sc_line(ctx, sub);
	qplab__sc_only_keys(ctx, v, sub, key, keys);
	if (qplab__sc_str(ctx, v, sub, "exact", false, &s))
		m->exact = qplab__sc_strdup(s);
	if (qplab__sc_str(ctx, v, sub, "prefix", false, &s))
		m->prefix = qplab__sc_strdup(s);
	if (qplab__sc_str(ctx, v, sub, "contains", false, &s))
		m->contains = qplab__sc_strdup(s);
	if (qplab__sc_str(ctx, v, sub, "regex", false, &s)) {
		const char *costly = regex_too_costly(s);
		int rc = costly ? 0 : regcomp(&m->re, s, REG_EXTENDED | REG_NOSUB);
		if (costly) {
			qplab__sc_err(ctx, line, "regex in %s refused: %s", key, costly);
		} else if (rc) {
			char why[128];
			regerror(rc, &m->re, why, sizeof(why));
			qplab__sc_err(ctx, line, "bad regex in %s: %s", key, why);
		} else {
			m->regex = qplab__sc_strdup(s);
		}
	}
	if (!m->exact && !m->prefix && !m->contains && !m->regex &&
	    json_object_object_length(v) == 0)
		qplab__sc_err(ctx, line, "%s needs one of exact, prefix, contains, regex", key);
	m->set = true;
	(*nfields)++;
}

static void qp_states_key(struct sc_ctx *ctx, json_object *o, const char *path,
			  struct qplab_assert *a)
{
	json_object *v;
	char sub[SC_PATH_MAX];
	static const char *const keys[] = {"all", NULL};

	if (!json_object_object_get_ex(o, "qp_states", &v))
		return;
	qplab__sc_join(sub, sizeof(sub), path, "qp_states");
	int line = qplab__sc_line(ctx, sub);
	a->nfields++;
	if (json_object_is_type(v, json_type_object)) {
		qplab__sc_only_keys(ctx, v, sub, "qp_states", keys);
		int nf = 0;
		enum_key(ctx, v, sub, "all", qp_states, a->qp_all, sizeof(a->qp_all), &nf);
		if (!json_object_object_get_ex(v, "all", NULL))
			qplab__sc_err(ctx, line, "qp_states is {\"all\": STATE} or [STATE, ...]");
		return;
	}
	if (!json_object_is_type(v, json_type_array)) {
		qplab__sc_err(ctx, line, "qp_states is {\"all\": STATE} or [STATE, ...]");
		return;
	}
	size_t n = json_object_array_length(v);
	a->qp_each = calloc(n ? n : 1, sizeof(*a->qp_each));
	a->nqp_each = 0;
	for (size_t i = 0; a->qp_each && i < n; i++) {
		const char *s;

		if (!qplab__sc_elem_str(ctx, v, path, "qp_states", i, &s))
			continue;
		if (!qplab__sc_in_list(qp_states, s)) {
			qplab__sc_err(ctx, line, "qp_states[%zu] is not a QP state (RESET, INIT, RTR, RTS, SQD, SQE, ERR)", i);
			continue;
		}
		snprintf(a->qp_each[a->nqp_each++], QPLAB_QP_STATE_LEN, "%s", s);
	}
}

/* datapath_qps: {"all": RESULT} or [RESULT, ...], RESULT a datapath word. */
static void dp_qps_key(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_assert *a)
{
	static const char *const keys[] = {"all", NULL};
	const char *form = "datapath_qps is {\"all\": RESULT} or [RESULT, ...] (ok, failed, not_run)";
	json_object *v;
	char sub[SC_PATH_MAX];
	size_t n;

	if (!json_object_object_get_ex(o, "datapath_qps", &v))
		return;
	qplab__sc_join(sub, sizeof(sub), path, "datapath_qps");
	int line = qplab__sc_line(ctx, sub);
	a->nfields++;
	if (json_object_is_type(v, json_type_object)) {
		int nf = 0;

		qplab__sc_only_keys(ctx, v, sub, "datapath_qps", keys);
		enum_key(ctx, v, sub, "all", datapath_results, a->dp_all, sizeof(a->dp_all), &nf);
		if (!json_object_object_get_ex(v, "all", NULL))
			qplab__sc_err(ctx, line, "%s", form);
		return;
	}
	if (!json_object_is_type(v, json_type_array)) {
		qplab__sc_err(ctx, line, "%s", form);
		return;
	}
	n = json_object_array_length(v);
	a->dp_each = calloc(n ? n : 1, sizeof(*a->dp_each));
	a->ndp_each = 0;
	for (size_t i = 0; a->dp_each && i < n; i++) {
		const char *s;

		if (!qplab__sc_elem_str(ctx, v, path, "datapath_qps", i, &s))
			continue;
		if (!qplab__sc_in_list(datapath_results, s)) {
			qplab__sc_err(ctx, line, "datapath_qps[%zu] \"%s\" is not one of: ok, failed, not_run",
				      i, s);
			continue;
		}
		snprintf(a->dp_each[a->ndp_each++], sizeof(*a->dp_each), "%s", s);
	}
}

/* datapath_failed_qp: a QP index, or "none". */
static void dp_failed_key(struct sc_ctx *ctx, json_object *o, const char *path,
			  struct qplab_assert *a)
{
	json_object *v;
	char sub[SC_PATH_MAX];
	long i;

	if (!json_object_object_get_ex(o, "datapath_failed_qp", &v))
		return;
	qplab__sc_join(sub, sizeof(sub), path, "datapath_failed_qp");
	if (json_object_is_type(v, json_type_string) && !strcmp(json_object_get_string(v), "none")) {
		a->dp_failed_qp = QPLAB_NO_FAILED_QP;
		a->nfields++;
	} else if (json_object_is_type(v, json_type_string)) {
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "datapath_failed_qp is a QP index "
			      "(0..254) or \"none\"");
	} else if (qplab__sc_int(ctx, o, path, "datapath_failed_qp", 0, 254, &i)) {
		a->dp_failed_qp = (int)i;
		a->nfields++;
	}
}

static void wc_key(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_assert *a)
{
	static const char *const keys[] = {"any_of", "or_none_within_ms", NULL};
	json_object *v, *list;
	char sub[SC_PATH_MAX];
	long ms;

	if (!json_object_object_get_ex(o, "wc_status", &v))
		return;
	qplab__sc_join(sub, sizeof(sub), path, "wc_status");
	int line = qplab__sc_line(ctx, sub);
	a->nfields++;
	if (json_object_is_type(v, json_type_string)) {
		list = json_object_new_array();
		json_object_array_add(list, json_object_get(v));
	} else if (json_object_is_type(v, json_type_object)) {
		qplab__sc_only_keys(ctx, v, sub, "wc_status", keys);
		list = json_object_get(qplab__sc_get(ctx, v, sub, "any_of", json_type_array, false));
		if (qplab__sc_int(ctx, v, sub, "or_none_within_ms", 1, 3600000, &ms))
			a->wc_none_within_ms = ms;
	} else {
		qplab__sc_err(ctx, line, "wc_status is a status name or {\"any_of\": [...], \"or_none_within_ms\": N}");
		return;
	}
	size_t n = list ? json_object_array_length(list) : 0;
	if (n == 0 && a->wc_none_within_ms < 0)
		qplab__sc_err(ctx, line, "wc_status expects nothing");
	a->wc_any = calloc(n ? n : 1, sizeof(*a->wc_any));
	for (size_t i = 0; a->wc_any && i < n; i++) {
		const char *s;

		if (!qplab__sc_elem_str(ctx, list, sub, "any_of", i, &s))
			continue;
		if (!qplab__sc_in_list(wc_names, s))
			qplab__sc_err(ctx, line, "\"%s\" is not an ibv_wc_status name (IBV_WC_...)", s);
		else
			snprintf(a->wc_any[a->nwc++], QPLAB_WC_NAME_LEN, "%s", s);
	}
	json_object_put(list);
}

static void time_key(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_assert *a)
{
	static const char *const bound_keys[] = {"min", "max", NULL};
	json_object *v = qplab__sc_get(ctx, o, path, "time_ms", json_type_object, false);
	char sub[SC_PATH_MAX], sub2[SC_PATH_MAX];
	long x;

	if (!v)
		return;
	qplab__sc_join(sub, sizeof(sub), path, "time_ms");
	a->nfields++;
	json_object_object_foreach(v, name, bound) {
		int t;
		qplab__sc_join(sub2, sizeof(sub2), sub, name);
		for (t = 0; t < QPLAB_TIME_COUNT; t++)
			if (!strcmp(qplab_timing_name(t), name))
				break;
		if (t == QPLAB_TIME_COUNT) {
			qplab__sc_err(ctx, qplab__sc_line(ctx, sub2), "unknown timing \"%s\"", name);
			continue;
		}
		if (!json_object_is_type(bound, json_type_object)) {
			qplab__sc_err(ctx, qplab__sc_line(ctx, sub2), "time_ms.%s is {\"min\": N, \"max\": N}", name);
			continue;
		}
		qplab__sc_only_keys(ctx, bound, sub2, "a time bound", bound_keys);
		if (qplab__sc_int(ctx, bound, sub2, "min", 0, 3600000, &x))
			a->time[t].min = x;
		if (qplab__sc_int(ctx, bound, sub2, "max", 0, 3600000, &x))
			a->time[t].max = x;
		if (a->time[t].min > a->time[t].max && a->time[t].max >= 0)
			qplab__sc_err(ctx, qplab__sc_line(ctx, sub2), "time_ms.%s: min above max", name);
	}
}

/* "hw_counters": {"NAME": N | {"min": N, "max": N}, ...}: the change of
 * each named counter of the host's device port over the step.  Names are
 * the driver's (rxe_hw_counters.c for rxe); one the device does not have
 * fails at run time as not collected. */
static void hwc_key(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_assert *a)
{
	static const char *const bound_keys[] = {"min", "max", NULL};
	json_object *v = qplab__sc_get(ctx, o, path, "hw_counters", json_type_object, false);
	char sub[SC_PATH_MAX], sub2[SC_PATH_MAX];
	long x;

	if (!v)
		return;
	qplab__sc_join(sub, sizeof(sub), path, "hw_counters");
	a->nfields++;
	if (json_object_object_length(v) == 0)
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "hw_counters names no counter");
	a->hwc = calloc((size_t)json_object_object_length(v) + 1, sizeof(*a->hwc));
	if (!a->hwc)
		return;
	json_object_object_foreach(v, name, bound) {
		struct qplab_hwc_bound *b = &a->hwc[a->nhwc];
		int line;

		qplab__sc_join(sub2, sizeof(sub2), sub, name);
		line = qplab__sc_line(ctx, sub2);
		if (!name[0] || strlen(name) >= QPLAB_HWC_NAME_MAX ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name)) {
			qplab__sc_err(ctx, line, "hw_counters: \"%.40s\" is not a counter name "
				      "(a-z, 0-9, _; at most %d characters)", name, QPLAB_HWC_NAME_MAX - 1);
			continue;
		}
		snprintf(b->name, sizeof(b->name), "%s", name);
		b->min = b->max = -1;
		if (json_object_is_type(bound, json_type_int)) {
			x = (long)json_object_get_int64(bound);
			if (x < 0) {
				qplab__sc_err(ctx, line, "hw_counters.%s: a change is >= 0", name);
				continue;
			}
			b->min = b->max = x;
		} else if (json_object_is_type(bound, json_type_object)) {
			qplab__sc_only_keys(ctx, bound, sub2, "a counter bound", bound_keys);
			if (qplab__sc_int(ctx, bound, sub2, "min", 0, 1000000000, &x))
				b->min = x;
			if (qplab__sc_int(ctx, bound, sub2, "max", 0, 1000000000, &x))
				b->max = x;
			if (b->min < 0 && b->max < 0) {
				qplab__sc_err(ctx, line, "hw_counters.%s needs min or max", name);
				continue;
			}
			if (b->max >= 0 && b->min > b->max) {
				qplab__sc_err(ctx, line, "hw_counters.%s: min above max", name);
				continue;
			}
		} else {
			qplab__sc_err(ctx, line, "hw_counters.%s is N or {\"min\": N, \"max\": N}", name);
			continue;
		}
		a->nhwc++;
	}
}

static void code_key(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_assert *a)
{
	const char *s;
	char sub[SC_PATH_MAX];
	int code;

	if (!qplab__sc_str(ctx, o, path, "code", false, &s))
		return;
	qplab__sc_join(sub, sizeof(sub), path, "code");
	/* qphs_errcode_by_name also takes FAULT names; a code is a NAME. */
	if (!qphs_errcode_by_name(s, &code) || strcmp(qphs_errname(code), s)) {
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "\"%s\" is not an error name of the table", s);
		return;
	}
	snprintf(a->code, sizeof(a->code), "%s", s);
	a->nfields++;
}

static void int_field(struct sc_ctx *ctx, json_object *o, const char *path, const char *key,
		      long min, long max, int *dst, int *nfields)
{
	long v;

	if (qplab__sc_int(ctx, o, path, key, min, max, &v)) {
		*dst = (int)v;
		(*nfields)++;
	}
}

/* "qp_count": N, or {"min": N, "max": N} for a count the host settles
 * on in its own time (a Mooncake endpoint's QPs go when its monitor
 * thread reclaims them, up to a second after the endpoint was deleted). */
static void qp_count_key(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_assert *a)
{
	static const char *const bound_keys[] = {"min", "max", NULL};
	json_object *v;
	char sub[SC_PATH_MAX];
	long x;

	if (!json_object_object_get_ex(o, "qp_count", &v) || !json_object_is_type(v, json_type_object)) {
		int_field(ctx, o, path, "qp_count", 0, 100000, &a->qp_count, &a->nfields);
		return;
	}
	qplab__sc_join(sub, sizeof(sub), path, "qp_count");
	qplab__sc_only_keys(ctx, v, sub, "a QP count bound", bound_keys);
	if (qplab__sc_int(ctx, v, sub, "min", 0, 100000, &x))
		a->qp_count_min = (int)x;
	if (qplab__sc_int(ctx, v, sub, "max", 0, 100000, &x))
		a->qp_count_max = (int)x;
	if (a->qp_count_min < 0 || a->qp_count_max < 0)
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "qp_count is N or {\"min\": N, \"max\": N}, both bounds given");
	else if (a->qp_count_min > a->qp_count_max)
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "qp_count: min above max");
	a->nfields++;
}

static void bool_field(struct sc_ctx *ctx, json_object *o, const char *path, const char *key,
		       int *dst, int *nfields)
{
	bool b;

	if (qplab__sc_bool(ctx, o, path, key, &b)) {
		*dst = b;
		(*nfields)++;
	}
}

void qplab__sc_assert(struct sc_ctx *ctx, json_object *o, const char *path,
		      struct qplab_assert *a, const char *const *extra)
{
	const char *keys[40] = {ASSERT_KEYS};
	size_t n = 0;

	while (keys[n])
		n++;
	for (size_t i = 0; extra && extra[i] && n < 39; i++)
		keys[n++] = extra[i];
	qplab__sc_assert_init(a);
	qplab__sc_only_keys(ctx, o, path, "an expectation", keys);
	qp_states_key(ctx, o, path, a);
	qp_count_key(ctx, o, path, a);
	enum_key(ctx, o, path, "endpoint", endpoint_states, a->endpoint, sizeof(a->endpoint), &a->nfields);
	int_field(ctx, o, path, "endpoints", 0, 100000, &a->endpoints, &a->nfields);
	code_key(ctx, o, path, a);
	text_match(ctx, o, path, "reply_msg_sent", &a->reply_sent, &a->nfields);
	text_match(ctx, o, path, "reply_msg_received", &a->reply_received, &a->nfields);
	text_match(ctx, o, path, "error_text", &a->error_text, &a->nfields);
	enum_key(ctx, o, path, "datapath", datapath_results, a->datapath, sizeof(a->datapath), &a->nfields);
	wc_key(ctx, o, path, a);
	time_key(ctx, o, path, a);
	int_field(ctx, o, path, "gid_index", 0, 255, &a->gid_index, &a->nfields);
	text_match(ctx, o, path, "gid_reason", &a->gid_reason, &a->nfields);
	int_field(ctx, o, path, "path_mtu", 256, 4096, &a->path_mtu, &a->nfields);
	int_field(ctx, o, path, "peer_path_mtu", 0, 4096, &a->peer_path_mtu, &a->nfields);
	bool_field(ctx, o, path, "peer_ready_ack", &a->peer_ready_ack, &a->nfields);
	text_match(ctx, o, path, "warning", &a->warning, &a->nfields);
	text_match(ctx, o, path, "log", &a->log, &a->nfields);
	bool_field(ctx, o, path, "datapath_restored", &a->datapath_restored, &a->nfields);
	bool_field(ctx, o, path, "datapath_peer_checksum", &a->datapath_peer_checksum,
		   &a->nfields);
	bool_field(ctx, o, path, "daemon_alive", &a->daemon_alive, &a->nfields);
	int_field(ctx, o, path, "leftover_qps", 0, 100000, &a->leftover_qps, &a->nfields);
	int_field(ctx, o, path, "leftover_objects", 0, 100000, &a->leftover_objects, &a->nfields);
	enum_key(ctx, o, path, "frame_outcome", frame_outcomes, a->frame_outcome,
		 sizeof(a->frame_outcome), &a->nfields);
	hwc_key(ctx, o, path, a);
	dp_qps_key(ctx, o, path, a);
	int_field(ctx, o, path, "datapath_qp_count", 0, 255, &a->dp_qp_count, &a->nfields);
	dp_failed_key(ctx, o, path, a);
}
