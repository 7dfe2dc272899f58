/* The ready-ACK exchange with peers that do not speak it, and MTU
 * negotiation with qphs_path_mtu (SPEC §4, §7). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdmatest.h"

/* Peers that do not speak ready_ack (Mooncake before 2026-07): either side
 * with it off still ends CONNECTED on both sides. */
static void old_peer(int a_ack, int b_ack)
{
	struct lab_host a, b;
	struct qphs_config ca, cb;
	struct qphs_endpoint *ea, *eb;
	struct qphs_endpoint_info ia, ib;

	lab_config(&ca);
	lab_config(&cb);
	ca.ready_ack = a_ack;
	cb.ready_ack = b_ack;
	lab_up(&a, 0, &ca);
	lab_up(&b, 1, &cb);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_info(ea, &ia), 0);
	ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
	ck_assert_int_eq(ia.status, QPHS_EP_CONNECTED);
	ck_assert_int_eq(ib.status, QPHS_EP_CONNECTED);
	ck_assert_int_eq(ia.peer_ready_ack, b_ack && a_ack);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down(&a);
	lab_down(&b);
}

START_TEST(ready_ack_with_old_active_peer)
{
	old_peer(0, 1);
}
END_TEST

START_TEST(ready_ack_with_old_passive_peer)
{
	old_peer(1, 0);
}
END_TEST

/* MTU negotiation: a at 4096, b at 1024: both use 1024; off, a uses 4096. */
static void mtu_pair(int negotiate, int want_a)
{
	const char *nd = getenv("QPLAB_RDMA_NETDEVS");
	char na[32], nb[32];
	struct lab_host a, b;
	struct qphs_config cfg;
	struct qphs_endpoint *ea, *eb;
	struct qphs_endpoint_info ia, ib;

	ck_assert_ptr_nonnull(nd);
	sscanf(nd, "%31[^,],%31s", na, nb);
	lab_config(&cfg);
	cfg.mtu_negotiation = negotiate;
	lab_set_mtu(na, 9000);
	lab_up(&a, 0, &cfg);
	lab_up(&b, 1, &cfg);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_info(ea, &ia), 0);
	ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
	printf("# negotiation %s: a path_mtu %d, b path_mtu %d\n", negotiate ? "on" : "off",
	       ia.path_mtu, ib.path_mtu);
	ck_assert_int_eq(ia.path_mtu, want_a);
	ck_assert_int_eq(ib.path_mtu, 1024);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down(&a);
	lab_down(&b);
	lab_set_mtu(na, 1500);
}

START_TEST(mtu_negotiation_uses_the_smaller)
{
	mtu_pair(1, 1024);
	mtu_pair(0, 4096);
}
END_TEST

/* A peer that sends no local_gid (Mooncake before 2026-05): b fetches a's
 * segment descriptor with a Metadata request, from a worker thread, and
 * takes the GID of the device named in a's nic path. */
START_TEST(peer_without_local_gid_found_by_metadata)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea, *eb;
	struct qphs_rdma_hooks h = {.advertise_gid = ""};
	struct qphs_data_result res;

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	qphs_context_set_hooks(a.ctx, &h);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_check_data(eb, 4096, rdma_ms(3000), &res), 0);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

/* The passive side's RTR is held back (hook: passive_rtr_delay_ms, on b's
 * worker).  b answers only after its QPs are RTS, and a moves to RTR only
 * on that answer, so a cannot post before b can take it: when a's connect
 * returns, b's QPs are already RTS and its endpoint CONNECTED (the ready
 * ACK went out before connect returned), and data flows at once, with no
 * wait on b. */
START_TEST(passive_rtr_delay_holds_the_active_side)
{
	struct lab_host a, b;
	int delay = rdma_ms(1500);
	struct qphs_rdma_hooks h = {.passive_rtr_delay_ms = delay};
	struct qphs_endpoint *ea, *eb;
	struct qphs_endpoint_info ia, ib;
	struct qphs_data_result res;
	int rc;

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	qphs_context_set_hooks(b.ctx, &h);
	rc = qphs_connect(a.ctx, b.path, &ea);
	ck_assert_msg(rc == 0, "%s: %s", qphs_errname(rc), ea ? qphs_endpoint_errstr(ea) : "");
	eb = qphs_context_endpoint(b.ctx, a.path);
	ck_assert_ptr_nonnull(eb);
	ck_assert_int_eq(qphs_endpoint_info(ea, &ia), 0);
	ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
	printf("# passive RTR delayed %d ms: a's Connection round trip %.1f ms, b %s\n", delay,
	       ia.rpc_ms, qphs_ep_status_name(ib.status));
	ck_assert_double_ge(ia.rpc_ms, delay);
	ck_assert_int_eq(ib.status, QPHS_EP_CONNECTED);
	for (int i = 0; i < ib.qp_count; i++)
		ck_assert_int_eq(ib.qp_state[i], 3);
	rc = qphs_endpoint_check_data(ea, 4096, rdma_ms(3000), &res);
	ck_assert_msg(rc == 0, "%s", res.text);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

struct bg_connect {
	struct lab_host *a, *b;
	struct qphs_endpoint *ep;
	int rc;
};

static void *bg_connect(void *arg)
{
	struct bg_connect *c = arg;

	c->rc = qphs_connect(c->a->ctx, c->b->path, &c->ep);
	return NULL;
}

/* The delay hook holds b's RTR back without b's endpoint lock: while b
 * waits, its endpoint is CONNECTING and qphs_endpoint_info (which takes
 * that lock) answers at once — every call well inside half the delay —
 * and the connect still succeeds. */
START_TEST(passive_rtr_delay_leaves_the_endpoint_unlocked)
{
	struct lab_host a, b;
	int delay = rdma_ms(1500);
	struct qphs_rdma_hooks h = {.passive_rtr_delay_ms = delay};
	struct bg_connect c = {.a = &a, .b = &b};
	struct timespec nap = {0, 1000000};
	double worst = 0, end;
	int seen = 0;
	pthread_t t;

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	qphs_context_set_hooks(b.ctx, &h);
	ck_assert_int_eq(pthread_create(&t, NULL, bg_connect, &c), 0);
	for (end = lab_now_ms() + 2.0 * delay; !seen && lab_now_ms() < end;) {
		struct qphs_endpoint *eb = qphs_context_endpoint(b.ctx, a.path);
		struct qphs_endpoint_info ib;
		double t0 = lab_now_ms();

		if (!eb) {
			nanosleep(&nap, NULL);
			continue;
		}
		ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
		worst = lab_now_ms() - t0 > worst ? lab_now_ms() - t0 : worst;
		seen = ib.status == QPHS_EP_CONNECTING;
		qphs_endpoint_put(eb);
	}
	pthread_join(t, NULL);
	printf("# passive RTR delayed %d ms: b's endpoint CONNECTING seen %d, slowest info %.1f ms\n",
	       delay, seen, worst);
	ck_assert_msg(c.rc == 0, "%s: %s", qphs_errname(c.rc), c.ep ? qphs_endpoint_errstr(c.ep) : "");
	ck_assert_msg(seen, "b's endpoint was never seen CONNECTING during the delay");
	ck_assert_msg(worst < delay / 2.0, "qphs_endpoint_info waited %.1f ms (delay %d ms)", worst,
		      delay);
	qphs_endpoint_put(c.ep);
	lab_down_clean(&a, &b);
}
END_TEST

Suite *suite_readyack(void)
{
	Suite *s = suite_create("readyack");

	tcase_add_test(unit_tcase(s, "old_active", 30), ready_ack_with_old_active_peer);
	tcase_add_test(unit_tcase(s, "old_passive", 30), ready_ack_with_old_passive_peer);
	tcase_add_test(unit_tcase(s, "mtu", 30), mtu_negotiation_uses_the_smaller);
	tcase_add_test(unit_tcase(s, "no_local_gid", 30), peer_without_local_gid_found_by_metadata);
	tcase_add_test(unit_tcase(s, "rtr_delay", 30), passive_rtr_delay_holds_the_active_side);
	tcase_add_test(unit_tcase(s, "rtr_delay_unlocked", 30),
		       passive_rtr_delay_leaves_the_endpoint_unlocked);
	return s;
}
