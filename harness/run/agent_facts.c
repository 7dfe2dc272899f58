/*
 * Agent replies -> facts.  Decoding is strict (STYLE 3): a key of the wrong
 * JSON type is an error naming it, never a plausible default; a key that is
 * absent or null leaves the fact "not collected".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_msg.h"
#include "qphs/error.h"

struct dec {
	char *err;
	size_t errlen;
	int rc;
};

/* 1: present with type t; 0: absent or null; -1 (and d->rc set): wrong type. */
static int get(struct dec *d, json_object *o, const char *key, json_type t, json_object **out)
{
	json_object *v;

	*out = NULL;
	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, t)) {
		snprintf(d->err, d->errlen, "agent reply: \"%s\" has the wrong JSON type", key);
		d->rc = QPHS_ERR_INVALID_ARGUMENT;
		return -1;
	}
	*out = v;
	return 1;
}

static void word(struct dec *d, json_object *o, const char *key, char *dst, size_t dstlen)
{
	json_object *v;

	if (get(d, o, key, json_type_string, &v) <= 0)
		return;
	if (strlen(json_object_get_string(v)) >= dstlen) {
		snprintf(d->err, d->errlen, "agent reply: \"%s\" is too long", key);
		d->rc = QPHS_ERR_INVALID_ARGUMENT;
		return;
	}
	snprintf(dst, dstlen, "%s", json_object_get_string(v));
}

static void text(struct dec *d, json_object *o, const char *key, char **dst)
{
	json_object *v;

	if (get(d, o, key, json_type_string, &v) > 0 && qplab_facts_set(dst, json_object_get_string(v)) < 0)
		d->rc = QPHS_ERR_MEMORY;
}

static void number(struct dec *d, json_object *o, const char *key, long *dst)
{
	json_object *v;

	if (get(d, o, key, json_type_int, &v) > 0)
		*dst = (long)json_object_get_int64(v);
}

static void integer(struct dec *d, json_object *o, const char *key, int *dst)
{
	long x = *dst;

	number(d, o, key, &x);
	*dst = (int)x;
}

static void boolean(struct dec *d, json_object *o, const char *key, int *dst)
{
	json_object *v;

	if (get(d, o, key, json_type_boolean, &v) > 0)
		*dst = json_object_get_boolean(v);
}

static void times(struct dec *d, json_object *o, struct qplab_facts *f)
{
	json_object *t;

	if (get(d, o, "time_ms", json_type_object, &t) <= 0)
		return;
	/* "step" is the runner's own measurement, never the agent's. */
	for (int i = QPLAB_TIME_STEP + 1; i < QPLAB_TIME_COUNT; i++)
		number(d, t, qplab_timing_name(i), &f->time_ms[i]);
}

/* The endpoint for peer: the one whose "peer" matches, else the only one. */
static json_object *pick_endpoint(json_object *eps, const char *peer)
{
	size_t n = json_object_array_length(eps);
	json_object *p;

	for (size_t i = 0; peer && i < n; i++) {
		json_object *e = json_object_array_get_idx(eps, i);
		if (json_object_object_get_ex(e, "peer", &p) && json_object_is_type(p, json_type_string) &&
		    !strcmp(json_object_get_string(p), peer))
			return e;
	}
	return n == 1 ? json_object_array_get_idx(eps, 0) : NULL;
}

static void device_qps(struct dec *d, json_object *body, struct qplab_facts *f)
{
	json_object *qps;

	if (get(d, body, "device_qps", json_type_array, &qps) <= 0)
		return;
	f->nqp = (int)json_object_array_length(qps);
	for (int i = 0; i < f->nqp && i < QPLAB_FACT_MAX_QPS; i++) {
		json_object *q = json_object_array_get_idx(qps, (size_t)i);
		if (!json_object_is_type(q, json_type_object)) {
			snprintf(d->err, d->errlen, "agent reply: device_qps[%d] is not an object", i);
			d->rc = QPHS_ERR_INVALID_ARGUMENT;
			return;
		}
		word(d, q, "state", f->qp_states[i], QPLAB_QP_STATE_LEN);
	}
}

/* "log": the host's lines since its previous report, one per line. */
static void log_lines(struct dec *d, json_object *body, struct qplab_facts *f)
{
	json_object *a;
	size_t len = 0;
	char *all;

	if (get(d, body, "log", json_type_array, &a) <= 0)
		return;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *l = json_object_array_get_idx(a, i);

		if (!json_object_is_type(l, json_type_string)) {
			snprintf(d->err, d->errlen, "agent reply: log[%zu] is not a string", i);
			d->rc = QPHS_ERR_INVALID_ARGUMENT;
			return;
		}
		len += strlen(json_object_get_string(l)) + 1;
	}
	all = calloc(1, len + 1);
	if (!all) {
		d->rc = QPHS_ERR_MEMORY;
		return;
	}
	for (size_t i = 0, n = 0; i < json_object_array_length(a); i++)
		n += (size_t)sprintf(all + n, "%s%s", i ? "\n" : "",
				     json_object_get_string(json_object_array_get_idx(a, i)));
	free(f->log);
	f->log = all;
}

static void report(struct dec *d, json_object *body, const char *peer, struct qplab_facts *f)
{
	json_object *eps, *ep = NULL, *last;

	/* The context's GID choice; the step's endpoint, if any, says it too. */
	integer(d, body, "gid_index", &f->gid_index);
	text(d, body, "gid_reason", &f->gid_reason);
	if (get(d, body, "endpoints", json_type_array, &eps) > 0) {
		f->endpoints = (int)json_object_array_length(eps);
		ep = pick_endpoint(eps, peer);
		snprintf(f->endpoint, sizeof(f->endpoint), "NONE");
		if (ep && json_object_is_type(ep, json_type_object)) {
			word(d, ep, "status", f->endpoint, sizeof(f->endpoint));
			integer(d, ep, "gid_index", &f->gid_index);
			text(d, ep, "gid_reason", &f->gid_reason);
			integer(d, ep, "path_mtu", &f->path_mtu);
			integer(d, ep, "peer_path_mtu", &f->peer_path_mtu);
			text(d, ep, "warning", &f->warning);
		}
	}
	device_qps(d, body, f);
	log_lines(d, body, f);
	if (get(d, body, "last", json_type_object, &last) > 0) {
		word(d, last, "code", f->code, sizeof(f->code));
		text(d, last, "error", &f->error_text);
		text(d, last, "reply_msg_sent", &f->reply_sent);
		text(d, last, "reply_msg_received", &f->reply_received);
	}
	times(d, body, f);
}

int qplab_facts_from_reply(const struct qplab_agent_msg *m, const char *peer, struct qplab_facts *f,
			   char *err, size_t errlen)
{
	struct dec d = {.err = err, .errlen = errlen};
	json_object *v;

	if (m->type != QPLAB_AGENT_REPLY || !m->op) {
		snprintf(err, errlen, "agent line: not a reply to a request");
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if (!strcmp(m->op, "report")) {
		report(&d, m->body, peer, f);
		return d.rc;
	}
	if (!strcmp(m->op, "probe")) {
		if (get(&d, m->body, "alive", json_type_boolean, &v) > 0)
			f->daemon_alive = json_object_get_boolean(v);
		return d.rc;
	}
	if (!strcmp(m->op, "raw_frame")) {
		word(&d, m->body, "frame_outcome", f->frame_outcome, sizeof(f->frame_outcome));
		if (get(&d, m->body, "daemon_alive", json_type_boolean, &v) > 0)
			f->daemon_alive = json_object_get_boolean(v);
		/* and the call's outcome below: the daemon's reason, or the
		 * peer's verdict on a stale ACK */
	}
	/* connect, datapath, disconnect: the call's own outcome. */
	snprintf(f->code, sizeof(f->code), "%s", m->code);
	if (qplab_facts_set(&f->error_text, m->error) < 0)
		return QPHS_ERR_MEMORY;
	text(&d, m->body, "reply_msg_sent", &f->reply_sent);
	text(&d, m->body, "reply_msg_received", &f->reply_received);
	word(&d, m->body, "datapath", f->datapath, sizeof(f->datapath));
	word(&d, m->body, "wc_status", f->wc_status, sizeof(f->wc_status));
	number(&d, m->body, "wc_waited_ms", &f->wc_waited_ms);
	boolean(&d, m->body, "restored", &f->datapath_restored);
	boolean(&d, m->body, "peer_checksum", &f->datapath_peer_checksum);
	times(&d, m->body, f);
	return d.rc;
}
