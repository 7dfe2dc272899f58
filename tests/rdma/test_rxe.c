/* What rxe itself does, asserted per kernel.  Each expectation says why
 * (the rxe code or spec rule it follows from) and allows only the outcomes
 * that reason allows: a kernel that behaves otherwise turns the test red
 * until someone explains the new behaviour. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "setup/setup_int.h"
#include "rdmatest.h"

/* rxe_qp_chk_attr (drivers/infiniband/sw/rxe/rxe_qp.c) checks path_mtu
 * against the port's max_mtu, which rxe fixes at IB_MTU_4096 — never
 * against active_mtu.  So INIT -> RTR with path_mtu 4096 over a netdev
 * whose MTU gives active_mtu 1024 must succeed; only a max_mtu check could
 * refuse it, and 4096 does not exceed max_mtu. */
START_TEST(rxe_accepts_path_mtu_above_active_mtu)
{
	const char *nd = getenv("QPLAB_RDMA_NETDEVS");
	char na[32], nb[32];
	struct lab_host a, b;
	struct qphs_config cfg;
	struct qphs_endpoint *ea, *eb;
	struct qphs_endpoint_info ib;
	struct qphs_context_info cb;

	ck_assert_ptr_nonnull(nd);
	sscanf(nd, "%31[^,],%31s", na, nb);
	lab_config(&cfg);
	cfg.mtu_reread = false;      /* keep the MTU read at open */
	cfg.mtu_negotiation = false; /* or a's 1024 would lower b's choice */
	lab_set_mtu(nb, 9000);
	lab_up(&a, 0, &cfg);
	lab_up(&b, 1, &cfg);
	lab_set_mtu(nb, 1500);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
	ck_assert_int_eq(qphs_context_info(b.ctx, &cb), 0);
	printf("# rxe: RTR with path_mtu %d over active_mtu %d accepted\n", ib.path_mtu,
	       cb.active_mtu);
	ck_assert_int_eq(ib.path_mtu, 4096);
	ck_assert_int_eq(cb.active_mtu, 1024);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

/* RTR is a local change: rxe never asks the peer whether dest_qp_num
 * exists, so RTR and RTS succeed.  The responder drops packets for a QPN it
 * does not have (rxe_recv.c: no QP matches, the packet is freed, no NAK),
 * so the requester hears nothing and retransmits on its timer (timeout 14 =
 * 67 ms).  rxe_comp.c counts retries down only while retry_cnt != 7: it
 * treats 7 as "retry forever" (the meaning IBTA gives rnr_retry 7), so with
 * Mooncake's retry_cnt 7 the request (the check's first, a READ) never
 * completes, and with a smaller one
 * it completes with IBV_WC_RETRY_EXC_ERR after retry_cnt + 1 tries.  Any
 * other status, or a completion with 7, is a new behaviour. */
static struct qphs_data_result unknown_qpn_request(int retry_cnt, int deadline_ms)
{
	struct lab_host a, b;
	struct qphs_config cfg;
	struct qphs_endpoint *ea, *eb;
	struct qphs_data_result res;
	struct qphs_rdma_hooks h = {.advertise_qpn = 0xfffff0};
	int rc;

	lab_config(&cfg);
	cfg.qp_retry_cnt = retry_cnt;
	lab_up(&a, 0, &cfg);
	lab_up(&b, 1, &cfg);
	qphs_context_set_hooks(b.ctx, &h);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	rc = qphs_endpoint_check_data(ea, 4096, deadline_ms, &res);
	unit_hit(rc);
	/* The check's first request is a READ of the peer's bytes: it is the
	 * one that goes unanswered. */
	printf("# rxe: READ to unknown QPN, retry_cnt %d: %s (%s) after %.1f ms\n", retry_cnt,
	       res.read_status, qphs_errname(rc), res.read_ms);
	ck_assert_str_eq(res.write_status, "not posted");
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down(&a);
	lab_down(&b);
	return res;
}

START_TEST(rxe_unknown_dest_qpn_retry_cnt_7_never_completes)
{
	/* 3 s is over 40 retry periods: a counted-down retry would be done. */
	struct qphs_data_result r = unknown_qpn_request(7, 3000);

	ck_assert_msg(!strncmp(r.read_status, "no completion", 13), "got %s", r.read_status);
}
END_TEST

START_TEST(rxe_unknown_dest_qpn_retry_cnt_2_retry_exceeded)
{
	struct qphs_data_result r = unknown_qpn_request(2, rdma_ms(5000));

	ck_assert_str_eq(r.read_status, "IBV_WC_RETRY_EXC_ERR");
}
END_TEST

/* ib_modify_qp_is_ok's table (drivers/infiniband/core/verbs.c) lists
 * RESET -> RESET as valid with no attributes, and rxe_qp_chk_attr defers to
 * it; rxe keeps no state that RESET -> RESET could break, so the next
 * RESET -> INIT must succeed too (unlike E810, see the e810 quirk). */
START_TEST(rxe_allows_reset_to_reset_then_init)
{
	struct lab_host a;
	struct qphs__qp qp;
	int skipped = 0;

	lab_up(&a, 0, NULL);
	ck_assert_int_eq(qphs__qp_create(a.ctx, &qp), 0);
	ck_assert_int_eq(qphs__qp_state(a.ctx, &qp), IBV_QPS_RESET);
	ck_assert_int_eq(qphs__qp_to_reset(a.ctx, &qp, 1, &skipped), 0);
	ck_assert_int_eq(skipped, 0);
	ck_assert_int_eq(qphs__qp_state(a.ctx, &qp), IBV_QPS_RESET);
	ck_assert_int_eq(qphs__qp_to_init(a.ctx, &qp), 0);
	ck_assert_int_eq(qphs__qp_state(a.ctx, &qp), IBV_QPS_INIT);
	ck_assert_int_eq(qphs__qp_destroy(a.ctx, &qp), 0);
	lab_down(&a);
}
END_TEST

Suite *suite_rxe(void)
{
	Suite *s = suite_create("rxe");

	tcase_add_test(rdma_smoke_tcase(s, "reset_reset", 20), rxe_allows_reset_to_reset_then_init);
	tcase_add_test(rdma_smoke_tcase(s, "path_mtu", 30), rxe_accepts_path_mtu_above_active_mtu);
	tcase_add_test(rdma_smoke_tcase(s, "unknown_qpn_7", 30),
		       rxe_unknown_dest_qpn_retry_cnt_7_never_completes);
	tcase_add_test(rdma_smoke_tcase(s, "unknown_qpn_2", 30),
		       rxe_unknown_dest_qpn_retry_cnt_2_retry_exceeded);
	return s;
}
