/*
 * The transition builders (lib/rdma/qpattr.c) that a real setup and the quirks
 * probes share.  Every expected value below is Mooncake's
 * (RdmaEndPoint::doSetupConnection with config.h's defaults), written out
 * here, never read back from the builders.
 */
#include <string.h>

#include "rdma/qpattr.h"
#include "unit.h"

enum tr { INIT, RTR, RTS };

enum field {
	F_MASK, F_STATE, F_PORT, F_PKEY, F_ACCESS, F_MTU, F_GLOBAL, F_SGID, F_HOP, F_TC,
	F_FLOW, F_DLID, F_SL, F_AH_PORT, F_DQPN, F_RQ_PSN, F_DEST_RD, F_RNR_TIMER, F_TIMEOUT,
	F_RETRY, F_RNR_RETRY, F_SQ_PSN, F_RD,
};

/* The path the RTR rows are built towards. */
#define PEER_LID 7
#define PEER_QPN 0x123456u
#define LOCAL_SGID 3

static const struct {
	enum tr tr;
	enum field f;
	long want;
	const char *what;
} rows[] = {
	{INIT, F_MASK, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	 "INIT mask"},
	{INIT, F_STATE, IBV_QPS_INIT, "INIT qp_state"},
	{INIT, F_PORT, 1, "INIT port_num = MC_IB_PORT"},
	{INIT, F_PKEY, 0, "INIT pkey_index = MC_PKEY_INDEX"},
	{INIT, F_ACCESS, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_ATOMIC, "INIT access flags"},
	{RTR, F_MASK, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV |
			      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
	 "RTR mask"},
	{RTR, F_STATE, IBV_QPS_RTR, "RTR qp_state"},
	{RTR, F_MTU, IBV_MTU_1024, "RTR path_mtu as given"},
	{RTR, F_GLOBAL, 1, "RTR ah is_global"},
	{RTR, F_SGID, LOCAL_SGID, "RTR sgid_index = local GID index"},
	{RTR, F_HOP, 16, "RTR hop_limit"},
	{RTR, F_TC, 0, "RTR traffic_class = MC_IB_TC"},
	{RTR, F_FLOW, 0, "RTR flow_label"},
	{RTR, F_DLID, PEER_LID, "RTR dlid = peer lid"},
	{RTR, F_SL, 0, "RTR sl = MC_IB_SL"},
	{RTR, F_AH_PORT, 1, "RTR ah port_num"},
	{RTR, F_DQPN, PEER_QPN, "RTR dest_qp_num = peer qp_num"},
	{RTR, F_RQ_PSN, 0, "RTR rq_psn"},
	{RTR, F_DEST_RD, 16, "RTR max_dest_rd_atomic"},
	{RTR, F_RNR_TIMER, 12, "RTR min_rnr_timer"},
	{RTS, F_MASK, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
	 "RTS mask"},
	{RTS, F_STATE, IBV_QPS_RTS, "RTS qp_state"},
	{RTS, F_TIMEOUT, 14, "RTS timeout"},
	{RTS, F_RETRY, 7, "RTS retry_cnt"},
	{RTS, F_RNR_RETRY, 7, "RTS rnr_retry"},
	{RTS, F_SQ_PSN, 0, "RTS sq_psn"},
	{RTS, F_RD, 16, "RTS max_rd_atomic"},
	/* Each builder leaves the other transitions' fields zero. */
	{INIT, F_DQPN, 0, "INIT leaves dest_qp_num zero"},
	{RTR, F_TIMEOUT, 0, "RTR leaves timeout zero"},
	{RTR, F_ACCESS, 0, "RTR leaves access flags zero"},
	{RTS, F_MTU, 0, "RTS leaves path_mtu zero"},
	{RTS, F_GLOBAL, 0, "RTS leaves the ah empty"},
};

static long field(const struct ibv_qp_attr *a, int mask, enum field f)
{
	switch (f) {
	case F_MASK: return mask;
	case F_STATE: return a->qp_state;
	case F_PORT: return a->port_num;
	case F_PKEY: return a->pkey_index;
	case F_ACCESS: return (long)a->qp_access_flags;
	case F_MTU: return a->path_mtu;
	case F_GLOBAL: return a->ah_attr.is_global;
	case F_SGID: return a->ah_attr.grh.sgid_index;
	case F_HOP: return a->ah_attr.grh.hop_limit;
	case F_TC: return a->ah_attr.grh.traffic_class;
	case F_FLOW: return (long)a->ah_attr.grh.flow_label;
	case F_DLID: return a->ah_attr.dlid;
	case F_SL: return a->ah_attr.sl;
	case F_AH_PORT: return a->ah_attr.port_num;
	case F_DQPN: return (long)a->dest_qp_num;
	case F_RQ_PSN: return (long)a->rq_psn;
	case F_DEST_RD: return a->max_dest_rd_atomic;
	case F_RNR_TIMER: return a->min_rnr_timer;
	case F_TIMEOUT: return a->timeout;
	case F_RETRY: return a->retry_cnt;
	case F_RNR_RETRY: return a->rnr_retry;
	case F_SQ_PSN: return (long)a->sq_psn;
	case F_RD: return a->max_rd_atomic;
	}
	return -1;
}

/* The rows' peer path, on top of what configuration c decides. */
static struct qphs__qp_params params(const struct qphs_config *c)
{
	struct qphs__qp_params q;

	qphs__qp_params_config(&q, c, (uint8_t)c->ib_port);
	q.path_mtu = IBV_MTU_1024;
	q.sgid_index = LOCAL_SGID;
	q.dlid = PEER_LID;
	q.dest_qpn = PEER_QPN;
	for (int i = 0; i < 16; i++)
		q.dgid.raw[i] = (uint8_t)(0xa0 + i);
	return q;
}

static struct qphs__qp_params defaults(void)
{
	struct qphs_config c;

	qphs_config_init(&c);
	return params(&c);
}

struct built {
	struct ibv_qp_attr a;
	int mask;
};

/* Fills the attributes with garbage first: whatever the builder does not
 * set must come out zero, not left over. */
static struct built build(enum tr tr, struct qphs__qp_params q)
{
	struct built b;

	memset(&b.a, 0x5a, sizeof(b.a));
	b.mask = -1;
	if (tr == INIT)
		qphs__qpattr_init(&q, &b.a, &b.mask);
	else if (tr == RTR)
		qphs__qpattr_rtr(&q, &b.a, &b.mask);
	else
		qphs__qpattr_rts(&q, &b.a, &b.mask);
	return b;
}

START_TEST(qpattr_defaults_follow_spec_5)
{
	struct built b = build(rows[_i].tr, defaults());
	long got = field(&b.a, b.mask, rows[_i].f);

	ck_assert_msg(got == rows[_i].want, "%s: got %ld, want %ld", rows[_i].what, got,
		      rows[_i].want);
}
END_TEST

START_TEST(qpattr_rtr_carries_peer_gid)
{
	struct built b = build(RTR, defaults());

	for (int i = 0; i < 16; i++)
		ck_assert_uint_eq(b.a.ah_attr.grh.dgid.raw[i], 0xa0 + i);
}
END_TEST

/* MC_* settings reach the attributes they name. */
START_TEST(qpattr_config_reaches_attributes)
{
	struct qphs_config c;
	struct built b;

	qphs_config_init(&c);
	c.ib_port = 2;
	c.pkey_index = 3;
	c.ib_tc = 106;
	c.ib_sl = 5;
	c.qp_timeout = 20;
	c.qp_retry_cnt = 6;
	c.qp_rnr_retry = 4;
	b = build(INIT, params(&c));
	ck_assert_uint_eq(b.a.port_num, 2);
	ck_assert_uint_eq(b.a.pkey_index, 3);
	b = build(RTR, params(&c));
	ck_assert_uint_eq(b.a.ah_attr.port_num, 2);
	ck_assert_uint_eq(b.a.ah_attr.grh.traffic_class, 106);
	ck_assert_uint_eq(b.a.ah_attr.sl, 5);
	b = build(RTS, params(&c));
	ck_assert_uint_eq(b.a.timeout, 20);
	ck_assert_uint_eq(b.a.retry_cnt, 6);
	ck_assert_uint_eq(b.a.rnr_retry, 4);
}
END_TEST

/* The clamped depths a setup chooses (setup.c) replace Mooncake's 16. */
START_TEST(qpattr_rd_atomic_depths_as_given)
{
	struct qphs__qp_params q = defaults();

	q.dest_rd_atomic = 8;
	q.rd_atomic = 4;
	ck_assert_uint_eq(build(RTR, q).a.max_dest_rd_atomic, 8);
	ck_assert_uint_eq(build(RTS, q).a.max_rd_atomic, 4);
}
END_TEST

Suite *suite_qpattr(void)
{
	Suite *s = suite_create("qpattr");
	TCase *tc = unit_tcase(s, "qpattr", 10);

	tcase_add_loop_test(tc, qpattr_defaults_follow_spec_5, 0, sizeof(rows) / sizeof(rows[0]));
	tcase_add_test(tc, qpattr_rtr_carries_peer_gid);
	tcase_add_test(tc, qpattr_config_reaches_attributes);
	tcase_add_test(tc, qpattr_rd_atomic_depths_as_given);
	return s;
}
