/* The agent's `report`: endpoints and every QP's state read back from the
 * device (qphs_endpoint_info queries each QP with ibv_query_qp), the last
 * outcome, timings, daemon and library counters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

#define MAX_EPS 64

static const char *qp_state_name(int s)
{
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	return s >= 0 && s < 7 ? names[s] : "UNKNOWN";
}

/* ms to 0.01 ms: a transition under TCG takes about one. */
static json_object *fine_ms(double ms)
{
	char s[40];

	snprintf(s, sizeof(s), "%.2f", ms);
	return json_object_new_double_s(ms, s);
}

/* The last setup's phases that happened, on the agent's monotonic clock
 * (the ready line's mono_ms dates it). */
static json_object *events_json(const struct qphs_endpoint_info *in)
{
	json_object *evs = json_object_new_array();

	for (int k = 0; k < QPHS_PHASE_COUNT; k++) {
		json_object *ev;

		if (in->phase_start_ms[k] < 0)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "what", json_object_new_string(qphs_phase_name(k)));
		json_object_object_add(ev, "start_ms", fine_ms(in->phase_start_ms[k]));
		json_object_object_add(ev, "end_ms", fine_ms(in->phase_end_ms[k]));
		json_object_array_add(evs, ev);
	}
	return evs;
}

static json_object *endpoint_json(const struct qphs_endpoint_info *in, const char *gid_reason)
{
	json_object *e = json_object_new_object(), *qps = json_object_new_array();

	json_object_object_add(e, "peer", json_object_new_string(in->peer_nic_path));
	json_object_object_add(e, "status", json_object_new_string(qphs_ep_status_name(in->status)));
	json_object_object_add(e, "path_mtu", in->path_mtu ? json_object_new_int(in->path_mtu) : NULL);
	json_object_object_add(e, "peer_path_mtu", in->status == QPHS_EP_CONNECTED ||
			       in->status == QPHS_EP_WAIT_READY_ACK ?
			       json_object_new_int(in->peer_path_mtu) : NULL);
	/* Whether the peer's last Connection message had the ready_ack key
	 * (Mooncake 3b5a594 TransferHandshakeUtil::decode, transfer_metadata.cpp):
	 * an old peer's has none, and then no ACK is sent or awaited. */
	json_object_object_add(e, "peer_ready_ack", json_object_new_boolean(in->peer_ready_ack));
	json_object_object_add(e, "warning", json_object_new_string(in->warning));
	json_object_object_add(e, "gid_index", json_object_new_int(in->gid_index));
	json_object_object_add(e, "gid_reason", json_object_new_string(gid_reason));
	for (int i = 0; i < in->qp_count; i++) {
		json_object *q = json_object_new_object();

		json_object_object_add(q, "qpn", json_object_new_int64(in->qpn[i]));
		json_object_object_add(q, "peer_qpn", json_object_new_int64(in->peer_qpn[i]));
		json_object_object_add(q, "state", json_object_new_string(qp_state_name(in->qp_state[i])));
		json_object_array_add(qps, q);
	}
	json_object_object_add(e, "qps", qps);
	json_object_object_add(e, "events", events_json(in));
	return e;
}

/* endpoints (live ones) and device_qps (every QP, retired endpoints' too,
 * oldest endpoint first). */
static void endpoints(struct agent *a, json_object *o, unsigned long *retired)
{
	struct qphs_endpoint *eps[MAX_EPS];
	struct qphs_endpoint_info *in = calloc(1, sizeof(*in));
	struct qphs_context_info ci;
	json_object *list = json_object_new_array(), *dev = json_object_new_array();
	int n = a->ctx ? qphs_context_endpoints(a->ctx, eps, MAX_EPS) : 0;

	memset(&ci, 0, sizeof(ci));
	if (a->ctx)
		qphs_context_info(a->ctx, &ci);
	/* The context's choice, also when no endpoint exists yet. */
	json_object_object_add(o, "gid_index", a->ctx ? json_object_new_int(ci.gid_index) : NULL);
	json_object_object_add(o, "gid_reason", a->ctx ? json_object_new_string(ci.gid_reason) : NULL);
	if (n > MAX_EPS)
		n = MAX_EPS;
	for (int k = n - 1; k >= 0; k--) {
		if (in && qphs_endpoint_info(eps[k], in) == 0) {
			agent_track_endpoint(a, in);
			if (in->status < QPHS_EP_DESTROYING)
				json_object_array_add(list, endpoint_json(in, ci.gid_reason));
			else
				(*retired)++;
			for (int i = 0; i < in->qp_count; i++) {
				json_object *q = json_object_new_object();

				json_object_object_add(q, "qpn", json_object_new_int64(in->qpn[i]));
				json_object_object_add(q, "state",
						       json_object_new_string(qp_state_name(in->qp_state[i])));
				json_object_array_add(dev, q);
			}
		}
		qphs_endpoint_put(eps[k]);
	}
	free(in);
	json_object_object_add(o, "endpoints", list);
	json_object_object_add(o, "device_qps", dev);
}

static json_object *last_json(const struct agent *a)
{
	json_object *l = json_object_new_object();
	char sent[512];

	/* What this host sent is a passive answer: the library's last one. */
	if (!qphs_rdma_last_rejection(a->r, sent, sizeof(sent)))
		snprintf(sent, sizeof(sent), "%s", a->last_sent);
	json_object_object_add(l, "code", json_object_new_string(a->last_code));
	json_object_object_add(l, "error", json_object_new_string(a->last_error));
	json_object_object_add(l, "reply_msg_sent", json_object_new_string(sent));
	json_object_object_add(l, "reply_msg_received", json_object_new_string(a->last_recv));
	return l;
}

/* The daemon's last refusal and how many there were; null when none. */
static json_object *refusal_json(const struct agent *a)
{
	struct qphs_daemon_refusal r;
	json_object *o;

	qphs_daemon_last_refusal(a->d, &r);
	if (!r.count)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "code", json_object_new_string(qphs_errname(r.code)));
	json_object_object_add(o, "text", json_object_new_string(r.text));
	json_object_object_add(o, "count", json_object_new_int64((int64_t)r.count));
	return o;
}

static json_object *daemon_json(const struct agent *a)
{
	struct qphs_daemon_stats st;
	json_object *d = json_object_new_object();
	uint64_t bad = 0;

	qphs_daemon_stats(a->d, &st);
	for (int i = 0; i < 8; i++)
		bad += st.rejected_frame[i];
	json_object_object_add(d, "listening", json_object_new_boolean(1));
	json_object_object_add(d, "served", json_object_new_int64((int64_t)st.replied));
	json_object_object_add(d, "rejected", json_object_new_int64((int64_t)st.rejected_body));
	json_object_object_add(d, "bad_frames", json_object_new_int64((int64_t)bad));
	json_object_object_add(d, "open_connections", json_object_new_int64((int64_t)st.open_connections));
	json_object_object_add(d, "last_refusal", refusal_json(a));
	return d;
}

json_object *agent_report(struct agent *a, json_object *id)
{
	json_object *o = agent_reply(id, "report", 1, 0, ""), *c;
	unsigned long retired = 0;

	endpoints(a, o, &retired);
	json_object_object_add(o, "last", last_json(a));
	json_object_object_add(o, "time_ms", agent_times(a));
	json_object_object_add(o, "daemon", daemon_json(a));
	c = json_object_new_object();
	json_object_object_add(c, "connects", json_object_new_int64((int64_t)a->connects));
	json_object_object_add(c, "retired", json_object_new_int64((int64_t)retired));
	json_object_object_add(o, "counters", c);
	return o;
}
