/* The error table: names, texts, faults, Mooncake's numbers. */
#include <string.h>

#include "qphs.h"
#include "unit.h"

/* Mooncake's codes the library uses, written out here rather than taken
 * from the library's table: the numbers of Mooncake's
 * mooncake-transfer-engine/include/error.h (commit 3b5a594).  Mooncake has
 * more (ERR_TOO_MANY_REQUESTS -2, ERR_NUMA -300, ...) that no libqphs call
 * returns. */
static const struct {
	const char *name;
	int code;
} mooncake[] = {
	{"ERR_INVALID_ARGUMENT", -1}, {"ERR_DEVICE_NOT_FOUND", -6}, {"ERR_DNS", -101},
	{"ERR_SOCKET", -102},         {"ERR_MALFORMED_JSON", -103}, {"ERR_REJECT_HANDSHAKE", -104},
	{"ERR_METADATA", -200},       {"ERR_ENDPOINT", -201},       {"ERR_CONTEXT", -202},
	{"ERR_MEMORY", -302},         {"ERR_NOT_IMPLEMENTED", -303},
};
#define N_MOONCAKE (int)(sizeof(mooncake) / sizeof(mooncake[0]))

START_TEST(errors_keep_mooncake_numbers)
{
	int code = 0;

	for (int i = 0; i < N_MOONCAKE; i++) {
		ck_assert_msg(qphs_errcode_by_name(mooncake[i].name, &code), "%s missing",
			      mooncake[i].name);
		ck_assert_int_eq(code, mooncake[i].code);
		ck_assert_str_eq(qphs_errname(mooncake[i].code), mooncake[i].name);
	}
	ck_assert_int_eq(QPHS_ERR_INVALID_ARGUMENT, -1);
	ck_assert_int_eq(QPHS_ERR_REJECT_HANDSHAKE, -104);
	ck_assert_int_eq(QPHS_ERR_NOT_IMPLEMENTED, -303);
}
END_TEST

/* Between 0 and -1000 the table holds Mooncake's codes and nothing else:
 * every code there that has a name is in the list above, and the counts
 * agree. */
START_TEST(errors_above_minus_1000_are_exactly_mooncakes)
{
	int named = 0;

	for (int c = -999; c <= -1; c++) {
		int listed = 0;

		if (!strcmp(qphs_errname(c), "UNKNOWN"))
			continue;
		named++;
		for (int i = 0; i < N_MOONCAKE; i++)
			listed |= mooncake[i].code == c;
		ck_assert_msg(listed, "%d (%s) is not one of Mooncake's codes", c, qphs_errname(c));
	}
	ck_assert_int_eq(named, N_MOONCAKE);
}
END_TEST

START_TEST(errors_ours_are_at_minus_1000_and_below)
{
	ck_assert_int_le(QPHS_ERR_FRAME_ZERO_LENGTH, -1000);
	ck_assert_int_le(QPHS_ERR_CONFIG_RANGE, -1000);
	ck_assert_int_le(QPHS_ERR_CONNECT_TIMEOUT, -1000);
}
END_TEST

START_TEST(errors_names_and_texts_round_trip)
{
	int code = 0;

	ck_assert_str_eq(qphs_errname(QPHS_ERR_DNS), "ERR_DNS");
	ck_assert_str_eq(qphs_errname(0), "OK");
	ck_assert_str_eq(qphs_strerror(QPHS_ERR_FRAME_ZERO_LENGTH), "frame length is zero");
	ck_assert_str_eq(qphs_errname(-99999), "UNKNOWN");
	ck_assert_str_eq(qphs_strerror(-99999), "unknown error");
	ck_assert_int_eq(qphs_errcode_by_name("ERR_FRAME_TRUNCATED", &code), 1);
	ck_assert_int_eq(code, QPHS_ERR_FRAME_TRUNCATED);
	ck_assert_int_eq(qphs_errcode_by_name("truncate", &code), 1);
	ck_assert_int_eq(code, QPHS_ERR_FRAME_TRUNCATED);
	ck_assert_str_eq(qphs_errfault(QPHS_ERR_REPLY_TIMEOUT), "stall");
	ck_assert_int_eq(qphs_errcode_by_name("no-such-error", &code), 0);
	ck_assert_int_eq(qphs_errcode_by_name("", &code), 0);
}
END_TEST

/* Every row of the table, seen through the API: its name leads back to
 * its code and no other row has its code, name or fault.  The codes the
 * API knows, counted by scanning 0 to -1999, are as many as the rows (a
 * duplicated code would hide a row). */
START_TEST(errors_codes_names_and_faults_are_unique)
{
	static const int codes[] = {
#define CODE_ROW(name, code, fault, text) (code),
		QPHS_ERRNO_MAP(CODE_ROW)
#undef CODE_ROW
	};
	const int rows = (int)(sizeof(codes) / sizeof(codes[0]));
	int known = 0, back = 0;

	for (int c = 0; c >= -1999; c--)
		known += strcmp(qphs_errname(c), "UNKNOWN") != 0;
	ck_assert_int_eq(known, rows);
	for (int i = 0; i < rows; i++) {
		ck_assert_int_eq(qphs_errcode_by_name(qphs_errname(codes[i]), &back), 1);
		ck_assert_int_eq(back, codes[i]);
		for (int j = i + 1; j < rows; j++) {
			ck_assert_int_ne(codes[i], codes[j]);
			ck_assert_str_ne(qphs_errname(codes[i]), qphs_errname(codes[j]));
			if (qphs_errfault(codes[i])[0])
				ck_assert_str_ne(qphs_errfault(codes[i]), qphs_errfault(codes[j]));
		}
		ck_assert_ptr_nonnull(strstr(qphs_errname(codes[i]), codes[i] ? "ERR_" : "OK"));
	}
}
END_TEST

Suite *suite_errors(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = unit_tcase(s, "table", 5);

	tcase_add_test(tc, errors_keep_mooncake_numbers);
	tcase_add_test(tc, errors_above_minus_1000_are_exactly_mooncakes);
	tcase_add_test(tc, errors_ours_are_at_minus_1000_and_below);
	tcase_add_test(tc, errors_names_and_texts_round_trip);
	tcase_add_test(tc, errors_codes_names_and_faults_are_unique);
	return s;
}
