/*
 * The async-event thread of a context: reads the device's asynchronous
 * events, counts and logs them, marks the context failed on a port error
 * or device fatal (active again on PORT_ACTIVE), and hands QP, port and
 * device errors to the context's owner (ctx->on_event: setup/epevents.c
 * retires the endpoints they touch, as Mooncake's context does).
 *
 * Each event is acknowledged before the owner sees it: ibv_destroy_qp
 * waits until every event of its QP is acknowledged, so a thread that
 * destroys a QP under ep->lock while we wait for that lock would deadlock.
 * After the ack the QP may be gone, so it is named by number, not by
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
#include "base/thread.h"
#include "qphs/error.h"
#include "rdma_int.h"

/* Named before it is handled (a refused connect quotes it), counted after:
 * whoever sees the count sees its effects. */
static void note_event(struct qphs_context *ctx, const struct qphs__async_event *e, int count)
{
	pthread_mutex_lock(&ctx->event_lock);
	if (!count)
		snprintf(ctx->last_event, sizeof(ctx->last_event), "%s", e->name);
	else if ((unsigned)e->type < QPHS_EVENT_TYPES)
		ctx->event_count[e->type]++;
	pthread_mutex_unlock(&ctx->event_lock);
}

static void handle_event(struct qphs_context *ctx, const struct qphs__async_event *e)
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
		if (ctx->on_event)
			ctx->on_event(ctx, e);
		break;
	case IBV_EVENT_PORT_ACTIVE:
		atomic_store(&ctx->failed, 0);
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		if (ctx->on_event)
			ctx->on_event(ctx, e);
		break;
	default:
		break;
	}
	note_event(ctx, e, 1);
}

/* Reads one event and acknowledges it at once (see the top comment). */
static int read_event(struct qphs_context *ctx, struct qphs__async_event *e)
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
		struct qphs__async_event e;

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
	int fl = fcntl(ctx->ib->async_fd, F_GETFL), rc;

	if (fl < 0 || fcntl(ctx->ib->async_fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    pipe2(ctx->stop_pipe, O_CLOEXEC) < 0) {
		qphs__context_set_err(ctx, "%s: cannot set up the async event descriptors: %s",
				      ctx->device, strerror(errno));
		return QPHS_ERR_CONTEXT;
	}
	if ((rc = qphs__thread_start(&ctx->async_thread, async_main, ctx, "qphs-events"))) {
		qphs__context_set_err(ctx, "%s: cannot start the async event thread: %s",
				      ctx->device, strerror(rc));
		close(ctx->stop_pipe[0]);
		close(ctx->stop_pipe[1]);
		ctx->stop_pipe[0] = ctx->stop_pipe[1] = -1;
		return QPHS_ERR_THREAD;
	}
	ctx->async_started = 1;
	return 0;
}

/* Before any endpoint is destroyed: the thread may be touching them.
 * A second call does nothing. */
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
