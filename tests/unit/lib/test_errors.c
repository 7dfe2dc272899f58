/* The error table: names, texts, faults, Mooncake's numbers. */
#include <string.h>

#include "qphs.h"
#include "unit.h"

START_TEST(errors_keep_mooncake_numbers)
{
	ck_assert_int_eq(QPHS_ERR_INVALID_ARGUMENT, -1);
	ck_assert_int_eq(QPHS_ERR_DEVICE_NOT_FOUND, -6);
	ck_assert_int_eq(QPHS_ERR_DNS, -101);
	ck_assert_int_eq(QPHS_ERR_SOCKET, -102);
	ck_assert_int_eq(QPHS_ERR_MALFORMED_JSON, -103);
	ck_assert_int_eq(QPHS_ERR_REJECT_HANDSHAKE, -104);
	ck_assert_int_eq(QPHS_ERR_METADATA, -200);
	ck_assert_int_eq(QPHS_ERR_ENDPOINT, -201);
	ck_assert_int_eq(QPHS_ERR_CONTEXT, -202);
	ck_assert_int_eq(QPHS_ERR_MEMORY, -302);
	ck_assert_int_eq(QPHS_ERR_NOT_IMPLEMENTED, -303);
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

#define COUNT_ROW(name, code, fault, text) +1
static const int row_count = 0 QPHS_ERRNO_MAP(COUNT_ROW);

START_TEST(errors_codes_names_and_faults_are_unique)
{
	static const int codes[] = {
#define CODE_ROW(name, code, fault, text) (code),
		QPHS_ERRNO_MAP(CODE_ROW)
	};
	ck_assert_int_eq((int)(sizeof(codes) / sizeof(codes[0])), row_count);
	for (int i = 0; i < row_count; i++) {
		for (int j = i + 1; j < row_count; j++) {
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
	tcase_add_test(tc, errors_ours_are_at_minus_1000_and_below);
	tcase_add_test(tc, errors_names_and_texts_round_trip);
	tcase_add_test(tc, errors_codes_names_and_faults_are_unique);
	return s;
}
