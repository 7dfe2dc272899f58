/*
 * Passive setup (Mooncake's RdmaTransport::onSetupRdmaConnections and
 * RdmaEndPoint::setupConnectionsByPassive), run on a worker thread,
 * answered with qphs_request_reply.  By default every check that can fail
 * without touching a QP — nic paths, QP count, the peer's GID — runs
 * before the endpoint is even looked up, so a rejected request builds
 * nothing.  Mooncake creates the endpoint and its QPs first
 * (onSetupRdmaConnections calls context->endpoint() before any check) and
 * leaves them in RESET when it rejects; cfg->passive_build_first does the
 * same, for a peer that must behave as Mooncake does.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "handshake.h"
#include "base/log.h"
#include "qphs/body.h"
#include "base/clock.h"
#include "qphs/error.h"
#include "setup_int.h"

struct passive {
	struct qphs_rdma *r;
	double queued_ms;
	int nowait;        /* loop thread: never wait for ep->lock */
	int busy;          /* nowait and ep->lock was held: not answered */
	struct qphs_context *ctx;
	const struct qphs_hs_desc *peer;
	struct qphs_hs_desc *out;
	uint8_t gid[16];
	uint16_t lid;
};

static void reject(struct passive *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reject(struct passive *p, const char *fmt, ...)
{
	char msg[QPHS__TEXT_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	QPHS_ERR("[Handshake] rejecting request from %s: %s", p->peer->local_nic_path, msg);
	qphs_desc_set_str(&p->out->reply_msg, msg);
	pthread_mutex_lock(&p->r->lock);
	p->r->n_rejections++;
	snprintf(p->r->last_rejection, sizeof(p->r->last_rejection), "%s", msg);
	pthread_mutex_unlock(&p->r->lock);
}

/* Checks that need no endpoint.  Returns 0 when setup may go on. */
static int precheck(struct passive *p)
{
	const struct qphs_hs_desc *peer = p->peer;
	char txt[QPHS__TEXT_LEN];

	if (strcmp(peer->peer_nic_path, p->ctx->nic_path)) {
		reject(p, "Invalid argument: peer nic path inconsistency, expect %s + %s, while got "
		       "%s + %s [the request is for another nic path than ours]", p->ctx->nic_path,
		       peer->local_nic_path, peer->peer_nic_path, peer->local_nic_path);
		return -1;
	}
	if (peer->qp_count != (size_t)p->ctx->cfg->num_qp_per_ep) {
		reject(p, "QP count mismatch in peer and local endpoints, check MC_MAX_EP_PER_CTX "
		       "[peer has %zu QPs, we have %d: MC_NUM_QP_PER_EP must be equal on both sides]",
		       peer->qp_count, p->ctx->cfg->num_qp_per_ep);
		return -1;
	}
	p->lid = peer->local_lid;
	if (!peer->local_gid[0]) {
		if (qphs__peer_gid_by_metadata(p->ctx, peer->local_nic_path, p->gid, &p->lid, txt,
					       sizeof(txt))) {
			reject(p, "%s", txt);
			return -1;
		}
	} else if (qphs_gid_parse(peer->local_gid, p->gid)) {
		reject(p, "Invalid peer GID: %s [want 16 ':'-separated hex bytes]", peer->local_gid);
		return -1;
	}
	return 0;
}

/* Lab hook: how long the passive side holds back its RTR.  The hooks are
 * read under hook_lock: qphs_context_set_hooks may change them any time. */
static int rtr_delay_ms(struct qphs_context *ctx)
{
	int ms;

	pthread_mutex_lock(&ctx->hook_lock);
	ms = ctx->hooks.passive_rtr_delay_ms;
	pthread_mutex_unlock(&ctx->hook_lock);
	return ms;
}

/* What the endpoint's state means for this request, ep->lock held: 0 when
 * a connection with the same peer QPs is reused, 1 when the endpoint is (or
 * now was) retired and the caller should try once more with a fresh one,
 * 2 when the setup goes on (the endpoint is then CONNECTING). */
static int reuse_or_retire_locked(struct passive *p, struct qphs_endpoint *ep, int want_ack)
{
	int st = atomic_load(&ep->status);

	if (st >= QPHS_EP_DESTROYING)
		return 1;
	if (st == QPHS_EP_CONNECTED || st == QPHS_EP_WAIT_READY_ACK) {
		if (qphs__ep_qpns_equal(ep, p->peer->qp_num, p->peer->qp_count)) {
			QPHS_DEBUG("[Handshake] Received same peer QP numbers, reusing connection");
			if (!want_ack)
				atomic_store(&ep->status, QPHS_EP_CONNECTED);
			return 0;
		}
		QPHS_INFO("[Handshake] Re-establish connection: %s", ep->peer_path);
		qphs__ep_retire_locked(ep, "re-establishing connection (passive)");
		return 1;
	}
	atomic_store(&ep->status, QPHS_EP_CONNECTING);
	return 2;
}

/* ep->lock held.  Returns 1 when the endpoint was retired and the caller
 * should try once more with a fresh one. */
static int setup_locked(struct passive *p, struct qphs_endpoint *ep)
{
	int want_ack = p->peer->has_ready_ack && p->ctx->cfg->ready_ack, go;
	int delay_ms = rtr_delay_ms(p->ctx);

	if ((go = reuse_or_retire_locked(p, ep, want_ack)) != 2)
		return go;
	if (delay_ms > 0) {
		/* The delay hook holds the RTR back as a slow driver would, the
		 * endpoint CONNECTING meanwhile, but without ep->lock: the event
		 * thread, an ACK, a connect or a close must not wait on a sleep.
		 * What they did to the endpoint is judged again afterwards. */
		struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};

		pthread_mutex_unlock(&ep->lock);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&ep->lock);
		if ((go = reuse_or_retire_locked(p, ep, want_ack)) != 2)
			return go;
	}
	ep->queue_ms = p->queued_ms;
	/* A passive setup dates its transitions; an earlier active one's
	 * request and ACK are not this setup's. */
	for (int i = 0; i < QPHS_PHASE_COUNT; i++)
		ep->ph_start[i] = ep->ph_end[i] = -1;
	double t0 = qphs__mono_ms();
	int rc = qphs__ep_setup_locked(ep, p->gid, p->lid, p->peer->qp_num, p->peer->path_mtu);

	ep->passive_setup_ms = qphs__mono_ms() - t0;
	if (rc) {
		const char *why = qphs__ep_text(ep, QPHS__EP_ERRSTR);

		/* A reply_msg is never empty: "" would read as success. */
		reject(p, "%s", *why ? why : qphs_strerror(rc));
		qphs__ep_reset_locked(ep, "failed connection setup (passive)");
		return 0;
	}
	ep->peer_ready_ack = p->peer->has_ready_ack;
	if (want_ack)
		qphs__ep_ack_deadline(ep, 0);
	atomic_store(&ep->status, want_ack ? QPHS_EP_WAIT_READY_ACK : QPHS_EP_CONNECTED);
	return 0;
}

static void setup(struct passive *p)
{
	for (int tries = 0; tries < 2; tries++) {
		struct qphs_endpoint *ep;
		int again;

		if (qphs__ep_get(p->ctx, p->peer->local_nic_path, 1, &ep)) {
			reject(p, "Handshake callback failed: %d [%s]", QPHS_ERR_ENDPOINT,
			       p->ctx->errstr);
			return;
		}
		pthread_mutex_lock(&ep->lock);
		ep->mtu_read = 0; /* a setup starts: read the port again */
		again = atomic_load(&ep->status) >= QPHS_EP_DESTROYING || setup_locked(p, ep);
		if (!again) {
			qphs__hs_local_desc(ep, p->out);
			if (p->out->reply_msg[0])
				qphs__ep_set_text(ep, QPHS__EP_REPLY_SENT, "%s",
						  p->out->reply_msg);
		}
		pthread_mutex_unlock(&ep->lock);
		qphs_endpoint_put(ep);
		if (!again)
			return;
	}
	reject(p, "Handshake callback failed: %d [endpoint retired twice]", QPHS_ERR_ENDPOINT);
}

/* Mooncake's order (cfg->passive_build_first): the endpoint, and so its
 * QPs, exists before the request is checked.  Returns 1 to go on. */
static int build_first(struct passive *p)
{
	struct qphs_endpoint *ep;

	if (!p->ctx->cfg->passive_build_first)
		return 1;
	if (qphs__ep_get(p->ctx, p->peer->local_nic_path, 1, &ep)) {
		reject(p, "Handshake callback failed: %d [%s]", QPHS_ERR_ENDPOINT, p->ctx->errstr);
		return 0;
	}
	qphs_endpoint_put(ep);
	return 1;
}

static void ready_ack(struct passive *p)
{
	struct qphs_endpoint *ep = qphs_context_endpoint(p->ctx, p->peer->local_nic_path);
	int st = ep ? atomic_load(&ep->status) : QPHS_EP_DESTROYED;

	if (st != QPHS_EP_CONNECTED && st != QPHS_EP_WAIT_READY_ACK) {
		reject(p, "Received RDMA ready ACK for unconnected endpoint");
	} else if (p->nowait && pthread_mutex_trylock(&ep->lock)) {
		p->busy = 1;
	} else {
		if (!p->nowait)
			pthread_mutex_lock(&ep->lock);
		if (!qphs__ep_qpns_equal(ep, p->peer->qp_num, p->peer->qp_count))
			reject(p, "Received stale RDMA ready ACK with mismatched peer QP numbers");
		else if (atomic_load(&ep->status) == QPHS_EP_WAIT_READY_ACK)
			atomic_store(&ep->status, QPHS_EP_CONNECTED);
		pthread_mutex_unlock(&ep->lock);
	}
	qphs_endpoint_put(ep);
}

static void reply_with(struct qphs_request *req, struct qphs_hs_desc *out)
{
	char *json = NULL;
	size_t len = 0;

	if (qphs_hs_desc_encode(out, &json, &len)) {
		qphs_request_close(req);
		return;
	}
	qphs_request_reply(req, json, len);
	free(json);
}

static void dispatch(struct passive *p)
{
	char *server = NULL, *dev = NULL;

	if (qphs_nic_path_split(p->peer->peer_nic_path, &server, &dev)) {
		reject(p, "Parse peer nic path failed: %s", p->peer->peer_nic_path);
		return;
	}
	p->ctx = qphs__rdma_find_ctx(p->r, dev);
	if (!p->ctx)
		/* Mooncake's text names the device only: the nic path after its
		 * first '@' (RdmaTransport::onSetupRdmaConnections). */
		reject(p, "Local RDMA context not found for handshake NIC: %s [no usable device "
		       "%s on %s]", dev, dev, p->r->server);
	else if (p->peer->has_ready_ack && p->peer->ready_ack)
		ready_ack(p);
	else if (build_first(p) && !precheck(p))
		setup(p);
	free(server);
	free(dev);
}

/* Returns 0 when answered, 1 when p->busy left it unanswered. */
static int passive_connection(struct qphs_rdma *r, struct qphs_request *req, double queued_ms,
			      int nowait)
{
	struct qphs_hs_desc mine, out;
	struct passive p = {.r = r, .out = &out, .queued_ms = queued_ms, .nowait = nowait};
	char err[QPHS__TEXT_LEN] = "out of memory";
	size_t len = 0;
	/* The daemon parsed and checked the body already: its desc is read
	 * in place (it lives as long as req, and nothing below reads it
	 * after the reply).  Only a request the daemon did not parse is
	 * parsed here. */
	const char *json = qphs_request_json(req, &len);
	int ok = 1;

	p.peer = qphs_request_desc(req);
	if (!p.peer) {
		ok = !qphs_hs_desc_parse(json, len, &mine, err, sizeof(err));
		p.peer = &mine;
	}
	if (qphs_hs_desc_init(&out)) {
		if (ok && p.peer == &mine)
			qphs_hs_desc_clear(&mine);
		qphs_request_close(req);
		return 0;
	}
	if (!ok) {
		qphs_desc_set_str(&out.reply_msg, err);
	} else {
		qphs_desc_set_str(&out.peer_nic_path, p.peer->local_nic_path);
		dispatch(&p);
		/* ready_ack only when the request had it and we speak it. */
		out.has_ready_ack = p.peer->has_ready_ack && r->cfg.ready_ack && !p.peer->ready_ack;
		out.ready_ack = false;
		if (p.peer == &mine)
			qphs_hs_desc_clear(&mine);
	}
	if (!p.busy)
		reply_with(req, &out);
	qphs_hs_desc_clear(&out);
	return p.busy;
}

void qphs__passive_connection(struct qphs_rdma *r, struct qphs_request *req, double queued_ms)
{
	passive_connection(r, req, queued_ms, 0);
}

/* A ready ACK only looks an endpoint up and flips its state: answered on
 * the loop thread it needs no thread hand-off (under a burst of connects
 * every hand-off waits behind the runnable setup threads).  Only an
 * endpoint whose lock a setup holds goes to the ACK lane. */
int qphs__passive_ack_now(struct qphs_rdma *r, struct qphs_request *req)
{
	return !passive_connection(r, req, 0, 1);
}

/* Metadata: our segment descriptor.  With the checksum extension on,
 * "qphs-checksum LEN" in the request's name asks for the CRC-32 of the
 * check region's first LEN bytes (a qplab peer's data-path check); without
 * it the request body is ignored, as Mooncake's receivePeerMetadata
 * (transfer_metadata.cpp) ignores it. */
void qphs__passive_metadata(struct qphs_rdma *r, struct qphs_request *req)
{
	struct qphs_segment_desc in, out;
	char err[256];
	size_t len = 0, cklen = 0;
	const char *json = qphs_request_json(req, &len);
	char *body = NULL;

	if (qphs_segment_desc_parse(json, len, &in, err, sizeof(err))) {
		qphs_request_close(req);
		return;
	}
	if (!r->cfg.checksum_extension || sscanf(in.name, "qphs-checksum %zu", &cklen) != 1)
		cklen = 0;
	qphs_segment_desc_clear(&in);
	if (qphs__seg_local(r, cklen, &out)) {
		qphs_request_close(req);
		return;
	}
	if (!qphs_segment_desc_encode(&out, &body, &len))
		qphs_request_reply(req, body, len);
	else
		qphs_request_close(req);
	free(body);
	qphs_segment_desc_clear(&out);
}
