/*
 * The four transitions of SPEC §5, one small function each, with the
 * attributes and mask Mooncake uses (rdma_endpoint.cpp doSetupConnection).
 * Each returns 0 or a positive errno; the caller words the failure.
 */
#include <string.h>

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
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!qp->qp || ctx->verbs.ops->query_qp(&ctx->verbs, qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return (int)a.qp_state;
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

int qphs__qp_to_init(struct qphs_context *ctx, struct qphs__qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = ctx->port,
		.pkey_index = (uint16_t)ctx->cfg->pkey_index,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
	};

	return modify(ctx, qp, &attr,
		      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int qphs__qp_to_rtr(struct qphs_context *ctx, struct qphs__qp *qp,
		    const struct qphs__rtr_params *p)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = p->path_mtu,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = p->dgid,
				.sgid_index = (uint8_t)p->sgid_index,
				.hop_limit = 16,
				.traffic_class = (uint8_t)ctx->cfg->ib_tc,
				.flow_label = 0,
			},
			.dlid = p->dlid,
			.sl = (uint8_t)ctx->cfg->ib_sl,
			.src_path_bits = 0,
			.static_rate = 0,
			.port_num = ctx->port,
		},
		.dest_qp_num = p->dest_qpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = (uint8_t)p->rd_atomic,
		.min_rnr_timer = 12,
	};

	return modify(ctx, qp, &attr,
		      IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
}

/* Nothing goes on the wire between RTR and RTS: a local change. */
int qphs__qp_to_rts(struct qphs_context *ctx, struct qphs__qp *qp, int rd_atomic)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.timeout = (uint8_t)ctx->cfg->qp_timeout,
		.retry_cnt = (uint8_t)ctx->cfg->qp_retry_cnt,
		.rnr_retry = (uint8_t)ctx->cfg->qp_rnr_retry,
		.sq_psn = 0,
		.max_rd_atomic = (uint8_t)rd_atomic,
	};

	int rc = modify(ctx, qp, &attr,
			IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);

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
