/* connect_both's schedule (run_both.c): in one round every pair of listed
 * hosts meets exactly once, both ends in the same slot, and no host has
 * two partners in one slot. */
#include "run/run.h"
#include "unit.h"

START_TEST(run_both_every_pair_meets_once_per_round)
{
	int n = _i, slots = run_both_slots(n);
	int met[QPLAB_MAX_HOSTS][QPLAB_MAX_HOSTS] = {{0}};

	ck_assert_int_eq(slots, n % 2 ? n : n - 1);
	for (int r = 0; r < slots; r++) {
		for (int i = 0; i < n; i++) {
			int j = run_both_partner(i, r, n);

			if (j < 0)
				continue;
			ck_assert_int_ne(i, j);
			ck_assert_int_lt(j, n);
			/* symmetric: j's partner in this slot is i */
			ck_assert_int_eq(run_both_partner(j, r, n), i);
			met[i][j]++;
		}
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			ck_assert_int_eq(met[i][j], i == j ? 0 : 1);
}
END_TEST

START_TEST(run_both_odd_counts_give_each_host_one_bye)
{
	int n = _i, byes = 0;

	for (int r = 0; r < run_both_slots(n); r++)
		for (int i = 0; i < n; i++)
			byes += run_both_partner(i, r, n) < 0;
	ck_assert_int_eq(byes, n % 2 ? n : 0);
}
END_TEST

Suite *suite_run_both(void)
{
	Suite *s = suite_create("run_both");
	TCase *tc = unit_tcase(s, "schedule", 5);

	tcase_add_loop_test(tc, run_both_every_pair_meets_once_per_round, 2, QPLAB_MAX_HOSTS + 1);
	tcase_add_loop_test(tc, run_both_odd_counts_give_each_host_one_bye, 2, QPLAB_MAX_HOSTS + 1);
	return s;
}
