/*
 * probe_int.h — the probe's two sides and the QP steps the probes are made
 * of (probe_env.c), shared with the probes themselves (probe.c).
 *
 * Each step returns 0 or a positive errno, as the verbs ops do.  Every QP
 * of the probed side goes through its ops table (a quirk profile applies);
 * the peer side always runs the real driver.
 */
#ifndef QPHS__PROBE_INT_H
#define QPHS__PROBE_INT_H

#include "qphs/probe.h"
#include "rdma/verbs.h"

#define QPHS__PROBE_BUF 4096

struct qphs__side {
	char dev[QPHS_PROBE_DEV_LEN];
	struct ibv_context *ib;
	struct qphs__verbs v;
	int verbs_ready;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	struct ibv_port_attr pa;
	struct ibv_device_attr da;   /* as the ops report it (a quirk may lower caps) */
};

struct qphs__probe_env {
	const struct qphs_probe_opts *o;
	struct qphs__side loc, peer;
	uint64_t next_wr_id;
};

/* Opens both sides (peer shares nothing with loc, even on the same device).
 * Returns 0 or a negative table code with the reason in err. */
int qphs__probe_env_open(struct qphs__probe_env *e, const struct qphs_probe_opts *o, char *err,
			 size_t errlen);
void qphs__probe_env_close(struct qphs__probe_env *e);

/* QP steps.  The *_attr functions build what a real setup with the default
 * configuration sends (qpattr.c) and let the caller change it
 * through attr and mask before the call. */
int qphs__pqp_create(struct qphs__side *s, struct qphs__qp *qp);
void qphs__pqp_destroy(struct qphs__side *s, struct qphs__qp *qp);
int qphs__pqp_modify(struct qphs__side *s, struct qphs__qp *qp, struct ibv_qp_attr *a, int mask);
int qphs__pqp_state(struct qphs__side *s, struct qphs__qp *qp);
void qphs__pqp_init_attr(const struct qphs__side *s, struct ibv_qp_attr *a, int *mask);
void qphs__pqp_rtr_attr(const struct qphs__side *s, const struct qphs__side *to, uint32_t qpn,
			struct ibv_qp_attr *a, int *mask);
void qphs__pqp_rts_attr(const struct qphs__side *s, struct ibv_qp_attr *a, int *mask,
			int timeout, int retry_cnt);
/* RESET -> INIT -> RTR -> RTS towards qpn on side `to`.  *step (may be
 * NULL) names the step that failed. */
int qphs__pqp_connect(struct qphs__side *s, struct qphs__qp *qp, const struct qphs__side *to,
		      uint32_t qpn, int timeout, int retry_cnt, const char **step);
/* Posts one signalled 64-byte WRITE into to's buffer and waits for its
 * completion until deadline_ms.  Writes the status (or "none within N ms")
 * into status; returns 0 when the post worked, else the post's errno. */
int qphs__pqp_write_wait(struct qphs__probe_env *e, struct qphs__side *s, struct qphs__qp *qp,
			 const struct qphs__side *to, char *status, size_t len, double *ms);

/* Rows (probe_qp.c).  begin names r and marks it run; result records rc,
 * its errno name and the QP's state read back now; modify times one
 * modify_qp into r; fresh_qp and setup_init make a QP and move it to INIT,
 * writing a failure into r and returning 0 (the probe then stops); skip
 * marks r not run, with why. */
struct qphs_probe_row *qphs__prow_begin(struct qphs_probe_row *r, const char *name);
void qphs__prow_result(struct qphs__side *s, struct qphs__qp *qp, struct qphs_probe_row *r,
		       int rc);
void qphs__prow_modify(struct qphs__side *s, struct qphs__qp *qp, struct ibv_qp_attr *a,
		       int mask, struct qphs_probe_row *r);
int qphs__prow_fresh_qp(struct qphs__probe_env *e, struct qphs__qp *qp,
			struct qphs_probe_row *r);
int qphs__prow_setup_init(struct qphs__probe_env *e, struct qphs__qp *qp,
			  struct qphs_probe_row *r);
void qphs__prow_skip(struct qphs_probe_row *r, const char *why);

/* The probes that need a second QP or a connected one (probe_wire.c); each
 * fills its rows and returns how many. */
size_t qphs__probe_unknown_qpn7(struct qphs__probe_env *e, struct qphs_probe_row *r);
size_t qphs__probe_unknown_qpn6(struct qphs__probe_env *e, struct qphs_probe_row *r);
size_t qphs__probe_reuse(struct qphs__probe_env *e, struct qphs_probe_row *r);
size_t qphs__probe_rd_atomic_16(struct qphs__probe_env *e, struct qphs_probe_row *r);
size_t qphs__probe_rts_rd_over(struct qphs__probe_env *e, struct qphs_probe_row *r);
size_t qphs__probe_err_reset(struct qphs__probe_env *e, struct qphs_probe_row *r);


#endif
