/*
 * setup_int.h — the host object and the endpoints behind qphs/rdma.h's
 * qphs_rdma and qphs_endpoint, shared by the setup layer: host.c (the
 * object, its devices and worker pool), endpoint.c, setup.c, connect.c,
 * passive.c, handshake.c, datapath.c, epinfo.c and epevents.c.
 *
 * Locks.  This is the one list of the locks of lib/rdma and lib/setup:
 * which lock guards which field, and the order they nest in.  A thread
 * holding a lock takes only locks listed below it; the leaves (every lock
 * after ep->lock) are never held while another lock of the list is taken.
 * No lock is held across a network request or a sleep, check_lock apart.
 *
 *   ctx->check_lock  one data-path check at a time per context (the checks
 *                    share its CQ), and ep->last_rkey; held for the whole
 *                    check, its Metadata requests included, so it is taken
 *                    with no lock held.
 *   ep->lock         one endpoint: every field of struct qphs_endpoint from
 *                    has_connected on (QPs, peer QPNs, counters, timings,
 *                    errors, reply texts), the verbs calls on its QPs, and
 *                    every change of status (status is atomic so that it
 *                    can be read without the lock).
 *   ctx->ep_lock     (leaf) ctx->eps, ctx->ep_index, each endpoint's next,
 *                    hnext, refs and retired, ctx->rd_atom_used.  Taken
 *                    under ep->lock; code that visits endpoints takes
 *                    references under it, drops it, then locks each
 *                    endpoint in turn.
 *   r->lock          (leaf) r->ctx[], r->nctx, r->n_rejections,
 *                    r->last_rejection, each context's region_mr (swapped
 *                    by qphs_context_register_region).
 *   r->qlock         (leaf) the worker and ready-ACK queues (qhead, qtail,
 *                    ack_head, ack_tail), r->stopping; qcond and ack_cond.
 *   ctx->hook_lock   (leaf) ctx->hooks, hook_gid, hook_server.
 *   ctx->pool_lock   (leaf) the QP pool: pool[], pool_n, pool_stop,
 *                    pool_filling, pool_hits, pool_misses; pool_cond.
 *   ctx->event_lock  (leaf) ctx->last_event, ctx->event_count[].
 *   verbs.lock       (leaf) the quirk profiles' bookkeeping (rdma/verbs.c).
 *
 * No lock: what is set before a handle is shared and never changed after
 * (configs, names, nic paths, the device, port, LID, GID, PD, CQ, check
 * region's memory, thread handles, ep->ctx, ep->peer_path, ep->nqp); the atomics
 * (ep->status and ep->ack_deadline_ms, written under ep->lock; ctx->failed,
 * written by the event thread); and the errstr buffers (qphs_*_errstr: the
 * last error of a call on the handle.  Not locked: ctx->errstr is also
 * written by a worker whose passive setup cannot make an endpoint, so two
 * failures at once can mix their texts; only text, never state).  The
 * daemon's door lock (hs/daemon_int.h) is a leaf too: no lock of this list
 * is held while a request is replied to or closed.
 */
#ifndef QPHS__SETUP_INT_H
#define QPHS__SETUP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "qphs/config.h"
#include "qphs/rdma.h"
#include "rdma/rdma_int.h"

#define QPHS__MAX_CTX 16
#define QPHS__MAX_WORKERS 64
#define QPHS__READY_ACK_TIMEOUT_MS 10000

struct qphs__job;

struct qphs_rdma {
	struct qphs_config cfg;
	char server[256];
	pthread_mutex_t lock;
	struct qphs_context *ctx[QPHS__MAX_CTX];
	int nctx;
	char errstr[QPHS__TEXT_LEN];
	/* The check region (QPHS_CHECK_REGION_BYTES), registered on every
	 * context; it is the "cpu:0" buffer of our segment descriptor. */
	uint8_t *region;
	/* The passive side's last rejection (reply_msg sent). */
	uint64_t n_rejections;
	char last_rejection[QPHS__TEXT_LEN];
	/* Worker pool: passive setups and metadata requests. */
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct qphs__job *qhead, *qtail;
	int stopping;
	pthread_t workers[QPHS__MAX_WORKERS];
	int nworkers;
	/* The ready-ACK lane: an ACK only flips a state, so it
	 * must not wait behind setups that create and transition QPs. */
	pthread_cond_t ack_cond;
	struct qphs__job *ack_head, *ack_tail;
	pthread_t ack_thread;
	int ack_started;
};

/* An endpoint's texts.  Most endpoints never fail, warn or exchange a
 * reply_msg, so the block is allocated when the first text is written
 * (qphs__ep_set_text): kept inside the endpoint, its 2.3 KiB were three
 * quarters of it, zeroed and faulted in on every connection. */
enum { QPHS__EP_ERRSTR, QPHS__EP_WARNING, QPHS__EP_REPLY_SENT, QPHS__EP_REPLY_RECEIVED };
struct qphs__ep_texts {
	char errstr[QPHS__TEXT_LEN];
	char warning[QPHS__TEXT_LEN];      /* the last warning logged for it */
	char reply_sent[512];
	char reply_received[512];
};

struct qphs_endpoint {
	struct qphs_context *ctx;
	struct qphs_endpoint *next;        /* ctx->eps */
	struct qphs_endpoint *hnext;       /* ctx->ep_index, while not retired */
	uint32_t path_hash;                /* of peer_path */
	int refs;
	int retired;
	char peer_path[QPHS__PATH_LEN];
	pthread_mutex_t lock;
	atomic_int status;                 /* enum qphs_ep_status */
	int has_connected;
	/* The port's active MTU (bytes) as read for the setup under way, 0
	 * before the read: with mtu_reread, one port query serves both the
	 * MTU this side advertises and its RTR's path MTU (qphs__ep_mtu). */
	int mtu_read;
	int nqp;
	struct qphs__qp *qp;
	uint32_t *peer_qpn;                /* valid when status is 3 or 4 */
	int path_mtu;                      /* bytes */
	int peer_path_mtu;                 /* the peer's qphs_path_mtu, 0 = none sent */
	int rd_atomic;
	int rd_atom_taken;                 /* counted in ctx->rd_atom_used */
	int peer_ready_ack;
	atomic_llong ack_deadline_ms;      /* status 3 (monotonic ms), set under
					    * lock, read by the expiry scan */
	uint64_t tr_ok[QPHS_TR_COUNT], tr_failed[QPHS_TR_COUNT];
	uint64_t reset_skipped, connect_attempts, retired_retries;
	double rpc_ms, setup_ms, ack_ms, passive_setup_ms;
	/* The last setup, ms: the Connection request's TCP connect, and each
	 * transition summed over the QPs (failed call included); < 0 = did not
	 * happen.  Reset together by qphs__ep_timings_clear. */
	double tcp_ms, tr_ms[QPHS_TR_COUNT];
	/* The same phases dated (qphs__mono_ms), for timelines; start < 0 = did
	 * not happen.  Transitions: first QP's start to last QP's end. */
	double ph_start[QPHS_PHASE_COUNT], ph_end[QPHS_PHASE_COUNT];
	/* More phases of the last setup (the benchmark reads them): QPs taken
	 * or created, the ready ACK's TCP connect, and on the passive side the
	 * wait for a worker. */
	double create_ms, ack_connect_ms, queue_ms;
	int last_error;
	struct qphs__ep_texts *tx;         /* NULL until a text is written */
	uint32_t last_rkey;                /* the rkey of the last check that
					    * found a target (check_lock) */
};

/* Marks every per-setup timing "did not happen".  ep->lock held (or ep
 * not shared yet). */
void qphs__ep_timings_clear(struct qphs_endpoint *ep);
/* Dates phase (QPHS_PHASE_...) from start to end (qphs__mono_ms), under
 * ep->lock.  A phase dated again keeps its first start (several QPs). */
void qphs__ep_phase(struct qphs_endpoint *ep, int phase, double start, double end);

/* endpoint.c */
int qphs__ep_get(struct qphs_context *ctx, const char *peer, int create,
		 struct qphs_endpoint **out);
void qphs__ep_retire_locked(struct qphs_endpoint *ep, const char *why);
int qphs__ep_reset_locked(struct qphs_endpoint *ep, const char *why);
int qphs__ep_setup_locked(struct qphs_endpoint *ep, const uint8_t peer_gid[16],
			  uint16_t peer_lid, const uint32_t *peer_qpn, int peer_mtu);
/* The active MTU for ep's setup under way, bytes (ep->lock held): read
 * once per setup when mtu_reread is on (the caller clears ep->mtu_read
 * when a setup starts), else the one read when the context was opened. */
int qphs__ep_mtu(struct qphs_endpoint *ep);
void qphs__ep_set_err(struct qphs_endpoint *ep, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Writes text `which` (QPHS__EP_...), ep->lock held or ep not shared yet.
 * Without memory for the block the text is dropped (the error code and
 * the log line stay). */
void qphs__ep_set_text(struct qphs_endpoint *ep, int which, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Text `which`, "" when none was written (same locking). */
const char *qphs__ep_text(const struct qphs_endpoint *ep, int which);
int qphs__ep_qpns_equal(const struct qphs_endpoint *ep, const uint32_t *q, size_t n);
void qphs__ep_expire_acks(struct qphs_context *ctx);
/* Status 3 is bounded: set before entering it.  The passive side waits
 * 10 s for the peer's ACK (Mooncake); the active side, sending its own
 * ACK, is bounded by the client's connect and reply deadlines instead. */
void qphs__ep_ack_deadline(struct qphs_endpoint *ep, int active);
void qphs__ep_destroy_all(struct qphs_context *ctx);
/* The endpoint's own memory freed (its lock, QP and QPN arrays, texts and
 * itself), once its QPs are gone: the last step of every way to free one. */
void qphs__ep_free_memory(struct qphs_endpoint *ep);

/* handshake.c: the Connection bodies. */
struct qphs_hs_desc;
int qphs__hs_local_desc(struct qphs_endpoint *ep, struct qphs_hs_desc *d);

/* passive.c, run on workers. */
struct qphs_request;
void qphs__passive_connection(struct qphs_rdma *r, struct qphs_request *req,
			      double queued_ms);
/* A ready ACK answered on the daemon's loop thread without waiting for any
 * lock an endpoint's setup may hold.  Returns 1 when answered; 0 when the
 * endpoint's lock was busy: nothing was sent, the caller queues it. */
int qphs__passive_ack_now(struct qphs_rdma *r, struct qphs_request *req);
void qphs__passive_metadata(struct qphs_rdma *r, struct qphs_request *req);
struct qphs_context *qphs__rdma_find_ctx(struct qphs_rdma *r, const char *device);
struct qphs_context *qphs__rdma_find_ctx_locked(struct qphs_rdma *r, const char *device);


/* epevents.c: what an async event does to ctx's endpoints (the context's
 * on_event). */
void qphs__ep_on_event(struct qphs_context *ctx, const struct qphs__async_event *e);

#endif
