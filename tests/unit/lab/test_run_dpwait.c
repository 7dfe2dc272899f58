/* The runner's wait for a datapath reply (run_dpwait.c) and the check's
 * worst case it is built on (qphs_data_check_max_wait_ms): the step's
 * deadline holds for each completion, and the check waits for up to five
 * per QP on every QP, then for a flush. */
#include "cli/cli.h"
#include "qphs/rdma.h"
#include "run/run.h"
#include "unit.h"

static long long check_wait(int timeout_ms, int nqp, int verb, bool read_only)
{
	struct qphs_data_opts o = {.bytes = 4096, .timeout_ms = timeout_ms, .verb = verb,
				   .read_only = read_only};

	return qphs_data_check_max_wait_ms(&o, nqp);
}

START_TEST(check_wait_counts_every_completion_of_every_qp)
{
	/* READ, WRITE, READ, WRITE, READ on each of 2 QPs, 3 s each, and the
	 * 1 s flush of the one that never completed. */
	ck_assert_int_eq(check_wait(3000, 2, QPHS_DATA_CHECK, false), 2 * 5 * 3000 + 1000);
	ck_assert_int_eq(check_wait(3000, 1, QPHS_DATA_CHECK, false), 5 * 3000 + 1000);
	ck_assert_int_eq(check_wait(100, 255, QPHS_DATA_CHECK, false), 255 * 5 * 100 + 1000);
	/* read_only: one READ per QP. */
	ck_assert_int_eq(check_wait(3000, 2, QPHS_DATA_CHECK, true), 2 * 3000 + 1000);
	/* write and send: one completion, on QP 0 only, whatever the QPs. */
	ck_assert_int_eq(check_wait(3000, 8, QPHS_DATA_WRITE, false), 3000 + 1000);
	ck_assert_int_eq(check_wait(3000, 8, QPHS_DATA_SEND, false), 3000 + 1000);
}
END_TEST

START_TEST(check_wait_takes_the_worst_case_for_odd_input)
{
	/* A QP count it cannot know counts as the most an endpoint has. */
	ck_assert_int_eq(check_wait(10, 0, QPHS_DATA_CHECK, false), 255 * 5 * 10 + 1000);
	ck_assert_int_eq(check_wait(10, 256, QPHS_DATA_CHECK, false), 255 * 5 * 10 + 1000);
	ck_assert_int_eq(check_wait(0, 1, QPHS_DATA_CHECK, false), 5 + 1000);
	/* The largest scaled deadline does not wrap. */
	ck_assert(check_wait(2000000000, 255, QPHS_DATA_CHECK, false) ==
		  2000000000LL * 5 * 255 + 1000);
}
END_TEST

START_TEST(runner_waits_for_the_check_plus_a_round_trip)
{
	/* A 3000 ms step under QPLAB_TIME_MULTIPLIER=3: the agent gets 9000
	 * per completion; two QPs, five completions each, the flush, 2 s. */
	long dl = qplab_scaled_ms(3000, 3);

	ck_assert_int_eq(dl, 9000);
	ck_assert_int_eq(run_datapath_wait_ms((int)dl, 2, QPHS_DATA_CHECK, false),
			 2 * 5 * 9000 + 1000 + 2000);
	/* The failing READ that ends a check on QP 1 comes after QP 0's five
	 * and QP 1's first four waits: the old deadline + 2 s is far short. */
	ck_assert_int_gt(run_datapath_wait_ms(9000, 2, QPHS_DATA_CHECK, false), 10 * 9000);
	/* An agent that did not say its QP count: the library's default, 2. */
	ck_assert_int_eq(run_datapath_wait_ms(9000, 0, QPHS_DATA_CHECK, false),
			 run_datapath_wait_ms(9000, 2, QPHS_DATA_CHECK, false));
	ck_assert_int_eq(run_datapath_wait_ms(5000, 2, QPHS_DATA_SEND, false), 5000 + 1000 + 2000);
	/* Bounded: never beyond the longest deadline the runner uses. */
	ck_assert_int_eq(run_datapath_wait_ms((int)qplab_scaled_ms(1999999999L, 100), 255,
					      QPHS_DATA_CHECK, false),
			 QPLAB_MAX_DEADLINE_MS);
}
END_TEST

Suite *suite_run_dpwait(void)
{
	Suite *s = suite_create("run_dpwait");
	TCase *tc = unit_tcase(s, "arithmetic", 5);

	tcase_add_test(tc, check_wait_counts_every_completion_of_every_qp);
	tcase_add_test(tc, check_wait_takes_the_worst_case_for_odd_input);
	tcase_add_test(tc, runner_waits_for_the_check_plus_a_round_trip);
	return s;
}
