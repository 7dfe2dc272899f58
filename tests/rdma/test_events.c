/* Asynchronous events on real rxe (lib/rdma/events.c): the library reads them,
 * counts and reports them on the context, and marks what they touch failed
 * — the endpoint of a QP in error, every connected endpoint of a port that
 * went down.  What rxe raises is asserted per kernel, each expectation with
 * the driver code it follows from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "setup/setup_int.h"
#include "rdmatest.h"

/* Waits until ctx has counted `want` events of type t; returns the count. */
static unsigned wait_event(struct qphs_context *ctx, enum ibv_event_type t, unsigned want,
			   int timeout_ms)
{
	struct qphs_context_info ci;

	for (int waited = 0;; waited += 10) {
		ck_assert_int_eq(qphs_context_info(ctx, &ci), 0);
		if (ci.event_count[t] >= want || waited >= timeout_ms)
			return ci.event_count[t];
		usleep(10000);
	}
}

static void print_events(const char *who, struct qphs_context *ctx)
{
	struct qphs_context_info ci;
	char line[512] = "";
	size_t used = 0;

	ck_assert_int_eq(qphs_context_info(ctx, &ci), 0);
	for (int t = 0; t < QPHS_EVENT_TYPES; t++)
		if (ci.event_count[t] && used < sizeof(line))
			used += (size_t)snprintf(line + used, sizeof(line) - used, " %s x%u",
						 qphs__verbs_event_name((enum ibv_event_type)t),
						 ci.event_count[t]);
	printf("# %s events:%s\n", who, used ? line : " none");
}

static void assert_failed_ep(struct qphs_endpoint *ep, int code)
{
	struct qphs_endpoint_info i;

	ck_assert_int_eq(qphs_endpoint_info(ep, &i), 0);
	ck_assert_msg(i.status == QPHS_EP_DESTROYING, "endpoint is %s, not retired",
		      qphs_ep_status_name(i.status));
	ck_assert_msg(i.last_error == code, "last error %s (%s), want %s", qphs_errname(i.last_error),
		      i.last_error_text, qphs_errname(code));
	unit_hit(code);
}

static void link_b_up(void)
{
	lab_topo_fault("link b up");
}

/* `ip link set b down`: rxe_notify (rxe_net.c) takes NETDEV_DOWN to
 * rxe_port_down, which dispatches IB_EVENT_PORT_ERR for port 1 — on every
 * kernel we run.  The veth peer loses its carrier with it (veth_close turns
 * both ends' carrier off), and NETDEV_CHANGE with no carrier takes a's rxe
 * down the same way.  Bringing the link up is NETDEV_UP on b (rxe_port_up:
 * IB_EVENT_PORT_ACTIVE) and carrier back on a (NETDEV_CHANGE, port up). */
/* Both contexts failed; the connected endpoints retired; a connect is
 * refused before any RPC (Mooncake: the context is inactive). */
static void assert_port_down(struct lab_host *a, struct lab_host *b, struct qphs_endpoint *ea,
			     struct qphs_endpoint *eb)
{
	struct qphs_endpoint *ea2 = NULL;
	struct qphs_context_info ca, cb;
	char want[128];
	int rc;

	ck_assert_int_eq(qphs_context_info(a->ctx, &ca), 0);
	ck_assert_int_eq(qphs_context_info(b->ctx, &cb), 0);
	ck_assert_int_eq(ca.failed, 1);
	ck_assert_int_eq(cb.failed, 1);
	ck_assert_str_eq(cb.port_state, qphs__verbs_port_state_name(IBV_PORT_DOWN));
	assert_failed_ep(ea, QPHS_ERR_PORT_NOT_ACTIVE);
	assert_failed_ep(eb, QPHS_ERR_PORT_NOT_ACTIVE);
	printf("# %s\n", qphs_endpoint_errstr(eb));
	rc = qphs_connect(a->ctx, b->path, &ea2);
	ck_assert_msg(rc == QPHS_ERR_PORT_NOT_ACTIVE, "got %s", qphs_errname(rc));
	ck_assert_ptr_null(ea2);
	printf("# %s\n", qphs_context_errstr(a->ctx));
	snprintf(want, sizeof(want), "Device %s port not active", a->dev);
	lab_assert_mooncake(qphs_context_errstr(a->ctx), want);
}

/* Both contexts usable again: a fresh connect, data, only its QPs left. */
static void assert_port_back(struct lab_host *a, struct lab_host *b)
{
	struct qphs_endpoint *ea, *eb;
	struct qphs_context_info ca, cb;
	struct qphs_data_result res;

	ck_assert_int_eq(qphs_context_info(a->ctx, &ca), 0);
	ck_assert_int_eq(qphs_context_info(b->ctx, &cb), 0);
	ck_assert_int_eq(ca.failed, 0);
	ck_assert_int_eq(cb.failed, 0);
	lab_connect_ok(a, b, 2, &ea, &eb);
	ck_assert_msg(qphs_endpoint_check_data(ea, 4096, rdma_ms(5000), &res) == 0, "%s", res.text);
	ck_assert_int_eq(lab_count_qps(a->dev), 2);
	ck_assert_int_eq(lab_count_qps(b->dev), 2);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
}

START_TEST(port_error_fails_context_and_endpoints)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea, *eb;

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_msg(lab_topo_fault("link b down") == 0, "topo fault link b down failed "
		      "(QPLAB_RDMA_TOPO, QPLAB_RDMA_TOPO_NAME set?)");
	ck_assert_uint_ge(wait_event(b.ctx, IBV_EVENT_PORT_ERR, 1, rdma_ms(5000)), 1);
	ck_assert_uint_ge(wait_event(a.ctx, IBV_EVENT_PORT_ERR, 1, rdma_ms(5000)), 1);
	print_events("port down: a", a.ctx);
	print_events("port down: b", b.ctx);
	assert_port_down(&a, &b, ea, eb);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	ck_assert_int_eq(lab_topo_fault("link b up"), 0);
	ck_assert_uint_ge(wait_event(b.ctx, IBV_EVENT_PORT_ACTIVE, 1, rdma_ms(5000)), 1);
	ck_assert_uint_ge(wait_event(a.ctx, IBV_EVENT_PORT_ACTIVE, 1, rdma_ms(5000)), 1);
	assert_port_back(&a, &b);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

/* WRITE with an rkey b never issued, on a's QP 0. */
static const char *write_bad_rkey(struct lab_host *a, struct lab_host *b, struct qphs_endpoint *ea)
{
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)a->ctx->region, .length = 64,
			      .lkey = a->ctx->region_mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = 77, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {.remote_addr = (uint64_t)(uintptr_t)b->ctx->region,
			    .rkey = b->ctx->region_mr->rkey ^ 0x5a5a00u},
	};
	struct ibv_wc wc;

	ck_assert_int_eq(qphs__verbs_post_send(ea->qp[0].qp, &wr), 0);
	for (int waited = 0; waited < rdma_ms(5000); waited++) {
		if (qphs__verbs_poll_cq(a->ctx->cq, 1, &wc) > 0 && wc.wr_id == 77)
			return qphs__verbs_wc_status_name(wc.status);
		usleep(1000);
	}
	return "no completion";
}

/* The requester: rxe_resp.c check_rkey finds no MR for the rkey and answers
 * with the NAK "remote access error" (IBTA class C, C9-222.1.1); rxe_comp.c
 * completes the WRITE with IBV_WC_REM_ACCESS_ERR and moves the QP to ERR —
 * a completion error, no async event, on every kernel.
 * The responder: before "RDMA/rxe: Generate async error for r_key
 * violations" (2026) it only NAKs; with it, a violation that no receive
 * WQE can carry (a WRITE without immediate) is also reported as the
 * affiliated asynchronous error IB_EVENT_QP_ACCESS_ERR on the responder's
 * QP (C9-222.1.1 again).  Posted in February 2026, it is not in 6.x (6.1
 * and 6.12 raise nothing) and is in 7.2; 7.0, which we do not run, may
 * have either. */
START_TEST(rkey_violation_reported_per_kernel)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea, *eb;
	struct qphs_endpoint_info ia, ib;
	const char *st;
	int expect_event = kernel_at_least(7, 1), maybe = !expect_event && kernel_at_least(7, 0);
	unsigned n;

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
	st = write_bad_rkey(&a, &b, ea);
	n = wait_event(b.ctx, IBV_EVENT_QP_ACCESS_ERR, 1, rdma_ms(expect_event ? 5000 : 1000));
	print_events("rkey violation: a (requester)", a.ctx);
	print_events("rkey violation: b (responder)", b.ctx);
	printf("# rkey violation: requester completion %s; responder QP_ACCESS_ERR x%u\n", st, n);
	ck_assert_str_eq(st, "IBV_WC_REM_ACCESS_ERR");
	ck_assert_int_eq(qphs_endpoint_info(ea, &ia), 0);
	ck_assert_int_eq(ia.qp_state[0], IBV_QPS_ERR);
	if (maybe)
		expect_event = n > 0;
	if (expect_event) {
		ck_assert_uint_eq(n, 1);
		assert_failed_ep(eb, QPHS_ERR_QP_FATAL);
		printf("# %s\n", qphs_endpoint_errstr(eb));
		char want[32];
		snprintf(want, sizeof(want), "QP %u:", ib.qpn[0]);
		ck_assert_msg(strstr(qphs_endpoint_errstr(eb), want), "%s", qphs_endpoint_errstr(eb));
	} else {
		ck_assert_uint_eq(n, 0);
		ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
		ck_assert_int_eq(ib.status, QPHS_EP_CONNECTED);
	}
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

Suite *suite_events(void)
{
	Suite *s = suite_create("events");
	TCase *tc = rdma_smoke_tcase(s, "port_error", 60);

	/* Whatever happens in the test, the link comes back for the next. */
	tcase_add_unchecked_fixture(tc, NULL, link_b_up);
	tcase_add_test(tc, port_error_fails_context_and_endpoints);
	tcase_add_test(rdma_smoke_tcase(s, "rkey_violation", 30), rkey_violation_reported_per_kernel);
	return s;
}
