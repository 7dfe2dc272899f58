/* `qplab hs encode|decode`, run as a user runs them: build/qplab with a given
 * stdin, checking stdout, stderr and the exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "golden.h"
#include "qphs.h"
#include "unit.h"

#define CONNECTION_JSON                                                        \
	"{\"local_gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01\","  \
	"\"local_lid\":0,\"local_nic_path\":\"10.0.0.1:15123@mlx5_0\","        \
	"\"payload\":\"\",\"peer_nic_path\":\"10.0.0.2:16000@mlx5_1\","        \
	"\"qp_num\":[1234,4294967295],\"ready_ack\":false,\"reply_msg\":\"\"}\n"

struct run {
	int status; /* exit code, or 128 + signal */
	char *out;
	size_t out_len;
	char *err;
};

static void run_clear(struct run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static char *slurp(FILE *f, size_t *len)
{
	long n;
	char *buf;

	fflush(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	fclose(f);
	return buf;
}

/* Runs `qplab ARGS...` (args NULL-terminated, "hs" first) with stdin = in.
 * env: "NAME=value" to set in the child, or NULL.  MC_HANDSHAKE_MAX_LENGTH
 * is otherwise removed so the caller's environment cannot change results. */
static void run_qplab(const char *const *args, const void *in, size_t in_len, const char *env,
		      struct run *r)
{
	const char *dir = getenv("QPLAB_BUILD");
	char path[4096];
	const char *argv[16] = {"qplab"};
	FILE *fin = tmpfile(), *fout = tmpfile(), *ferr = tmpfile();
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/qplab", dir && *dir ? dir : "build");
	ck_assert_msg(access(path, X_OK) == 0, "%s is not there: run make first", path);
	for (size_t i = 0; args[i]; i++) {
		ck_assert_uint_lt(i + 2, sizeof(argv) / sizeof(argv[0]));
		argv[i + 1] = args[i];
	}
	ck_assert(fin && fout && ferr);
	ck_assert_uint_eq(fwrite(in, 1, in_len, fin), in_len);
	fflush(fin);
	rewind(fin);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsetenv("MC_HANDSHAKE_MAX_LENGTH");
		if (env)
			putenv((char *)env);
		dup2(fileno(fin), 0);
		dup2(fileno(fout), 1);
		dup2(fileno(ferr), 2);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fclose(fin);
	r->out = slurp(fout, &r->out_len);
	r->err = slurp(ferr, NULL);
}

static void run_golden(const char *const *args, const char *file, struct run *r)
{
	uint8_t *buf;
	size_t len;

	ck_assert_msg(golden_load(file, &buf, &len) == 0, "cannot load %s", file);
	run_qplab(args, buf, len, NULL, r);
	free(buf);
}

static void expect_output(const struct run *r, int status, const char *out)
{
	ck_assert_msg(r->status == status, "exit %d, want %d; stderr: %s", r->status, status,
		      r->err);
	ck_assert_uint_eq(r->out_len, strlen(out));
	ck_assert_str_eq(r->out, out);
}

static void expect_golden_bytes(const struct run *r, const char *file)
{
	uint8_t *want;
	size_t len;

	ck_assert_msg(r->status == 0, "exit %d; stderr: %s", r->status, r->err);
	ck_assert_int_eq(golden_load(file, &want, &len), 0);
	ck_assert_msg(r->out_len == len && memcmp(r->out, want, len) == 0,
		      "stdout is not the bytes of %s", file);
	free(want);
}

static const char *const ENCODE_PROBE[] = {"hs", "encode", "--type", "probe", NULL};
static const char *const DECODE[] = {"hs", "decode", NULL};

START_TEST(cli_probe_encodes_then_decodes)
{
	struct run enc, dec;

	run_qplab(ENCODE_PROBE, "{}", 2, NULL, &enc);
	expect_golden_bytes(&enc, "probe-request.hex");
	run_qplab(DECODE, enc.out, enc.out_len, NULL, &dec);
	expect_output(&dec, 0, "probe\n{}\n");
	ck_assert_str_eq(dec.err, "");
	run_clear(&enc);
	run_clear(&dec);
}
END_TEST

START_TEST(cli_decode_prints_the_golden_example_json_exactly)
{
	struct run r;

	run_golden(DECODE, "connection-example.hex", &r);
	/* The JSON line is the body byte for byte ('\n' included). */
	expect_output(&r, 0, "connection\n" CONNECTION_JSON);
	run_clear(&r);
}
END_TEST

static const struct {
	const char *file;
	const char *out;
} decoded_goldens[] = {
	{"probe-request.hex", "probe\n{}\n"},
	{"probe-reply.hex", "probe\n{\"status\":\"success\"}\n"},
	{"notify-request.hex", "notify\n{\"name\":\"10.0.0.1:15123\",\"notify_msg\":\"hello\"}\n"},
	{"notify-reply.hex", "notify\n{\"name\":\"\",\"notify_msg\":\"success\"}\n"},
	{"old-protocol-connection.hex", "old-protocol\n" CONNECTION_JSON},
};

START_TEST(cli_decode_names_every_golden_frame)
{
	struct run r;

	run_golden(DECODE, decoded_goldens[_i].file, &r);
	expect_output(&r, 0, decoded_goldens[_i].out);
	run_clear(&r);
}
END_TEST

START_TEST(cli_decode_reads_frames_back_to_back)
{
	struct run r;
	uint8_t *a, *b, *both;
	size_t alen, blen;

	ck_assert_int_eq(golden_load("probe-reply.hex", &a, &alen), 0);
	ck_assert_int_eq(golden_load("notify-request.hex", &b, &blen), 0);
	both = malloc(alen + blen);
	memcpy(both, a, alen);
	memcpy(both + alen, b, blen);
	run_qplab(DECODE, both, alen + blen, NULL, &r);
	expect_output(&r, 0,
		      "probe\n{\"status\":\"success\"}\n"
		      "notify\n{\"name\":\"10.0.0.1:15123\",\"notify_msg\":\"hello\"}\n");
	run_clear(&r);
	run_qplab(DECODE, "", 0, NULL, &r);
	expect_output(&r, 0, "");
	run_clear(&r);
	free(both);
	free(a);
	free(b);
}
END_TEST

/* Bodies in other spellings come out in Mooncake's bytes. */
static const struct {
	const char *type;
	int old_protocol;
	const char *in;
	const char *golden;
} reencoded[] = {
	{"probe", 0, " { }\n\n", "probe-request.hex"},
	{"probe", 0, "{ \"status\" : \"success\" }", "probe-reply.hex"},
	{"notify", 0, "{\"notify_msg\": \"hello\", \"name\": \"10.0.0.1:15123\"}",
	 "notify-request.hex"},
	{"notify", 0, "{\"name\":\"\",\"notify_msg\":\"success\"}\n", "notify-reply.hex"},
	{"connection", 0,
	 "{\n  \"reply_msg\": \"\",\n  \"ready_ack\": false,\n  \"qp_num\": [1234, 4294967295],\n"
	 "  \"peer_nic_path\": \"10.0.0.2:16000@mlx5_1\",\n  \"payload\": \"\",\n"
	 "  \"local_nic_path\": \"10.0.0.1:15123@mlx5_0\",\n  \"local_lid\": 0,\n"
	 "  \"local_gid\": \"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01\"\n}\n",
	 "connection-example.hex"},
	{"connection", 1, CONNECTION_JSON, "old-protocol-connection.hex"},
};

START_TEST(cli_encode_writes_mooncakes_bytes)
{
	const char *args[] = {"hs", "encode", "--type", reencoded[_i].type, NULL, NULL};
	struct run r;

	if (reencoded[_i].old_protocol)
		args[4] = "--old-protocol";
	run_qplab(args, reencoded[_i].in, strlen(reencoded[_i].in), NULL, &r);
	expect_golden_bytes(&r, reencoded[_i].golden);
	run_clear(&r);
}
END_TEST

START_TEST(cli_encode_raw_keeps_the_bytes)
{
	static const char *const args[] = {"hs", "encode", "--type=notify", "--raw", NULL};
	struct run r;

	run_qplab(args, "not json", 8, NULL, &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(r.out_len, 17);
	ck_assert(memcmp(r.out, "\x09\0\0\0\0\0\0\0\x02not json", 17) == 0);
	run_clear(&r);
}
END_TEST

/* A rejected body: exit 1, the error's name on stderr, nothing on stdout. */
static const struct {
	const char *type;
	const char *flag;
	const char *in;
	int err;
} rejected[] = {
	{"probe", NULL, "", QPHS_ERR_FRAME_EMPTY_BODY},
	{"probe", NULL, " \n", QPHS_ERR_FRAME_EMPTY_BODY},
	{"probe", NULL, "{", QPHS_ERR_FRAME_NOT_JSON},
	{"probe", NULL, "{} x", QPHS_ERR_FRAME_TRAILING},
	{"probe", NULL, "[]", QPHS_ERR_BODY_NOT_OBJECT},
	{"probe", NULL, "{\"a\":1}", QPHS_ERR_INVALID_ARGUMENT},
	{"notify", NULL, "{\"name\":[]}", QPHS_ERR_BODY_WRONG_TYPE},
	{"connection", NULL, "{\"local_lid\":70000}", QPHS_ERR_BODY_OUT_OF_RANGE},
	{"connection", NULL, "{\"qp_num\":\"1\"}", QPHS_ERR_BODY_WRONG_TYPE},
	{"metadata", NULL, "5", QPHS_ERR_BODY_NOT_OBJECT},
	{"probe", "--raw", "", QPHS_ERR_INVALID_ARGUMENT},
	{"probe", "--old-protocol", "\x01{}", QPHS_ERR_FRAME_NOT_JSON},
};

START_TEST(cli_encode_rejects_bad_bodies)
{
	const char *args[] = {"hs", "encode", "--type", rejected[_i].type, rejected[_i].flag,
			      NULL};
	char want[128];
	struct run r;

	snprintf(want, sizeof(want), "qplab hs encode: %s: ", qphs_errname(rejected[_i].err));
	run_qplab(args, rejected[_i].in, strlen(rejected[_i].in), NULL, &r);
	ck_assert_msg(r.status == 1, "%s: exit %d", rejected[_i].in, r.status);
	ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "%s: stderr '%s', want '%s...'",
		      rejected[_i].in, r.err, want);
	ck_assert_uint_eq(r.out_len, 0);
	unit_hit(rejected[_i].err);
	run_clear(&r);
}
END_TEST

START_TEST(cli_encode_old_protocol_refuses_a_type_like_first_byte)
{
	static const char *const args[] = {"hs",    "encode",         "--type",
					   "probe", "--old-protocol", "--raw", NULL};
	struct run r;

	run_qplab(args, "\x03{}", 3, NULL, &r);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "ERR_INVALID_ARGUMENT"));
	ck_assert_ptr_nonnull(strstr(r.err, "0x04-0x7f"));
	unit_hit(QPHS_ERR_INVALID_ARGUMENT);
	run_clear(&r);
}
END_TEST

/* A bad frame: exit 1 and one line naming the error, the frame and where
 * it starts; frames before it are printed. */
static const struct {
	const char *in;
	size_t len;
	int err;
	const char *where;
	const char *out;
} bad_frames[] = {
	{"\0\0\0\0\0\0\0\0", 8, QPHS_ERR_FRAME_ZERO_LENGTH, "(frame 1, byte offset 0)", ""},
	{"\1\0\20\0\0\0\0\0", 8, QPHS_ERR_FRAME_TOO_LONG, "(frame 1, byte offset 0)", ""},
	{"\4\0\0\0\0\0\0\0\200{}\n", 12, QPHS_ERR_FRAME_BAD_TYPE, "(frame 1, byte offset 0)", ""},
	{"\1\0\0\0\0\0\0\0\0", 9, QPHS_ERR_FRAME_EMPTY_BODY, "(frame 1, byte offset 0)", ""},
	{"\4\0\0\0\0\0\0\0\3{}\n\4\0\0", 15, QPHS_ERR_FRAME_TRUNCATED,
	 "(frame 2, byte offset 12)", "probe\n{}\n"},
	{"\4\0\0\0\0\0\0\0\3{}\n\3\0\0\0\0\0\0\0\3 \n", 23, QPHS_ERR_FRAME_EMPTY_BODY,
	 "(frame 2, byte offset 12)", "probe\n{}\n"},
	{"\4\0\0\0\0\0\0\0\3{]\n", 12, QPHS_ERR_FRAME_NOT_JSON, "(frame 1, byte offset 0)", ""},
	{"\5\0\0\0\0\0\0\0\3{}\n{", 13, QPHS_ERR_FRAME_TRAILING, "(frame 1, byte offset 0)",
	 ""},
};

static void expect_bad_frame(const struct run *r, int err, const char *where, const char *out)
{
	char want[256];

	snprintf(want, sizeof(want), "qplab hs decode: %s: %s %s", qphs_errname(err),
		 qphs_strerror(err), where);
	ck_assert_msg(r->status == 1, "exit %d for %s", r->status, qphs_errname(err));
	ck_assert_msg(strncmp(r->err, want, strlen(want)) == 0, "stderr '%s', want '%s...'",
		      r->err, want);
	ck_assert_str_eq(r->out, out);
}

START_TEST(cli_decode_bad_frame_exits_1_naming_it)
{
	struct run r;

	run_qplab(DECODE, bad_frames[_i].in, bad_frames[_i].len, NULL, &r);
	expect_bad_frame(&r, bad_frames[_i].err, bad_frames[_i].where, bad_frames[_i].out);
	unit_hit(bad_frames[_i].err);
	run_clear(&r);
}
END_TEST

START_TEST(cli_decode_zero_length_message_is_exact)
{
	struct run r;

	run_qplab(DECODE, "\0\0\0\0\0\0\0\0", 8, NULL, &r);
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.err, "qplab hs decode: ERR_FRAME_ZERO_LENGTH: frame length is zero "
				"(frame 1, byte offset 0)\n");
	unit_hit(QPHS_ERR_FRAME_ZERO_LENGTH);
	run_clear(&r);
}
END_TEST

START_TEST(cli_decode_rejects_deep_nesting)
{
	char frame[9 + 100];
	size_t n = 0;
	struct run r;

	/* 40 nested arrays: deeper than the 32 levels a body may have. */
	for (int i = 0; i < 40; i++)
		frame[9 + n++] = '[';
	for (int i = 0; i < 40; i++)
		frame[9 + n++] = ']';
	memcpy(frame, "\x51\0\0\0\0\0\0\0\x01", 9); /* 81 = 80 + type byte */
	run_qplab(DECODE, frame, 9 + n, NULL, &r);
	expect_bad_frame(&r, QPHS_ERR_BODY_TOO_DEEP, "(frame 1, byte offset 0)", "");
	unit_hit(QPHS_ERR_BODY_TOO_DEEP);
	run_clear(&r);
}
END_TEST

/* Only the length of a 1 MiB + 1 frame: too long for the default limit,
 * merely cut short for a 2 MiB one. */
START_TEST(cli_decode_limit_from_flag_and_environment)
{
	static const char header[] = "\1\0\20\0\0\0\0\0";
	static const char *const flag[] = {"hs", "decode", "--max-length", "2097152", NULL};
	struct run r;

	run_qplab(DECODE, header, 8, NULL, &r);
	expect_bad_frame(&r, QPHS_ERR_FRAME_TOO_LONG, "(frame 1, byte offset 0)", "");
	run_clear(&r);
	run_qplab(flag, header, 8, NULL, &r);
	expect_bad_frame(&r, QPHS_ERR_FRAME_TRUNCATED, "(frame 1, byte offset 0)", "");
	run_clear(&r);
	run_qplab(DECODE, header, 8, "MC_HANDSHAKE_MAX_LENGTH=2097152", &r);
	expect_bad_frame(&r, QPHS_ERR_FRAME_TRUNCATED, "(frame 1, byte offset 0)", "");
	run_clear(&r);
	/* The flag wins over the environment, even a broken one. */
	run_qplab(flag, header, 8, "MC_HANDSHAKE_MAX_LENGTH=lots", &r);
	expect_bad_frame(&r, QPHS_ERR_FRAME_TRUNCATED, "(frame 1, byte offset 0)", "");
	run_clear(&r);
	run_qplab(DECODE, header, 8, "MC_HANDSHAKE_MAX_LENGTH=5", &r);
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "MC_HANDSHAKE_MAX_LENGTH"));
	ck_assert_ptr_nonnull(strstr(r.err, "1048576..134217728"));
	unit_hit(QPHS_ERR_FRAME_TOO_LONG);
	unit_hit(QPHS_ERR_FRAME_TRUNCATED);
	run_clear(&r);
}
END_TEST

static const char *const usage_errors[][7] = {
	{"hs", "encode", NULL},
	{"hs", "encode", "--type", NULL},
	{"hs", "encode", "--type", "bogus", NULL},
	{"hs", "encode", "--type", "old-protocol", NULL},
	{"hs", "encode", "--type", "probe", "--bogus", NULL},
	{"hs", "encode", "--type", "probe", "extra", NULL},
	{"hs", "decode", "--bogus", NULL},
	{"hs", "decode", "--max-length", NULL},
	{"hs", "decode", "--max-length", "0", NULL},
	{"hs", "decode", "--max-length", "134217729", NULL},
	{"hs", "decode", "--max-length", "-1048576", NULL},
	{"hs", "decode", "--max-length=1MiB", NULL},
	{"hs", "bogus", NULL},
};

START_TEST(cli_usage_error_exits_2)
{
	struct run r;

	run_qplab(usage_errors[_i], "{}", 2, NULL, &r);
	ck_assert_msg(r.status == 2, "%s %s: exit %d", usage_errors[_i][1],
		      usage_errors[_i][2] ? usage_errors[_i][2] : "", r.status);
	ck_assert_uint_eq(r.out_len, 0);
	ck_assert_msg(strncmp(r.err, "qplab", 5) == 0, "no message: '%s'", r.err);
	run_clear(&r);
}
END_TEST

START_TEST(cli_help_on_every_subcommand)
{
	static const char *const helps[][4] = {
		{"hs", "--help", NULL}, {"hs", "encode", "--help", NULL},
		{"hs", "decode", "--help", NULL}, {"hs", "encode", "-h", NULL}};
	struct run r;

	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		run_qplab(helps[i], "", 0, NULL, &r);
		ck_assert_int_eq(r.status, 0);
		ck_assert_msg(strncmp(r.out, "usage: qplab hs", 15) == 0, "help: '%s'", r.out);
		ck_assert_str_eq(r.err, "");
		run_clear(&r);
	}
}
END_TEST

/* A broken QPLAB_TIME_MULTIPLIER stops `qplab run` before it builds
 * anything; its --help still works. */
START_TEST(cli_run_refuses_a_bad_time_multiplier)
{
	static const char *const run_args[] = {"run", "--backend", "netns", "no-such-dir", NULL};
	static const char *const help[] = {"run", "--help", NULL};
	static const char *const envs[] = {"QPLAB_TIME_MULTIPLIER=0", "QPLAB_TIME_MULTIPLIER=slow",
					   "QPLAB_TIME_MULTIPLIER=101"};
	struct run r;

	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		run_qplab(run_args, "", 0, envs[i], &r);
		ck_assert_int_eq(r.status, 2);
		ck_assert_msg(strstr(r.err, envs[i]) && strstr(r.err, "(accepted: 1 to 100)"), "%s: '%s'",
			      envs[i], r.err);
		ck_assert_msg(!strstr(r.err, "no-such-dir"), "checked the paths first: '%s'", r.err);
		run_clear(&r);
	}
	run_qplab(help, "", 0, envs[0], &r);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "usage: qplab run"));
	run_clear(&r);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof(a[0])))

Suite *suite_cli(void)
{
	Suite *s = suite_create("cli");
	TCase *tc;

	tc = unit_tcase(s, "decode", 30);
	tcase_add_test(tc, cli_probe_encodes_then_decodes);
	tcase_add_test(tc, cli_decode_prints_the_golden_example_json_exactly);
	tcase_add_loop_test(tc, cli_decode_names_every_golden_frame, 0, N(decoded_goldens));
	tcase_add_test(tc, cli_decode_reads_frames_back_to_back);
	tcase_add_loop_test(tc, cli_decode_bad_frame_exits_1_naming_it, 0, N(bad_frames));
	tcase_add_test(tc, cli_decode_zero_length_message_is_exact);
	tcase_add_test(tc, cli_decode_rejects_deep_nesting);
	tcase_add_test(tc, cli_decode_limit_from_flag_and_environment);
	tc = unit_tcase(s, "encode", 30);
	tcase_add_loop_test(tc, cli_encode_writes_mooncakes_bytes, 0, N(reencoded));
	tcase_add_test(tc, cli_encode_raw_keeps_the_bytes);
	tcase_add_loop_test(tc, cli_encode_rejects_bad_bodies, 0, N(rejected));
	tcase_add_test(tc, cli_encode_old_protocol_refuses_a_type_like_first_byte);
	tc = unit_tcase(s, "usage", 30);
	tcase_add_loop_test(tc, cli_usage_error_exits_2, 0, N(usage_errors));
	tcase_add_test(tc, cli_help_on_every_subcommand);
	tcase_add_test(tc, cli_run_refuses_a_bad_time_multiplier);
	return s;
}
