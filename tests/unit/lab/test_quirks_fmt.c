/* `qplab quirks` without a device: the cell text of a row, the JSON that
 * carries a run out of the VM (round trip and strict decoding), the
 * markdown matrix, and errno naming. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "quirks/quirks.h"
#include "unit.h"

static struct qphs_probe_row row(const char *name, int ran, int ret, const char *err,
				 const char *state, const char *completion)
{
	struct qphs_probe_row r;

	memset(&r, 0, sizeof(r));
	snprintf(r.name, sizeof(r.name), "%s", name);
	r.ran = ran;
	r.ret = ret;
	snprintf(r.err, sizeof(r.err), "%s", err);
	snprintf(r.state, sizeof(r.state), "%s", state);
	snprintf(r.completion, sizeof(r.completion), "%s", completion);
	return r;
}

static const struct {
	int ran, ret;
	const char *err, *state, *completion, *want;
} CELLS[] = {
	{1, 0, "", "RESET", "", "ok -> RESET"},
	{1, 22, "EINVAL", "INIT", "", "EINVAL -> INIT"},
	{1, 0, "", "ERR", "IBV_WC_RETRY_EXC_ERR", "ok -> ERR; IBV_WC_RETRY_EXC_ERR"},
	{1, 0, "", "RTS", "none within 3000 ms", "ok -> RTS; none within 3000 ms"},
	{0, 0, "", "-", "", "skip"},
	{1, 0, "", "A|B", "x\ny", "ok -> A/B; x/y"}, /* a '|' would split the cell */
};

START_TEST(quirks_cell_says_result_state_and_completion)
{
	for (size_t i = 0; i < sizeof(CELLS) / sizeof(CELLS[0]); i++) {
		struct qphs_probe_row r =
			row("p", CELLS[i].ran, CELLS[i].ret, CELLS[i].err, CELLS[i].state, CELLS[i].completion);
		char out[160];

		quirks_cell(&r, out, sizeof(out));
		ck_assert_msg(!strcmp(out, CELLS[i].want), "case %zu: '%s', want '%s'", i, out,
			      CELLS[i].want);
	}
}
END_TEST

START_TEST(quirks_cell_of_a_missing_row_is_na)
{
	char out[16];

	quirks_cell(NULL, out, sizeof(out));
	ck_assert_str_eq(out, "n/a");
}
END_TEST

static void sample(struct qphs_probe_info *in, struct qphs_probe_row *rows)
{
	memset(in, 0, sizeof(*in));
	snprintf(in->device, sizeof(in->device), "qlqk-a");
	snprintf(in->peer_device, sizeof(in->peer_device), "qlqk-b");
	snprintf(in->driver, sizeof(in->driver), "rxe");
	snprintf(in->quirk, sizeof(in->quirk), "e810");
	in->port = 1;
	in->gid_index = 1;
	in->peer_gid_index = 2;
	in->gid_tbl_len = 1024;
	in->active_mtu = 1024;
	in->max_mtu = 4096;
	in->max_qp_rd_atom = 128;
	in->max_qp_init_rd_atom = 127;
	in->vendor_id = 0xffffff;
	in->qp_timeout = 14;
	in->deadline_ms = 3000;
	rows[0] = row("reset-reset", 1, 0, "", "RESET", "");
	rows[0].ms = 2.25;
	snprintf(rows[0].note, sizeof(rows[0].note), "fresh QP");
	rows[1] = row("unknown-qpn-retry6", 1, 0, "", "ERR", "IBV_WC_RETRY_EXC_ERR");
	rows[1].ms = 1247.5;
	rows[2] = row("rtr-zero-dgid", 1, 22, "EINVAL", "INIT", "");
	rows[3] = row("rtr-bad-sgid-index", 0, 0, "", "-", "");
}

START_TEST(quirks_json_round_trips_every_field)
{
	struct qphs_probe_info in;
	struct qphs_probe_row rows[4];
	struct quirks_column col;
	char err[256] = "";
	json_object *doc, *back;

	sample(&in, rows);
	doc = quirks_to_json("6.1.0-41-amd64", &in, rows, 4);
	/* Through text, as it leaves the VM. */
	back = json_tokener_parse(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
	ck_assert_ptr_nonnull(back);
	ck_assert_msg(quirks_from_json(back, &col, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(col.kernel, "6.1.0-41-amd64");
	ck_assert_str_eq(col.label, "6.1.0-41-amd64 rxe+e810");
	ck_assert_mem_eq(&col.info, &in, sizeof(in));
	ck_assert_uint_eq(col.nrows, 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_str_eq(col.rows[i].name, rows[i].name);
		ck_assert_int_eq(col.rows[i].ran, rows[i].ran);
		ck_assert_int_eq(col.rows[i].ret, rows[i].ret);
		ck_assert_str_eq(col.rows[i].err, rows[i].err);
		ck_assert_str_eq(col.rows[i].state, rows[i].state);
		ck_assert_str_eq(col.rows[i].completion, rows[i].completion);
		ck_assert_str_eq(col.rows[i].note, rows[i].note);
		ck_assert_double_eq_tol(col.rows[i].ms, rows[i].ms, 0.005);
	}
	json_object_put(doc);
	json_object_put(back);
}
END_TEST

/* Each case edits a good document; decoding must refuse it and say why. */
static const struct {
	const char *path, *value, *want;
} BAD[] = {
	{"schema_version", "2", "schema_version 2"},
	{"kernel", "7", "\"kernel\" must be a string, not an integer"},
	{"rows", "{}", "\"rows\" must be an array, not an object"},
	{"info", "[]", "\"info\" must be an object, not an array"},
	{"info.vendor_id", "\"rxe\"", "\"vendor_id\" must be an integer, not a string"},
	{"info.vendor_id", "4294967296", "\"vendor_id\" must be in 0..4294967295"},
	{"rows.0.ret", "\"0\"", "row 0: \"ret\" must be an integer, not a string"},
	{"rows.1.ms", "null", "row 1: missing required key \"ms\""},
	{"rows.0.state", "\"INITIALISED\"", "row 0: \"state\" is longer than 7 bytes"},
	{"rows.2", "3", "row 2: \"rows[2]\" must be an object, not an integer"},
};

static void edit(json_object *doc, const char *path, const char *value)
{
	char key[64];
	json_object *o = doc, *v = json_tokener_parse(value);
	const char *p = path, *dot;

	while ((dot = strchr(p, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - p), p);
		o = json_object_is_type(o, json_type_array)
			    ? json_object_array_get_idx(o, (size_t)atoi(key))
			    : json_object_object_get(o, key);
		p = dot + 1;
	}
	if (json_object_is_type(o, json_type_array))
		json_object_array_put_idx(o, (size_t)atoi(p), v);
	else
		json_object_object_add(o, p, v);
}

START_TEST(quirks_json_decoding_is_strict)
{
	struct qphs_probe_info in;
	struct qphs_probe_row rows[4];
	struct quirks_column col;

	sample(&in, rows);
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		json_object *doc = quirks_to_json("6.12.1", &in, rows, 4);
		char err[256] = "";

		edit(doc, BAD[i].path, BAD[i].value);
		ck_assert_msg(quirks_from_json(doc, &col, err, sizeof(err)) == -1,
			      "case %zu (%s) accepted", i, BAD[i].path);
		ck_assert_msg(strstr(err, BAD[i].want), "case %zu: '%s' lacks '%s'", i, err,
			      BAD[i].want);
		json_object_put(doc);
	}
}
END_TEST

START_TEST(quirks_json_refuses_too_many_rows)
{
	struct qphs_probe_info in;
	struct qphs_probe_row rows[QPHS_PROBE_MAX_ROWS + 1];
	struct quirks_column col;
	char err[256] = "";
	json_object *doc;

	sample(&in, rows);
	for (int i = 4; i < QPHS_PROBE_MAX_ROWS + 1; i++)
		rows[i] = rows[0];
	doc = quirks_to_json("7.2", &in, rows, QPHS_PROBE_MAX_ROWS + 1);
	ck_assert_int_eq(quirks_from_json(doc, &col, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "more than"));
	json_object_put(doc);
}
END_TEST

static char *matrix(const struct quirks_column *cols, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	quirks_matrix_print(f, cols, n);
	fclose(f);
	return buf;
}

static void column(struct quirks_column *c, const char *label)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->label, sizeof(c->label), "%s", label);
	c->rows[0] = row("reset-reset", 1, 0, "", "RESET", "");
	c->rows[1] = row("rtr-zero-dgid", 1, 22, "EINVAL", "INIT", "");
	c->nrows = 2;
}

START_TEST(quirks_matrix_has_a_column_per_run_and_bolds_differences)
{
	static struct quirks_column c[2];
	char *m;

	column(&c[0], "6.1.0 rxe");
	column(&c[1], "7.2.0 rxe");
	c[1].rows[1] = row("rtr-zero-dgid", 1, 0, "", "RTR", "");
	m = matrix(c, 2);
	ck_assert_msg(!strncmp(m, "| probe | 6.1.0 rxe | 7.2.0 rxe |\n| --- | --- | --- |\n", 53),
		      "header: %s", m);
	ck_assert_ptr_nonnull(strstr(m, "\n| reset-reset | ok -> RESET | ok -> RESET |\n"));
	ck_assert_ptr_nonnull(strstr(m, "\n| **rtr-zero-dgid** | EINVAL -> INIT | ok -> RTR |\n"));
	/* A probe neither column ran is still a row: the library's list. */
	ck_assert_ptr_nonnull(strstr(m, "\n| err-reset | n/a | n/a |\n"));
	free(m);
}
END_TEST

START_TEST(quirks_matrix_shows_failed_runs_and_unknown_probes)
{
	static struct quirks_column c[2];
	char *m;

	column(&c[0], "6.12.0 rxe");
	c[0].rows[2] = row("probe-from-the-future", 1, 0, "", "RTS", "");
	c[0].nrows = 3;
	memset(&c[1], 0, sizeof(c[1]));
	snprintf(c[1].label, sizeof(c[1].label), "7|x");
	snprintf(c[1].failed, sizeof(c[1].failed), "the VM run exited 125");
	m = matrix(c, 2);
	ck_assert_ptr_nonnull(strstr(m, "| probe | 6.12.0 rxe | 7/x |\n"));
	/* A failed run is no difference. */
	ck_assert_ptr_nonnull(strstr(m, "\n| reset-reset | ok -> RESET | run failed |\n"));
	/* Names the library does not know come last. */
	ck_assert_ptr_nonnull(strstr(m, "| err-reset | n/a | run failed |\n| probe-from-the-future |"));
	free(m);
}
END_TEST

START_TEST(quirks_table_prints_skips_and_results)
{
	struct qphs_probe_info in;
	struct qphs_probe_row rows[4];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	sample(&in, rows);
	snprintf(rows[3].note, sizeof(rows[3].note), "skipped: because");
	quirks_table_print(f, "7.2.0", &in, rows, 4);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "# kernel 7.2.0, device qlqk-a (rxe, quirk e810) port 1"));
	ck_assert_ptr_nonnull(strstr(buf, "\nrtr-zero-dgid                22 EINVAL       INIT "));
	ck_assert_ptr_nonnull(strstr(buf, "IBV_WC_RETRY_EXC_ERR       1247.50"));
	ck_assert_ptr_nonnull(strstr(buf, "\nrtr-bad-sgid-index            - -            -"));
	ck_assert_ptr_nonnull(strstr(buf, "skipped: because\n"));
	free(buf);
}
END_TEST

START_TEST(probe_errno_names)
{
	char buf[16];

	ck_assert_str_eq(qphs_probe_errno_name(EINVAL, buf, sizeof(buf)), "EINVAL");
	ck_assert_str_eq(qphs_probe_errno_name(EHOSTUNREACH, buf, sizeof(buf)), "EHOSTUNREACH");
	ck_assert_str_eq(qphs_probe_errno_name(0, buf, sizeof(buf)), "");
	ck_assert_str_eq(qphs_probe_errno_name(9999, buf, sizeof(buf)), "E9999");
}
END_TEST

START_TEST(probe_names_fit_and_are_unique)
{
	const char *const *n = qphs_probe_names();
	size_t count = 0;

	for (; n[count]; count++) {
		ck_assert_uint_lt(strlen(n[count]), QPHS_PROBE_NAME_LEN);
		for (size_t k = 0; k < count; k++)
			ck_assert_str_ne(n[k], n[count]);
	}
	ck_assert_uint_le(count, QPHS_PROBE_MAX_ROWS);
	ck_assert_uint_ge(count, 16);
}
END_TEST

/* Usage errors are found before any device is opened (exit 2). */
static const struct {
	const char *args[4];
	int want;
} CLI[] = {
	{{"--port", "0"}, QPLAB_EXIT_USAGE},
	{{"--port", "1x"}, QPLAB_EXIT_USAGE},
	{{"--qp-timeout", "32"}, QPLAB_EXIT_USAGE},
	{{"--deadline-ms", "0"}, QPLAB_EXIT_USAGE},
	{{"--quirk", "bogus"}, QPLAB_EXIT_USAGE},
	{{"--frobnicate"}, QPLAB_EXIT_USAGE},
	{{"--device"}, QPLAB_EXIT_USAGE},
	{{"--list-profiles"}, QPLAB_EXIT_OK},
	{{"--json", "--help"}, QPLAB_EXIT_OK},
};

START_TEST(quirks_cli_refuses_bad_arguments_before_opening_a_device)
{
	for (size_t i = 0; i < sizeof(CLI) / sizeof(CLI[0]); i++) {
		char *argv[6] = {(char *)"quirks"};
		int argc = 1;

		for (int k = 0; k < 4 && CLI[i].args[k]; k++)
			argv[argc++] = (char *)CLI[i].args[k];
		ck_assert_msg(cmd_quirks(argc, argv) == CLI[i].want, "case %zu (%s)", i, argv[1]);
	}
}
END_TEST

Suite *suite_quirks_fmt(void)
{
	Suite *s = suite_create("quirks_fmt");
	TCase *t = unit_tcase(s, "quirks_fmt", 10);

	tcase_add_test(t, quirks_cell_says_result_state_and_completion);
	tcase_add_test(t, quirks_cell_of_a_missing_row_is_na);
	tcase_add_test(t, quirks_json_round_trips_every_field);
	tcase_add_test(t, quirks_json_decoding_is_strict);
	tcase_add_test(t, quirks_json_refuses_too_many_rows);
	tcase_add_test(t, quirks_matrix_has_a_column_per_run_and_bolds_differences);
	tcase_add_test(t, quirks_matrix_shows_failed_runs_and_unknown_probes);
	tcase_add_test(t, quirks_table_prints_skips_and_results);
	tcase_add_test(t, probe_errno_names);
	tcase_add_test(t, probe_names_fit_and_are_unique);
	tcase_add_test(t, quirks_cli_refuses_bad_arguments_before_opening_a_device);
	return s;
}
