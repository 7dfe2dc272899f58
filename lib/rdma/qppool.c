/*
 * The QP pool: RC QPs created ahead of need, in RESET, one pool per context
 * (cfg->qp_pool_size; 0, the default, turns it off).
 *
 * Why: creating a QP is the dearest step of a connection on rxe (the
 * kernel allocates and zeroes both work queues: about 2.4 ms per QP of
 * Mooncake's shape under TCG, four per connection), and a QP number must
 * be in the Connection request, so the active side cannot create them
 * while its RPC is in flight.  A filler thread keeps the pool full off the
 * critical path; an endpoint takes its QPs from it and falls back to
 * creating them when it is empty.
 *
 * What a pool QP is: created with the context's caps, never modified.  Its
 * number has never been on the wire, so taking one is the same, for the
 * peer and for the reset policies, as creating one: `reconstruct`
 * still gets new QP numbers.  Only QPs whose number was never sent come
 * back (qphs__qp_give with fresh set); every other QP is destroyed.
 *
 * The filler refills with hysteresis: it starts when fewer than half the
 * slots hold a QP and stops when all do, so a burst of connects smaller
 * than half the pool never competes with a refill for the CPU.  It runs at
 * normal priority on purpose: ibv_create_qp takes the process's mmap lock,
 * and a starved low-priority holder would stall every other thread's page
 * faults.  It backs off 100 ms after a failed create.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/thread.h"
#include "qphs/error.h"
#include "rdma_int.h"

#define FILL_BACKOFF_MS 100

static void deadline_in(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* One QP into the pool; returns 0, or the errno of a failed create. */
static int fill_one(struct qphs_context *ctx)
{
	struct qphs__qp qp = {0};
	int rc = qphs__qp_create(ctx, &qp), keep = 0;

	if (rc)
		return rc;
	pthread_mutex_lock(&ctx->pool_lock);
	if (!ctx->pool_stop && ctx->pool_n < ctx->cfg->qp_pool_size) {
		ctx->pool[ctx->pool_n++] = qp;
		keep = 1;
		pthread_cond_broadcast(&ctx->pool_cond);
	}
	pthread_mutex_unlock(&ctx->pool_lock);
	if (!keep)
		qphs__qp_destroy(ctx, &qp);
	return 0;
}

static void *filler_main(void *arg)
{
	struct qphs_context *ctx = arg;
	int logged = 0, size = ctx->cfg->qp_pool_size;

	pthread_mutex_lock(&ctx->pool_lock);
	while (!ctx->pool_stop) {
		if (ctx->pool_n >= size && ctx->pool_filling) {
			ctx->pool_filling = 0;
			pthread_cond_broadcast(&ctx->pool_cond); /* fill_qp_pool */
		} else if (2 * ctx->pool_n < size) {
			ctx->pool_filling = 1;
		}
		if (!ctx->pool_filling) {
			pthread_cond_wait(&ctx->pool_cond, &ctx->pool_lock);
			continue;
		}
		pthread_mutex_unlock(&ctx->pool_lock);
		int rc = fill_one(ctx);
		pthread_mutex_lock(&ctx->pool_lock);
		if (rc) {
			struct timespec until;

			if (!logged++)
				QPHS_WARN("%s: QP pool: ibv_create_qp: %s (pool holds %d of %d; "
					  "endpoints create their own)", ctx->device, strerror(rc),
					  ctx->pool_n, ctx->cfg->qp_pool_size);
			deadline_in(&until, FILL_BACKOFF_MS);
			pthread_cond_timedwait(&ctx->pool_cond, &ctx->pool_lock, &until);
		}
	}
	pthread_mutex_unlock(&ctx->pool_lock);
	return NULL;
}

int qphs__qp_pool_start(struct qphs_context *ctx)
{
	pthread_condattr_t ca;
	int n = ctx->cfg->qp_pool_size, rc;

	pthread_mutex_init(&ctx->pool_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ctx->pool_cond, &ca);
	pthread_condattr_destroy(&ca);
	ctx->pool_inited = 1;
	if (n <= 0)
		return 0;
	ctx->pool = calloc((size_t)n, sizeof(*ctx->pool));
	if (!ctx->pool) {
		qphs__context_set_err(ctx, "%s: cannot allocate the QP pool of %d", ctx->device, n);
		return QPHS_ERR_MEMORY;
	}
	ctx->pool_filling = 1;
	if ((rc = qphs__thread_start(&ctx->pool_thread, filler_main, ctx, "qphs-qppool"))) {
		qphs__context_set_err(ctx, "%s: cannot start the QP pool's filler thread: %s",
				      ctx->device, strerror(rc));
		return QPHS_ERR_THREAD;
	}
	ctx->pool_started = 1;
	return 0;
}

/* Joins the filler and destroys every pooled QP: before the CQ and PD go. */
void qphs__qp_pool_stop(struct qphs_context *ctx)
{
	if (!ctx->pool_inited)
		return;
	pthread_mutex_lock(&ctx->pool_lock);
	ctx->pool_stop = 1;
	pthread_cond_broadcast(&ctx->pool_cond);
	pthread_mutex_unlock(&ctx->pool_lock);
	if (ctx->pool_started)
		pthread_join(ctx->pool_thread, NULL);
	ctx->pool_started = 0;
	while (ctx->pool_n > 0)
		qphs__qp_destroy(ctx, &ctx->pool[--ctx->pool_n]);
	free(ctx->pool);
	ctx->pool = NULL;
	pthread_cond_destroy(&ctx->pool_cond);
	pthread_mutex_destroy(&ctx->pool_lock);
	ctx->pool_inited = 0;
}

/* One lock round for the whole set: an endpoint gets what the pool held
 * when it asked, and creates the rest.  QP by QP, a refill woken by the
 * first take could slip in before the second, and which QPs were pooled
 * would depend on the scheduler. */
int qphs__qp_take(struct qphs_context *ctx, struct qphs__qp *qps, int n, int *failed_at)
{
	int hits = 0, rc;

	if (ctx->cfg->qp_pool_size > 0) {
		pthread_mutex_lock(&ctx->pool_lock);
		while (hits < n && ctx->pool_n > 0)
			qps[hits++] = ctx->pool[--ctx->pool_n];
		ctx->pool_hits += (uint64_t)hits;
		ctx->pool_misses += (uint64_t)(n - hits);
		/* The filler starts below half (filler_main); above it, waking
		 * it would cost every connect a thread wake-up for nothing. */
		if (!ctx->pool_filling && 2 * ctx->pool_n < ctx->cfg->qp_pool_size)
			pthread_cond_broadcast(&ctx->pool_cond);
		pthread_mutex_unlock(&ctx->pool_lock);
	}
	for (int i = hits; i < n; i++)
		if ((rc = qphs__qp_create(ctx, &qps[i]))) {
			*failed_at = i;
			return rc;
		}
	return 0;
}

int qphs__qp_give(struct qphs_context *ctx, struct qphs__qp *qp, int fresh)
{
	if (!qp->qp)
		return 0;
	if (fresh && ctx->cfg->qp_pool_size > 0) {
		int kept = 0;

		pthread_mutex_lock(&ctx->pool_lock);
		if (!ctx->pool_stop && ctx->pool_n < ctx->cfg->qp_pool_size) {
			ctx->pool[ctx->pool_n++] = *qp;
			kept = 1;
		}
		pthread_mutex_unlock(&ctx->pool_lock);
		if (kept) {
			memset(qp, 0, sizeof(*qp));
			return 0;
		}
	}
	return qphs__qp_destroy(ctx, qp);
}

/* qphs/rdma.h.  The benchmark's timed parts start from a full pool. */
int qphs_context_fill_qp_pool(struct qphs_context *ctx, int timeout_ms)
{
	struct timespec until;
	int ok;

	if (ctx->cfg->qp_pool_size <= 0)
		return 0;
	deadline_in(&until, timeout_ms);
	pthread_mutex_lock(&ctx->pool_lock);
	if (ctx->pool_n < ctx->cfg->qp_pool_size) {
		ctx->pool_filling = 1;
		pthread_cond_broadcast(&ctx->pool_cond);
	}
	while (!(ok = !ctx->pool_filling) &&
	       pthread_cond_timedwait(&ctx->pool_cond, &ctx->pool_lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&ctx->pool_lock);
	return ok ? 0 : QPHS_ERR_BUSY;
}
