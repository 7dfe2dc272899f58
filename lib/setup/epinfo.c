/*
 * Endpoint introspection and housekeeping: info (QP states read back with
 * ibv_query_qp, never from our own bookkeeping), waiting for readiness, the
 * ready-ACK deadline, and destroying whatever is left at close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/clock.h"
#include "qphs/error.h"
#include "setup_int.h"

int qphs_endpoint_info(struct qphs_endpoint *ep, struct qphs_endpoint_info *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&ep->lock);
	out->status = atomic_load(&ep->status);
	snprintf(out->peer_nic_path, sizeof(out->peer_nic_path), "%s", ep->peer_path);
	out->qp_count = ep->nqp;
	for (int i = 0; i < ep->nqp; i++) {
		out->qpn[i] = ep->qp[i].qp ? ep->qp[i].qp->qp_num : 0;
		out->peer_qpn[i] = ep->peer_qpn[i];
		out->qp_state[i] = qphs__qp_state(ep->ctx, &ep->qp[i]);
	}
	out->path_mtu = ep->path_mtu;
	out->gid_index = ep->ctx->gid_index;
	out->rd_atomic = ep->rd_atomic;
	out->last_error = ep->last_error;
	snprintf(out->last_error_text, sizeof(out->last_error_text), "%s",
		 qphs__ep_text(ep, QPHS__EP_ERRSTR));
	snprintf(out->reply_msg_sent, sizeof(out->reply_msg_sent), "%s",
		 qphs__ep_text(ep, QPHS__EP_REPLY_SENT));
	snprintf(out->reply_msg_received, sizeof(out->reply_msg_received), "%s",
		 qphs__ep_text(ep, QPHS__EP_REPLY_RECEIVED));
	memcpy(out->transitions_ok, ep->tr_ok, sizeof(ep->tr_ok));
	memcpy(out->transitions_failed, ep->tr_failed, sizeof(ep->tr_failed));
	out->reset_skipped = ep->reset_skipped;
	out->connect_attempts = ep->connect_attempts;
	out->retired_retries = ep->retired_retries;
	out->peer_ready_ack = ep->peer_ready_ack;
	out->rpc_ms = ep->rpc_ms;
	out->setup_ms = ep->setup_ms;
	out->ack_ms = ep->ack_ms;
	out->passive_setup_ms = ep->passive_setup_ms;
	out->tcp_connect_ms = ep->tcp_ms;
	out->qp_take_ms = ep->create_ms;
	out->ack_tcp_connect_ms = ep->ack_connect_ms;
	out->worker_wait_ms = ep->queue_ms;
	out->peer_path_mtu = ep->peer_path_mtu;
	snprintf(out->warning, sizeof(out->warning), "%s", qphs__ep_text(ep, QPHS__EP_WARNING));
	memcpy(out->transition_ms, ep->tr_ms, sizeof(ep->tr_ms));
	memcpy(out->phase_start_ms, ep->ph_start, sizeof(ep->ph_start));
	memcpy(out->phase_end_ms, ep->ph_end, sizeof(ep->ph_end));
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

const char *qphs_endpoint_errstr(struct qphs_endpoint *ep)
{
	return qphs__ep_text(ep, QPHS__EP_ERRSTR);
}

int qphs_endpoint_wait_ready(struct qphs_endpoint *ep, int timeout_ms)
{
	double end = qphs__mono_ms() + timeout_ms;
	struct timespec nap = {0, 200000};

	for (;;) {
		int st = atomic_load(&ep->status);

		if (st == QPHS_EP_CONNECTED)
			return 0;
		if (st >= QPHS_EP_DESTROYING)
			return QPHS_ERR_RETIRED;
		if (qphs__mono_ms() > end)
			return QPHS_ERR_ENDPOINT;
		nanosleep(&nap, NULL);
	}
}

void qphs__ep_ack_deadline(struct qphs_endpoint *ep, int active)
{
	const struct qphs_config *c = ep->ctx->cfg;
	long long s = active ? c->connect_timeout_s + c->reply_timeout_ms / 1000 + 1
			     : QPHS__READY_ACK_TIMEOUT_MS / 1000;

	atomic_store(&ep->ack_deadline_ms, (long long)qphs__mono_ms() + s * 1000);
}

static int expired(const struct qphs_endpoint *ep)
{
	return qphs__mono_ms() >= (double)atomic_load(&ep->ack_deadline_ms);
}

/* A passive endpoint waits for the ready ACK 10 s at most, then retires.
 * References are taken under ep_lock and the endpoints locked afterwards,
 * keeping the lock order (ep->lock before ctx->ep_lock); the scan reads
 * only the atomics status and ack_deadline_ms, and the decision is made
 * again under ep->lock. */
void qphs__ep_expire_acks(struct qphs_context *ctx)
{
	struct qphs_endpoint *due[64];
	int n = 0;

	pthread_mutex_lock(&ctx->ep_lock);
	for (struct qphs_endpoint *ep = ctx->eps; ep && n < 64; ep = ep->next)
		if (!ep->retired && atomic_load(&ep->status) == QPHS_EP_WAIT_READY_ACK &&
		    expired(ep)) {
			ep->refs++;
			due[n++] = ep;
		}
	pthread_mutex_unlock(&ctx->ep_lock);
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&due[i]->lock);
		if (atomic_load(&due[i]->status) == QPHS_EP_WAIT_READY_ACK &&
		    expired(due[i])) {
			QPHS_WARN("[Handshake] Timed out waiting for RDMA ready ACK for endpoint: %s",
				  due[i]->peer_path);
			qphs__ep_set_err(due[i], QPHS_ERR_RETIRED,
					 "Timed out waiting for RDMA ready ACK");
			qphs__ep_retire_locked(due[i], "ready ACK timeout");
		}
		pthread_mutex_unlock(&due[i]->lock);
		qphs_endpoint_put(due[i]);
	}
}

/* At close: every endpoint left, referenced or not, loses its QPs. */
void qphs__ep_destroy_all(struct qphs_context *ctx)
{
	pthread_mutex_lock(&ctx->ep_lock);
	struct qphs_endpoint *ep = ctx->eps;
	ctx->eps = NULL;
	memset(ctx->ep_index, 0, sizeof(ctx->ep_index));
	pthread_mutex_unlock(&ctx->ep_lock);
	while (ep) {
		struct qphs_endpoint *next = ep->next;

		if (ep->refs > 1 || !ep->retired)
			QPHS_DEBUG("%s: endpoint %s destroyed at close", ctx->device, ep->peer_path);
		for (int i = ep->nqp - 1; i >= 0; i--)
			if (qphs__qp_destroy(ctx, &ep->qp[i]))
				QPHS_ERR("%s: ibv_destroy_qp failed at close", ctx->device);
		qphs__ep_free_memory(ep);
		ep = next;
	}
}
