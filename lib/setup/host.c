/*
 * One server's RDMA side: its devices, and the worker pool that runs the
 * passive half of every handshake.  The daemon's loop thread only queues a
 * request here (a mutex held for a pointer swap); a worker does the verbs
 * calls — the first RTR towards a new neighbour can take a second on rxe —
 * and answers with qphs_request_reply.  Workers also retire passive
 * endpoints whose ready ACK did not come within 10 s.
 *
 * Ready ACKs never queue behind setups: under a burst of connects every
 * worker is busy creating and transitioning QPs, and an ACK queued behind
 * them (64 concurrent connects under TCG: 0.3 s of waiting) holds back a
 * peer that is otherwise ready.  An ACK takes the endpoint lock only for a
 * state change, so the loop thread answers it at once when that lock is
 * free (no hand-off at all); when a setup holds it, the ACK goes to a lane
 * and a thread of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "qphs/body.h"
#include "base/clock.h"
#include "base/thread.h"
#include "qphs/error.h"
#include "setup_int.h"
#include "rdma/verbs.h"

struct qphs__job {
	struct qphs__job *next;
	struct qphs_request *req;
	double queued_at;                  /* ms, monotonic */
};

static void run_job(struct qphs_rdma *r, struct qphs__job *j)
{
	if (qphs_request_type(j->req) == QPHS_HS_METADATA)
		qphs__passive_metadata(r, j->req);
	else
		qphs__passive_connection(r, j->req, qphs__mono_ms() - j->queued_at);
	free(j);
}

static struct qphs__job *pop(struct qphs__job **head, struct qphs__job **tail)
{
	struct qphs__job *j = *head;

	if (j && !(*head = j->next))
		*tail = NULL;
	return j;
}

static void push(struct qphs__job **head, struct qphs__job **tail, struct qphs__job *j)
{
	j->next = NULL;
	if (*tail)
		(*tail)->next = j;
	else
		*head = j;
	*tail = j;
}

static void *ack_main(void *arg)
{
	struct qphs_rdma *r = arg;

	pthread_mutex_lock(&r->qlock);
	while (!r->stopping) {
		struct qphs__job *j = pop(&r->ack_head, &r->ack_tail);

		if (!j) {
			pthread_cond_wait(&r->ack_cond, &r->qlock);
			continue;
		}
		pthread_mutex_unlock(&r->qlock);
		run_job(r, j);
		pthread_mutex_lock(&r->qlock);
	}
	pthread_mutex_unlock(&r->qlock);
	return NULL;
}

static void expire_all(struct qphs_rdma *r)
{
	pthread_mutex_lock(&r->lock);
	int n = r->nctx;
	pthread_mutex_unlock(&r->lock);
	for (int i = 0; i < n; i++)
		qphs__ep_expire_acks(r->ctx[i]);
}

static void *worker_main(void *arg)
{
	struct qphs_rdma *r = arg;

	pthread_mutex_lock(&r->qlock);
	while (!r->stopping) {
		struct qphs__job *j = r->qhead;
		struct timespec until;

		if (!j) {
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_nsec += 500 * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			if (pthread_cond_timedwait(&r->qcond, &r->qlock, &until) == ETIMEDOUT) {
				pthread_mutex_unlock(&r->qlock);
				expire_all(r);
				pthread_mutex_lock(&r->qlock);
			}
			continue;
		}
		pop(&r->qhead, &r->qtail);
		pthread_mutex_unlock(&r->qlock);
		run_job(r, j);
		pthread_mutex_lock(&r->qlock);
	}
	pthread_mutex_unlock(&r->qlock);
	return NULL;
}

static int is_ready_ack(const struct qphs_request *req)
{
	const struct qphs_hs_desc *d = qphs_request_desc(req);

	return qphs_request_type(req) == QPHS_HS_CONNECTION && d && d->has_ready_ack &&
	       d->ready_ack;
}

/* The daemon's handler: runs on its loop thread, so it only queues —
 * except a ready ACK, answered at once when no setup holds its endpoint. */
static void on_request(struct qphs_request *req, void *user)
{
	struct qphs_rdma *r = user;
	struct qphs__job *j;

	if (is_ready_ack(req) && qphs__passive_ack_now(r, req))
		return;
	j = calloc(1, sizeof(*j));
	if (!j) {
		qphs_request_close(req);
		return;
	}
	j->req = req;
	j->queued_at = qphs__mono_ms();
	pthread_mutex_lock(&r->qlock);
	if (r->stopping) {
		pthread_mutex_unlock(&r->qlock);
		qphs_request_close(req);
		free(j);
		return;
	}
	if (r->ack_started && is_ready_ack(req)) {
		push(&r->ack_head, &r->ack_tail, j);
		pthread_cond_signal(&r->ack_cond);
	} else {
		push(&r->qhead, &r->qtail, j);
		pthread_cond_signal(&r->qcond);
	}
	pthread_mutex_unlock(&r->qlock);
}

int qphs_rdma_attach(struct qphs_rdma *r, struct qphs_daemon *d)
{
	int rc = qphs_daemon_set_handler(d, QPHS_HS_CONNECTION, on_request, r);

	if (!rc)
		rc = qphs_daemon_set_handler(d, QPHS_HS_METADATA, on_request, r);
	if (rc)
		snprintf(r->errstr, sizeof(r->errstr), "cannot install handlers: %s",
			 qphs_strerror(rc));
	return rc;
}

/* Returns 0, or QPHS_ERR_THREAD with the errno's text in err. */
static int start_workers(struct qphs_rdma *r, char *err, size_t errlen)
{
	pthread_condattr_t ca;
	int rc;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->qcond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&r->ack_cond, NULL);
	if ((rc = qphs__thread_start(&r->ack_thread, ack_main, r, "qphs-ack"))) {
		snprintf(err, errlen, "cannot start the ready-ACK thread: %s", strerror(rc));
		return QPHS_ERR_THREAD;
	}
	r->ack_started = 1;
	for (int i = 0; i < r->cfg.worker_threads && i < QPHS__MAX_WORKERS; i++) {
		if ((rc = qphs__thread_start(&r->workers[i], worker_main, r, "qphs-worker"))) {
			snprintf(err, errlen, "cannot start worker thread %d of %d: %s", i + 1,
				 r->cfg.worker_threads, strerror(rc));
			return QPHS_ERR_THREAD;
		}
		r->nworkers++;
	}
	return 0;
}

static int check_options(const struct qphs_config *cfg, char *err, size_t errlen)
{
	int known = !cfg->quirk_profile[0];

	for (int i = 0; qphs_quirk_profiles()[i]; i++)
		known |= !strcmp(cfg->quirk_profile, qphs_quirk_profiles()[i]);
	if (!known) {
		snprintf(err, errlen, "quirk_profile '%s' is not one of e810, erdma, "
			 "strict-path-mtu, ionic-atomic", cfg->quirk_profile);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if (cfg->connect_attempts < 1 || cfg->connect_attempts > 100 ||
	    cfg->worker_threads < 1 || cfg->worker_threads > QPHS__MAX_WORKERS) {
		snprintf(err, errlen, "connect_attempts (1..100) or worker_threads (1..%d) "
			 "out of range", QPHS__MAX_WORKERS);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	return 0;
}

int qphs_rdma_new(const struct qphs_config *cfg, const char *server, struct qphs_rdma **out,
		  char *err, size_t errlen)
{
	char dummy[8];
	struct qphs_rdma *r;
	int rc;

	*out = NULL;
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if ((rc = qphs_config_validate(cfg, err, errlen)) ||
	    (rc = check_options(cfg, err, errlen)))
		return QPHS_ERR_INVALID_ARGUMENT;
	if (!server || !server[0] || strlen(server) >= sizeof(r->server)) {
		snprintf(err, errlen, "server name must be 1..255 bytes");
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return QPHS_ERR_MEMORY;
	r->cfg = *cfg;
	snprintf(r->server, sizeof(r->server), "%s", server);
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_init(&r->qlock, NULL);
	/* The check region peers' data-path checks write into: one buffer,
	 * registered on each device as it opens. */
	r->region = aligned_alloc(4096, QPHS_CHECK_REGION_BYTES);
	if (!r->region) {
		snprintf(err, errlen, "cannot allocate the %u-byte check region",
			 QPHS_CHECK_REGION_BYTES);
		qphs_rdma_free(r);
		return QPHS_ERR_MEMORY;
	}
	memset(r->region, 0, QPHS_CHECK_REGION_BYTES);
	if ((rc = start_workers(r, err, errlen))) {
		qphs_rdma_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static void stop_workers(struct qphs_rdma *r)
{
	pthread_mutex_lock(&r->qlock);
	r->stopping = 1;
	pthread_cond_broadcast(&r->qcond);
	pthread_cond_broadcast(&r->ack_cond);
	pthread_mutex_unlock(&r->qlock);
	for (int i = 0; i < r->nworkers; i++)
		pthread_join(r->workers[i], NULL);
	r->nworkers = 0;
	if (r->ack_started)
		pthread_join(r->ack_thread, NULL);
	r->ack_started = 0;
	/* Requests still queued are completed by closing them. */
	for (struct qphs__job *j; (j = pop(&r->qhead, &r->qtail)) ||
				  (j = pop(&r->ack_head, &r->ack_tail));) {
		qphs_request_close(j->req);
		free(j);
	}
}

void qphs_rdma_free(struct qphs_rdma *r)
{
	if (!r)
		return;
	stop_workers(r);
	for (int i = r->nctx - 1; i >= 0; i--) {
		qphs__events_stop(r->ctx[i]); /* it may be touching endpoints */
		qphs__ep_destroy_all(r->ctx[i]);
		qphs__context_close(r->ctx[i]);
	}
	free(r->region);
	pthread_cond_destroy(&r->qcond);
	pthread_cond_destroy(&r->ack_cond);
	pthread_mutex_destroy(&r->qlock);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int qphs_rdma_open_device(struct qphs_rdma *r, const char *device, struct qphs_context **out)
{
	struct qphs_context *ctx;
	int rc;

	*out = NULL;
	pthread_mutex_lock(&r->lock);
	if (r->nctx == QPHS__MAX_CTX || qphs__rdma_find_ctx_locked(r, device)) {
		snprintf(r->errstr, sizeof(r->errstr), "%s: already open, or %d devices open",
			 device, QPHS__MAX_CTX);
		pthread_mutex_unlock(&r->lock);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	const struct qphs__ctx_owner owner = {.rdma = r, .cfg = &r->cfg, .server = r->server,
					      .region = r->region,
					      .region_len = QPHS_CHECK_REGION_BYTES,
					      .on_event = qphs__ep_on_event};
	rc = qphs__context_open(&owner, device, &ctx);
	if (rc) {
		snprintf(r->errstr, sizeof(r->errstr), "%s", ctx ? ctx->errstr : "out of memory");
	} else {
		r->ctx[r->nctx++] = ctx;
		*out = ctx;
	}
	pthread_mutex_unlock(&r->lock);
	if (rc)
		qphs__context_close(ctx); /* takes pool_lock: not under r->lock */
	return rc;
}

struct qphs_context *qphs__rdma_find_ctx_locked(struct qphs_rdma *r, const char *device)
{
	for (int i = 0; i < r->nctx; i++)
		if (!strcmp(r->ctx[i]->device, device))
			return r->ctx[i];
	return NULL;
}

struct qphs_context *qphs__rdma_find_ctx(struct qphs_rdma *r, const char *device)
{
	pthread_mutex_lock(&r->lock);
	struct qphs_context *ctx = qphs__rdma_find_ctx_locked(r, device);
	pthread_mutex_unlock(&r->lock);
	return ctx;
}

const char *qphs_context_errstr(const struct qphs_context *ctx)
{
	return ctx->errstr;
}

const char *qphs_rdma_errstr(const struct qphs_rdma *r)
{
	return r->errstr;
}

uint64_t qphs_rdma_last_rejection(struct qphs_rdma *r, char *buf, size_t len)
{
	uint64_t n;

	if (len)
		buf[0] = '\0';
	if (!r)
		return 0;
	pthread_mutex_lock(&r->lock);
	n = r->n_rejections;
	if (len)
		snprintf(buf, len, "%s", r->last_rejection);
	pthread_mutex_unlock(&r->lock);
	return n;
}

const char *qphs_context_nic_path(const struct qphs_context *ctx)
{
	return ctx->nic_path;
}

int qphs_context_set_hooks(struct qphs_context *ctx, const struct qphs_rdma_hooks *h)
{
	pthread_mutex_lock(&ctx->hook_lock);
	memset(&ctx->hooks, 0, sizeof(ctx->hooks));
	ctx->hook_gid[0] = ctx->hook_server[0] = '\0';
	if (h) {
		ctx->hooks = *h;
		if (h->advertise_gid)
			snprintf(ctx->hook_gid, sizeof(ctx->hook_gid), "%s", h->advertise_gid);
		if (h->advertise_server)
			snprintf(ctx->hook_server, sizeof(ctx->hook_server), "%s",
				 h->advertise_server);
		ctx->hooks.advertise_gid = h->advertise_gid ? ctx->hook_gid : NULL;
		ctx->hooks.advertise_server = h->advertise_server ? ctx->hook_server : NULL;
	}
	pthread_mutex_unlock(&ctx->hook_lock);
	return 0;
}

int qphs_context_info(struct qphs_context *ctx, struct qphs_context_info *o)
{
	struct ibv_port_attr pa;

	memset(o, 0, sizeof(*o));
	snprintf(o->device, sizeof(o->device), "%s", ctx->device);
	snprintf(o->nic_path, sizeof(o->nic_path), "%s", ctx->nic_path);
	o->port = ctx->port;
	if (!ctx->verbs.ops->query_port(&ctx->verbs, ctx->ib, ctx->port, &pa)) {
		snprintf(o->port_state, sizeof(o->port_state), "%s", qphs__verbs_port_state_name(pa.state));
		o->active_mtu = qphs__verbs_mtu_bytes(pa.active_mtu);
	}
	o->lid = ctx->lid;
	o->gid_index = ctx->gid_index;
	snprintf(o->gid, sizeof(o->gid), "%s", ctx->gid_str);
	snprintf(o->gid_reason, sizeof(o->gid_reason), "%s", ctx->gid_reason);
	o->max_qp = ctx->dev_attr.max_qp;
	o->max_qp_rd_atom = ctx->dev_attr.max_qp_rd_atom;
	o->max_qp_init_rd_atom = ctx->dev_attr.max_qp_init_rd_atom;
	o->max_res_rd_atom = ctx->dev_attr.max_res_rd_atom;
	snprintf(o->quirk_profile, sizeof(o->quirk_profile), "%s", ctx->cfg->quirk_profile);
	o->failed = atomic_load(&ctx->failed);
	pthread_mutex_lock(&ctx->event_lock);
	snprintf(o->last_event, sizeof(o->last_event), "%s", ctx->last_event);
	memcpy(o->event_count, ctx->event_count, sizeof(o->event_count));
	pthread_mutex_unlock(&ctx->event_lock);
	return 0;
}
