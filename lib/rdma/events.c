/*
 * The async-event thread of a context: reads the device's asynchronous
 * events, counts and logs them, and marks what they touch failed, as
 * Mooncake's context does (QP fatal -> that endpoint is deleted; device
 * fatal, port error -> the context is inactive and every endpoint is
 * disconnected).
 *
 * Each event is acknowledged before any endpoint is touched: ibv_destroy_qp
 * waits until every event of its QP is acknowledged, so a thread that
 * destroys a QP under ep->lock while we wait for that lock would deadlock.
 * After the ack the QP may be gone, so it is matched by number, not by
 * pointer.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "qphs/error.h"
#include "rdma_int.h"

struct event {
	enum ibv_event_type type;
	uint32_t qpn;             /* QP events only */
	int is_qp;
	char name[64];
};

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
static void fail_one(struct qphs_context *ctx, struct qphs_endpoint *ep, const struct event *e)
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
static void fail_endpoints(struct qphs_context *ctx, const struct event *e)
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

/* Named before it is handled (a refused connect quotes it), counted after:
 * whoever sees the count sees its effects. */
static void note_event(struct qphs_context *ctx, const struct event *e, int count)
{
	pthread_mutex_lock(&ctx->event_lock);
	if (!count)
		snprintf(ctx->last_event, sizeof(ctx->last_event), "%s", e->name);
	else if ((unsigned)e->type < QPHS_EVENT_TYPES)
		ctx->event_count[e->type]++;
	pthread_mutex_unlock(&ctx->event_lock);
}

static void handle_event(struct qphs_context *ctx, const struct event *e)
{
	note_event(ctx, e, 0);
	if (e->is_qp)
		QPHS_WARN("[Handshake] %s: async event %s on QP %u", ctx->device, e->name, e->qpn);
	else
		QPHS_WARN("[Handshake] %s: async event %s", ctx->device, e->name);
	switch (e->type) {
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_PORT_ERR:
		atomic_store(&ctx->failed, 1);
		fail_endpoints(ctx, e);
		break;
	case IBV_EVENT_PORT_ACTIVE:
		atomic_store(&ctx->failed, 0);
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		fail_endpoints(ctx, e);
		break;
	default:
		break;
	}
	note_event(ctx, e, 1);
}

/* Reads one event and acknowledges it at once (see the top comment). */
static int read_event(struct qphs_context *ctx, struct event *e)
{
	struct ibv_async_event ev;

	if (qphs__verbs_get_async_event(ctx->ib, &ev))
		return -1;
	memset(e, 0, sizeof(*e));
	e->type = ev.event_type;
	e->is_qp = ev.event_type == IBV_EVENT_QP_FATAL || ev.event_type == IBV_EVENT_QP_REQ_ERR ||
		   ev.event_type == IBV_EVENT_QP_ACCESS_ERR || ev.event_type == IBV_EVENT_COMM_EST ||
		   ev.event_type == IBV_EVENT_SQ_DRAINED ||
		   ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED;
	if (e->is_qp && ev.element.qp)
		e->qpn = ev.element.qp->qp_num;
	snprintf(e->name, sizeof(e->name), "%s", qphs__verbs_event_name(ev.event_type));
	qphs__verbs_ack_async_event(&ev);
	return 0;
}

static void *async_main(void *arg)
{
	struct qphs_context *ctx = arg;
	struct pollfd pfd[2] = {{.fd = ctx->ib->async_fd, .events = POLLIN},
				{.fd = ctx->stop_pipe[0], .events = POLLIN}};

	for (;;) {
		struct event e;

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if ((pfd[0].revents & POLLIN) && !read_event(ctx, &e))
			handle_event(ctx, &e);
	}
	return NULL;
}

int qphs__events_start(struct qphs_context *ctx)
{
	int fl = fcntl(ctx->ib->async_fd, F_GETFL);

	if (fl < 0 || fcntl(ctx->ib->async_fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    pipe2(ctx->stop_pipe, O_CLOEXEC) < 0)
		return QPHS_ERR_CONTEXT;
	if (pthread_create(&ctx->async_thread, NULL, async_main, ctx)) {
		close(ctx->stop_pipe[0]);
		close(ctx->stop_pipe[1]);
		ctx->stop_pipe[0] = ctx->stop_pipe[1] = -1;
		return QPHS_ERR_CONTEXT;
	}
	pthread_setname_np(ctx->async_thread, "qphs-events");
	ctx->async_started = 1;
	return 0;
}

/* Before any endpoint is destroyed: the thread may be touching them. */
void qphs__events_stop(struct qphs_context *ctx)
{
	if (ctx->async_started) {
		if (write(ctx->stop_pipe[1], "x", 1) < 0)
			QPHS_WARN("%s: cannot signal the async thread", ctx->device);
		pthread_join(ctx->async_thread, NULL);
		ctx->async_started = 0;
	}
	if (ctx->stop_pipe[0] >= 0) {
		close(ctx->stop_pipe[0]);
		close(ctx->stop_pipe[1]);
		ctx->stop_pipe[0] = ctx->stop_pipe[1] = -1;
	}
}
