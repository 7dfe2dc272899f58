/* Simultaneous open: a and b connect to each other at the same
 * moment, round after round.  Every round must end with exactly one QP set
 * per side, all RTS, each side's peer QPNs equal to the other's QPNs, and
 * (checked every 10th round) data flowing; no QP of this process leaks. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmatest.h"

struct side {
	struct lab_host *me, *peer;
	pthread_barrier_t *bar;
	int rc;
	struct qphs_endpoint *ep;
};

static void *connector(void *arg)
{
	struct side *s = arg;

	pthread_barrier_wait(s->bar);
	s->rc = qphs_connect(s->me->ctx, s->peer->path, &s->ep);
	return NULL;
}

static void one_round(struct lab_host *a, struct lab_host *b, int round, int check,
		      uint64_t *retries)
{
	pthread_barrier_t bar;
	struct side sa = {.me = a, .peer = b, .bar = &bar}, sb = {.me = b, .peer = a, .bar = &bar};
	pthread_t ta, tb;
	struct qphs_endpoint *ea, *eb;
	struct qphs_endpoint_info ia, ib;

	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&ta, NULL, connector, &sa);
	pthread_create(&tb, NULL, connector, &sb);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_barrier_destroy(&bar);
	ck_assert_msg(sa.rc == 0 && sb.rc == 0, "round %d: a %s (%s), b %s (%s)", round,
		      qphs_errname(sa.rc), sa.ep ? qphs_endpoint_errstr(sa.ep) : "",
		      qphs_errname(sb.rc), sb.ep ? qphs_endpoint_errstr(sb.ep) : "");
	qphs_endpoint_put(sa.ep);
	qphs_endpoint_put(sb.ep);
	ea = qphs_context_endpoint(a->ctx, b->path);
	eb = qphs_context_endpoint(b->ctx, a->path);
	ck_assert(ea && eb);
	ck_assert_int_eq(qphs_endpoint_wait_ready(ea, rdma_ms(3000)), 0);
	ck_assert_int_eq(qphs_endpoint_wait_ready(eb, rdma_ms(3000)), 0);
	ck_assert_int_eq(qphs_endpoint_info(ea, &ia), 0);
	ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
	*retries += ia.retired_retries + ib.retired_retries;
	for (int i = 0; i < ia.qp_count; i++) {
		ck_assert_int_eq(ia.qp_state[i], 3);
		ck_assert_int_eq(ib.qp_state[i], 3);
		ck_assert_uint_eq(ia.peer_qpn[i], ib.qpn[i]);
		ck_assert_uint_eq(ib.peer_qpn[i], ia.qpn[i]);
	}
	if (check) {
		struct qphs_data_result res;
		int rc = qphs_endpoint_check_data(ea, 4096, rdma_ms(3000), &res);
		ck_assert_msg(rc == 0, "round %d data a->b: %s", round, res.text);
		rc = qphs_endpoint_check_data(eb, 4096, rdma_ms(3000), &res);
		ck_assert_msg(rc == 0, "round %d data b->a: %s", round, res.text);
		ck_assert_int_eq(lab_count_qps(a->dev), ia.qp_count);
		ck_assert_int_eq(lab_count_qps(b->dev), ib.qp_count);
	}
	/* Ready for the next round: both sides back to UNCONNECTED. */
	ck_assert_int_eq(qphs_endpoint_disconnect(ea), 0);
	ck_assert_int_eq(qphs_endpoint_disconnect(eb), 0);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
}

START_TEST(simopen_rounds_converge_to_one_qp_set)
{
	const char *env = getenv("QPLAB_RDMA_SIMOPEN_ROUNDS");
	int rounds = env ? atoi(env) : rdma_smoke() ? 3 : 50;
	struct lab_host a, b;
	uint64_t retries = 0;

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	for (int r = 0; r < rounds; r++)
		one_round(&a, &b, r, r % 10 == 0 || r == rounds - 1, &retries);
	ck_assert_int_eq(lab_count_qps(a.dev), 2);
	ck_assert_int_eq(lab_count_qps(b.dev), 2);
	printf("# simultaneous open: %d rounds converged, %llu retries after retirement\n",
	       rounds, (unsigned long long)retries);
	lab_down_clean(&a, &b);
}
END_TEST

/* a forgets its endpoint (retired, b not told) and connects again with new
 * QPs: b finds its connected endpoint with other peer QPNs, retires it and
 * builds a fresh one (Mooncake's "Re-establish connection").  The old QPs
 * are gone on both sides. */
START_TEST(reconnect_after_peer_forgot_reestablishes)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea, *eb, *ea2, *eb2;
	struct qphs_endpoint_info i1, i2;

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_info(eb, &i1), 0);
	qphs_endpoint_close(ea);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_connect_ok(&a, &b, 2, &ea2, &eb2);
	ck_assert_int_eq(qphs_endpoint_info(eb2, &i2), 0);
	ck_assert_uint_ne(i1.qpn[0], i2.qpn[0]);
	ck_assert_int_eq(lab_count_qps(a.dev), 2);
	ck_assert_int_eq(lab_count_qps(b.dev), 2);
	qphs_endpoint_put(ea2);
	qphs_endpoint_put(eb2);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

/* The active side's "peer QP list mismatch" path, provoked on purpose.
 * a connects to b, and its reply is held (hook: active_reply_delay_ms) after
 * b's passive side connected eb to a's QPs.  Meanwhile b forgets eb (as
 * Mooncake deletes an endpoint after a failed transfer) and connects to a
 * itself: a's passive side connects a's endpoint, still CONNECTING under
 * the held reply, to b's new QPs.  When a finally reads the held reply, it
 * names b's old QPs: a retires its endpoint and, after the randomised
 * backoff, retries with fresh QPs; b's passive side finds its connected
 * endpoint with other peer QPNs and re-establishes.  The end: one QP set
 * per side, all RTS, paired with each other, data flowing, no QP left. */
struct held {
	struct lab_host *a, *b;
	struct qphs_endpoint *ep;
	int rc;
	atomic_int done;
};

static void *held_connect(void *arg)
{
	struct held *h = arg;

	h->rc = qphs_connect(h->a->ctx, h->b->path, &h->ep);
	atomic_store(&h->done, 1);
	return NULL;
}

/* b's passive endpoint for a, once it is connected (a's reply is sent). */
static struct qphs_endpoint *wait_passive_connected(struct lab_host *b, struct lab_host *a)
{
	double end = (double)rdma_ms(10000);

	for (double t = 0; t < end; t += 5) {
		struct qphs_endpoint *ep = qphs_context_endpoint(b->ctx, a->path);
		struct qphs_endpoint_info i;

		if (ep && qphs_endpoint_info(ep, &i) == 0 && (i.status == QPHS_EP_CONNECTED ||
							     i.status == QPHS_EP_WAIT_READY_ACK))
			return ep;
		qphs_endpoint_put(ep);
		usleep(5000);
	}
	ck_abort_msg("b never connected a passive endpoint for a");
	return NULL;
}

static void assert_paired(struct qphs_endpoint *ea, struct qphs_endpoint *eb)
{
	struct qphs_endpoint_info ia, ib;

	ck_assert_int_eq(qphs_endpoint_info(ea, &ia), 0);
	ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
	ck_assert_int_eq(ia.qp_count, ib.qp_count);
	for (int i = 0; i < ia.qp_count; i++) {
		ck_assert_int_eq(ia.qp_state[i], 3);
		ck_assert_int_eq(ib.qp_state[i], 3);
		ck_assert_uint_eq(ia.peer_qpn[i], ib.qpn[i]);
		ck_assert_uint_eq(ib.peer_qpn[i], ia.qpn[i]);
	}
}

/* a's connect: retried after retirement, and counted so. */
static void assert_retried(struct qphs_endpoint *ep)
{
	struct qphs_endpoint_info i;

	ck_assert_int_eq(qphs_endpoint_info(ep, &i), 0);
	printf("# stale reply: a's connect took %llu attempts, %llu after retirement\n",
	       (unsigned long long)i.connect_attempts, (unsigned long long)i.retired_retries);
	ck_assert_uint_gt(i.connect_attempts, 1);
	ck_assert_uint_ge(i.retired_retries, 1);
}

/* Runs the race; returns the QPN b's first endpoint had (now retired). */
static uint32_t provoke_stale_reply(struct lab_host *a, struct lab_host *b)
{
	struct held h = {.a = a, .b = b};
	struct qphs_rdma_hooks hook = {.active_reply_delay_ms = rdma_ms(3000)};
	struct qphs_endpoint *eb_old, *eb_new = NULL;
	struct qphs_endpoint_info info;
	pthread_t t;
	int rc;

	qphs_context_set_hooks(a->ctx, &hook);
	pthread_create(&t, NULL, held_connect, &h);
	eb_old = wait_passive_connected(b, a);
	ck_assert_int_eq(qphs_endpoint_info(eb_old, &info), 0);
	qphs_endpoint_close(eb_old); /* b forgets; a is not told */
	qphs_endpoint_put(eb_old);
	rc = qphs_connect(b->ctx, a->path, &eb_new);
	ck_assert_msg(rc == 0, "b -> a: %s: %s", qphs_errname(rc),
		      eb_new ? qphs_endpoint_errstr(eb_new) : "");
	/* The race only exists while a still holds the stale reply. */
	ck_assert_msg(!atomic_load(&h.done), "a's held connect ended before b reconnected: "
		      "raise active_reply_delay_ms");
	qphs_context_set_hooks(a->ctx, NULL); /* the retry goes at full speed */
	pthread_join(t, NULL);
	qphs_endpoint_put(eb_new);
	ck_assert_msg(h.rc == 0, "a -> b: %s: %s", qphs_errname(h.rc),
		      h.ep ? qphs_endpoint_errstr(h.ep) : "");
	assert_retried(h.ep);
	qphs_endpoint_put(h.ep);
	return info.qpn[0];
}

/* One endpoint per side, fresh on b, paired, RTS, data both ways, and no
 * retired endpoint or QP left behind. */
static void assert_one_set_each(struct lab_host *a, struct lab_host *b, uint32_t old_qpn)
{
	struct qphs_endpoint *ea = qphs_context_endpoint(a->ctx, b->path);
	struct qphs_endpoint *eb = qphs_context_endpoint(b->ctx, a->path);
	struct qphs_endpoint_info ib;
	struct qphs_data_result res;

	ck_assert(ea && eb);
	ck_assert_int_eq(qphs_endpoint_wait_ready(ea, rdma_ms(3000)), 0);
	ck_assert_int_eq(qphs_endpoint_wait_ready(eb, rdma_ms(3000)), 0);
	assert_paired(ea, eb);
	ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
	ck_assert_uint_ne(ib.qpn[0], old_qpn);
	ck_assert_msg(qphs_endpoint_check_data(ea, 4096, rdma_ms(3000), &res) == 0, "%s", res.text);
	ck_assert_msg(qphs_endpoint_check_data(eb, 4096, rdma_ms(3000), &res) == 0, "%s", res.text);
	ck_assert_int_eq(qphs_context_endpoints(a->ctx, NULL, 0), 1);
	ck_assert_int_eq(qphs_context_endpoints(b->ctx, NULL, 0), 1);
	ck_assert_int_eq(lab_count_qps(a->dev), 2);
	ck_assert_int_eq(lab_count_qps(b->dev), 2);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
}

START_TEST(simopen_stale_reply_retires_and_retries)
{
	struct lab_host a, b;
	uint32_t old_qpn;

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	old_qpn = provoke_stale_reply(&a, &b);
	assert_one_set_each(&a, &b, old_qpn);
	lab_down_clean(&a, &b);
}
END_TEST

Suite *suite_simopen(void)
{
	Suite *s = suite_create("simopen");

	tcase_add_test(rdma_smoke_tcase(s, "rounds", 60), simopen_rounds_converge_to_one_qp_set);
	tcase_add_test(unit_tcase(s, "forgot", 30), reconnect_after_peer_forgot_reestablishes);
	tcase_add_test(rdma_smoke_tcase(s, "stale_reply", 60), simopen_stale_reply_retires_and_retries);
	return s;
}
