/*
 * rdma_int.h — the structs behind the handles of qphs/rdma.h, shared by
 * context.c, qp.c, endpoint.c, passive.c, datapath.c, diag.c and host.c.
 *
 * Locks, outermost first: rdma->lock (device list), ctx->ep_lock (endpoint
 * list and reference counts), ep->lock (one endpoint's QPs and state).
 * ep->lock is never held across a network request.
 */
#ifndef QPHS__RDMA_INT_H
#define QPHS__RDMA_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "qphs/config.h"
#include "qphs/rdma.h"
#include "verbs.h"

#define QPHS__MAX_CTX 16
#define QPHS__MAX_WORKERS 64
#define QPHS__PATH_LEN 300
#define QPHS__TEXT_LEN 640
#define QPHS__READY_ACK_TIMEOUT_MS 10000

struct qphs__job;

struct qphs_rdma {
	struct qphs_config cfg;
	char server[256];
	pthread_mutex_t lock;
	struct qphs_context *ctx[QPHS__MAX_CTX];
	int nctx;
	char errstr[QPHS__TEXT_LEN];
	/* The passive side's last rejection (reply_msg sent), under lock. */
	uint64_t n_rejections;
	char last_rejection[QPHS__TEXT_LEN];
	/* Worker pool: passive setups and metadata requests. */
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct qphs__job *qhead, *qtail;
	int stopping;
	pthread_t workers[QPHS__MAX_WORKERS];
	int nworkers;
	/* The ready-ACK lane (under qlock): an ACK only flips a state, so it
	 * must not wait behind setups that create and transition QPs. */
	pthread_cond_t ack_cond;
	struct qphs__job *ack_head, *ack_tail;
	pthread_t ack_thread;
	int ack_started;
};

struct qphs_context {
	struct qphs_rdma *rdma;
	const struct qphs_config *cfg;     /* rdma->cfg */
	char device[64];
	char nic_path[QPHS__PATH_LEN];
	struct ibv_context *ib;
	struct qphs__verbs verbs;
	struct ibv_device_attr dev_attr;
	uint8_t port;
	uint16_t lid;
	int active_mtu_at_open;            /* bytes */
	int gid_index;
	union ibv_gid gid;
	char gid_str[48];
	char gid_reason[256];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	/* The check region peers write into (qphs_endpoint_check_data). */
	uint8_t *region;
	struct ibv_mr *region_mr;
	pthread_mutex_t check_lock;        /* one data check at a time: one CQ */
	/* Endpoints, retired ones included until their last reference goes. */
	pthread_mutex_t ep_lock;
	struct qphs_endpoint *eps;
	int rd_atom_used;                  /* responder resources we hold */
	/* Lab hooks. */
	pthread_mutex_t hook_lock;
	struct qphs_rdma_hooks hooks;
	char hook_gid[64];
	char hook_server[256];
	/* Async events (events.c). */
	pthread_t async_thread;
	int async_started;
	int stop_pipe[2];
	atomic_int failed;
	pthread_mutex_t event_lock;        /* last_event, event_count */
	char last_event[64];
	uint32_t event_count[QPHS_EVENT_TYPES];
	char errstr[QPHS__TEXT_LEN];
	/* QP pool (qppool.c): RESET QPs created ahead of need. */
	pthread_mutex_t pool_lock;
	pthread_cond_t pool_cond;          /* filler: below size or stopping */
	struct qphs__qp *pool;             /* cfg->qp_pool_size slots */
	int pool_n, pool_stop, pool_inited, pool_started;
	int pool_filling;                  /* the filler is refilling */
	pthread_t pool_thread;
	uint64_t pool_hits, pool_misses;   /* under pool_lock */
};

struct qphs_endpoint {
	struct qphs_context *ctx;
	struct qphs_endpoint *next;        /* ctx->eps, under ctx->ep_lock */
	int refs;                          /* under ctx->ep_lock */
	int retired;                       /* under ctx->ep_lock */
	char peer_path[QPHS__PATH_LEN];
	pthread_mutex_t lock;
	atomic_int status;                 /* enum qphs_ep_status */
	int has_connected;
	int nqp;
	struct qphs__qp *qp;
	uint32_t *peer_qpn;                /* valid when status is 3 or 4 */
	int path_mtu;                      /* bytes */
	int rd_atomic;
	int rd_atom_taken;                 /* counted in ctx->rd_atom_used */
	int peer_ready_ack;
	struct timespec ack_deadline;      /* status 3 on the passive side */
	uint64_t tr_ok[QPHS_TR_COUNT], tr_failed[QPHS_TR_COUNT];
	uint64_t reset_skipped, connect_attempts, retired_retries;
	double rpc_ms, setup_ms, ack_ms, passive_setup_ms;
	/* The last setup, ms: the Connection request's TCP connect, and each
	 * transition summed over the QPs (failed call included); < 0 = did not
	 * happen.  Reset together by qphs__ep_timings_clear. */
	double tcp_ms, tr_ms[QPHS_TR_COUNT];
	/* More phases of the last setup (the benchmark reads them): QPs taken
	 * or created, the ready ACK's TCP connect, and on the passive side the
	 * wait for a worker. */
	double create_ms, ack_connect_ms, queue_ms;
	int last_error;
	char errstr[QPHS__TEXT_LEN];
	char reply_sent[512];
	char reply_received[512];
};

/* Marks every per-setup timing "did not happen".  ep->lock held (or ep
 * not shared yet). */
void qphs__ep_timings_clear(struct qphs_endpoint *ep);

/* context.c */
int qphs__context_open(struct qphs_rdma *r, const char *device,
		       struct qphs_context **out);
void qphs__context_close(struct qphs_context *ctx);
int qphs__context_active_mtu(struct qphs_context *ctx, int *bytes, int *state);
void qphs__context_set_err(struct qphs_context *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* events.c: the async-event thread of a context. */
int qphs__events_start(struct qphs_context *ctx);
void qphs__events_stop(struct qphs_context *ctx);

/* qp.c: the four transitions; each returns 0 or a positive errno. */
struct qphs__rtr_params {
	union ibv_gid dgid;
	uint16_t dlid;
	uint32_t dest_qpn;
	enum ibv_mtu path_mtu;
	int sgid_index;
	int rd_atomic;
};
int qphs__qp_create(struct qphs_context *ctx, struct qphs__qp *qp);
int qphs__qp_destroy(struct qphs_context *ctx, struct qphs__qp *qp);
int qphs__qp_state(struct qphs_context *ctx, struct qphs__qp *qp);
int qphs__qp_to_reset(struct qphs_context *ctx, struct qphs__qp *qp, int strict,
		      int *skipped);
int qphs__qp_to_init(struct qphs_context *ctx, struct qphs__qp *qp);
int qphs__qp_to_rtr(struct qphs_context *ctx, struct qphs__qp *qp,
		    const struct qphs__rtr_params *p);
int qphs__qp_to_rts(struct qphs_context *ctx, struct qphs__qp *qp, int rd_atomic);
int qphs__qp_to_err(struct qphs_context *ctx, struct qphs__qp *qp);

/* qppool.c: see there.  take: n QPs into qps (zeroed by the caller), as
 * many as the pool holds, the rest created now; on a failed create returns
 * its errno and its index in *failed_at (the slots before it are set, the
 * caller destroys them).  give: back to the pool when fresh (its number
 * never went on the wire), else destroyed.  (Refill and wait:
 * qphs_context_fill_qp_pool.) */
int qphs__qp_pool_start(struct qphs_context *ctx);
void qphs__qp_pool_stop(struct qphs_context *ctx);
int qphs__qp_take(struct qphs_context *ctx, struct qphs__qp *qps, int n, int *failed_at);
int qphs__qp_give(struct qphs_context *ctx, struct qphs__qp *qp, int fresh);

/* diag.c: appends " [finding]" to text for a failed step (QPHS_TR_*). */
void qphs__diag(struct qphs_context *ctx, int step, const struct qphs__qp *qp,
		const struct qphs__rtr_params *p, int init_rd_atomic, char *text, size_t len);

/* endpoint.c */
int qphs__ep_get(struct qphs_context *ctx, const char *peer, int create,
		 struct qphs_endpoint **out);
void qphs__ep_retire_locked(struct qphs_endpoint *ep, const char *why);
int qphs__ep_reset_locked(struct qphs_endpoint *ep, const char *why);
int qphs__ep_setup_locked(struct qphs_endpoint *ep, const uint8_t peer_gid[16],
			  uint16_t peer_lid, const uint32_t *peer_qpn, int peer_mtu);
void qphs__ep_set_err(struct qphs_endpoint *ep, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int qphs__ep_qpns_equal(const struct qphs_endpoint *ep, const uint32_t *q, size_t n);
void qphs__ep_expire_acks(struct qphs_context *ctx);
/* Status 3 is bounded: set before entering it.  The passive side waits
 * 10 s for the peer's ACK (Mooncake); the active side, sending its own
 * ACK, is bounded by the client's connect and reply deadlines instead. */
void qphs__ep_ack_deadline(struct qphs_endpoint *ep, int active);
void qphs__ep_destroy_all(struct qphs_context *ctx);

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


#endif
