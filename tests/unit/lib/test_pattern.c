/* codec/pattern.c: the bytes a requester WRITEs and a responder checks
 * byte for byte, both made from one seed. */
#include <string.h>

#include "qphs.h"
#include "unit.h"

START_TEST(pattern_is_the_same_for_one_seed_and_differs_between_seeds)
{
	static uint8_t a[4096], b[4096];
	size_t same = 0;

	qphs_pattern_fill(a, sizeof(a), 42);
	qphs_pattern_fill(b, sizeof(b), 42);
	ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
	qphs_pattern_fill(b, sizeof(b), 43);
	for (size_t i = 0; i < sizeof(a); i++)
		same += a[i] == b[i];
	/* Independent bytes agree about 1 time in 256: 16 of 4096. */
	ck_assert_uint_lt(same, 64);
	/* Seed 0 is not a zero stream. */
	qphs_pattern_fill(b, sizeof(b), 0);
	ck_assert_int_ne(b[0] | b[1] | b[2] | b[3], 0);
}
END_TEST

START_TEST(pattern_compare_counts_and_locates_the_differences)
{
	static uint8_t p[1024];
	size_t first = 0;
	uint8_t want = 0, orig;

	qphs_pattern_fill(p, sizeof(p), 7);
	ck_assert_uint_eq(qphs_pattern_compare(p, sizeof(p), 7, &first, &want), 0);
	ck_assert_uint_eq(first, sizeof(p));
	orig = p[300];
	p[300] ^= 0x01;
	p[900] ^= 0x80;
	ck_assert_uint_eq(qphs_pattern_compare(p, sizeof(p), 7, &first, &want), 2);
	ck_assert_uint_eq(first, 300);
	ck_assert_uint_eq(want, orig);
	ck_assert_uint_eq(qphs_pattern_compare(p, 300, 7, &first, NULL), 0);
	/* Another seed differs almost everywhere. */
	ck_assert_uint_gt(qphs_pattern_compare(p, sizeof(p), 8, &first, NULL), 950);
}
END_TEST

Suite *suite_pattern(void)
{
	Suite *s = suite_create("pattern");
	TCase *tc = unit_tcase(s, "pattern", 10);

	tcase_add_test(tc, pattern_is_the_same_for_one_seed_and_differs_between_seeds);
	tcase_add_test(tc, pattern_compare_counts_and_locates_the_differences);
	return s;
}
