/*
 * rdma_int.h — the device context behind qphs/rdma.h's qphs_context, and
 * what the rdma layer does with it: open and close (context.c), async
 * events (events.c), the four QP transitions (qp.c), the QP pool
 * (qppool.c) and the diagnosis of a failed transition (diag.c).  The
 * endpoints and the host object that own a context are the setup layer's
 * (setup/setup_int.h); this layer never looks inside them.
 *
 * Which lock guards which field of a context, and the order locks nest in:
 * the list at the top of setup/setup_int.h, the one place for every lock
 * of lib/rdma and lib/setup.
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

#define QPHS__PATH_LEN 300
#define QPHS__EP_BUCKETS 256 /* a power of two */
#define QPHS__TEXT_LEN 640

struct qphs_rdma;
struct qphs_endpoint;

/* One asynchronous event, read and acknowledged (events.c). */
struct qphs__async_event {
	enum ibv_event_type type;
	uint32_t qpn;             /* QP events only */
	int is_qp;
	char name[64];
};

struct qphs_context {
	struct qphs_rdma *rdma;            /* the owner (setup/host.c); opaque here */
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
	/* The owner's check region (qphs_endpoint_check_data), borrowed: one
	 * buffer registered on every device, so a peer may reach it through
	 * any of them (one rkey per device in the segment descriptor). */
	uint8_t *region;
	size_t region_len;
	struct ibv_mr *region_mr;
	pthread_mutex_t check_lock;        /* one data check at a time: one CQ */
	/* Endpoints, retired ones included until their last reference goes
	 * (the setup layer's: setup/setup_int.h). */
	pthread_mutex_t ep_lock;
	struct qphs_endpoint *eps;
	/* The endpoints not retired, by peer nic path (setup/endpoint.c):
	 * a server's context holds one per peer, and every request and ACK
	 * looks one up. */
	struct qphs_endpoint *ep_index[QPHS__EP_BUCKETS];
	int rd_atom_used;                  /* responder resources we hold */
	/* Lab hooks. */
	pthread_mutex_t hook_lock;
	struct qphs_rdma_hooks hooks;
	char hook_gid[64];
	char hook_server[256];
	/* Async events (events.c).  on_event: the owner's part of an event,
	 * called on the event thread after the event was acknowledged. */
	void (*on_event)(struct qphs_context *ctx, const struct qphs__async_event *e);
	pthread_t async_thread;
	int async_started;
	int stop_pipe[2];
	atomic_int failed;
	pthread_mutex_t event_lock;
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
	uint64_t pool_hits, pool_misses;
};

/* context.c.  open: what the owner gives a new context; cfg and server are
 * borrowed for the context's life, on_event may be NULL.  *out is set even
 * on failure (its errstr says why; close it).  close: stops the event
 * thread first; the owner must have destroyed its endpoints after
 * qphs__events_stop. */
struct qphs__ctx_owner {
	struct qphs_rdma *rdma;
	const struct qphs_config *cfg;
	const char *server;
	uint8_t *region;               /* registered, never freed, by the context */
	size_t region_len;
	void (*on_event)(struct qphs_context *ctx, const struct qphs__async_event *e);
};
int qphs__context_open(const struct qphs__ctx_owner *owner, const char *device,
		       struct qphs_context **out);
void qphs__context_close(struct qphs_context *ctx);
int qphs__context_active_mtu(struct qphs_context *ctx, int *bytes, int *state);
void qphs__context_set_err(struct qphs_context *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* events.c: the async-event thread of a context.  stop may be called
 * again (it then does nothing). */
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

#endif
