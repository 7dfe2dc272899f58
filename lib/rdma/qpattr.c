/*
 * The attributes of the transitions of Mooncake's rdma_endpoint.cpp
 * RdmaEndPoint::doSetupConnection, as pure builders: see qpattr.h.
 */
#include <string.h>

#include "qpattr.h"

/* RTR: hop limit and RNR NAK timer are fixed (Mooncake's values). */
#define RTR_HOP_LIMIT 16
#define RTR_MIN_RNR_TIMER 12

void qphs__qp_params_config(struct qphs__qp_params *q, const struct qphs_config *c,
			    uint8_t port)
{
	memset(q, 0, sizeof(*q));
	q->port = port;
	q->pkey_index = (uint16_t)c->pkey_index;
	q->traffic_class = (uint8_t)c->ib_tc;
	q->sl = (uint8_t)c->ib_sl;
	q->dest_rd_atomic = QPHS__RD_ATOMIC;
	q->timeout = (uint8_t)c->qp_timeout;
	q->retry_cnt = (uint8_t)c->qp_retry_cnt;
	q->rnr_retry = (uint8_t)c->qp_rnr_retry;
	q->rd_atomic = QPHS__RD_ATOMIC;
}

void qphs__qpattr_init(const struct qphs__qp_params *q, struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->port_num = q->port;
	a->pkey_index = q->pkey_index;
	a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
}

/* Always a GRH (is_global): RoCE has no LID routing. */
void qphs__qpattr_rtr(const struct qphs__qp_params *q, struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = q->path_mtu;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = q->dgid;
	a->ah_attr.grh.sgid_index = (uint8_t)q->sgid_index;
	a->ah_attr.grh.hop_limit = RTR_HOP_LIMIT;
	a->ah_attr.grh.traffic_class = q->traffic_class;
	a->ah_attr.dlid = q->dlid;
	a->ah_attr.sl = q->sl;
	a->ah_attr.port_num = q->port;
	a->dest_qp_num = q->dest_qpn;
	a->rq_psn = 0;
	a->max_dest_rd_atomic = (uint8_t)q->dest_rd_atomic;
	a->min_rnr_timer = RTR_MIN_RNR_TIMER;
	*mask = IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV |
		IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
}

void qphs__qpattr_rts(const struct qphs__qp_params *q, struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->timeout = q->timeout;
	a->retry_cnt = q->retry_cnt;
	a->rnr_retry = q->rnr_retry;
	a->sq_psn = 0;
	a->max_rd_atomic = (uint8_t)q->rd_atomic;
	*mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
}
