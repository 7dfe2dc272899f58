/*
 * One peer: N RC QPs, the endpoint store of a context, the setup loop over
 * the four transitions, reset/retire, and introspection.  The handshake
 * that drives setup lives in connect.c (active) and passive.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/clock.h"
#include "qphs/error.h"
#include "setup_int.h"

const char *qphs_ep_status_name(int s)
{
	static const char *const names[] = {"INITIALIZING", "UNCONNECTED", "CONNECTING",
					    "CONNECTED_WAIT_READY_ACK", "CONNECTED",
					    "DESTROYING", "DESTROYED"};

	return s >= 0 && s <= QPHS_EP_DESTROYED ? names[s] : "UNKNOWN";
}

const char *qphs_phase_name(int phase)
{
	static const char *const names[QPHS_PHASE_COUNT] = {
		"tcp_connect", "request", "reset", "init", "rtr", "rts", "ready_ack"};

	return phase >= 0 && phase < QPHS_PHASE_COUNT ? names[phase] : "unknown";
}

double qphs_monotonic_ms(void)
{
	return qphs__mono_ms();
}

static char *text_slot(const struct qphs__ep_texts *t, int which, size_t *len)
{
	struct qphs__ep_texts *w = (struct qphs__ep_texts *)t;

	switch (which) {
	case QPHS__EP_WARNING:
		*len = sizeof(w->warning);
		return w->warning;
	case QPHS__EP_REPLY_SENT:
		*len = sizeof(w->reply_sent);
		return w->reply_sent;
	case QPHS__EP_REPLY_RECEIVED:
		*len = sizeof(w->reply_received);
		return w->reply_received;
	default:
		*len = sizeof(w->errstr);
		return w->errstr;
	}
}

static void set_text(struct qphs_endpoint *ep, int which, const char *fmt, va_list ap)
{
	size_t len;
	char *slot;

	if (!ep->tx && !(ep->tx = calloc(1, sizeof(*ep->tx))))
		return;
	slot = text_slot(ep->tx, which, &len);
	vsnprintf(slot, len, fmt, ap);
}

void qphs__ep_set_text(struct qphs_endpoint *ep, int which, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	set_text(ep, which, fmt, ap);
	va_end(ap);
	errno = saved;
}

const char *qphs__ep_text(const struct qphs_endpoint *ep, int which)
{
	size_t len;

	return ep->tx ? text_slot(ep->tx, which, &len) : "";
}

void qphs__ep_set_err(struct qphs_endpoint *ep, int code, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	ep->last_error = code;
	va_start(ap, fmt);
	set_text(ep, QPHS__EP_ERRSTR, fmt, ap);
	va_end(ap);
	errno = saved;
}

int qphs__ep_qpns_equal(const struct qphs_endpoint *ep, const uint32_t *q, size_t n)
{
	if ((size_t)ep->nqp != n || !ep->peer_qpn)
		return 0;
	return !memcmp(ep->peer_qpn, q, n * sizeof(*q));
}

/* Destroys every QP, continuing past failures (nothing may leak). */
static int destroy_qps(struct qphs_endpoint *ep)
{
	int failed = 0;

	for (int i = ep->nqp - 1; i >= 0; i--) {
		int rc = qphs__qp_destroy(ep->ctx, &ep->qp[i]);

		if (rc) {
			failed++;
			QPHS_ERR("%s: ibv_destroy_qp: %s", ep->ctx->device, strerror(rc));
		}
	}
	return failed;
}

/* Creates all QPs or none (unwinds in reverse on failure). */
static int create_qps(struct qphs_endpoint *ep)
{
	int i = 0, rc = qphs__qp_take(ep->ctx, ep->qp, ep->nqp, &i);

	if (rc) {
		destroy_qps(ep);
		qphs__ep_set_err(ep, QPHS_ERR_CREATE_QP, "Failed to create QP: %s [QP %d of %d on %s]",
				 strerror(rc), i + 1, ep->nqp, ep->ctx->device);
		return QPHS_ERR_CREATE_QP;
	}
	return 0;
}

static void release_rd_atom(struct qphs_endpoint *ep)
{
	pthread_mutex_lock(&ep->ctx->ep_lock);
	ep->ctx->rd_atom_used -= ep->rd_atom_taken;
	pthread_mutex_unlock(&ep->ctx->ep_lock);
	ep->rd_atom_taken = 0;
}

void qphs__ep_free_memory(struct qphs_endpoint *ep)
{
	pthread_mutex_destroy(&ep->lock);
	free(ep->qp);
	free(ep->peer_qpn);
	free(ep->tx);
	free(ep);
}

static void ep_free(struct qphs_endpoint *ep)
{
	destroy_qps(ep);
	if (ep->rd_atom_taken)
		release_rd_atom(ep);
	qphs__ep_free_memory(ep);
}

/* An endpoint that never went into the store (a racing creator won): its
 * QP numbers were never sent, so they may go back to the pool. */
static void ep_free_unused(struct qphs_endpoint *ep)
{
	for (int i = ep->nqp - 1; i >= 0; i--)
		if (qphs__qp_give(ep->ctx, &ep->qp[i], 1))
			QPHS_ERR("%s: ibv_destroy_qp of an unused QP failed", ep->ctx->device);
	ep_free(ep);
}

/* FNV-1a: the endpoint index's hash of a peer nic path. */
static uint32_t path_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static struct qphs_endpoint **bucket(struct qphs_context *ctx, uint32_t h)
{
	return &ctx->ep_index[h & (QPHS__EP_BUCKETS - 1)];
}

/* ctx->ep_lock held: the endpoint for peer that is not retired, or NULL. */
static struct qphs_endpoint *index_find(struct qphs_context *ctx, const char *peer)
{
	uint32_t h = path_hash(peer);
	struct qphs_endpoint *ep = *bucket(ctx, h);

	while (ep && (ep->path_hash != h || strcmp(ep->peer_path, peer)))
		ep = ep->hnext;
	return ep;
}

/* ctx->ep_lock held: ep leaves the index (when it is in it). */
static void index_del(struct qphs_endpoint *ep)
{
	for (struct qphs_endpoint **pp = bucket(ep->ctx, ep->path_hash); *pp; pp = &(*pp)->hnext)
		if (*pp == ep) {
			*pp = ep->hnext;
			ep->hnext = NULL;
			return;
		}
}

static struct qphs_endpoint *ep_new(struct qphs_context *ctx, const char *peer, int *rc)
{
	struct qphs_endpoint *ep = calloc(1, sizeof(*ep));

	*rc = QPHS_ERR_MEMORY;
	if (!ep)
		return NULL;
	ep->ctx = ctx;
	ep->nqp = ctx->cfg->num_qp_per_ep;
	ep->qp = calloc((size_t)ep->nqp, sizeof(*ep->qp));
	ep->peer_qpn = calloc((size_t)ep->nqp, sizeof(*ep->peer_qpn));
	pthread_mutex_init(&ep->lock, NULL);
	size_t plen = strnlen(peer, sizeof(ep->peer_path) - 1);

	memcpy(ep->peer_path, peer, plen); /* calloc'd: NUL-terminated */
	ep->path_hash = path_hash(ep->peer_path);
	atomic_store(&ep->status, QPHS_EP_INITIALIZING);
	qphs__ep_timings_clear(ep);
	double t0 = qphs__mono_ms();

	if (!ep->qp || !ep->peer_qpn || (*rc = create_qps(ep))) {
		if (ep->qp && ep->peer_qpn)
			snprintf(ctx->errstr, sizeof(ctx->errstr), "%s",
				 qphs__ep_text(ep, QPHS__EP_ERRSTR));
		ep_free(ep);
		return NULL;
	}
	ep->create_ms = qphs__mono_ms() - t0;
	atomic_store(&ep->status, QPHS_EP_UNCONNECTED);
	*rc = 0;
	return ep;
}

static struct qphs_endpoint *find_ref(struct qphs_context *ctx, const char *peer)
{
	struct qphs_endpoint *ep;

	pthread_mutex_lock(&ctx->ep_lock);
	if ((ep = index_find(ctx, peer)))
		ep->refs++;
	pthread_mutex_unlock(&ctx->ep_lock);
	return ep;
}

int qphs__ep_get(struct qphs_context *ctx, const char *peer, int create,
		 struct qphs_endpoint **out)
{
	struct qphs_endpoint *ep;
	int rc = 0;

	*out = NULL;
	if ((ep = find_ref(ctx, peer)) || !create) {
		*out = ep;
		return ep ? 0 : QPHS_ERR_ENDPOINT;
	}
	/* QPs are created without the store lock (it is slow on rxe); a
	 * racing creator may win, and then ours is destroyed unused. */
	struct qphs_endpoint *fresh = ep_new(ctx, peer, &rc);

	if (!fresh)
		return rc;
	pthread_mutex_lock(&ctx->ep_lock);
	if ((ep = index_find(ctx, peer))) {
		ep->refs++;
	} else {
		struct qphs_endpoint **b = bucket(ctx, fresh->path_hash);

		ep = fresh;
		fresh = NULL;
		ep->refs = 2; /* the store's and the caller's */
		ep->next = ctx->eps;
		ctx->eps = ep;
		ep->hnext = *b;
		*b = ep;
	}
	pthread_mutex_unlock(&ctx->ep_lock);
	if (fresh)
		ep_free_unused(fresh);
	*out = ep;
	return 0;
}

void qphs_endpoint_put(struct qphs_endpoint *ep)
{
	struct qphs_context *ctx;
	int last;

	if (!ep)
		return;
	ctx = ep->ctx;
	pthread_mutex_lock(&ctx->ep_lock);
	last = --ep->refs == 0;
	if (last && !ep->retired)
		index_del(ep);
	if (last)
		for (struct qphs_endpoint **pp = &ctx->eps; *pp; pp = &(*pp)->next)
			if (*pp == ep) {
				*pp = ep->next;
				break;
			}
	pthread_mutex_unlock(&ctx->ep_lock);
	if (last)
		ep_free(ep);
}

struct qphs_endpoint *qphs_context_endpoint(struct qphs_context *ctx, const char *peer)
{
	struct qphs_endpoint *ep;

	qphs__ep_get(ctx, peer, 0, &ep);
	return ep;
}

/* Retire (Mooncake's beginDestroy): out of the store, QPs flushed to ERR;
 * destroyed when the last reference goes.  The next connect builds anew. */
void qphs__ep_retire_locked(struct qphs_endpoint *ep, const char *why)
{
	int drop = 0;

	QPHS_INFO("[Handshake] Retiring endpoint instead of resetting it (triggered by: %s): %s",
		  why, ep->peer_path);
	atomic_store(&ep->status, QPHS_EP_DESTROYING);
	for (int i = 0; i < ep->nqp; i++)
		qphs__qp_to_err(ep->ctx, &ep->qp[i]);
	pthread_mutex_lock(&ep->ctx->ep_lock);
	if (!ep->retired) {
		ep->retired = 1;
		index_del(ep);
		drop = 1;
	}
	pthread_mutex_unlock(&ep->ctx->ep_lock);
	if (drop)
		qphs_endpoint_put(ep); /* the store's reference; the caller holds one */
}

/* Fresh QPs for a never-connected endpoint, per the reset policy. */
static int refresh_qps(struct qphs_endpoint *ep)
{
	if (ep->ctx->cfg->reset_policy == QPHS_RESET_REUSE) {
		for (int i = 0; i < ep->nqp; i++) {
			int skipped, rc = qphs__qp_to_reset(ep->ctx, &ep->qp[i], 0, &skipped);

			if (rc) {
				qphs__ep_set_err(ep, QPHS_ERR_MODIFY_QP,
						 "Failed to modify QP to RESET: %s", strerror(rc));
				return QPHS_ERR_MODIFY_QP;
			}
		}
		return 0;
	}
	if (destroy_qps(ep)) {
		qphs__ep_set_err(ep, QPHS_ERR_ENDPOINT, "ibv_destroy_qp failed during reconstruct");
		return QPHS_ERR_ENDPOINT;
	}
	return create_qps(ep);
}

int qphs__ep_reset_locked(struct qphs_endpoint *ep, const char *why)
{
	int rc;

	if (ep->has_connected) {
		qphs__ep_retire_locked(ep, why);
		return QPHS_ERR_RETIRED;
	}
	QPHS_DEBUG("[Handshake] Successfully reset pre-connected endpoint (triggered by: %s)", why);
	if (ep->rd_atom_taken)
		release_rd_atom(ep);
	memset(ep->peer_qpn, 0, (size_t)ep->nqp * sizeof(*ep->peer_qpn));
	if ((rc = refresh_qps(ep))) {
		qphs__ep_retire_locked(ep, "reset failed");
		return rc;
	}
	atomic_store(&ep->status, QPHS_EP_UNCONNECTED);
	return 0;
}

int qphs_endpoint_close(struct qphs_endpoint *ep)
{
	pthread_mutex_lock(&ep->lock);
	if (atomic_load(&ep->status) < QPHS_EP_DESTROYING)
		qphs__ep_retire_locked(ep, "closed by the caller");
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

int qphs_endpoint_disconnect(struct qphs_endpoint *ep)
{
	int rc = 0, st;

	pthread_mutex_lock(&ep->lock);
	st = atomic_load(&ep->status);
	if (st == QPHS_EP_DESTROYING || st == QPHS_EP_DESTROYED) {
		pthread_mutex_unlock(&ep->lock);
		return QPHS_ERR_RETIRED;
	}
	ep->has_connected = 0;
	if (ep->rd_atom_taken)
		release_rd_atom(ep);
	memset(ep->peer_qpn, 0, (size_t)ep->nqp * sizeof(*ep->peer_qpn));
	if ((rc = refresh_qps(ep)))
		qphs__ep_retire_locked(ep, "disconnect failed");
	else
		atomic_store(&ep->status, QPHS_EP_UNCONNECTED);
	pthread_mutex_unlock(&ep->lock);
	return rc;
}

int qphs_context_endpoints(struct qphs_context *ctx, struct qphs_endpoint **out, int max)
{
	int n = 0;

	pthread_mutex_lock(&ctx->ep_lock);
	for (struct qphs_endpoint *ep = ctx->eps; ep; ep = ep->next, n++) {
		if (n < max) {
			ep->refs++;
			out[n] = ep;
		}
	}
	pthread_mutex_unlock(&ctx->ep_lock);
	return n;
}
