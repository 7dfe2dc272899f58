/*
 * Agent replies -> facts, through the harness's JSON reader (cli/jread.h):
 * a key of the wrong JSON type is an error naming it, never a plausible
 * default; a key that is absent or null leaves the fact "not collected".
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_msg.h"
#include "cli/jread.h"
#include "qphs/error.h"
#include "qphs/rdma.h"

/* An agent reply's facts: null and absent are "not collected" (the reader's
 * default), strings go into the facts' own buffers or heap copies. */
struct dec {
	struct jread r;
	int rc;
};

static void word(struct dec *d, json_object *o, const char *key, char *dst, size_t dstlen)
{
	jread_str_copy(&d->r, o, key, dst, dstlen);
}

static void text(struct dec *d, json_object *o, const char *key, char **dst)
{
	const char *s;

	if (jread_str(&d->r, o, key, &s) == JREAD_OK && qplab_facts_set(dst, s) < 0)
		d->rc = QPHS_ERR_MEMORY;
}

static void number(struct dec *d, json_object *o, const char *key, long *dst)
{
	jread_long(&d->r, o, key, LONG_MIN, LONG_MAX, dst);
}

static void integer(struct dec *d, json_object *o, const char *key, int *dst)
{
	jread_int(&d->r, o, key, INT_MIN, INT_MAX, dst);
}

static void boolean(struct dec *d, json_object *o, const char *key, int *dst)
{
	bool b;

	if (jread_bool(&d->r, o, key, &b) == JREAD_OK)
		*dst = b;
}

/* An endpoint's "events": the phases of its last setup, agent's clock. */
static void events(struct dec *d, json_object *ep, struct qplab_facts *f)
{
	json_object *evs, *ev;

	if (jread_array(&d->r, ep, "events", &evs) != JREAD_OK)
		return;
	f->nevents = 0;
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		struct qplab_event *e = &f->events[f->nevents];

		if (jread_elem(&d->r, evs, "events", i, json_type_object, &ev) != JREAD_OK)
			continue;
		if (f->nevents == QPLAB_FACT_MAX_EVENTS) {
			jread_fail(&d->r, "events", "more than %d events", QPLAB_FACT_MAX_EVENTS);
			return;
		}
		if (jread_str_copy(&d->r, ev, "what", e->what, sizeof(e->what)) != JREAD_OK ||
		    jread_double(&d->r, ev, "start_ms", &e->start_ms) != JREAD_OK ||
		    jread_double(&d->r, ev, "end_ms", &e->end_ms) != JREAD_OK) {
			if (!d->r.errors)
				jread_fail(&d->r, "events", "an event needs what, start_ms and end_ms");
			continue;
		}
		f->nevents++;
	}
}

static void times(struct dec *d, json_object *o, struct qplab_facts *f)
{
	json_object *t;

	if (jread_object(&d->r, o, "time_ms", &t) != JREAD_OK)
		return;
	/* "step" is the runner's own measurement, never the agent's. */
	for (int i = QPLAB_TIME_STEP + 1; i < QPLAB_TIME_COUNT; i++)
		number(d, t, qplab_timing_name(i), &f->time_ms[i]);
}

/* The endpoint for peer: the one whose "peer" matches, else the only one. */
static json_object *pick_endpoint(struct dec *d, json_object *eps, const char *peer)
{
	size_t n = json_object_array_length(eps);
	json_object *e;
	const char *p;

	for (size_t i = 0; peer && i < n; i++)
		if (jread_elem(&d->r, eps, "endpoints", i, json_type_object, &e) == JREAD_OK &&
		    jread_str(&d->r, e, "peer", &p) == JREAD_OK && !strcmp(p, peer))
			return e;
	return n == 1 && jread_elem(&d->r, eps, "endpoints", 0, json_type_object, &e) == JREAD_OK
		       ? e : NULL;
}

static void device_qps(struct dec *d, json_object *body, struct qplab_facts *f)
{
	json_object *qps, *q;

	if (jread_array(&d->r, body, "device_qps", &qps) != JREAD_OK)
		return;
	f->nqp = (int)json_object_array_length(qps);
	for (int i = 0; i < f->nqp && i < QPLAB_FACT_MAX_QPS; i++)
		if (jread_elem(&d->r, qps, "device_qps", (size_t)i, json_type_object, &q) == JREAD_OK)
			word(d, q, "state", f->qp_states[i], QPLAB_QP_STATE_LEN);
}

/* "log": the host's lines since its previous report, one per line. */
static void log_lines(struct dec *d, json_object *body, struct qplab_facts *f)
{
	json_object *a;
	size_t len = 0, n = 0, count;
	const char *l;
	char *all;

	if (jread_array(&d->r, body, "log", &a) != JREAD_OK)
		return;
	count = json_object_array_length(a);
	for (size_t i = 0; i < count; i++) {
		if (jread_elem_str(&d->r, a, "log", i, &l) != JREAD_OK)
			return;
		len += strlen(l) + 1;
	}
	all = calloc(1, len + 1);
	if (!all) {
		d->rc = QPHS_ERR_MEMORY;
		return;
	}
	for (size_t i = 0; i < count; i++)
		if (jread_elem_str(&d->r, a, "log", i, &l) == JREAD_OK)
			n += (size_t)sprintf(all + n, "%s%s", i ? "\n" : "", l);
	free(f->log);
	f->log = all;
}

static void report(struct dec *d, json_object *body, const char *peer, struct qplab_facts *f)
{
	json_object *eps, *ep, *last;

	/* The context's GID choice; the step's endpoint, if any, says it too. */
	integer(d, body, "gid_index", &f->gid_index);
	text(d, body, "gid_reason", &f->gid_reason);
	if (jread_array(&d->r, body, "endpoints", &eps) == JREAD_OK) {
		f->endpoints = (int)json_object_array_length(eps);
		ep = pick_endpoint(d, eps, peer);
		snprintf(f->endpoint, sizeof(f->endpoint), "NONE");
		if (ep) {
			word(d, ep, "status", f->endpoint, sizeof(f->endpoint));
			integer(d, ep, "gid_index", &f->gid_index);
			text(d, ep, "gid_reason", &f->gid_reason);
			integer(d, ep, "path_mtu", &f->path_mtu);
			integer(d, ep, "peer_path_mtu", &f->peer_path_mtu);
			boolean(d, ep, "peer_ready_ack", &f->peer_ready_ack);
			text(d, ep, "warning", &f->warning);
			events(d, ep, f);
		}
	}
	device_qps(d, body, f);
	log_lines(d, body, f);
	if (jread_object(&d->r, body, "last", &last) == JREAD_OK) {
		word(d, last, "code", f->code, sizeof(f->code));
		text(d, last, "error", &f->error_text);
		text(d, last, "reply_msg_sent", &f->reply_sent);
		text(d, last, "reply_msg_received", &f->reply_received);
	}
	times(d, body, f);
}

/* A datapath reply's "qps" (protocol 3): one object per QP of the
 * endpoint, and "failed_qp": the first that failed, -1 = none. */
static void datapath_qps(struct dec *d, json_object *body, struct qplab_facts *f)
{
	json_object *qps, *q;
	int failed = -1;
	size_t n;

	if (jread_int(&d->r, body, "failed_qp", -1, QPHS_EP_MAX_QPS - 1, &failed) == JREAD_OK)
		f->dp_failed_qp = failed < 0 ? QPLAB_NO_FAILED_QP : failed;
	if (jread_array(&d->r, body, "qps", &qps) != JREAD_OK)
		return;
	n = json_object_array_length(qps);
	if (n > QPLAB_FACT_MAX_QPS) {
		jread_fail(&d->r, "qps", "more than %d QPs", QPLAB_FACT_MAX_QPS);
		return;
	}
	f->dp_nqp = 0;
	for (size_t i = 0; i < n; i++) {
		struct qplab_dp_qp *e = &f->dp_qps[f->dp_nqp];

		memset(e, 0, sizeof(*e));
		e->qpn = e->peer_qpn = e->ms = -1;
		if (jread_elem(&d->r, qps, "qps", i, json_type_object, &q) != JREAD_OK)
			continue;
		if (jread_str_copy(&d->r, q, "datapath", e->result, sizeof(e->result)) != JREAD_OK) {
			if (!d->r.errors)
				jread_fail(&d->r, "qps", "\"qps\"[%zu] needs \"datapath\"", i);
			continue;
		}
		jread_long(&d->r, q, "qpn", 0, UINT32_MAX, &e->qpn);
		jread_long(&d->r, q, "peer_qpn", 0, UINT32_MAX, &e->peer_qpn);
		word(d, q, "write_wc", e->write_wc, sizeof(e->write_wc));
		word(d, q, "read_wc", e->read_wc, sizeof(e->read_wc));
		jread_long(&d->r, q, "ms", 0, LONG_MAX, &e->ms);
		f->dp_nqp++;
	}
}

static int outcome(const struct dec *d)
{
	return d->rc ? d->rc : d->r.errors ? QPHS_ERR_INVALID_ARGUMENT : 0;
}

int qplab_facts_from_reply(const struct qplab_agent_msg *m, const char *peer, struct qplab_facts *f,
			   char *err, size_t errlen)
{
	struct dec d = {.r = {.what = "agent reply", .err = err, .errlen = errlen}};
	bool alive;

	if (m->type != QPLAB_AGENT_REPLY || !m->op) {
		snprintf(err, errlen, "agent line: not a reply to a request");
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if (!strcmp(m->op, "report")) {
		report(&d, m->body, peer, f);
		return outcome(&d);
	}
	if (!strcmp(m->op, "probe")) {
		if (jread_bool(&d.r, m->body, "alive", &alive) == JREAD_OK)
			f->daemon_alive = alive;
		return outcome(&d);
	}
	if (!strcmp(m->op, "raw_frame")) {
		word(&d, m->body, "frame_outcome", f->frame_outcome, sizeof(f->frame_outcome));
		if (jread_bool(&d.r, m->body, "daemon_alive", &alive) == JREAD_OK)
			f->daemon_alive = alive;
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
	if (!strcmp(m->op, "datapath"))
		datapath_qps(&d, m->body, f);
	times(&d, m->body, f);
	return outcome(&d);
}
