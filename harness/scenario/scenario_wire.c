/* The scenario's `wire` section: expectations on its packets (wire.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_int.h"
#include "wire.h"

static const char *const kinds[] = {"handshake", "reply_msg", "roce_nak", "roce_payload",
				    "roce_sends", "roce_packets", "bad_frame", NULL};
static const char *const msg_types[] = {"connection", "metadata", "notify", "probe", "old-protocol", NULL};
static const char *const roles[] = {"request", "reply", NULL};
/* A handshake expectation's keys when it has ready_ack. */
static const char *const hs_ack_keys[] = {"from", "to", "type", "role", "ready_ack", NULL};

void qplab_wire_free(struct qplab_wire_expect *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++) {
		free(e[i].label);
		free(e[i].why);
		free(e[i].exact);
		free(e[i].prefix);
		free(e[i].contains);
	}
	free(e);
}

/* "from"/"to": a host of the plan. */
static void host_key(struct sc_ctx *ctx, json_object *o, const char *path, const char *key, int *out)
{
	char sub[SC_PATH_MAX];
	const char *s;

	*out = -1;
	if (!qplab__sc_str(ctx, o, path, key, false, &s))
		return;
	qplab__sc_join(sub, sizeof(sub), path, key);
	*out = qplab__sc_host(ctx, qplab__sc_line(ctx, sub), s);
}

static void word_key(struct sc_ctx *ctx, json_object *o, const char *path, const char *key,
		     const char *const *allowed, char *dst, size_t dstlen)
{
	char sub[SC_PATH_MAX], list[160] = "";
	const char *s;

	if (!qplab__sc_str(ctx, o, path, key, false, &s))
		return;
	qplab__sc_join(sub, sizeof(sub), path, key);
	if (!qplab__sc_in_list(allowed, s)) {
		for (size_t i = 0, n = 0; allowed[i] && n < sizeof(list); i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", allowed[i]);
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "%s \"%s\" is not one of %s", key, s, list);
		return;
	}
	qplab__sc_copy(ctx, qplab__sc_line(ctx, sub), dst, dstlen, s, key);
}

/* handshake "ready_ack": true or false (the body's ready_ack), or "none"
 * (no such key, as an old peer sends): mooncake.ready_ack_key's words. */
static void ready_ack_key(struct sc_ctx *ctx, json_object *w, const char *path, struct qplab_wire_expect *e)
{
	char sub[SC_PATH_MAX];
	json_object *v;

	if (!json_object_object_get_ex(w, "ready_ack", &v))
		return;
	qplab__sc_join(sub, sizeof(sub), path, "ready_ack");
	if (json_object_is_type(v, json_type_boolean))
		snprintf(e->ready_ack, sizeof(e->ready_ack), "%s", json_object_get_boolean(v) ? "true" : "false");
	else if (json_object_is_type(v, json_type_string) && !strcmp(json_object_get_string(v), "none"))
		snprintf(e->ready_ack, sizeof(e->ready_ack), "none");
	else
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "ready_ack is true, false or \"none\" (no ready_ack key)");
}

/* key: an integer N (exactly N) or {"min": N, "max": N}. */
static bool bounds(struct sc_ctx *ctx, json_object *o, const char *path, const char *key, bool required,
		   struct qplab_wire_expect *e)
{
	static const char *const keys[] = {"min", "max", NULL};
	json_object *v;
	char sub[SC_PATH_MAX];
	long x;

	qplab__sc_join(sub, sizeof(sub), path, key);
	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			qplab__sc_err(ctx, qplab__sc_line(ctx, path), "wants \"%s\"", key);
		return false;
	}
	if (json_object_is_type(v, json_type_int)) {
		if (qplab__sc_int(ctx, o, path, key, 0, 100000000, &x))
			e->min = e->max = x;
		return true;
	}
	if (!json_object_is_type(v, json_type_object)) {
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "%s is an integer or {\"min\": N, \"max\": N}", key);
		return false;
	}
	qplab__sc_only_keys(ctx, v, sub, key, keys);
	if (qplab__sc_int(ctx, v, sub, "min", 0, 100000000, &x))
		e->min = x;
	if (qplab__sc_int(ctx, v, sub, "max", 0, 100000000, &x))
		e->max = x;
	if (json_object_object_length(v) == 0)
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "%s needs min or max", key);
	else if (e->max >= 0 && e->min > e->max)
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub), "%s: min above max", key);
	return true;
}

static void what_keys(struct sc_ctx *ctx, json_object *w, const char *path, struct qplab_wire_expect *e)
{
	char sub[SC_PATH_MAX];
	static const char *const hs_keys[] = {"from", "to", "type", "role", NULL};
	static const char *const msg_keys[] = {"from", "to", "exact", "prefix", "contains", NULL};
	static const char *const nak_keys[] = {"from", "to", "syndrome", NULL};
	static const char *const roce_keys[] = {"from", "to", NULL};
	static const char *const bad_keys[] = {"from", "to", "code", NULL};
	const char *s;

	host_key(ctx, w, path, "from", &e->from);
	host_key(ctx, w, path, "to", &e->to);
	switch (e->kind) {
	case QPLAB_WIRE_HANDSHAKE:
		qplab__sc_only_keys(ctx, w, path, "handshake",
				    json_object_object_get_ex(w, "ready_ack", NULL) ? hs_ack_keys : hs_keys);
		word_key(ctx, w, path, "type", msg_types, e->type, sizeof(e->type));
		word_key(ctx, w, path, "role", roles, e->role, sizeof(e->role));
		ready_ack_key(ctx, w, path, e);
		break;
	case QPLAB_WIRE_REPLY_MSG:
		qplab__sc_only_keys(ctx, w, path, "reply_msg", msg_keys);
		if (qplab__sc_str(ctx, w, path, "exact", false, &s))
			e->exact = qplab__sc_strdup(s);
		if (qplab__sc_str(ctx, w, path, "prefix", false, &s))
			e->prefix = qplab__sc_strdup(s);
		if (qplab__sc_str(ctx, w, path, "contains", false, &s))
			e->contains = qplab__sc_strdup(s);
		if (!e->exact && !e->prefix && !e->contains)
			qplab__sc_err(ctx, qplab__sc_line(ctx, path), "reply_msg needs exact, prefix or contains");
		break;
	case QPLAB_WIRE_ROCE_NAK:
		qplab__sc_only_keys(ctx, w, path, "roce_nak", nak_keys);
		if (qplab__sc_str(ctx, w, path, "syndrome", true, &s) &&
		    (e->syndrome = qplab_wire_syndrome(s)) < 0)
			qplab__sc_err(ctx, qplab__sc_line(ctx, path),
				      "syndrome \"%s\" is not psn_sequence_error, invalid_request, "
				      "remote_access_error or remote_operational_error", s);
		break;
	case QPLAB_WIRE_BAD_FRAME:
		qplab__sc_only_keys(ctx, w, path, "bad_frame", bad_keys);
		if (!qplab__sc_str(ctx, w, path, "code", false, &s))
			break;
		qplab__sc_join(sub, sizeof(sub), path, "code");
		if (!qplab_wire_bad_frame_code(s))
			qplab__sc_err(ctx, qplab__sc_line(ctx, sub),
				      "code \"%s\" is not a name the dissector gives a bad frame "
				      "(ERR_FRAME_ZERO_LENGTH, ERR_FRAME_TOO_LONG, ERR_FRAME_BAD_TYPE, "
				      "ERR_FRAME_EMPTY_BODY, ERR_FRAME_TRUNCATED, ERR_FRAME_NOT_JSON, "
				      "ERR_FRAME_TRAILING, ERR_BODY_TOO_DEEP)", s);
		else
			qplab__sc_copy(ctx, qplab__sc_line(ctx, sub), e->code, sizeof(e->code), s, "code");
		break;
	default:
		qplab__sc_only_keys(ctx, w, path, kinds[e->kind], roce_keys);
		break;
	}
}

static void one(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_wire_expect *e)
{
	static const char *const keys[] = {"label", "why", "handshake", "reply_msg", "roce_nak",
					   "roce_payload", "roce_sends", "roce_packets", "bad_frame", "count",
					   "bytes", NULL};
	char sub[SC_PATH_MAX];
	const char *s;
	int found = 0;

	e->line = qplab__sc_line(ctx, path);
	e->from = e->to = e->syndrome = -1;
	e->max = -1;
	if (!json_object_is_type(o, json_type_object)) {
		qplab__sc_err(ctx, e->line, "a wire expectation is an object");
		return;
	}
	qplab__sc_only_keys(ctx, o, path, "a wire expectation", keys);
	if (qplab__sc_str(ctx, o, path, "label", false, &s))
		e->label = qplab__sc_strdup(s);
	if (qplab__sc_str(ctx, o, path, "why", true, &s))
		e->why = qplab__sc_strdup(s);
	for (int k = 0; kinds[k]; k++) {
		json_object *w = qplab__sc_get(ctx, o, path, kinds[k], json_type_object, false);

		if (!w)
			continue;
		if (found++) {
			qplab__sc_err(ctx, e->line, "a wire expectation has one of %s, ...; this one has more",
				      kinds[0]);
			return;
		}
		e->kind = (enum qplab_wire_kind)k;
		qplab__sc_join(sub, sizeof(sub), path, kinds[k]);
		what_keys(ctx, w, sub, e);
	}
	if (!found) {
		qplab__sc_err(ctx, e->line, "a wire expectation needs one of handshake, reply_msg, roce_nak, "
			      "roce_payload, roce_sends, roce_packets, bad_frame");
		return;
	}
	if (e->kind == QPLAB_WIRE_ROCE_PAYLOAD) {
		bounds(ctx, o, path, "bytes", true, e);
		if (json_object_object_get_ex(o, "count", NULL))
			qplab__sc_err(ctx, e->line, "roce_payload takes bytes, not count");
		return;
	}
	if (json_object_object_get_ex(o, "bytes", NULL))
		qplab__sc_err(ctx, e->line, "only roce_payload takes bytes");
	if (!bounds(ctx, o, path, "count", e->kind != QPLAB_WIRE_REPLY_MSG, e))
		e->min = 1; /* reply_msg: at least one reply carried it */
}

void qplab__sc_wire(struct sc_ctx *ctx, json_object *root)
{
	json_object *arr = qplab__sc_get(ctx, root, "", "wire", json_type_array, false);
	struct qplab_plan *plan = ctx->plan;
	char path[SC_PATH_MAX];
	size_t n;

	if (!arr)
		return;
	n = json_object_array_length(arr);
	if (n == 0 || n > 256) {
		qplab__sc_err(ctx, qplab__sc_line(ctx, "/wire"), "wire has 1 to 256 expectations");
		return;
	}
	plan->wire = calloc(n, sizeof(*plan->wire));
	if (!plan->wire) {
		qplab__sc_err(ctx, 0, "out of memory");
		return;
	}
	plan->nwire = n;
	for (size_t i = 0; i < n; i++) {
		qplab__sc_join_index(path, sizeof(path), "/wire", i);
		one(ctx, json_object_array_get_idx(arr, i), path, &plan->wire[i]);
	}
}
