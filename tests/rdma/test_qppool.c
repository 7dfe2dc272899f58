/* The QP pool (qp_pool_size, lib/rdma/qppool.c): endpoints take pre-created
 * RESET QPs, fall back to creating them when the pool is empty, the filler
 * refills once fewer than half are left, the reset policies keep their
 * meaning (reconstruct: new QP numbers; reuse: the same QPs), and closing
 * the context leaves no QP of this process behind. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "setup/setup_int.h"
#include "rdmatest.h"

/* Waits until dev holds want QPs of this process (the filler's work);
 * bounded in time: one count runs `rdma`, slow under TCG. */
static void wait_qps(const char *dev, int want)
{
	struct timespec nap = {0, 50 * 1000000L};
	double end = lab_now_ms() + rdma_ms(10000);
	int n;

	while ((n = lab_count_qps(dev)) != want && lab_now_ms() < end)
		nanosleep(&nap, NULL);
	ck_assert_msg(n == want, "%s holds %d QPs of this process, want %d", dev, n, want);
}

static uint64_t hits(struct qphs_context *ctx, uint64_t *misses)
{
	pthread_mutex_lock(&ctx->pool_lock);
	uint64_t h = ctx->pool_hits;
	*misses = ctx->pool_misses;
	pthread_mutex_unlock(&ctx->pool_lock);
	return h;
}

static void pool_up(struct lab_host *a, struct lab_host *b, int size,
		    enum qphs_reset_policy policy)
{
	struct qphs_config cfg;

	lab_config(&cfg);
	cfg.qp_pool_size = size;
	cfg.reset_policy = policy;
	lab_up(a, 0, &cfg);
	lab_up(b, 1, &cfg);
}

START_TEST(pool_qps_connect_and_none_leak)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea, *eb;
	struct qphs_data_result res;
	uint64_t miss;

	pool_up(&a, &b, 4, QPHS_RESET_RECONSTRUCT);
	wait_qps(a.dev, 4);
	wait_qps(b.dev, 4);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_uint_eq(hits(a.ctx, &miss), 2);
	ck_assert_uint_eq(miss, 0);
	ck_assert_uint_eq(hits(b.ctx, &miss), 2);
	ck_assert_uint_eq(miss, 0);
	ck_assert_msg(qphs_endpoint_check_data(ea, 4096, rdma_ms(5000), &res) == 0, "%s",
		      res.text);
	/* 2 of 4 left: half, no refill yet; 2 QPs in the endpoint. */
	ck_assert_int_eq(lab_count_qps(a.dev), 4);
	qphs_endpoint_close(ea);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down_clean(&a, &b);
}
END_TEST

/* Pool of 1, full, endpoint of 2 QPs: one from the pool, one created.
 * The set is taken in one go, so the refill the first take wakes cannot
 * slip in before the second (it did, QP by QP, on a loaded guest). */
START_TEST(pool_empty_falls_back_to_create)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea, *eb;
	uint64_t miss, h;

	pool_up(&a, &b, 1, QPHS_RESET_RECONSTRUCT);
	wait_qps(a.dev, 1);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	h = hits(a.ctx, &miss);
	ck_assert_uint_eq(h, 1);
	ck_assert_uint_eq(miss, 1);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down(&a);
	lab_down(&b);
	ck_assert_int_eq(lab_count_qps(a.dev), 0);
}
END_TEST

/* Disconnect, connect again: reconstruct must bring new QP numbers (from
 * the pool), reuse the same QPs. */
static void reconnect_qpns(enum qphs_reset_policy policy, int want_same)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea, *eb;
	struct qphs_endpoint_info i1, i2;

	pool_up(&a, &b, 4, policy);
	wait_qps(a.dev, 4);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_info(ea, &i1), 0);
	ck_assert_int_eq(qphs_endpoint_disconnect(ea), 0);
	ck_assert_int_eq(qphs_endpoint_disconnect(eb), 0);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_info(ea, &i2), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_msg((i1.qpn[i] == i2.qpn[i]) == want_same, "QP %d: qpn %u then %u", i,
			      i1.qpn[i], i2.qpn[i]);
	/* reconstruct took 2 more: the pool fell below half and refilled. */
	wait_qps(a.dev, want_same ? 4 : 6);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down_clean(&a, &b);
}

START_TEST(pool_reconstruct_brings_new_qpns)
{
	reconnect_qpns(QPHS_RESET_RECONSTRUCT, 0);
}
END_TEST

START_TEST(pool_reuse_keeps_qpns)
{
	reconnect_qpns(QPHS_RESET_REUSE, 1);
}
END_TEST

Suite *suite_qppool(void)
{
	Suite *s = suite_create("qppool");

	tcase_add_test(rdma_smoke_tcase(s, "connect", 60), pool_qps_connect_and_none_leak);
	tcase_add_test(unit_tcase(s, "empty", 30), pool_empty_falls_back_to_create);
	tcase_add_test(unit_tcase(s, "reconstruct", 60), pool_reconstruct_brings_new_qpns);
	tcase_add_test(unit_tcase(s, "reuse", 60), pool_reuse_keeps_qpns);
	return s;
}
