/*
 * verbs.h — the one door to libibverbs.
 *
 * Every ibv_* call of the library goes through an ops table.  The default
 * table is the real libibverbs; a quirk profile wraps it to imitate a driver
 * we cannot run here (see verbs.c for each profile's source and exactly what
 * it fakes).  The table also normalises verbs' two error styles (NULL + errno,
 * positive return): every op returns 0 or a positive errno value.
 */
#ifndef QPHS__VERBS_H
#define QPHS__VERBS_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>

/* One QP as the library holds it.  flags carry per-QP quirk state. */
struct qphs__qp {
	struct ibv_qp *qp;
	unsigned flags;           /* QPHS__QPF_* (quirk bookkeeping) */
	int rd_atom_held;         /* responder resources taken (ionic budget) */
	int reached_rts;          /* reached RTS since created (diag) */
	int known_reset;          /* in RESET for sure: just created, or our
				   * last modify was a successful ->RESET */
};

#define QPHS__QPF_RESET_RESET 0x1u /* saw RESET->RESET (e810) */
#define QPHS__QPF_REACHED_RTS 0x2u /* reached RTS once (erdma) */

struct qphs__verbs;

struct qphs__verbs_ops {
	const char *name;
	int (*query_device)(struct qphs__verbs *v, struct ibv_context *c,
			    struct ibv_device_attr *a);
	int (*query_port)(struct qphs__verbs *v, struct ibv_context *c, uint8_t port,
			  struct ibv_port_attr *a);
	int (*create_qp)(struct qphs__verbs *v, struct ibv_pd *pd,
			 struct ibv_qp_init_attr *init, struct qphs__qp *out);
	int (*destroy_qp)(struct qphs__verbs *v, struct qphs__qp *qp);
	int (*modify_qp)(struct qphs__verbs *v, struct qphs__qp *qp,
			 struct ibv_qp_attr *attr, int mask);
	int (*query_qp)(struct qphs__verbs *v, struct qphs__qp *qp,
			struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init);
};

/* A verbs instance: one per context (quirk state such as the ionic budget is
 * device-wide). */
struct qphs__verbs {
	const struct qphs__verbs_ops *ops;
	const struct qphs__verbs_ops *real; /* what a quirk wraps */
	struct ibv_context *ctx;
	uint8_t port;
	pthread_mutex_t lock;     /* quirk bookkeeping */
	int rd_atom_budget;       /* ionic: responder resources left */
};

/* Selects the ops for profile ("" or NULL = the real driver).  Returns 0 or
 * QPHS_ERR_INVALID_ARGUMENT for an unknown profile name. */
int qphs__verbs_init(struct qphs__verbs *v, const char *profile,
		     struct ibv_context *ctx, uint8_t port);
void qphs__verbs_fini(struct qphs__verbs *v);

/* Passthroughs for calls no quirk touches (still the only ibv_* callers). */
/* Opens device name into *out.  Returns 0, QPHS_ERR_DEVICE_NOT_FOUND (no
 * device of that name) or QPHS_ERR_CONTEXT (the device list cannot be
 * read, or the device cannot be opened), with the text in err. */
int qphs__verbs_open(const char *name, struct ibv_context **out, char *err, size_t errlen);
/* The names of up to max devices into names[i] (64 bytes each); returns how
 * many were written, or -errno when the list cannot be read. */
int qphs__verbs_device_names(char (*names)[64], int max);
/* The vendor id device name reports (opens and closes it); 0 or an errno. */
int qphs__verbs_device_vendor(const char *name, uint32_t *vendor_id);
int qphs__verbs_close(struct ibv_context *c);
int qphs__verbs_query_gid(struct ibv_context *c, uint8_t port, int index,
			  union ibv_gid *gid, int *gid_type);
int qphs__verbs_gid_table_len(struct ibv_context *c, uint8_t port, int *len);
struct ibv_pd *qphs__verbs_alloc_pd(struct ibv_context *c);
int qphs__verbs_dealloc_pd(struct ibv_pd *pd);
struct ibv_cq *qphs__verbs_create_cq(struct ibv_context *c, int cqe);
int qphs__verbs_destroy_cq(struct ibv_cq *cq);
struct ibv_mr *qphs__verbs_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access);
int qphs__verbs_dereg_mr(struct ibv_mr *mr);
int qphs__verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr);
int qphs__verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int qphs__verbs_get_async_event(struct ibv_context *c, struct ibv_async_event *ev);
void qphs__verbs_ack_async_event(struct ibv_async_event *ev);
const char *qphs__verbs_wc_status_name(enum ibv_wc_status s);
const char *qphs__verbs_port_state_name(int state);
const char *qphs__verbs_event_name(enum ibv_event_type t);
const char *qphs__verbs_qp_state_name(int state);
/* qp's state as the driver reports it through v's ops (a quirk applies),
 * or -1: no QP, or the query failed. */
int qphs__verbs_qp_state(struct qphs__verbs *v, struct qphs__qp *qp);
int qphs__verbs_mtu_bytes(enum ibv_mtu m);
enum ibv_mtu qphs__verbs_mtu_enum(int bytes); /* 0 for a bad size */

#endif
