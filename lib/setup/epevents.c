/*
 * What an async event does to a context's endpoints (the context's
 * on_event, called on its event thread after the event was acknowledged:
 * rdma/events.c).  Mooncake's context: QP fatal -> that endpoint is
 * deleted; device fatal, port error -> every endpoint is disconnected.
 */
#include <stdio.h>
#include <stdlib.h>

#include "qphs/error.h"
#include "setup_int.h"

static int ep_owns_qpn(const struct qphs_endpoint *ep, uint32_t qpn)
{
	for (int i = 0; i < ep->nqp; i++)
		if (ep->qp[i].qp && ep->qp[i].qp->qp_num == qpn)
			return 1;
	return 0;
}

/* One endpoint, ep->lock held.  A QP event retires the endpoint that owns
 * the QP, whatever its state (the QP is in ERR: it cannot carry data); a
 * port or device event retires the connected ones (Mooncake's
 * disconnectAllEndpoints: a connected endpoint is retired, not reused) and
 * leaves a handshake in flight to fail by itself, never resetting QPs under
 * a live RPC. */
static void fail_one(struct qphs_context *ctx, struct qphs_endpoint *ep, const struct qphs__async_event *e)
{
	int st = atomic_load(&ep->status);

	if (e->is_qp) {
		if (!ep_owns_qpn(ep, e->qpn))
			return;
		qphs__ep_set_err(ep, QPHS_ERR_QP_FATAL, "QP %u: async event %s on %s [the QP is "
				 "in error; endpoint retired, connect again]", e->qpn, e->name,
				 ctx->device);
		if (st < QPHS_EP_DESTROYING)
			qphs__ep_retire_locked(ep, "QP async error");
		return;
	}
	qphs__ep_set_err(ep, e->type == IBV_EVENT_DEVICE_FATAL ? QPHS_ERR_DEVICE_FATAL
			 : QPHS_ERR_PORT_NOT_ACTIVE, "async event %s on %s port %d [endpoint %s]",
			 e->name, ctx->device, ctx->port,
			 st == QPHS_EP_CONNECTED || st == QPHS_EP_WAIT_READY_ACK ? "retired"
			 : "left to its handshake");
	if (st == QPHS_EP_CONNECTED || st == QPHS_EP_WAIT_READY_ACK)
		qphs__ep_retire_locked(ep, "port or device async error");
}

/* Every endpoint of ctx, as references taken under the store lock, then
 * each handled under its own lock (never both locks at once). */
void qphs__ep_on_event(struct qphs_context *ctx, const struct qphs__async_event *e)
{
	struct qphs_endpoint **eps = NULL;
	int n = 0;

	pthread_mutex_lock(&ctx->ep_lock);
	for (struct qphs_endpoint *ep = ctx->eps; ep; ep = ep->next)
		n++;
	if (n)
		eps = calloc((size_t)n, sizeof(*eps));
	n = 0;
	for (struct qphs_endpoint *ep = ctx->eps; ep && eps; ep = ep->next) {
		ep->refs++;
		eps[n++] = ep;
	}
	pthread_mutex_unlock(&ctx->ep_lock);
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&eps[i]->lock);
		fail_one(ctx, eps[i], e);
		pthread_mutex_unlock(&eps[i]->lock);
		qphs_endpoint_put(eps[i]);
	}
	free(eps);
}

