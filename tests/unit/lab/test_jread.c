/* The harness's strict JSON reader (harness/cli/jread.c): each getter on a
 * table of values, the messages, null, ranges, buffers, the first error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jread.h"
#include "unit.h"

static json_object *doc(const char *text)
{
	struct jread r = {0};
	json_object *o = NULL;

	ck_assert_int_eq(jread_parse_object(&r, text, strlen(text), &o), JREAD_OK);
	return o;
}

/* jread_int (range 0..100) on {"k": VALUE}: the result and the message. */
static const struct {
	const char *value;
	int rc, out;
	const char *err;
} int_rows[] = {
	{"7", JREAD_OK, 7, ""},
	{"0", JREAD_OK, 0, ""},
	{"100", JREAD_OK, 100, ""},
	{"101", JREAD_ERROR, -1, "t: \"k\" must be in 0..100"},
	{"-1", JREAD_ERROR, -1, "t: \"k\" must be in 0..100"},
	{"18446744073709551615", JREAD_ERROR, -1, "t: \"k\" must be in 0..100"},
	{"\"7\"", JREAD_ERROR, -1, "t: \"k\" must be an integer, not a string"},
	{"7.0", JREAD_ERROR, -1, "t: \"k\" must be an integer, not a number"},
	{"true", JREAD_ERROR, -1, "t: \"k\" must be an integer, not true or false"},
	{"[7]", JREAD_ERROR, -1, "t: \"k\" must be an integer, not an array"},
	{"null", JREAD_ABSENT, -1, ""},
};

START_TEST(jread_int_takes_integers_in_range_only)
{
	char text[64], err[128] = "";
	struct jread r = {.what = "t", .err = err, .errlen = sizeof(err)};
	json_object *o;
	int out = -1;

	snprintf(text, sizeof(text), "{\"k\": %s}", int_rows[_i].value);
	o = doc(text);
	ck_assert_int_eq(jread_int(&r, o, "k", 0, 100, &out), int_rows[_i].rc);
	ck_assert_int_eq(out, int_rows[_i].out);
	ck_assert_str_eq(err, int_rows[_i].err);
	ck_assert_int_eq(r.errors, int_rows[_i].rc == JREAD_ERROR);
	json_object_put(o);
}
END_TEST

START_TEST(jread_absent_keeps_the_destination_and_null_is_absent_unless_wrong)
{
	json_object *o = doc("{\"n\": null}");
	struct jread r = {0}, strict = {.null_is_wrong = true};
	bool b = true;
	int i = 5;
	const char *s = "kept";

	ck_assert_int_eq(jread_int(&r, o, "missing", 0, 9, &i), JREAD_ABSENT);
	ck_assert_int_eq(jread_bool(&r, o, "n", &b), JREAD_ABSENT);
	ck_assert_int_eq(jread_str(&r, o, "n", &s), JREAD_ABSENT);
	ck_assert_int_eq(jread_int(&r, NULL, "k", 0, 9, &i), JREAD_ABSENT);
	ck_assert(b && i == 5 && !strcmp(s, "kept") && r.errors == 0);
	ck_assert_int_eq(jread_bool(&strict, o, "n", &b), JREAD_ERROR);
	ck_assert_int_eq(strict.errors, 1);
	json_object_put(o);
}
END_TEST

START_TEST(jread_strings_fit_their_buffer_or_fail)
{
	json_object *o = doc("{\"s\": \"abcd\", \"i\": 4}");
	char err[128], small[4] = "xy", big[8];
	struct jread r = {.what = "t", .err = err, .errlen = sizeof(err)};
	char *dup = NULL;

	ck_assert_int_eq(jread_str_copy(&r, o, "s", small, sizeof(small)), JREAD_ERROR);
	ck_assert_str_eq(small, "xy");
	ck_assert_str_eq(err, "t: \"s\" is longer than 3 bytes");
	ck_assert_int_eq(jread_str_copy(&r, o, "s", big, sizeof(big)), JREAD_OK);
	ck_assert_str_eq(big, "abcd");
	ck_assert_int_eq(jread_strdup(&r, o, "s", &dup), JREAD_OK);
	ck_assert_str_eq(dup, "abcd");
	free(dup);
	dup = NULL;
	ck_assert_int_eq(jread_strdup(&r, o, "i", &dup), JREAD_ERROR);
	ck_assert_ptr_null(dup);
	/* The first error is the one kept; the others are counted. */
	ck_assert_str_eq(err, "t: \"s\" is longer than 3 bytes");
	ck_assert_int_eq(r.errors, 2);
	json_object_put(o);
}
END_TEST

START_TEST(jread_elements_are_checked_like_keys)
{
	json_object *o = doc("{\"a\": [\"x\", null, 3]}"), *arr;
	char err[128];
	struct jread r = {.what = "t", .err = err, .errlen = sizeof(err)};
	const char *s = NULL;

	ck_assert_int_eq(jread_array(&r, o, "a", &arr), JREAD_OK);
	ck_assert_int_eq(jread_elem_str(&r, arr, "a", 0, &s), JREAD_OK);
	ck_assert_str_eq(s, "x");
	ck_assert_int_eq(jread_elem_str(&r, arr, "a", 1, &s), JREAD_ERROR);
	ck_assert_str_eq(err, "t: \"a[1]\" must be a string, not null");
	ck_assert_int_eq(jread_elem_str(&r, arr, "a", 2, &s), JREAD_ERROR);
	ck_assert_int_eq(jread_elem_str(&r, arr, "a", 3, &s), JREAD_ABSENT);
	ck_assert_int_eq(r.errors, 2);
	json_object_put(o);
}
END_TEST

START_TEST(jread_numbers_bools_objects_and_unknown_keys)
{
	json_object *o = doc("{\"d\": 1.5, \"i\": 2, \"b\": false, \"o\": {}, \"x\": 1}"), *sub;
	static const char *const keys[] = {"d", "i", "b", "o", NULL};
	char err[128];
	struct jread r = {.what = "t", .err = err, .errlen = sizeof(err)};
	double d = 0;
	bool b = true;

	ck_assert_int_eq(jread_double(&r, o, "d", &d), JREAD_OK);
	ck_assert_double_eq(d, 1.5);
	ck_assert_int_eq(jread_double(&r, o, "i", &d), JREAD_OK); /* an integer is a number */
	ck_assert_double_eq(d, 2);
	ck_assert_int_eq(jread_bool(&r, o, "b", &b), JREAD_OK);
	ck_assert(!b);
	ck_assert_int_eq(jread_object(&r, o, "o", &sub), JREAD_OK);
	ck_assert_int_eq(jread_object(&r, o, "d", &sub), JREAD_ERROR);
	ck_assert_ptr_null(sub);
	ck_assert_str_eq(err, "t: \"d\" must be an object, not a number");
	r.errors = 0;
	jread_only_keys(&r, o, keys, "the test");
	ck_assert_int_eq(r.errors, 1);
	ck_assert_str_eq(err, "t: unknown key \"x\" in the test");
	json_object_put(o);
}
END_TEST

/* Strict parsing: one value and nothing after it. */
static const struct {
	const char *text;
	int rc;
} parse_rows[] = {
	{"{\"a\": 1}", JREAD_OK},
	{"  {\"a\": 1}\n", JREAD_OK},
	{"{\"a\": 1} x", JREAD_ERROR},
	{"{\"a\": 1}{}", JREAD_ERROR},
	{"[1, 2]", JREAD_ERROR}, /* not an object */
	{"{\"a\": 1,}", JREAD_ERROR},
	{"", JREAD_ERROR},
};

START_TEST(jread_parse_object_is_strict)
{
	char err[256] = "";
	struct jread r = {.what = "t", .err = err, .errlen = sizeof(err)};
	json_object *o = (void *)1;
	int rc = jread_parse_object(&r, parse_rows[_i].text, strlen(parse_rows[_i].text), &o);

	ck_assert_int_eq(rc, parse_rows[_i].rc);
	if (rc == JREAD_OK)
		json_object_put(o);
	else
		ck_assert_msg(!strncmp(err, "t: ", 3), "'%s'", err);
}
END_TEST

struct seen {
	char key[32];
	bool missing;
	int n;
};

static void record(void *user, const char *key, bool missing, const char *msg)
{
	struct seen *s = user;

	(void)msg;
	snprintf(s->key, sizeof(s->key), "%s", key ? key : "");
	s->missing = missing;
	s->n++;
}

START_TEST(jread_report_gets_the_key_and_whether_it_is_missing)
{
	json_object *o = doc("{\"k\": \"x\"}");
	struct seen seen = {0};
	struct jread r = {.report = record, .user = &seen};
	int i = 0;

	ck_assert_int_eq(jread_int(&r, o, "k", 0, 1, &i), JREAD_ERROR);
	ck_assert_str_eq(seen.key, "k");
	ck_assert(!seen.missing);
	jread_missing(&r, "other");
	ck_assert_str_eq(seen.key, "other");
	ck_assert(seen.missing);
	ck_assert_int_eq(seen.n, 2);
	json_object_put(o);
}
END_TEST

Suite *suite_jread(void)
{
	Suite *s = suite_create("jread");
	TCase *tc = unit_tcase(s, "getters", 5);

	tcase_add_loop_test(tc, jread_int_takes_integers_in_range_only, 0,
			    (int)(sizeof(int_rows) / sizeof(int_rows[0])));
	tcase_add_test(tc, jread_absent_keeps_the_destination_and_null_is_absent_unless_wrong);
	tcase_add_test(tc, jread_strings_fit_their_buffer_or_fail);
	tcase_add_test(tc, jread_elements_are_checked_like_keys);
	tcase_add_test(tc, jread_numbers_bools_objects_and_unknown_keys);
	tcase_add_loop_test(tc, jread_parse_object_is_strict, 0,
			    (int)(sizeof(parse_rows) / sizeof(parse_rows[0])));
	tcase_add_test(tc, jread_report_gets_the_key_and_whether_it_is_missing);
	return s;
}
