/* `qplab hs send` and `qplab hs serve` as users run them: the real binary,
 * its stdout, stderr and exit status. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hs_testutil.h"
#include "unit.h"

#define CONN_BODY "{\"local_nic_path\":\"a:1@x\",\"peer_nic_path\":\"b:2@y\",\"qp_num\":[7,8]}\n"

static const char *qplab(void)
{
	static char path[512];
	const char *build = getenv("QPLAB_BUILD");

	snprintf(path, sizeof(path), "%s/qplab", build ? build : "build");
	return path;
}

struct run {
	int status; /* exit status, or 128 + signal */
	char out[8192];
	char err[8192];
};

/* Reads both pipes until EOF on both or the deadline. */
static void collect(int ofd, int efd, struct run *r)
{
	size_t on = 0, en = 0;
	int64_t left = (int64_t)(unit_timeout(10) * 1000);

	while ((ofd >= 0 || efd >= 0) && left > 0) {
		struct pollfd p[2] = {{.fd = ofd, .events = POLLIN}, {.fd = efd, .events = POLLIN}};
		poll(p, 2, 100);
		left -= 100;
		for (int i = 0; i < 2; i++) {
			int *fd = i ? &efd : &ofd;
			char *buf = i ? r->err : r->out;
			size_t *n = i ? &en : &on;
			ssize_t got;
			if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
				continue;
			got = read(*fd, buf + *n, sizeof(r->out) - 1 - *n);
			if (got <= 0) {
				close(*fd);
				*fd = -1;
			} else {
				*n += (size_t)got;
			}
		}
	}
	r->out[on] = r->err[en] = '\0';
}

/* Runs qplab with args (NULL-terminated), stdin from stdin_path or
 * /dev/null. */
static void run_qplab(struct run *r, const char *stdin_path, const char *const *args)
{
	int o[2], e[2], status;
	const char *argv[32] = {qplab()};
	pid_t pid;

	for (int i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	ck_assert_int_eq(pipe(o), 0);
	ck_assert_int_eq(pipe(e), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
		dup2(in, 0);
		dup2(o[1], 1);
		dup2(e[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	memset(r, 0, sizeof(*r));
	collect(o[0], e[0], r);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct server {
	pid_t pid;
	char addr[80];
	char log[64]; /* its stderr, a temporary file */
};

/* Starts `qplab hs serve --listen 127.0.0.1:0 EXTRA...` and reads its
 * first line. */
static void serve_start(struct server *s, const char *const *extra)
{
	const char *argv[32] = {qplab(), "hs", "serve", "--listen", "127.0.0.1:0"};
	char line[256] = "";
	size_t n = 0;
	int o[2], lfd, i = 5;

	for (int k = 0; extra && extra[k]; k++)
		argv[i++] = extra[k];
	snprintf(s->log, sizeof(s->log), "/tmp/qplab-serve-log.XXXXXX");
	lfd = mkstemp(s->log);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(pipe(o), 0);
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid == 0) {
		dup2(o[1], 1);
		dup2(lfd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(o[1]);
	close(lfd);
	while (n < sizeof(line) - 1 && !strchr(line, '\n')) {
		struct pollfd p = {.fd = o[0], .events = POLLIN};
		ssize_t got;
		ck_assert_msg(poll(&p, 1, (int)(unit_timeout(5) * 1000)) == 1, "no first line");
		got = read(o[0], line + n, sizeof(line) - 1 - n);
		ck_assert_int_gt(got, 0);
		n += (size_t)got;
		line[n] = '\0';
	}
	close(o[0]);
	ck_assert_msg(sscanf(line, "listening on %79s", s->addr) == 1, "first line: %s", line);
}

/* SIGTERM, then the exit status. */
static int serve_stop(struct server *s)
{
	int status;

	kill(s->pid, SIGTERM);
	ck_assert_int_eq(waitpid(s->pid, &status, 0), s->pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(cli_send_probe_prints_the_reply)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	char addr[64];
	struct run r;

	snprintf(addr, sizeof(addr), "%s", hs_test_addr(d));
	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--to", addr, "--type", "probe", NULL});
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, "{\"status\":\"success\"}\n");
	qphs_daemon_free(d);
}
END_TEST

/* Each --fault of hs serve, and the exit status and error name hs send
 * must show (docs/hs.md's table, written out here by hand). */
static const struct {
	const char *fault;
	int status;
	const char *name;
} cli_faults[] = {
	{"close", 14, "ERR_PEER_CLOSED"},
	{"stall", 13, "ERR_REPLY_TIMEOUT"},
	{"truncate", 15, "ERR_FRAME_TRUNCATED"},
	{"oversize", 15, "ERR_FRAME_TOO_LONG"},
	{"zero-length", 15, "ERR_FRAME_ZERO_LENGTH"},
	{"garbage", 15, "ERR_FRAME_BAD_TYPE"},
	{"empty-body", 15, "ERR_FRAME_EMPTY_BODY"},
	{"not-json", 17, "ERR_FRAME_NOT_JSON"},
	{"trailing", 17, "ERR_FRAME_TRAILING"},
	{"wrong-type", 16, "ERR_REPLY_WRONG_TYPE"},
	{"old-protocol", 20, "ERR_REPLY_OLD_PROTOCOL"},
	{"null-reply", 23, "ERR_PEER_NO_TRANSPORT"},
	{"reject:no thanks", 18, "ERR_REJECT_HANDSHAKE"},
	{"delay:20", 0, NULL},
};

START_TEST(cli_send_exit_status_names_each_serve_fault)
{
	struct server s;
	struct run r;
	char body[] = "/tmp/qplab-cli-body.XXXXXX";
	int bfd = mkstemp(body);

	ck_assert_int_ge(bfd, 0);
	close(bfd);
	write_file(body, CONN_BODY);
	serve_start(&s, (const char *const[]){"--fault", cli_faults[_i].fault, "--seed", "7", NULL});
	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--to", s.addr, "--type",
						  "connection", "--body", body, "--timeout", "1",
						  NULL});
	ck_assert_msg(r.status == cli_faults[_i].status, "fault %s: exit %d, want %d: %s",
		      cli_faults[_i].fault, r.status, cli_faults[_i].status, r.err);
	if (cli_faults[_i].name)
		ck_assert_msg(strstr(r.err, cli_faults[_i].name), "stderr: %s", r.err);
	else
		ck_assert_ptr_nonnull(strstr(r.out, "\"local_nic_path\":\"b:2@y\""));
	if (!strncmp(cli_faults[_i].fault, "reject:", 7))
		ck_assert_ptr_nonnull(strstr(r.err, "no thanks"));
	ck_assert_int_eq(serve_stop(&s), 0);
	unlink(s.log);
	unlink(body);
}
END_TEST

START_TEST(cli_serve_mirrors_the_connection_request)
{
	struct server s;
	struct run r;
	char log[4096] = "";
	FILE *f;

	char body[] = "/tmp/qplab-cli-body.XXXXXX";

	close(mkstemp(body));
	write_file(body, CONN_BODY);
	serve_start(&s, NULL);
	/* --body - reads the body from stdin. */
	run_qplab(&r, body, (const char *const[]){"hs", "send", "--to", s.addr, "--type",
						  "connection", "--body", "-", NULL});
	unlink(body);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "\"local_nic_path\":\"b:2@y\""));
	ck_assert_ptr_nonnull(strstr(r.out, "\"peer_nic_path\":\"a:1@x\""));
	ck_assert_ptr_nonnull(strstr(r.out, "\"qp_num\":[1000,1001]"));
	ck_assert_ptr_nonnull(strstr(r.out, "\"reply_msg\":\"\""));
	ck_assert_int_eq(serve_stop(&s), 0);
	f = fopen(s.log, "r");
	ck_assert_ptr_nonnull(f);
	log[fread(log, 1, sizeof(log) - 1, f)] = '\0';
	fclose(f);
	unlink(s.log);
	ck_assert_msg(strstr(log, "connection request from 127.0.0.1:"), "log: %s", log);
}
END_TEST

START_TEST(cli_serve_sends_the_reply_file_verbatim)
{
	static const char rep[] = "{\"local_nic_path\":\"canned@z\",\"qp_num\":[9],\"reply_msg\":\"\"}\n";
	char path[] = "/tmp/qplab-cli-reply.XXXXXX", body[] = "/tmp/qplab-cli-body.XXXXXX";
	struct server s;
	struct run r;

	close(mkstemp(path));
	close(mkstemp(body));
	write_file(path, rep);
	write_file(body, CONN_BODY);
	serve_start(&s, (const char *const[]){"--reply", path, NULL});
	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--to", s.addr, "--type",
						  "connection", "--body", body, NULL});
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_str_eq(r.out, rep);
	/* Probe, Notify and Metadata still get their own answers. */
	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--to", s.addr, "--type",
						  "notify", NULL});
	ck_assert_str_eq(r.out, "{\"name\":\"\",\"notify_msg\":\"success\"}\n");
	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--to", s.addr, "--type",
						  "metadata", NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "\"protocol\":\"rdma\""));
	ck_assert_int_eq(serve_stop(&s), 0);
	unlink(s.log);
	unlink(path);
	unlink(body);
}
END_TEST

START_TEST(cli_send_refused_and_unresolved_have_their_own_status)
{
	struct server s;
	char addr[80];
	struct run r;

	/* A port that was just served and is now closed. */
	serve_start(&s, NULL);
	snprintf(addr, sizeof(addr), "%s", s.addr);
	ck_assert_int_eq(serve_stop(&s), 0);
	unlink(s.log);
	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--to", addr, "--type", "probe", NULL});
	ck_assert_msg(r.status == 11, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "ERR_CONNECT_REFUSED"));
	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--to", "no-such-host.invalid:1",
						  "--type", "probe", NULL});
	ck_assert_msg(r.status == 19, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "ERR_DNS"));
}
END_TEST

START_TEST(cli_send_help_lists_the_exit_statuses)
{
	struct run r;

	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--help", NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "11  connection refused: ERR_CONNECT_REFUSED"));
	ck_assert_ptr_nonnull(strstr(r.out, "13  reply timed out: ERR_REPLY_TIMEOUT"));
	ck_assert_ptr_nonnull(strstr(r.out, "ERR_FRAME_TRUNCATED"));
	ck_assert_ptr_nonnull(strstr(r.out, "19  name not resolved: ERR_DNS"));
}
END_TEST

START_TEST(cli_bad_flags_are_usage_errors)
{
	struct run r;

	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--type", "probe", NULL});
	ck_assert_int_eq(r.status, 2);
	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--to", "127.0.0.1:1", "--type",
						  "hello", NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "hello"));
	run_qplab(&r, NULL, (const char *const[]){"hs", "send", "--to", "127.0.0.1:1", "--type",
						  "connection", NULL});
	ck_assert_int_eq(r.status, 2);
	run_qplab(&r, NULL, (const char *const[]){"hs", "serve", "--listen", "127.0.0.1:0",
						  "--fault", "explode", NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "explode"));
	run_qplab(&r, NULL, (const char *const[]){"hs", "serve", NULL});
	ck_assert_int_eq(r.status, 2);
}
END_TEST

/* Each refused --body (and --reply) says why: before, an oversized or
 * endless one said "No such file or directory" and a directory "invalid
 * argument". */
START_TEST(cli_body_files_that_cannot_be_sent_say_why)
{
	static const struct {
		const char *flag, *path, *in, *says;
	} cases[] = {
		{"--body", "/", NULL, "--body /: is a directory, not a file"},
		{"--body", "/nonexistent/body.json", NULL, "cannot open it: No such file or directory"},
		{"--body", "/dev/zero", NULL, "--body /dev/zero: is longer than 134217728 bytes"},
		{"--body", "-", "/dev/zero", "--body -: is longer than 134217728 bytes"},
		{"--reply", "/", NULL, "--reply /: is a directory, not a file"},
		{"--reply", "/dev/zero", NULL, "--reply /dev/zero: is longer than 134217728 bytes"},
	};
	struct run r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!strcmp(cases[i].flag, "--body"))
			run_qplab(&r, cases[i].in, (const char *const[]){"hs", "send", "--to", "127.0.0.1:1",
								      "--type", "connection", "--body",
								      cases[i].path, NULL});
		else
			run_qplab(&r, cases[i].in, (const char *const[]){"hs", "serve", "--listen",
								      "127.0.0.1:0", "--reply",
								      cases[i].path, NULL});
		ck_assert_int_eq(r.status, 2);
		ck_assert_msg(strstr(r.err, cases[i].says), "%s %s: '%s'", cases[i].flag, cases[i].path,
			      r.err);
	}
}
END_TEST

Suite *suite_hs_cli(void)
{
	Suite *s = suite_create("hs_cli");
	TCase *tc = unit_tcase(s, "hs", 15);

	tcase_add_test(tc, cli_send_probe_prints_the_reply);
	tcase_add_loop_test(tc, cli_send_exit_status_names_each_serve_fault, 0,
			    (int)(sizeof(cli_faults) / sizeof(cli_faults[0])));
	tcase_add_test(tc, cli_serve_mirrors_the_connection_request);
	tcase_add_test(tc, cli_serve_sends_the_reply_file_verbatim);
	tcase_add_test(tc, cli_send_refused_and_unresolved_have_their_own_status);
	tcase_add_test(tc, cli_send_help_lists_the_exit_statuses);
	tcase_add_test(tc, cli_bad_flags_are_usage_errors);
	tcase_add_test(tc, cli_body_files_that_cannot_be_sent_say_why);
	return s;
}
