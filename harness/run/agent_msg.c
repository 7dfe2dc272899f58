/* The agent protocol, runner side: configs, request lines, reply lines. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_msg.h"
#include "cli/jread.h"
#include "cli/labwords.h"
#include "qphs/error.h"
#include "qphs/rdma.h"

static void add_str(json_object *o, const char *key, const char *v)
{
	if (v && *v)
		json_object_object_add(o, key, json_object_new_string(v));
}

static void add_int(json_object *o, const char *key, int64_t v)
{
	if (v >= 0)
		json_object_object_add(o, key, json_object_new_int64(v));
}

static void add_bool(json_object *o, const char *key, int v)
{
	if (v >= 0)
		json_object_object_add(o, key, json_object_new_boolean(v));
}

static json_object *agent_json(const struct qplab_agent_opts *a)
{
	json_object *o = json_object_new_object(), *adv = json_object_new_object();

	add_str(o, "quirk", a->quirk);
	add_bool(o, "mtu_negotiation", a->mtu_negotiation);
	add_bool(o, "ready_ack", a->ready_ack);
	add_str(o, "reset_policy", a->reset_policy);
	add_bool(o, "strict_reset", a->strict_reset);
	add_int(o, "qp_timeout", a->qp_timeout);
	add_int(o, "qp_retry_cnt", a->qp_retry_cnt);
	add_int(o, "qp_rnr_retry", a->qp_rnr_retry);
	add_int(o, "reply_timeout_ms", a->reply_timeout_ms);
	add_bool(o, "old_protocol", a->old_protocol);
	add_bool(o, "rd_atomic_clamp", a->rd_atomic_clamp);
	add_int(o, "delay_passive_rtr_ms", a->delay_passive_rtr_ms);
	add_int(o, "delay_active_rtr_ms", a->delay_active_rtr_ms);
	add_bool(o, "mtu_reread", a->mtu_reread);
	add_bool(o, "no_rdma_transport", a->no_rdma_transport);
	add_int(o, "sq_psn", a->sq_psn);
	add_int(o, "rq_psn", a->rq_psn);
	/* "" is a GID too: sent as an empty local_gid, the request of a
	 * Mooncake before PR 1959, whose peer must fetch the GID from our
	 * segment descriptor.  Only NULL means "the real one". */
	if (a->advertise_gid)
		json_object_object_add(adv, "gid", json_object_new_string(a->advertise_gid));
	add_int(adv, "qpn", a->advertise_qpn);
	add_int(adv, "qp_count", a->advertise_qp_count);
	add_str(adv, "address", a->advertise_address);
	if (json_object_object_length(adv))
		json_object_object_add(o, "advertise", adv);
	else
		json_object_put(adv);
	if (a->rdma_max) {
		json_object *m = json_object_new_object();

		add_int(m, "hca_handle", a->rdma_max_handle);
		add_int(m, "hca_object", a->rdma_max_object);
		json_object_object_add(o, "rdma_max", m);
	}
	return o;
}

json_object *qplab_agent_config(const struct qplab_host *h)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "agent", agent_json(&h->agent));
	if (h->impl[0] && strcmp(h->impl, "qplab"))
		add_str(o, "impl", h->impl);
	if (h->fault.set) {
		json_object *f = json_object_new_object();
		add_str(f, "name", h->fault.name);
		add_int(f, "ms", h->fault.ms);
		add_str(f, "text", h->fault.text);
		add_int(f, "seed", h->fault.seed);
		if (h->fault.types) {
			static const char *const names[] = {"connection", "metadata", "notify", "probe",
							    "old-protocol"};
			json_object *t = json_object_new_array();
			for (unsigned i = 0; i < 5; i++)
				if (h->fault.types & (1u << i))
					json_object_array_add(t, json_object_new_string(names[i]));
			json_object_object_add(f, "types", t);
		}
		json_object_object_add(o, "fault", f);
	}
	return o;
}

int qplab_fault_spec(const struct qplab_fault *f, char *buf, size_t len)
{
	int n;

	if (!f->set)
		n = snprintf(buf, len, "%s", "");
	else if (!strcmp(f->name, "delay"))
		n = snprintf(buf, len, "delay:%d", f->ms);
	else if (!strcmp(f->name, "reject") && f->text[0])
		n = snprintf(buf, len, "reject:%s", f->text);
	else
		n = snprintf(buf, len, "%s", f->name);
	return n < 0 || (size_t)n >= len ? QPHS_ERR_INVALID_ARGUMENT : 0;
}

/* {"v": 3, "id": id, "op": op, ...extra} as one line; takes extra. */
static char *line(int id, const char *op, json_object *extra)
{
	json_object *o = json_object_new_object();
	const char *text;
	char *out = NULL;

	json_object_object_add(o, "v", json_object_new_int(QPLAB_AGENT_PROTO_VERSION));
	json_object_object_add(o, "id", json_object_new_int(id));
	json_object_object_add(o, "op", json_object_new_string(op));
	if (extra) {
		json_object_object_foreach(extra, k, v)
			json_object_object_add(o, k, json_object_get(v));
		json_object_put(extra);
	}
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text && (out = malloc(strlen(text) + 2)))
		sprintf(out, "%s\n", text);
	json_object_put(o);
	return out;
}

char *qplab_agent_req_connect(int id, const char *peer, int64_t at_realtime_ns, int deadline_ms)
{
	json_object *x = json_object_new_object();

	add_str(x, "peer", peer);
	if (at_realtime_ns > 0)
		json_object_object_add(x, "at_realtime_ns", json_object_new_int64(at_realtime_ns));
	add_int(x, "deadline_ms", deadline_ms);
	return line(id, "connect", x);
}

char *qplab_agent_req_report(int id)
{
	return line(id, "report", NULL);
}

char *qplab_agent_req_counters(int id)
{
	return line(id, "counters", NULL);
}

char *qplab_agent_req_datapath(int id, const char *peer, long bytes, int deadline_ms,
			       bool read_only, int rkey_mode, int verb, uint64_t seed)
{
	json_object *x = json_object_new_object();

	add_str(x, "peer", peer);
	add_int(x, "bytes", bytes);
	add_int(x, "deadline_ms", deadline_ms);
	if (read_only)
		add_bool(x, "read_only", 1);
	if (rkey_mode)
		add_str(x, "rkey", qplab_rkey_words[rkey_mode]);
	if (verb)
		add_str(x, "verb", qplab_verb_words[verb]);
	if (verb == QPHS_DATA_WRITE)
		json_object_object_add(x, "seed", json_object_new_int64((int64_t)(seed >> 1)));
	return line(id, "datapath", x);
}

char *qplab_agent_req_burst(int id, const char *peer, long bytes, int deadline_ms, int count,
			    uint64_t seed)
{
	json_object *x = json_object_new_object();

	add_str(x, "peer", peer);
	add_int(x, "bytes", bytes);
	add_int(x, "deadline_ms", deadline_ms);
	add_str(x, "verb", qplab_verb_words[QPHS_DATA_BURST]);
	add_int(x, "count", count);
	json_object_object_add(x, "seed", json_object_new_int64((int64_t)(seed >> 1)));
	return line(id, "datapath", x);
}

char *qplab_agent_req_fan_in(int id, const char *peer, int count, int64_t at_realtime_ns)
{
	json_object *x = json_object_new_object();

	add_str(x, "peer", peer);
	add_int(x, "count", count);
	json_object_object_add(x, "at_realtime_ns", json_object_new_int64(at_realtime_ns));
	add_bool(x, "check", 0);
	return line(id, "fan_in", x);
}

char *qplab_agent_req_fan_in_check(int id, long bytes, int deadline_ms)
{
	json_object *x = json_object_new_object();

	add_int(x, "bytes", bytes);
	add_int(x, "deadline_ms", deadline_ms);
	return line(id, "fan_in_check", x);
}

char *qplab_agent_req_datapath_when_connected(int id, const char *peer, int deadline_ms)
{
	json_object *x = json_object_new_object();

	add_str(x, "peer", peer);
	add_int(x, "bytes", 4096);
	add_int(x, "deadline_ms", deadline_ms);
	add_bool(x, "read_only", 1);
	add_int(x, "wait_connected_ms", deadline_ms);
	return line(id, "datapath", x);
}

char *qplab_agent_req_verify(int id, long bytes, uint64_t seed)
{
	json_object *x = json_object_new_object();

	add_int(x, "bytes", bytes);
	json_object_object_add(x, "seed", json_object_new_int64((int64_t)(seed >> 1)));
	return line(id, "verify", x);
}

char *qplab_agent_req_region(int id, int access)
{
	json_object *x = json_object_new_object(), *a = json_object_new_array();

	for (int i = 0; qplab_access_words[i]; i++)
		if (access & (1 << i))
			json_object_array_add(a, json_object_new_string(qplab_access_words[i]));
	json_object_object_add(x, "access", a);
	return line(id, "region", x);
}

char *qplab_agent_req_disconnect(int id, const char *peer)
{
	json_object *x = json_object_new_object();

	add_str(x, "peer", peer);
	return line(id, "disconnect", x);
}

char *qplab_agent_req_probe(int id, const char *address, int deadline_ms)
{
	json_object *x = json_object_new_object();

	add_str(x, "address", address);
	add_int(x, "deadline_ms", deadline_ms);
	return line(id, "probe", x);
}

char *qplab_agent_req_raw_frame(int id, const char *address, const uint8_t *bytes, size_t len,
				int deadline_ms)
{
	json_object *x = json_object_new_object();
	char *hex = malloc(2 * len + 1);

	if (!hex) {
		json_object_put(x);
		return NULL;
	}
	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", bytes[i]);
	hex[2 * len] = '\0';
	add_str(x, "address", address);
	json_object_object_add(x, "hex", json_object_new_string(hex));
	add_int(x, "deadline_ms", deadline_ms);
	free(hex);
	return line(id, "raw_frame", x);
}

char *qplab_agent_req_raw_frame_kind(int id, const char *address, const char *kind,
				     const char *peer, int deadline_ms)
{
	json_object *x = json_object_new_object();

	add_str(x, "address", address);
	add_str(x, "kind", kind);
	add_str(x, "peer", peer);
	add_int(x, "deadline_ms", deadline_ms);
	return line(id, "raw_frame", x);
}

char *qplab_agent_req_daemon_refusal(int id, bool mark, int deadline_ms)
{
	json_object *x = json_object_new_object();

	if (mark)
		add_bool(x, "mark", 1);
	else
		add_int(x, "deadline_ms", deadline_ms);
	return line(id, "daemon_refusal", x);
}

char *qplab_agent_req_exit(int id)
{
	return line(id, "exit", NULL);
}

/* line with key set to val (a new reference, taken); NULL when line is
 * not a JSON object.  line is freed. */
static char *with_key(char *line, const char *key, json_object *val)
{
	json_object *o = json_tokener_parse(line);
	const char *text;
	char *out = NULL;

	free(line);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		json_object_put(val);
		return NULL;
	}
	json_object_object_add(o, key, val);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text && (out = malloc(strlen(text) + 2)))
		sprintf(out, "%s\n", text);
	json_object_put(o);
	return out;
}

char *qplab_agent_req_for_version(char *line, int v)
{
	if (!line || !v || v == QPLAB_AGENT_PROTO_VERSION)
		return line;
	return with_key(line, "v", json_object_new_int(v));
}

char *qplab_agent_req_notify_posted(char *line)
{
	return line ? with_key(line, "notify_posted", json_object_new_boolean(1)) : NULL;
}

/* The fields every reply (and a fatal line) carries, through the
 * harness's JSON reader (cli/jread.h). */
static int parse_status(struct jread *r, struct qplab_agent_msg *m)
{
	int64_t id;
	bool ok = false;

	if (jread_str(r, m->body, "code", &m->code) == JREAD_ABSENT)
		jread_missing(r, "code");
	if (jread_str(r, m->body, "error", &m->error) == JREAD_ABSENT)
		jread_missing(r, "error");
	if (m->type == QPLAB_AGENT_FATAL)
		return r->errors ? QPHS_ERR_INVALID_ARGUMENT : 0;
	if (jread_bool(r, m->body, "ok", &ok) == JREAD_ABSENT)
		jread_missing(r, "ok");
	m->ok = ok;
	jread_str(r, m->body, "op", &m->op);
	if (jread_int64(r, m->body, "id", 0, INT64_MAX, &id) == JREAD_OK)
		m->id = id;
	return r->errors ? QPHS_ERR_INVALID_ARGUMENT : 0;
}

int qplab_agent_parse_line(const char *text, size_t len, struct qplab_agent_msg *m, char *err,
			   size_t errlen)
{
	struct jread r = {.what = "agent line", .err = err, .errlen = errlen};
	const char *type = "";
	int v = 0, rc;

	memset(m, 0, sizeof(*m));
	m->id = -1;
	if (len > QPLAB_AGENT_LINE_MAX)
		return jread_fail(&r, NULL, "longer than 64 KiB"), QPHS_ERR_INVALID_ARGUMENT;
	if (jread_parse_object(&r, text, len, &m->body) != JREAD_OK)
		return QPHS_ERR_MALFORMED_JSON;
	if (jread_int(&r, m->body, "v", INT_MIN, INT_MAX, &v) != JREAD_OK ||
	    v < QPLAB_AGENT_PROTO_MIN || v > QPLAB_AGENT_PROTO_VERSION) {
		qplab_agent_msg_free(m);
		if (!r.errors)
			jread_fail(&r, "v", "not protocol version %d..%d", QPLAB_AGENT_PROTO_MIN,
				   QPLAB_AGENT_PROTO_VERSION);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	m->v = v;
	jread_str(&r, m->body, "type", &type);
	if (!strcmp(type, "ready"))
		m->type = QPLAB_AGENT_READY;
	else if (!strcmp(type, "fatal"))
		m->type = QPLAB_AGENT_FATAL;
	else if (!strcmp(type, "reply"))
		m->type = QPLAB_AGENT_REPLY;
	else if (!strcmp(type, "posted"))
		m->type = QPLAB_AGENT_POSTED;
	else {
		qplab_agent_msg_free(m);
		if (!r.errors)
			jread_fail(&r, "type", "unknown \"type\"");
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if (m->type == QPLAB_AGENT_POSTED) {
		int64_t id;

		if (jread_int64(&r, m->body, "id", 0, INT64_MAX, &id) != JREAD_OK) {
			qplab_agent_msg_free(m);
			if (!r.errors)
				jread_missing(&r, "id");
			return QPHS_ERR_INVALID_ARGUMENT;
		}
		m->id = id;
		jread_str(&r, m->body, "op", &m->op);
		return 0;
	}
	if (m->type != QPLAB_AGENT_READY && (rc = parse_status(&r, m)) < 0) {
		qplab_agent_msg_free(m);
		return rc;
	}
	return 0;
}

void qplab_agent_msg_free(struct qplab_agent_msg *m)
{
	json_object_put(m->body);
	memset(m, 0, sizeof(*m));
	m->id = -1;
}
