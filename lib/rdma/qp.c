/*
 * The four transitions of Mooncake's RdmaEndPoint::doSetupConnection, one
 * small function each: the attributes and masks come from qpattr.c (shared
 * with the probes), the inputs from the context's configuration and the
 * peer.  Each returns 0 or a positive errno; the caller words the failure.
 */
#include <string.h>

#include "qpattr.h"
#include "rdma_int.h"

int qphs__qp_create(struct qphs_context *ctx, struct qphs__qp *qp)
{
	const struct qphs_config *c = ctx->cfg;
	struct ibv_qp_init_attr init = {
		.send_cq = ctx->cq,
		.recv_cq = ctx->cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = (uint32_t)c->max_wr,
			.max_recv_wr = (uint32_t)c->max_wr,
			.max_send_sge = (uint32_t)c->max_sge,
			.max_recv_sge = (uint32_t)c->max_sge,
			.max_inline_data = (uint32_t)c->max_inline,
		},
	};

	int rc = ctx->verbs.ops->create_qp(&ctx->verbs, ctx->pd, &init, qp);

	qp->known_reset = !rc; /* a QP is created in RESET */
	return rc;
}

int qphs__qp_destroy(struct qphs_context *ctx, struct qphs__qp *qp)
{
	int rc;

	if (!qp->qp)
		return 0;
	rc = ctx->verbs.ops->destroy_qp(&ctx->verbs, qp);
	if (!rc)
		qp->qp = NULL;
	return rc;
}

/* The state as the driver reports it, or -1. */
int qphs__qp_state(struct qphs_context *ctx, struct qphs__qp *qp)
{
	return qphs__verbs_qp_state(&ctx->verbs, qp);
}

/* One modify; whatever it was, the state is no longer known to be RESET
 * unless it was a successful ->RESET. */
static int modify(struct qphs_context *ctx, struct qphs__qp *qp, struct ibv_qp_attr *attr,
		  int mask)
{
	int rc = ctx->verbs.ops->modify_qp(&ctx->verbs, qp, attr, mask);

	qp->known_reset = !rc && attr->qp_state == IBV_QPS_RESET;
	return rc;
}

/* -> RESET.  Skipped when the QP is already in RESET unless strict: some
 * drivers (E810) break on RESET -> RESET.  A QP we created and never
 * modified is known to be in RESET: no ibv_query_qp for it (one system
 * call per QP less on the critical path). */
int qphs__qp_to_reset(struct qphs_context *ctx, struct qphs__qp *qp, int strict, int *skipped)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_RESET};

	*skipped = 0;
	if (!strict && (qp->known_reset || qphs__qp_state(ctx, qp) == IBV_QPS_RESET)) {
		*skipped = 1;
		return 0;
	}
	return modify(ctx, qp, &attr, IBV_QP_STATE);
}

/* The parameters this context's configuration decides. */
static void params(const struct qphs_context *ctx, struct qphs__qp_params *q)
{
	qphs__qp_params_config(q, ctx->cfg, ctx->port);
}

int qphs__qp_to_init(struct qphs_context *ctx, struct qphs__qp *qp)
{
	struct qphs__qp_params q;
	struct ibv_qp_attr attr;
	int mask;

	params(ctx, &q);
	qphs__qpattr_init(&q, &attr, &mask);
	return modify(ctx, qp, &attr, mask);
}

int qphs__qp_to_rtr(struct qphs_context *ctx, struct qphs__qp *qp,
		    const struct qphs__rtr_params *p)
{
	struct qphs__qp_params q;
	struct ibv_qp_attr attr;
	int mask;

	params(ctx, &q);
	q.path_mtu = p->path_mtu;
	q.dgid = p->dgid;
	q.sgid_index = p->sgid_index;
	q.dlid = p->dlid;
	q.dest_qpn = p->dest_qpn;
	q.dest_rd_atomic = p->rd_atomic;
	qphs__qpattr_rtr(&q, &attr, &mask);
	return modify(ctx, qp, &attr, mask);
}

/* Nothing goes on the wire between RTR and RTS: a local change. */
int qphs__qp_to_rts(struct qphs_context *ctx, struct qphs__qp *qp, int rd_atomic)
{
	struct qphs__qp_params q;
	struct ibv_qp_attr attr;
	int mask, rc;

	params(ctx, &q);
	q.rd_atomic = rd_atomic;
	qphs__qpattr_rts(&q, &attr, &mask);
	rc = modify(ctx, qp, &attr, mask);
	if (!rc)
		qp->reached_rts = 1;
	return rc;
}

/* Retirement flushes outstanding work (Mooncake's beginDestroy). */
int qphs__qp_to_err(struct qphs_context *ctx, struct qphs__qp *qp)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};

	if (!qp->qp)
		return 0;
	return modify(ctx, qp, &attr, IBV_QP_STATE);
}
