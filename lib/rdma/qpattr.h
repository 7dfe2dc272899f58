/*
 * qpattr.h — the attributes and masks of the INIT, RTR and RTS transitions
 * of Mooncake's RdmaEndPoint::doSetupConnection (rdma_endpoint.cpp), built
 * from their inputs alone.
 *
 * A real setup (qp.c) and `qplab quirks` (probe_qp.c) build every modify
 * from these, so a probe sends exactly what a setup sends, except the one
 * thing it changes on purpose.  Nothing here calls the driver.
 */
#ifndef QPHS__QPATTR_H
#define QPHS__QPATTR_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "qphs/config.h"

/* Mooncake's responder and initiator depth per QP before any clamping. */
#define QPHS__RD_ATOMIC 16

/* Everything the three transitions are built from. */
struct qphs__qp_params {
	/* INIT */
	uint8_t port;              /* MC_IB_PORT; also the RTR ah's port */
	uint16_t pkey_index;       /* MC_PKEY_INDEX */
	/* RTR: the path to the peer QP */
	enum ibv_mtu path_mtu;
	union ibv_gid dgid;        /* the peer's GID */
	int sgid_index;            /* the local GID index */
	uint16_t dlid;             /* the peer's LID */
	uint32_t dest_qpn;         /* the peer's QP number */
	uint8_t traffic_class;     /* MC_IB_TC */
	uint8_t sl;                /* MC_IB_SL */
	int dest_rd_atomic;        /* max_dest_rd_atomic: responder resources */
	/* RTS */
	uint8_t timeout;           /* ACK timeout exponent */
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	int rd_atomic;             /* max_rd_atomic: initiator depth */
};

/* Fills what the configuration decides (port given, as the context
 * resolved it), QPHS__RD_ATOMIC for both depths, and zeroes the path. */
void qphs__qp_params_config(struct qphs__qp_params *q, const struct qphs_config *c,
			    uint8_t port);

/* Each writes the whole of *a (everything it does not set is zero) and
 * the mask Mooncake passes with it. */
void qphs__qpattr_init(const struct qphs__qp_params *q, struct ibv_qp_attr *a, int *mask);
void qphs__qpattr_rtr(const struct qphs__qp_params *q, struct ibv_qp_attr *a, int *mask);
void qphs__qpattr_rts(const struct qphs__qp_params *q, struct ibv_qp_attr *a, int *mask);

#endif
