/* The Mooncake adapter's side of the agent protocol: requests, replies,
 * --config, the ready line, the report, the adapter's state (proto.h). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/jread.h"
#include "proto.h"

static const struct {
	const char *name;
	enum mca_op op;
} ops[] = {
	{"connect", MCA_OP_CONNECT},       {"report", MCA_OP_REPORT},
	{"datapath", MCA_OP_DATAPATH},     {"disconnect", MCA_OP_DISCONNECT},
	{"probe", MCA_OP_PROBE},           {"raw_frame", MCA_OP_RAW_FRAME},
	{"exit", MCA_OP_EXIT},
};

json_object *mca_reply(json_object *id, const char *op, bool ok, const char *code, const char *error)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(MCA_PROTO_VERSION));
	json_object_object_add(o, "type", json_object_new_string("reply"));
	json_object_object_add(o, "id", id && json_object_is_type(id, json_type_int) ? json_object_get(id) : NULL);
	json_object_object_add(o, "op", op ? json_object_new_string(op) : NULL);
	json_object_object_add(o, "ok", json_object_new_boolean(ok));
	json_object_object_add(o, "code", json_object_new_string(code ? code : "OK"));
	json_object_object_add(o, "error", json_object_new_string(error ? error : ""));
	return o;
}

json_object *mca_unsupported(json_object *id, const char *op, const char *reason)
{
	json_object *o = mca_reply(id, op, false, "ERR_NOT_IMPLEMENTED", reason);

	json_object_object_add(o, "unsupported", json_object_new_string(reason));
	return o;
}

/* The request's optional members through the harness's strict reader
 * (cli/jread.h): a wrong JSON type or a number out of range is an error
 * naming the key; absent or null leaves the member NULL or -1. */
static int fields(struct mca_request *r, char *err, size_t errlen)
{
	struct jread jr = {.what = "request", .err = err, .errlen = errlen};
	int64_t at = -1;
	int deadline = -1;
	long bytes = -1;
	bool ro = false;

	jread_str(&jr, r->body, "peer", &r->peer);
	jread_str(&jr, r->body, "address", &r->address);
	jread_str(&jr, r->body, "kind", &r->kind);
	jread_str(&jr, r->body, "hex", &r->hex);
	jread_int64(&jr, r->body, "at_realtime_ns", 0, INT64_MAX, &at);
	jread_int(&jr, r->body, "deadline_ms", 1, INT_MAX, &deadline);
	jread_long(&jr, r->body, "bytes", 1, LONG_MAX, &bytes);
	jread_bool(&jr, r->body, "read_only", &ro);
	r->at_realtime_ns = at;
	r->deadline_ms = deadline;
	r->bytes = bytes;
	r->read_only = ro;
	return jr.errors ? -1 : 0;
}

int mca_request_parse(const char *line, size_t len, unsigned long lineno, struct mca_request *r,
		      json_object **error_reply)
{
	json_object *v, *op;
	char err[200];

	memset(r, 0, sizeof(*r));
	*error_reply = NULL;
	if (len > MCA_LINE_MAX) {
		snprintf(err, sizeof(err), "line %lu: longer than %d bytes", lineno, MCA_LINE_MAX);
		*error_reply = mca_reply(NULL, NULL, false, "ERR_INVALID_ARGUMENT", err);
		return -1;
	}
	if (jread_parse_object(&(struct jread){0}, line, len, &r->body) != JREAD_OK) {
		snprintf(err, sizeof(err), "line %lu: not a JSON object", lineno);
		*error_reply = mca_reply(NULL, NULL, false, "ERR_MALFORMED_JSON", err);
		mca_request_free(r);
		return -1;
	}
	json_object_object_get_ex(r->body, "id", &r->id);
	if (!json_object_object_get_ex(r->body, "op", &op) || !json_object_is_type(op, json_type_string))
		op = NULL;
	r->op_name = op ? json_object_get_string(op) : NULL;
	if (!json_object_object_get_ex(r->body, "v", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int(v) != MCA_PROTO_VERSION) {
		*error_reply = mca_reply(r->id, r->op_name, false, "ERR_INVALID_ARGUMENT",
					 "protocol version: want \"v\": 2");
	} else if (!r->id || !json_object_is_type(r->id, json_type_int)) {
		*error_reply = mca_reply(NULL, r->op_name, false, "ERR_INVALID_ARGUMENT",
					 "request: integer \"id\" missing");
	} else if (!r->op_name) {
		*error_reply = mca_reply(r->id, NULL, false, "ERR_INVALID_ARGUMENT", "request: \"op\" missing");
	} else {
		size_t i;

		for (i = 0; i < sizeof(ops) / sizeof(ops[0]) && strcmp(ops[i].name, r->op_name); i++)
			;
		if (i == sizeof(ops) / sizeof(ops[0])) {
			snprintf(err, sizeof(err), "unknown op \"%.100s\"", r->op_name);
			*error_reply = mca_reply(r->id, r->op_name, false, "ERR_INVALID_ARGUMENT", err);
		} else if (fields(r, err, sizeof(err))) {
			*error_reply = mca_reply(r->id, r->op_name, false, "ERR_INVALID_ARGUMENT", err);
		} else {
			r->op = ops[i].op;
			return 0;
		}
	}
	mca_request_free(r);
	return -1;
}

void mca_request_free(struct mca_request *r)
{
	json_object_put(r->body);
	memset(r, 0, sizeof(*r));
}

int mca_config_check(const char *json, char *err, size_t errlen)
{
	json_object *o = NULL, *v;
	int rc = 0;

	if (jread_parse_object(&(struct jread){0}, json, strlen(json), &o) != JREAD_OK) {
		snprintf(err, errlen, "--config: not a JSON object");
		return -1;
	}
	json_object_object_foreach(o, key, val) {
		if (!strcmp(key, "impl") && json_object_is_type(val, json_type_string) &&
		    !strcmp(json_object_get_string(val), "mooncake"))
			continue;
		if (!strcmp(key, "agent") && json_object_is_type(val, json_type_object)) {
			json_object_object_foreach(val, opt, ov) {
				(void)ov;
				snprintf(err, errlen, "--config: agent option \"%s\" has no Mooncake "
					 "equivalent (a Mooncake host takes MC_* variables only)", opt);
				rc = -1;
				break;
			}
			continue;
		}
		if (!strcmp(key, "fault"))
			snprintf(err, errlen, "--config: a daemon fault cannot be injected into "
				 "Mooncake's own daemon");
		else if (!strcmp(key, "impl"))
			snprintf(err, errlen, "--config: \"impl\" must be \"mooncake\"");
		else
			snprintf(err, errlen, "--config: unknown key \"%s\"", key);
		rc = -1;
		break;
	}
	if (!rc && (!json_object_object_get_ex(o, "impl", &v))) {
		snprintf(err, errlen, "--config: \"impl\": \"mooncake\" missing");
		rc = -1;
	}
	json_object_put(o);
	return rc;
}

json_object *mca_ready(const struct mca_ready_info *in)
{
	json_object *o = json_object_new_object(), *mc = json_object_new_object(), *ce = NULL;
	char path[600];

	snprintf(path, sizeof(path), "%s@%s", in->listen, in->device);
	json_object_object_add(o, "v", json_object_new_int(MCA_PROTO_VERSION));
	json_object_object_add(o, "type", json_object_new_string("ready"));
	json_object_object_add(o, "host", json_object_new_string(in->host));
	json_object_object_add(o, "impl", json_object_new_string("mooncake"));
	json_object_object_add(o, "pid", json_object_new_int(in->pid));
	json_object_object_add(o, "listen", json_object_new_string(in->listen));
	json_object_object_add(o, "nic_path", json_object_new_string(path));
	json_object_object_add(o, "device", json_object_new_string(in->device));
	json_object_object_add(o, "gid_index", in->gid_index >= 0 ? json_object_new_int(in->gid_index) : NULL);
	json_object_object_add(o, "gid", in->gid && in->gid[0] ? json_object_new_string(in->gid) : NULL);
	if (in->context_code) {
		ce = json_object_new_object();
		json_object_object_add(ce, "code", json_object_new_string(in->context_code));
		json_object_object_add(ce, "text", json_object_new_string(in->context_text ? in->context_text : ""));
	}
	json_object_object_add(o, "context_error", ce);
	json_object_object_add(mc, "commit", json_object_new_string(in->commit ? in->commit : "unknown"));
	json_object_object_add(mc, "build", json_object_new_string(in->build ? in->build : "unknown"));
	json_object_object_add(mc, "source", json_object_new_string(in->source ? in->source : "unknown"));
	json_object_object_add(o, "mooncake", mc);
	json_object_object_add(o, "fault", NULL);
	return o;
}

void mca_state_init(struct mca_state *st)
{
	memset(st, 0, sizeof(*st));
	snprintf(st->last_code, sizeof(st->last_code), "OK");
	snprintf(st->transfer_status, sizeof(st->transfer_status), "NONE");
	st->t_total = -1;
}

void mca_state_last(struct mca_state *st, const char *code, const char *text, const char *where)
{
	snprintf(st->last_code, sizeof(st->last_code), "%s", code ? code : "OK");
	snprintf(st->last_error, sizeof(st->last_error), "%s", text ? text : "");
	snprintf(st->last_where, sizeof(st->last_where), "%s", where ? where : "");
}

/* The TIMINGS of docs/agent-protocol.md: only the whole call is known. */
static json_object *times(const struct mca_state *st)
{
	static const char *const names[] = {"tcp_connect", "handshake", "reset", "init",
					    "rtr", "rts", "ready_ack"};
	json_object *t = json_object_new_object();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		json_object_object_add(t, names[i], NULL);
	json_object_object_add(t, "total", st->t_total >= 0 ? json_object_new_int64(st->t_total) : NULL);
	return t;
}

json_object *mca_report(json_object *id, const struct mca_state *st, const struct mca_qp *qps,
			int nqp, int gid_index, const char *gid, json_object *log_lines,
			uint64_t log_lost)
{
	json_object *o = mca_reply(id, "report", true, "OK", ""), *dev = json_object_new_array();
	json_object *last = json_object_new_object(), *tr = json_object_new_object();
	json_object *c = json_object_new_object(), *nr = json_object_new_object();

	for (int i = 0; i < nqp; i++) {
		json_object *q = json_object_new_object();

		json_object_object_add(q, "qpn", json_object_new_int64(qps[i].qpn));
		json_object_object_add(q, "state", json_object_new_string(qps[i].state));
		json_object_array_add(dev, q);
	}
	json_object_object_add(o, "device_qps", nqp >= 0 ? dev : NULL);
	if (nqp < 0)
		json_object_put(dev);
	json_object_object_add(o, "gid_index", gid_index >= 0 ? json_object_new_int(gid_index) : NULL);
	json_object_object_add(o, "gid", gid && gid[0] ? json_object_new_string(gid) : NULL);
	json_object_object_add(last, "code", json_object_new_string(st->last_code));
	json_object_object_add(last, "error", json_object_new_string(st->last_error));
	json_object_object_add(last, "where", st->last_where[0] ? json_object_new_string(st->last_where) : NULL);
	json_object_object_add(o, "last", last);
	json_object_object_add(tr, "op", st->transfer_op[0] ? json_object_new_string(st->transfer_op) : NULL);
	json_object_object_add(tr, "status", json_object_new_string(st->transfer_status));
	json_object_object_add(o, "transfer", tr);
	json_object_object_add(o, "time_ms", times(st));
	json_object_object_add(o, "log", log_lines ? log_lines : json_object_new_array());
	json_object_object_add(o, "log_lost", json_object_new_int64((int64_t)log_lost));
	json_object_object_add(c, "connects", json_object_new_int64((int64_t)st->connects));
	json_object_object_add(o, "counters", c);
	json_object_object_add(nr, "endpoints", json_object_new_string(
		"Mooncake's C API (transfer_engine_c.h) has no call that lists endpoints or their status"));
	json_object_object_add(nr, "reply_msg", json_object_new_string(
		"Mooncake's C API returns no reply_msg; a rejection Mooncake received is in its log "
		"(\"Handshake rejected by\", TransferMetadata::sendHandshake)"));
	json_object_object_add(o, "not_reported", nr);
	return o;
}
