/*
 * Active setup (Mooncake's RdmaEndPoint::setupConnectionsByActive) and our
 * simultaneous-open retry.
 *
 * One attempt: the caller that finds the endpoint UNCONNECTED becomes its
 * RPC thread; others wait for it.  The request goes out with no lock held.
 * When the reply comes back the endpoint may already be connected — the
 * peer's own request reached our passive side meanwhile (simultaneous
 * open).  Equal peer QP numbers mean both sides agree: keep it.  Different
 * ones retire the endpoint; Mooncake leaves the retry to a later transfer,
 * we retry here after a randomised backoff so two symmetric peers do not
 * collide forever.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handshake.h"
#include "codec/descfast.h"
#include "hs/client_int.h"
#include "base/log.h"
#include "base/clock.h"
#include "qphs/error.h"
#include "setup_int.h"

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

/* Mooncake's waiter: spin, then sleep 50 us doubling to 2 ms, 10 s at most.
 * Runs on the caller's thread, never a daemon's. */
static int wait_existing(struct qphs_endpoint *ep)
{
	double end = qphs__mono_ms() + 10000;
	long nap = 50;
	int st;

	QPHS_DEBUG("[Handshake] Another thread is already performing the endpoint handshake, "
		   "waiting for it to complete");
	for (int spin = 0; (st = atomic_load(&ep->status)) == QPHS_EP_CONNECTING; spin++) {
		if (qphs__mono_ms() > end) {
			pthread_mutex_lock(&ep->lock);
			int rc = qphs__ep_reset_locked(ep, "wait existing handshake timeout");
			qphs__ep_set_err(ep, QPHS_ERR_ENDPOINT, "waiting for another handshake on "
					 "this endpoint timed out after 10 s");
			pthread_mutex_unlock(&ep->lock);
			return rc == QPHS_ERR_RETIRED ? rc : QPHS_ERR_ENDPOINT;
		}
		if (spin < 500)
			continue;
		sleep_us(nap);
		nap = nap * 2 > 2000 ? 2000 : nap * 2;
	}
	if (st == QPHS_EP_CONNECTED || st == QPHS_EP_WAIT_READY_ACK)
		return 0;
	return st >= QPHS_EP_DESTROYING ? QPHS_ERR_RETIRED : QPHS_ERR_ENDPOINT;
}

/* The second Connection request: same desc, "ready_ack": true. */
static int send_ready_ack(struct qphs_endpoint *ep, const char *server,
			  struct qphs_hs_desc *local)
{
	struct qphs_hs_desc reply;
	void *block = NULL;
	char txt[QPHS__TEXT_LEN];
	double t0 = qphs__mono_ms(), tcp = -1;
	int rc;

	local->has_ready_ack = true;
	local->ready_ack = true;
	rc = qphs__hs_send(ep->ctx->cfg, server, local, &reply, &block, txt, sizeof(txt), &tcp);
	if (rc == 0 || rc == QPHS_ERR_REJECT_HANDSHAKE)
		qphs__hs_desc_release(&reply, block);
	pthread_mutex_lock(&ep->lock);
	ep->ack_connect_ms = tcp;
	ep->ack_ms = qphs__mono_ms() - t0;
	qphs__ep_phase(ep, QPHS_PHASE_READY_ACK, t0, t0 + ep->ack_ms);
	if (rc) {
		QPHS_ERR("[Handshake] Failed to send RDMA ready ACK to %s: %s", ep->peer_path, txt);
		qphs__ep_set_err(ep, rc, "Failed to send RDMA ready ACK: %s", txt);
		qphs__ep_reset_locked(ep, "failed to send ready ACK");
	} else if (atomic_load(&ep->status) != QPHS_EP_WAIT_READY_ACK &&
		   atomic_load(&ep->status) != QPHS_EP_CONNECTED) {
		QPHS_WARN("[Handshake] Discarding RDMA ready ACK because endpoint is no longer "
			  "connected");
		rc = QPHS_ERR_ENDPOINT;
	} else {
		atomic_store(&ep->status, QPHS_EP_CONNECTED);
	}
	pthread_mutex_unlock(&ep->lock);
	return rc;
}

/* The reply arrived on an endpoint our passive side already connected. */
static int already_connected(struct qphs_endpoint *ep, const struct qphs_hs_desc *reply,
			     int *need_ack)
{
	if (qphs__ep_qpns_equal(ep, reply->qp_num, reply->qp_count)) {
		*need_ack = reply->has_ready_ack && ep->ctx->cfg->ready_ack;
		if (!*need_ack)
			atomic_store(&ep->status, QPHS_EP_CONNECTED);
		QPHS_DEBUG("[Handshake] Received same peer QP numbers, %s", *need_ack ?
			   "sending RDMA ready ACK." : "reusing connection.");
		return 0;
	}
	QPHS_INFO("[Handshake] Peer QP list mismatch on connected endpoint, re-establishing "
		  "connection: %s", ep->peer_path);
	qphs__ep_set_err(ep, QPHS_ERR_RETIRED, "peer QP list mismatch on a connected endpoint "
			 "(simultaneous open)");
	qphs__ep_retire_locked(ep, "re-establishing connection (active)");
	return QPHS_ERR_RETIRED;
}

/* A reply that names other endpoints than the ones we asked for: Mooncake's
 * active side logs this text, with no [Handshake] tag, and returns
 * ERR_REJECT_HANDSHAKE (RdmaEndPoint::setupConnectionsByActive,
 * rdma_endpoint.cpp); ours is QPHS_ERR_NIC_PATH_MISMATCH with the same
 * words.  ("peer nic path inconsistency" is the passive side's reply.) */
static int check_paths(struct qphs_endpoint *ep, const struct qphs_hs_desc *reply,
		       const struct qphs_hs_desc *local)
{
	if (!strcmp(reply->local_nic_path, ep->peer_path) &&
	    !strcmp(reply->peer_nic_path, local->local_nic_path))
		return 0;
	qphs__ep_set_err(ep, QPHS_ERR_NIC_PATH_MISMATCH,
			 "Invalid argument: received packet mismatch, local.local_nic_path: %s, "
			 "local.peer_nic_path: %s, peer.local_nic_path: %s, peer.peer_nic_path: %s "
			 "[the reply names other endpoints than the ones we asked for]",
			 local->local_nic_path, local->peer_nic_path, reply->local_nic_path,
			 reply->peer_nic_path);
	QPHS_ERR("%s", qphs__ep_text(ep, QPHS__EP_ERRSTR));
	return QPHS_ERR_NIC_PATH_MISMATCH;
}

/* The peer's GID and LID for our RTR.  An old peer's reply has no
 * local_gid: they come from its segment descriptor, a Metadata request
 * made here with no lock held (ep->lock is never held across a network
 * request), before the reply is judged under ep->lock; the endpoint's
 * state is then read once, after every request is done.  Only a reply that
 * will set QPs up needs it. */
struct peer_addr {
	uint8_t gid[16];
	uint16_t lid;
	int rc;
	char txt[QPHS__TEXT_LEN];
};

static void peer_addr_of_reply(struct qphs_endpoint *ep, int rc, const struct qphs_hs_desc *reply,
			       struct peer_addr *pa)
{
	pa->lid = rc ? 0 : reply->local_lid;
	pa->rc = 0;
	if (rc || reply->reply_msg[0])
		return;
	if (!reply->local_gid[0]) {
		pa->rc = qphs__peer_gid_by_metadata(ep->ctx, ep->peer_path, pa->gid, &pa->lid,
						    pa->txt, sizeof(pa->txt));
	} else if (qphs_gid_parse(reply->local_gid, pa->gid)) {
		pa->rc = QPHS_ERR_BAD_GID;
		snprintf(pa->txt, sizeof(pa->txt), "Invalid peer GID: %s [want 16 ':'-separated "
			 "hex bytes]", reply->local_gid);
	}
}

/* Brings our QPs to RTS from the reply.  ep->lock held. */
static int setup_from_reply(struct qphs_endpoint *ep, const struct qphs_hs_desc *reply,
			    const struct qphs_hs_desc *local, const struct peer_addr *pa)
{
	int rc;

	if ((rc = check_paths(ep, reply, local)))
		return rc;
	if ((size_t)ep->nqp != reply->qp_count) {
		qphs__ep_set_err(ep, QPHS_ERR_QP_COUNT_MISMATCH,
				 "QP count mismatch in peer and local endpoints, check "
				 "MC_MAX_EP_PER_CTX [peer has %zu QPs, we have %d: MC_NUM_QP_PER_EP "
				 "must be equal on both sides]", reply->qp_count, ep->nqp);
		return QPHS_ERR_QP_COUNT_MISMATCH;
	}
	if (pa->rc) {
		qphs__ep_set_err(ep, pa->rc, "%s", pa->txt);
		return pa->rc;
	}
	return qphs__ep_setup_locked(ep, pa->gid, pa->lid, reply->qp_num, reply->path_mtu);
}

/* What to do with a reply, ep->lock held.  Returns 0 with *need_ack set
 * when the ACK must still be sent. */
static int handle_reply(struct qphs_endpoint *ep, int rc, const char *txt,
			struct qphs_hs_desc *reply, struct qphs_hs_desc *local,
			const struct peer_addr *pa, int *need_ack)
{
	int st = atomic_load(&ep->status);

	*need_ack = 0;
	if (rc && rc != QPHS_ERR_REJECT_HANDSHAKE) {
		if ((st == QPHS_EP_CONNECTED || st == QPHS_EP_WAIT_READY_ACK)) {
			QPHS_INFO("[Handshake] Active handshake RPC failed, but simultaneous-open "
				  "passive setup already connected this endpoint. Reusing existing "
				  "connection.");
			return 0;
		}
		qphs__ep_set_err(ep, rc, "%s", txt);
		int r2 = qphs__ep_reset_locked(ep, "handshake RPC failure");
		return r2 == QPHS_ERR_RETIRED && rc == QPHS_ERR_ENDPOINT ? r2 : rc;
	}
	if (reply->reply_msg[0]) {
		/* Untagged, naming the peer's server, as Mooncake logs it
		 * (TransferMetadata::sendHandshake, transfer_metadata.cpp). */
		const char *at = strchr(ep->peer_path, '@');

		QPHS_ERR("Handshake rejected by %.*s: %s", at ? (int)(at - ep->peer_path)
			 : (int)strlen(ep->peer_path), ep->peer_path, reply->reply_msg);
		qphs__ep_set_text(ep, QPHS__EP_REPLY_RECEIVED, "%s", reply->reply_msg);
		qphs__ep_set_err(ep, QPHS_ERR_REJECT_HANDSHAKE, "%s", reply->reply_msg);
		qphs__ep_reset_locked(ep, "handshake rejected");
		return QPHS_ERR_REJECT_HANDSHAKE;
	}
	ep->peer_ready_ack = reply->has_ready_ack;
	if (st == QPHS_EP_CONNECTED || st == QPHS_EP_WAIT_READY_ACK)
		return already_connected(ep, reply, need_ack);
	if (st != QPHS_EP_CONNECTING)
		return QPHS_ERR_RETIRED;
	double t0 = qphs__mono_ms();

	rc = setup_from_reply(ep, reply, local, pa);
	ep->setup_ms = qphs__mono_ms() - t0;
	if (rc) {
		qphs__ep_reset_locked(ep, "failed connection setup (active)");
		return rc;
	}
	*need_ack = reply->has_ready_ack && ep->ctx->cfg->ready_ack;
	if (*need_ack)
		qphs__ep_ack_deadline(ep, 1); /* our own ACK is in flight */
	atomic_store(&ep->status, *need_ack ? QPHS_EP_WAIT_READY_ACK : QPHS_EP_CONNECTED);
	return 0;
}

/* Lab hook: hold the reply before acting on it (no lock held), so the peer
 * can retire and rebuild its QPs meanwhile — the reply then names QPs that
 * no longer exist, the case already_connected() resolves by retiring. */
static void reply_delay_hook(struct qphs_context *ctx)
{
	int ms;

	pthread_mutex_lock(&ctx->hook_lock);
	ms = ctx->hooks.active_reply_delay_ms;
	pthread_mutex_unlock(&ctx->hook_lock);
	if (ms > 0)
		sleep_us(ms * 1000L);
}

/* The RPC thread's part of one attempt. */
static int run_handshake(struct qphs_endpoint *ep, const char *server)
{
	struct qphs_hs_desc local;
	void *local_block; /* our request's strings and qp_num, one allocation */
	int rc, need_ack = 0;

	pthread_mutex_lock(&ep->lock);
	ep->mtu_read = 0; /* a setup starts: read the port again */
	rc = qphs__hs_local_block(ep, &local, &local_block);
	pthread_mutex_unlock(&ep->lock);
	local.has_ready_ack = ep->ctx->cfg->ready_ack; /* an old peer sends no key */
	local.ready_ack = false;
	if (!rc) {
		/* The request's texts live in this block only, so the ACK's
		 * (send_ready_ack, inlined) can share their stack: this frame
		 * is 1.6 KiB, not 2.3 (gcc -fstack-usage). */
		struct qphs_hs_desc reply;
		void *block = NULL; /* the reply's strings, when in one block */
		struct peer_addr pa;
		char txt[QPHS__TEXT_LEN] = "";
		double t0 = qphs__mono_ms(), tcp = -1;
		int parsed;

		pthread_mutex_lock(&ep->lock);
		qphs__ep_timings_clear(ep);
		pthread_mutex_unlock(&ep->lock);
		rc = qphs__hs_send(ep->ctx->cfg, server, &local, &reply, &block, txt, sizeof(txt),
				   &tcp);
		double rpc = qphs__mono_ms() - t0;

		reply_delay_hook(ep->ctx);
		parsed = rc == 0 || rc == QPHS_ERR_REJECT_HANDSHAKE;
		if (!parsed && qphs_hs_desc_init(&reply) == 0)
			parsed = 1;
		peer_addr_of_reply(ep, rc, &reply, &pa);
		pthread_mutex_lock(&ep->lock);
		ep->rpc_ms = rpc;
		ep->tcp_ms = tcp;
		if (tcp >= 0)
			qphs__ep_phase(ep, QPHS_PHASE_TCP_CONNECT, t0, t0 + tcp);
		qphs__ep_phase(ep, QPHS_PHASE_REQUEST, t0, t0 + rpc);
		rc = handle_reply(ep, rc, txt, &reply, &local, &pa, &need_ack);
		pthread_mutex_unlock(&ep->lock);
		if (parsed)
			qphs__hs_desc_release(&reply, block);
	}
	if (!rc && need_ack)
		rc = send_ready_ack(ep, server, &local);
	qphs__hs_desc_release(&local, local_block);
	return rc;
}

static int attempt(struct qphs_context *ctx, const char *peer, const char *server,
		   struct qphs_endpoint **out)
{
	struct qphs_endpoint *ep;
	int rc = qphs__ep_get(ctx, peer, 1, &ep), owner = 0, st;

	*out = ep;
	if (rc)
		return rc;
	pthread_mutex_lock(&ep->lock);
	ep->connect_attempts++;
	st = atomic_load(&ep->status);
	if (st == QPHS_EP_UNCONNECTED) {
		atomic_store(&ep->status, QPHS_EP_CONNECTING);
		owner = 1;
	}
	pthread_mutex_unlock(&ep->lock);
	if (st == QPHS_EP_CONNECTED)
		return 0;
	if (st >= QPHS_EP_DESTROYING)
		return QPHS_ERR_RETIRED;
	if (!owner)
		return wait_existing(ep);
	return run_handshake(ep, server);
}

static long backoff_us(int attempt_no, unsigned *seed)
{
	long cap = 2000L << (attempt_no < 6 ? attempt_no : 6); /* 2 ms .. 128 ms */

	return 500 + (long)(rand_r(seed) % cap);
}

int qphs_connect(struct qphs_context *ctx, const char *peer, struct qphs_endpoint **out)
{
	unsigned seed = 0; /* the back-off's, made at the first retry */
	char *server = NULL, *dev = NULL;
	struct qphs_endpoint *ep = NULL;
	int rc = QPHS_ERR_RETIRED, retries = 0;

	*out = NULL;
	if (atomic_load(&ctx->failed)) {
		/* Mooncake marks the context inactive until the port is back. */
		pthread_mutex_lock(&ctx->event_lock);
		qphs__context_set_err(ctx, "Device %s port not active [port %d: async event %s; "
				      "usable again after IBV_EVENT_PORT_ACTIVE]", ctx->device,
				      ctx->port, ctx->last_event);
		pthread_mutex_unlock(&ctx->event_lock);
		return QPHS_ERR_PORT_NOT_ACTIVE;
	}
	if (qphs_nic_path_split(peer, &server, &dev)) {
		qphs__context_set_err(ctx, "Parse peer nic path failed: %s", peer);
		return QPHS_ERR_BAD_NIC_PATH;
	}
	for (int a = 0; a < ctx->cfg->connect_attempts; a++) {
		if (a) {
			if (!retries++)
				seed = (unsigned)(qphs__mono_ms() * 1000) ^ (unsigned)getpid() ^
				       (unsigned)(uintptr_t)out;
			qphs_endpoint_put(ep);
			ep = NULL;
			sleep_us(backoff_us(a, &seed));
		}
		rc = attempt(ctx, peer, server, &ep);
		if (rc != QPHS_ERR_RETIRED)
			break;
	}
	free(server);
	free(dev);
	if (ep) {
		pthread_mutex_lock(&ep->lock);
		ep->retired_retries += (uint64_t)retries;
		ep->connect_attempts += (uint64_t)retries; /* made on retired ones */
		if (rc && *qphs__ep_text(ep, QPHS__EP_ERRSTR))
			qphs__context_set_err(ctx, "%s", qphs__ep_text(ep, QPHS__EP_ERRSTR));
		pthread_mutex_unlock(&ep->lock);
	}
	*out = ep;
	return rc;
}
