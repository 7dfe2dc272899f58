/* Named bad frames: one for every frame FAULT of the error table, each
 * with the defect its name promises. */
#include <string.h>

#include "hs/bad_frame.h"
#include "qphs.h"
#include "unit.h"

static uint64_t length_of(const uint8_t *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

START_TEST(bad_frame_exists_for_every_frame_fault_of_the_table)
{
	uint8_t buf[QPLAB_BAD_FRAME_MAX];
	size_t len;
	int found = 0;

	for (int code = -1000; code >= -1019; code--) {
		const char *fault = qphs_errfault(code);
		if (!fault[0])
			continue;
		found++;
		ck_assert_msg(qplab_bad_frame(fault, buf, &len) == 0, "no bad frame for %s", fault);
		ck_assert_uint_ge(len, 8);
	}
	ck_assert_int_ge(found, 7);
}
END_TEST

static const struct {
	const char *kind;
	uint64_t length;  /* the header's claim */
	size_t sent;      /* bytes on the wire */
	int type;         /* byte 8, or -1 */
} frames[] = {
	{"zero-length", 0, 8, -1},
	{"oversize", ((uint64_t)128 << 20) + 1, 9, 3},
	{"truncate", 100, 11, 3},
	{"garbage", 3, 11, 0x80},
	{"empty-body", 1, 9, 3},
	{"not-json", 9, 17, 3},
	{"trailing", 5, 13, 3},
};

START_TEST(bad_frame_has_the_promised_defect)
{
	uint8_t buf[QPLAB_BAD_FRAME_MAX];
	size_t len;

	ck_assert_int_eq(qplab_bad_frame(frames[_i].kind, buf, &len), 0);
	ck_assert_uint_eq(len, frames[_i].sent);
	ck_assert(length_of(buf) == frames[_i].length);
	if (frames[_i].type >= 0)
		ck_assert_int_eq(buf[8], frames[_i].type);
	if (!strcmp(frames[_i].kind, "truncate"))
		ck_assert_uint_lt(len - 8, frames[_i].length);
	else if (strcmp(frames[_i].kind, "oversize"))
		ck_assert_uint_eq(len - 8, frames[_i].length); /* the claim is honest */
}
END_TEST

START_TEST(bad_frame_refuses_other_names)
{
	uint8_t buf[QPLAB_BAD_FRAME_MAX];
	size_t len;

	ck_assert_int_eq(qplab_bad_frame("stall", buf, &len), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_int_eq(qplab_bad_frame("ERR_FRAME_TRUNCATED", buf, &len), QPHS_ERR_INVALID_ARGUMENT);
	unit_hit(QPHS_ERR_INVALID_ARGUMENT);
}
END_TEST

Suite *suite_bad_frame(void)
{
	Suite *s = suite_create("bad_frame");
	TCase *tc = unit_tcase(s, "frames", 5);

	tcase_add_test(tc, bad_frame_exists_for_every_frame_fault_of_the_table);
	tcase_add_loop_test(tc, bad_frame_has_the_promised_defect, 0, sizeof(frames) / sizeof(frames[0]));
	tcase_add_test(tc, bad_frame_refuses_other_names);
	return s;
}
