/*
 * Stale ready-ACKs.  The agent remembers, per peer, the QP numbers of its
 * current QP set and of the one before (a reconnect — disconnect and
 * connect, or the peer's restart — builds new QPs), and `raw_frame` with
 * kind "stale_ack" re-sends to that peer the ready-ACK of the previous set:
 * the second Connection request of the ready-ACK exchange ("ready_ack": true,
 * as Mooncake's RdmaEndPoint::sendReadyAck sends it), with the old
 * qp_num.  A correct peer refuses it with Mooncake's text ("Received stale
 * RDMA ready ACK with mismatched peer QP numbers").
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "cli/jread.h"
#include "qphs/body.h"

#define MAX_EPS 64

static struct agent_qpset *set_for(struct agent *a, const char *peer)
{
	for (int i = 0; i < a->nsets; i++)
		if (!strcmp(a->sets[i].peer, peer))
			return &a->sets[i];
	if (a->nsets == AGENT_MAX_PEERS)
		return NULL;
	snprintf(a->sets[a->nsets].peer, sizeof(a->sets[0].peer), "%s", peer);
	return &a->sets[a->nsets++];
}

/* One endpoint's QPs while it is connected. */
void agent_track_endpoint(struct agent *a, const struct qphs_endpoint_info *in)
{
	struct agent_qpset *s;
	int n = in->qp_count < AGENT_MAX_SET_QPS ? in->qp_count : AGENT_MAX_SET_QPS;

	if (n <= 0 || (in->status != QPHS_EP_CONNECTED && in->status != QPHS_EP_WAIT_READY_ACK))
		return;
	if (!(s = set_for(a, in->peer_nic_path)))
		return;
	if (s->n == n && !memcmp(s->cur, in->qpn, (size_t)n * sizeof(uint32_t)))
		return;
	if (s->n) {
		memcpy(s->prev, s->cur, sizeof(s->prev));
		s->nprev = s->n;
	}
	memcpy(s->cur, in->qpn, (size_t)n * sizeof(uint32_t));
	s->n = n;
}

void agent_track_qpsets(struct agent *a)
{
	struct qphs_endpoint *eps[MAX_EPS];
	struct qphs_endpoint_info *in;
	int n;

	if (!a->ctx || !(in = calloc(1, sizeof(*in))))
		return;
	n = qphs_context_endpoints(a->ctx, eps, MAX_EPS);
	for (int k = (n < MAX_EPS ? n : MAX_EPS) - 1; k >= 0; k--) {
		if (qphs_endpoint_info(eps[k], in) == 0)
			agent_track_endpoint(a, in);
		qphs_endpoint_put(eps[k]);
	}
	free(in);
}

/* Our ready-ACK for peer with the old QP numbers, as JSON (malloc'd). */
static int stale_ack_json(struct agent *a, const struct agent_qpset *s, char **json, size_t *len)
{
	struct qphs_hs_desc d;
	struct qphs_context_info ci;
	int rc = qphs_hs_desc_init(&d);

	if (rc)
		return rc;
	qphs_context_info(a->ctx, &ci);
	d.qp_num = calloc((size_t)s->nprev, sizeof(uint32_t));
	if (!d.qp_num || qphs_desc_set_str(&d.local_nic_path, ci.nic_path) ||
	    qphs_desc_set_str(&d.peer_nic_path, s->peer) ||
	    qphs_desc_set_str(&d.local_gid, ci.gid)) {
		qphs_hs_desc_clear(&d);
		return QPHS_ERR_MEMORY;
	}
	memcpy(d.qp_num, s->prev, (size_t)s->nprev * sizeof(uint32_t));
	d.qp_count = (size_t)s->nprev;
	d.local_lid = ci.lid;
	d.has_ready_ack = d.ready_ack = true;
	rc = qphs_hs_desc_encode(&d, json, len);
	qphs_hs_desc_clear(&d);
	return rc;
}

/* The server part of a nic path ("host:port@dev" -> "host:port"). */
static void server_of(const char *path, char *out, size_t len)
{
	const char *at = strrchr(path, '@');
	size_t n = at ? (size_t)(at - path) : strlen(path);

	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), path);
}

/* Sends it; the reply's reply_msg is the peer's verdict. */
static int send_ack(struct agent *a, const char *peer, const char *json, size_t len, int ms,
		    char *recv, size_t recvlen, char *err, size_t errlen)
{
	struct qphs_client_result res;
	struct qphs_hs_desc reply;
	struct qphs_config cfg = a->cfg;
	char server[320];
	int rc;

	cfg.reply_timeout_ms = ms;
	server_of(peer, server, sizeof(server));
	memset(&res, 0, sizeof(res));
	rc = qphs_client_request(&cfg, server,
				 cfg.old_protocol ? QPHS_HS_OLD_PROTOCOL : QPHS_HS_CONNECTION, json, len,
				 &res);
	snprintf(err, errlen, "%s", res.errstr);
	if (res.reply && qphs_hs_desc_parse(res.reply, res.reply_len, &reply, NULL, 0) == 0) {
		snprintf(recv, recvlen, "%s", reply.reply_msg);
		qphs_hs_desc_clear(&reply);
	}
	free(res.reply);
	return rc;
}

json_object *agent_op_stale_ack(struct agent *a, json_object *id, json_object *req)
{
	json_object *o, *v;
	const char *peer = NULL;
	struct agent_qpset *s = NULL;
	char recv[512] = "", err[600] = "", *json = NULL;
	struct jread jr = {.what = "request", .err = err, .errlen = sizeof(err)};
	size_t len = 0;
	int ms = 2000, rc;

	jread_str(&jr, req, "peer", &peer);
	jread_int(&jr, req, "deadline_ms", 1, INT_MAX, &ms);
	if (jr.errors)
		return agent_reply(id, "raw_frame", 0, QPHS_ERR_INVALID_ARGUMENT, err);
	if (!peer)
		return agent_reply(id, "raw_frame", 0, QPHS_ERR_INVALID_ARGUMENT,
				   "raw_frame stale_ack: \"peer\" (a nic path) missing");
	if (!a->ctx)
		return agent_reply(id, "raw_frame", 1, a->ctx_code, a->ctx_error);
	agent_track_qpsets(a);
	for (int i = 0; i < a->nsets; i++)
		if (!strcmp(a->sets[i].peer, peer))
			s = &a->sets[i];
	if (!s || !s->nprev)
		return agent_reply(id, "raw_frame", 0, QPHS_ERR_ENDPOINT,
				   "raw_frame stale_ack: no previous QP set for that peer (connect, "
				   "reconnect with new QPs, then send it)");
	if ((rc = stale_ack_json(a, s, &json, &len)))
		return agent_reply(id, "raw_frame", 0, rc, "raw_frame stale_ack: cannot encode the ACK");
	rc = send_ack(a, peer, json, len, ms, recv, sizeof(recv), err, sizeof(err));
	free(json);
	agent_remember(a, rc, rc ? err : "", NULL);
	snprintf(a->last_recv, sizeof(a->last_recv), "%s", recv);
	o = agent_reply(id, "raw_frame", 1, rc, a->last_error);
	json_object_object_add(o, "frame_outcome", json_object_new_string(
		rc == 0 || rc == QPHS_ERR_REJECT_HANDSHAKE ? "replied"
		: rc == QPHS_ERR_REPLY_TIMEOUT		   ? "silent"
							   : "closed"));
	json_object_object_add(o, "reply_msg_received", json_object_new_string(recv));
	v = json_object_new_array();
	for (int i = 0; i < s->nprev; i++)
		json_object_array_add(v, json_object_new_int64(s->prev[i]));
	json_object_object_add(o, "stale_qpns", v);
	return o;
}
