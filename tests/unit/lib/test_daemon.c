/* lib/daemon over loopback: replies byte for byte, bad frames, deadlines,
 * the connection cap, async handlers, stop, and running out of fds. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/tcp.h> /* tcp_info with segs_in (glibc's has none) */
#include <netinet/in.h>
#include <stdio.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/thread.h"
#include "hs/daemon_int.h" /* ACCEPT_QUEUE */
#include "hs_testutil.h"
#include "unit.h"

#define PROBE_REPLY "\x16\0\0\0\0\0\0\0\x03{\"status\":\"success\"}\n"
#define NOTIFY_REPLY "\x24\0\0\0\0\0\0\0\x02{\"name\":\"\",\"notify_msg\":\"success\"}\n"
#define CONN_BODY "{\"local_nic_path\":\"a:1@x\",\"peer_nic_path\":\"b:2@y\",\"qp_num\":[7,8]}\n"

static void reply_fixed(struct qphs_request *req, void *user)
{
	const char *body = user;

	ck_assert_int_eq(qphs_request_reply(req, body, strlen(body)), 0);
}

static void expect_reply(struct qphs_daemon *d, int type, const char *body,
			 const void *golden, size_t golden_len)
{
	uint8_t req[512], rep[512];
	size_t n = hs_test_frame(type, body, req, sizeof(req));
	ssize_t got = hs_test_exchange(qphs_daemon_port(d), req, n, 0, rep, sizeof(rep));

	ck_assert_int_eq(got, (ssize_t)golden_len);
	ck_assert_mem_eq(rep, golden, golden_len);
}

START_TEST(daemon_answers_probe_byte_exact)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);

	expect_reply(d, QPHS_HS_PROBE, "{}\n", PROBE_REPLY, sizeof(PROBE_REPLY) - 1);
	qphs_daemon_free(d);
}
END_TEST

/* The reply's last bytes and the daemon's FIN share one segment: a
 * client counts the SYN-ACK, the ACK of its request and that segment
 * (tcp_info's segs_in), not a fourth for the FIN alone. */
START_TEST(daemon_sends_its_fin_with_the_reply)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	uint8_t req[64], rep[64];
	size_t n = hs_test_frame(QPHS_HS_PROBE, "{}\n", req, sizeof(req));
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	size_t got = 0;
	int fd = hs_test_connect(qphs_daemon_port(d), 5);

	ck_assert_int_eq(send(fd, req, n, MSG_NOSIGNAL), (ssize_t)n);
	for (ssize_t r; (r = recv(fd, rep + got, sizeof(rep) - got, 0)) > 0;)
		got += (size_t)r;
	ck_assert_uint_eq(got, sizeof(PROBE_REPLY) - 1);
	ck_assert_mem_eq(rep, PROBE_REPLY, got);
	ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl), 0);
	ck_assert_msg(ti.tcpi_segs_in == 3 && ti.tcpi_data_segs_in == 1,
		      "segments in %u (of them with data %u), want 3 (1)", ti.tcpi_segs_in,
		      ti.tcpi_data_segs_in);
	close(fd);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_answers_notify_byte_exact)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);

	expect_reply(d, QPHS_HS_NOTIFY, "{\"name\":\"n\",\"notify_msg\":\"m\"}\n", NOTIFY_REPLY,
		     sizeof(NOTIFY_REPLY) - 1);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_reply_type_follows_request_type)
{
	static const char golden_meta[] = "\x0a\0\0\0\0\0\0\0\x01{\"m\":42}\n";
	static const char golden_conn[] = "\x0a\0\0\0\0\0\0\0\x00{\"c\":42}\n";
	static const char golden_old[] = "\x09\0\0\0\0\0\0\0{\"c\":42}\n";
	static char meta[] = "{\"m\":42}\n", conn[] = "{\"c\":42}\n";
	struct qphs_daemon *d = NULL;

	ck_assert_int_eq(qphs_daemon_new(NULL, &d), 0);
	qphs_daemon_set_handler(d, QPHS_HS_METADATA, reply_fixed, meta);
	qphs_daemon_set_handler(d, QPHS_HS_CONNECTION, reply_fixed, conn);
	ck_assert_int_eq(qphs_daemon_listen(d, "127.0.0.1", 0), 0);
	ck_assert_int_eq(qphs_daemon_start(d), 0);
	expect_reply(d, QPHS_HS_METADATA, "{\"name\":\"seg\"}\n", golden_meta, sizeof(golden_meta) - 1);
	expect_reply(d, QPHS_HS_CONNECTION, CONN_BODY, golden_conn, sizeof(golden_conn) - 1);
	/* An old-protocol request goes to the Connection handler and gets an
	 * untyped reply. */
	expect_reply(d, 0xff, CONN_BODY, golden_old, sizeof(golden_old) - 1);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_without_handler_answers_null_as_mooncake)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	struct qphs_client_result res;
	struct qphs_config cfg;
	int rc;

	/* Connection and Metadata without a handler: the body null, as a
	 * Mooncake daemon whose RDMA transport did not install answers. */
	hs_test_config(&cfg);
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_CONNECTION, CONN_BODY,
				 strlen(CONN_BODY), &res);
	ck_assert_int_eq(rc, QPHS_ERR_PEER_NO_TRANSPORT);
	unit_hit(rc);
	ck_assert_str_eq(res.reply, "null\n");
	ck_assert_ptr_nonnull(strstr(res.errstr, "with null"));
	free(res.reply);
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_METADATA, "{}", 2, &res);
	ck_assert_int_eq(rc, QPHS_ERR_PEER_NO_TRANSPORT);
	ck_assert_str_eq(res.reply, "null\n");
	free(res.reply);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_connection_of_wrong_shape_gets_reply_msg)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	struct qphs_daemon_stats st;
	struct qphs_client_result res;
	struct qphs_config cfg;
	static const char body[] = "{\"qp_num\":\"seven\"}\n";
	int rc;

	hs_test_config(&cfg);
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_CONNECTION, body,
				 strlen(body), &res);
	ck_assert_int_eq(rc, QPHS_ERR_REJECT_HANDSHAKE);
	ck_assert_ptr_nonnull(strstr(res.errstr, "qp_num"));
	free(res.reply);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.rejected_body, 1);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_closes_probe_of_wrong_shape)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	struct qphs_daemon_stats st;
	uint8_t req[64], rep[64];
	size_t n = hs_test_frame(QPHS_HS_PROBE, "[1,2]\n", req, sizeof(req));

	ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), req, n, 0, rep, sizeof(rep)), 0);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.rejected_body, 1);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

static void fail_handler(struct qphs_request *req, void *user)
{
	(void)user;
	qphs_request_fail(req, QPHS_ERR_CONTEXT, NULL);
}

START_TEST(daemon_handler_failure_becomes_reply_msg_or_close)
{
	struct qphs_client_result res;
	struct qphs_daemon *d = NULL;
	struct qphs_config cfg;
	int rc;

	hs_test_config(&cfg);
	d = hs_test_serve(&cfg, HS_BIT(QPHS_HS_CONNECTION) | HS_BIT(QPHS_HS_METADATA), fail_handler,
			  NULL);
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_CONNECTION, CONN_BODY,
				 strlen(CONN_BODY), &res);
	ck_assert_int_eq(rc, QPHS_ERR_REJECT_HANDSHAKE);
	ck_assert_str_eq(res.errstr, "Handshake callback failed: -202");
	ck_assert_ptr_nonnull(strstr(res.reply, "\"local_nic_path\":\"b:2@y\""));
	ck_assert_ptr_nonnull(strstr(res.reply, "\"peer_nic_path\":\"a:1@x\""));
	free(res.reply);
	/* A Metadata reply has no reply_msg: the failure is a close. */
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_METADATA, "{}\n", 3, &res);
	ck_assert_int_eq(rc, QPHS_ERR_PEER_CLOSED);
	unit_hit(rc);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_picks_ports_in_the_rpc_range)
{
	struct qphs_daemon *a = NULL, *b = NULL, *c = NULL;
	struct qphs_config cfg;
	uint16_t port;

	hs_test_config(&cfg);
	a = hs_test_daemon(&cfg, NULL);
	port = qphs_daemon_port(a);
	ck_assert_uint_ge(port, cfg.min_rpc_port);
	ck_assert_uint_le(port, cfg.max_rpc_port);
	/* A range of one port, taken: 500 tries, then a clear error. */
	cfg.min_rpc_port = cfg.max_rpc_port = port;
	ck_assert_int_eq(qphs_daemon_new(&cfg, &b), 0);
	ck_assert_int_eq(qphs_daemon_listen(b, "127.0.0.1", 0), QPHS_ERR_NO_PORT);
	unit_hit(QPHS_ERR_NO_PORT);
	ck_assert_ptr_nonnull(strstr(qphs_daemon_errstr(b), "500"));
	/* The same port asked for by number. */
	ck_assert_int_eq(qphs_daemon_new(&cfg, &c), 0);
	ck_assert_int_eq(qphs_daemon_listen(c, "127.0.0.1", port), QPHS_ERR_ADDR_IN_USE);
	unit_hit(QPHS_ERR_ADDR_IN_USE);
	qphs_daemon_free(c);
	qphs_daemon_free(b);
	qphs_daemon_free(a);
}
END_TEST

/* A reply far larger than the socket buffers, to a peer already gone. */
static void reply_huge(struct qphs_request *req, void *user)
{
	size_t n = 4 << 20;
	char *body = malloc(n);

	(void)user;
	memset(body, ' ', n);
	body[0] = '{';
	body[n - 2] = '}';
	body[n - 1] = '\n';
	qphs_request_reply(req, body, n);
	free(body);
}

START_TEST(daemon_never_raises_sigpipe)
{
	struct qphs_daemon *d = NULL;
	struct qphs_daemon_stats st;
	uint8_t req[32];
	size_t n = hs_test_frame(QPHS_HS_NOTIFY, "{}\n", req, sizeof(req));

	/* SIGPIPE keeps its default action: raised, it would end this test. */
	signal(SIGPIPE, SIG_DFL);
	d = hs_test_serve(NULL, HS_BIT(QPHS_HS_NOTIFY), reply_huge, NULL);
	for (int i = 0; i < 5; i++) {
		int fd = hs_test_connect(qphs_daemon_port(d), 5);
		ck_assert_int_eq(send(fd, req, n, MSG_NOSIGNAL), (ssize_t)n);
		close(fd); /* gone before the reply: the daemon's writes fail */
	}
	ck_assert_uint_eq(hs_test_wait_open(d, 0, 10), 0);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.replied, 0);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

static const struct bad_frame {
	const char *what;
	const char *bytes;
	size_t len;
	int shut_wr;
	int code;
} bad_frames[] = {
	{"zero length", "\0\0\0\0\0\0\0\0", 8, 0, QPHS_ERR_FRAME_ZERO_LENGTH},
	{"length over 1 MiB", "\x01\x00\x10\0\0\0\0\0", 8, 0, QPHS_ERR_FRAME_TOO_LONG},
	{"type byte 0x80", "\x03\0\0\0\0\0\0\0\x80{}", 11, 0, QPHS_ERR_FRAME_BAD_TYPE},
	{"typed frame of length 1", "\x01\0\0\0\0\0\0\0\x03", 9, 0, QPHS_ERR_FRAME_EMPTY_BODY},
	{"short frame", "\x0a\0\0\0\0\0\0\0\x03{}", 11, 1, QPHS_ERR_FRAME_TRUNCATED},
	{"body not JSON", "\x06\0\0\0\0\0\0\0\x03nope\n", 14, 0, QPHS_ERR_FRAME_NOT_JSON},
	{"bytes after the value", "\x06\0\0\0\0\0\0\0\x03{} x\n", 14, 0, QPHS_ERR_FRAME_TRAILING},
};
#define N_BAD (sizeof(bad_frames) / sizeof(bad_frames[0]))

START_TEST(daemon_closes_each_bad_frame_and_keeps_serving)
{
	const struct bad_frame *b = &bad_frames[_i];
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	struct qphs_daemon_stats st;
	uint8_t rep[64];
	ssize_t got = hs_test_exchange(qphs_daemon_port(d), b->bytes, b->len, b->shut_wr, rep,
				       sizeof(rep));

	ck_assert_msg(got == 0, "%s: got %zd reply bytes, want a close", b->what, got);
	qphs_daemon_stats(d, &st);
	ck_assert_msg(st.rejected_frame[-b->code - 1000] == 1, "%s: counter %llu", b->what,
		      (unsigned long long)st.rejected_frame[-b->code - 1000]);
	unit_hit(b->code);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_live_bytes_return_to_baseline_after_10000_bad_frames)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	struct qphs_daemon_stats st;
	uint64_t baseline, rejected = 0;
	uint8_t rep[64];

	qphs_daemon_stats(d, &st);
	baseline = st.live_bytes;
	for (int i = 0; i < 10000; i++) {
		const struct bad_frame *b = &bad_frames[i % N_BAD];
		ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), b->bytes, b->len,
						  b->shut_wr, rep, sizeof(rep)), 0);
	}
	ck_assert_uint_eq(hs_test_wait_open(d, 0, 5), 0);
	qphs_daemon_stats(d, &st);
	for (size_t i = 0; i < 8; i++)
		rejected += st.rejected_frame[i];
	ck_assert_uint_eq(rejected, 10000);
	ck_assert_uint_eq(st.live_bytes, baseline);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

/* Opens n connections (nonblocking connects, so none waits on another),
 * sends each a probe, then collects every reply. */
/* All from 127.0.0.1: the per-source limit is raised to let them in
 * (test_limits.c tests it). */
static struct qphs_daemon *one_source_daemon(int conns)
{
	struct qphs_config cfg;

	hs_test_config(&cfg);
	cfg.max_conns_per_source = conns;
	return hs_test_daemon(&cfg, NULL);
}

START_TEST(daemon_answers_200_clients_at_once)
{
	enum { N = 200 };
	struct qphs_daemon *d = one_source_daemon(N);
	static int fds[N];
	uint8_t req[32], rep[64];
	size_t n = hs_test_frame(QPHS_HS_PROBE, "{}\n", req, sizeof(req));

	for (int i = 0; i < N; i++)
		fds[i] = hs_test_connect(qphs_daemon_port(d), 10);
	ck_assert_uint_eq(hs_test_wait_open(d, N, 10), N);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(send(fds[i], req, n, MSG_NOSIGNAL), (ssize_t)n);
	for (int i = 0; i < N; i++) {
		size_t got = 0;
		ssize_t r;
		while ((r = recv(fds[i], rep + got, sizeof(rep) - got, 0)) > 0)
			got += (size_t)r;
		ck_assert_uint_eq(got, sizeof(PROBE_REPLY) - 1);
		ck_assert_mem_eq(rep, PROBE_REPLY, got);
		close(fds[i]);
	}
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_stalled_connections_do_not_delay_a_probe)
{
	enum { N = 200 };
	struct qphs_daemon *d = one_source_daemon(N + 1);
	struct qphs_client_result res;
	struct qphs_config cfg;
	static int fds[N];

	for (int i = 0; i < N; i++) {
		fds[i] = hs_test_connect(qphs_daemon_port(d), 10);
		/* Half of them trickle part of a header, half stay silent. */
		if (i % 2)
			ck_assert_int_eq(send(fds[i], "\x10\0\0", 3, MSG_NOSIGNAL), 3);
	}
	ck_assert_uint_eq(hs_test_wait_open(d, N, 10), N);
	hs_test_config(&cfg);
	ck_assert_int_eq(qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_PROBE, "{}\n", 3,
					     &res), 0);
	ck_assert_msg(res.total_ms < unit_timeout(2) * 1000, "probe took %.1f ms",
		      res.total_ms);
	free(res.reply);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_closes_a_silent_client_at_the_request_deadline)
{
	struct qphs_daemon_stats st;
	struct qphs_daemon *d;
	struct qphs_config cfg;
	uint8_t rep[8];
	struct timespec a, b;

	hs_test_config(&cfg);
	cfg.request_timeout_ms = 200;
	d = hs_test_daemon(&cfg, NULL);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), "\x05\0", 2, 0, rep, sizeof(rep)), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ck_assert_double_ge((double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9, 0.15);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.timed_out, 1);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_refuses_connections_beyond_the_cap)
{
	struct qphs_daemon_stats st;
	struct qphs_daemon *d;
	struct qphs_config cfg;
	uint8_t rep[8];
	int fds[5];

	hs_test_config(&cfg);
	cfg.max_connections = 5;
	d = hs_test_daemon(&cfg, NULL);
	for (int i = 0; i < 5; i++)
		fds[i] = hs_test_connect(qphs_daemon_port(d), 5);
	ck_assert_uint_eq(hs_test_wait_open(d, 5, 5), 5);
	/* The sixth is closed at once, long before the request deadline. */
	ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), NULL, 0, 0, rep, sizeof(rep)), 0);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.refused_at_cap, 1);
	for (int i = 0; i < 5; i++)
		close(fds[i]);
	ck_assert_uint_eq(hs_test_wait_open(d, 0, 5), 0);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

/* A handler that keeps the request and answers from another thread, the
 * way the RDMA handler does. */
static struct qphs_request *held;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv = PTHREAD_COND_INITIALIZER;

static void hold(struct qphs_request *req, void *user)
{
	(void)user;
	pthread_mutex_lock(&held_mu);
	held = req;
	pthread_cond_signal(&held_cv);
	pthread_mutex_unlock(&held_mu);
}

static struct qphs_request *wait_held(void)
{
	struct qphs_request *req;

	pthread_mutex_lock(&held_mu);
	while (!held)
		pthread_cond_wait(&held_cv, &held_mu);
	req = held;
	held = NULL;
	pthread_mutex_unlock(&held_mu);
	return req;
}

/* The reply a held Connection request gets from the test's own thread. */
static const char held_reply[] = "{\"local_nic_path\":\"b:2@y\",\"peer_nic_path\":\"a:1@x\","
				 "\"qp_num\":[1,2],\"reply_msg\":\"\"}\n";

static void *answer_later(void *arg)
{
	struct qphs_request *req = wait_held();
	struct timespec ts = {0, 50000000};

	(void)arg;
	nanosleep(&ts, NULL);
	ck_assert_int_eq(qphs_request_type(req), QPHS_HS_CONNECTION);
	/* The body comes parsed, so the handler need not parse it again. */
	ck_assert_ptr_nonnull(qphs_request_desc(req));
	ck_assert_uint_eq(qphs_request_desc(req)->qp_count, 2);
	ck_assert_uint_eq(qphs_request_desc(req)->qp_num[1], 8);
	ck_assert_str_eq(qphs_request_desc(req)->peer_nic_path, "b:2@y");
	ck_assert_int_eq(qphs_request_reply(req, held_reply, strlen(held_reply)), 0);
	return NULL;
}

/* A daemon whose Connection handler holds the request, answered by
 * answer_later on *t, and one Connection request to it (res: its reply). */
static struct qphs_daemon *serve_answered_later(struct qphs_config *cfg, pthread_t *t,
						struct qphs_client_result *res)
{
	struct qphs_daemon *d;

	hs_test_config(cfg);
	d = hs_test_serve(cfg, HS_BIT(QPHS_HS_CONNECTION), hold, NULL);
	pthread_create(t, NULL, answer_later, NULL);
	ck_assert_int_eq(qphs_client_request(cfg, hs_test_addr(d), QPHS_HS_CONNECTION, CONN_BODY,
					     strlen(CONN_BODY), res), 0);
	return d;
}

/* Bytes a client sent after its request, unread when the reply goes, turn
 * the daemon's close into a reset.  The reply and its FIN have left
 * before it, so the client still reads the whole reply. */
START_TEST(daemon_reply_arrives_whole_despite_bytes_after_the_request)
{
	struct qphs_config cfg;
	struct qphs_daemon *d;
	struct qphs_request *held_req;
	uint8_t req[256], rep[512];
	size_t n, got = 0;
	int fd;

	hs_test_config(&cfg);
	d = hs_test_serve(&cfg, HS_BIT(QPHS_HS_CONNECTION), hold, NULL);
	n = hs_test_frame(QPHS_HS_CONNECTION, CONN_BODY, req, sizeof(req));
	fd = hs_test_connect(qphs_daemon_port(d), 5);
	ck_assert_int_eq(send(fd, req, n, MSG_NOSIGNAL), (ssize_t)n);
	held_req = wait_held();
	ck_assert_int_eq(send(fd, "xyz", 3, MSG_NOSIGNAL), 3);
	ck_assert_int_eq(qphs_request_reply(held_req, held_reply, strlen(held_reply)), 0);
	for (ssize_t r; (r = recv(fd, rep + got, sizeof(rep) - got, 0)) > 0;)
		got += (size_t)r;
	ck_assert_uint_eq(got, 9 + strlen(held_reply));
	ck_assert_mem_eq(rep + 9, held_reply, strlen(held_reply));
	close(fd);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_handler_answers_from_another_thread)
{
	struct qphs_client_result res;
	struct qphs_daemon *d = NULL;
	struct qphs_config cfg;
	pthread_t t;

	/* While the handler holds one request, the loop keeps serving. */
	d = serve_answered_later(&cfg, &t, &res);
	ck_assert_ptr_nonnull(strstr(res.reply, "\"qp_num\":[1,2]"));
	free(res.reply);
	pthread_join(t, NULL);
	qphs_daemon_free(d);
}
END_TEST

/* A reply from another thread (no fault) goes to the loop through the
 * door, which writes it: the daemon counts it once and the connection
 * goes away. */
START_TEST(daemon_reply_from_another_thread_is_counted_once_and_closed)
{
	struct qphs_client_result res;
	struct qphs_daemon_stats st;
	struct qphs_daemon *d = NULL;
	struct qphs_config cfg;
	pthread_t t;

	d = serve_answered_later(&cfg, &t, &res);
	free(res.reply);
	pthread_join(t, NULL);
	for (int i = 0; i < 200; i++) {
		qphs_daemon_stats(d, &st);
		if (st.open_connections == 0)
			break;
		usleep(10000);
	}
	ck_assert_uint_eq(st.open_connections, 0);
	ck_assert_uint_eq(st.replied, 1);
	qphs_daemon_free(d);
}
END_TEST

/* A fault still shapes a reply given from another thread: delay:300 holds
 * it, so the replying thread must not write it itself. */
START_TEST(daemon_delay_fault_holds_a_reply_from_another_thread)
{
	struct qphs_client_result res;
	struct qphs_daemon *d = NULL;
	struct qphs_config cfg;
	struct qphs_fault f;
	pthread_t t;

	hs_test_config(&cfg);
	ck_assert_int_eq(qphs_daemon_new(&cfg, &d), 0);
	ck_assert_int_eq(qphs_daemon_set_handler(d, QPHS_HS_CONNECTION, hold, NULL), 0);
	ck_assert_int_eq(qphs_fault_parse("delay:300", &f, NULL, 0), 0);
	ck_assert_int_eq(qphs_daemon_set_fault(d, &f), 0);
	ck_assert_int_eq(qphs_daemon_listen(d, "127.0.0.1", 0), 0);
	ck_assert_int_eq(qphs_daemon_start(d), 0);
	pthread_create(&t, NULL, answer_later, NULL);
	ck_assert_int_eq(qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_CONNECTION, CONN_BODY,
					     strlen(CONN_BODY), &res), 0);
	/* 50 ms in the handler, then the fault's 300 ms. */
	ck_assert_double_ge(res.total_ms, 340);
	free(res.reply);
	pthread_join(t, NULL);
	qphs_daemon_free(d);
}
END_TEST

static void *send_connection(void *arg)
{
	struct qphs_client_result res;
	struct qphs_config cfg;

	hs_test_config(&cfg);
	qphs_client_request(&cfg, arg, QPHS_HS_CONNECTION, CONN_BODY, strlen(CONN_BODY), &res);
	free(res.reply);
	return NULL;
}

/* Threads of this process named name (/proc/self/task/<tid>/comm). */
/* top -H, perf and gdb tell the loop and accept threads apart by their
 * names. */
START_TEST(daemon_loop_thread_is_named_and_gone_after_stop)
{
	static const char *const names[] = {"qphs-loop", "qphs-accept"};
	struct qphs_config cfg;
	struct qphs_daemon *d;

	hs_test_config(&cfg);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(hs_test_threads_named(names[k]), 0);
	d = hs_test_serve(&cfg, 0, NULL, NULL);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(hs_test_threads_named(names[k]), 1);
	ck_assert_int_eq(qphs_daemon_stop(d), 0);
	/* pthread_join returns when the thread has cleared its tid, a moment
	 * before the kernel drops it from /proc/self/task: allow that moment
	 * (2 s at most), not a thread that stays. */
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 200 && hs_test_threads_named(names[k]); i++)
			usleep(10000);
		ck_assert_int_eq(hs_test_threads_named(names[k]), 0);
	}
	qphs_daemon_free(d);
}
END_TEST

/* The nice value of this process's thread named name, or INT_MIN when
 * there is none. */
static int nice_of(const char *name)
{
	pid_t tid = hs_test_thread_named(name);
	int nice;

	if (!tid)
		return INT_MIN;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)tid);
	ck_assert_int_eq(errno, 0);
	return nice;
}

/* Whether a thread of this process may take the nice value *arg (root,
 * CAP_SYS_NICE, RLIMIT_NICE), tried on a thread of its own: 1 or 0 in
 * *arg. */
static void *try_nice(void *arg)
{
	int *v = arg;

	*v = setpriority(PRIO_PROCESS, (id_t)gettid(), *v) == 0;
	return NULL;
}

/* accept_thread_nice: the accept thread takes it when the process may
 * raise a priority and keeps the nice value it inherits when not or when
 * the field is 0; the loop thread keeps the inherited one either way. */
START_TEST(daemon_accept_thread_takes_the_nice_value_it_is_given)
{
	struct qphs_config cfg;
	struct qphs_daemon *d;
	pthread_t t;
	int may, base, want;

	errno = 0;
	base = getpriority(PRIO_PROCESS, (id_t)gettid());
	ck_assert_int_eq(errno, 0);
	hs_test_config(&cfg);
	ck_assert_int_eq(cfg.accept_thread_nice, -20);
	cfg.accept_thread_nice = base > -7 ? -7 : -20;
	may = cfg.accept_thread_nice;
	ck_assert_int_eq(pthread_create(&t, NULL, try_nice, &may), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	want = may && cfg.accept_thread_nice < base ? cfg.accept_thread_nice : base;
	d = hs_test_serve(&cfg, 0, NULL, NULL);
	/* The thread sets it as it starts. */
	for (int i = 0; i < (int)(unit_timeout(10) * 100) && nice_of("qphs-accept") != want; i++)
		usleep(10000);
	ck_assert_int_eq(nice_of("qphs-accept"), want);
	ck_assert_int_eq(nice_of("qphs-loop"), base);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);

	cfg.accept_thread_nice = 0;
	d = hs_test_serve(&cfg, 0, NULL, NULL);
	hs_test_assert_probe(d);
	ck_assert_int_eq(nice_of("qphs-accept"), base);
	qphs_daemon_free(d);
}
END_TEST

/* A handler that holds the loop thread until the test lets it go: only a
 * test does this (handlers must not block). */
struct hold {
	int pipe[2];
	atomic_int entered;
};

static void hold_loop(struct qphs_request *req, void *user)
{
	struct hold *h = user;
	char c;

	if (atomic_fetch_add(&h->entered, 1) == 0)
		ck_assert_int_eq(read(h->pipe[0], &c, 1), 1);
	ck_assert_int_eq(qphs_request_reply(req, "{\"status\":\"success\"}\n", 21), 0);
}

/* Nonblocking connects to port; fds[i] gets each socket. */
static void connect_many(uint16_t port, int *fds, int n)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(fds[i], 0);
		ck_assert(connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
			  errno == EINPROGRESS);
	}
}

/* The kernel keeps only listen_backlog + 1 finished connections for the
 * daemon; beyond that it drops SYNs, and each dropped SYN costs its client
 * a second.  With the loop thread held (as a burst of connects starves it
 * of CPU), the accept thread goes on taking connections, up to its own
 * bounded queue; once the loop runs again every connection is answered. */
START_TEST(daemon_accepts_while_the_loop_is_held)
{
	enum { N = 192, BACKLOG = 4 };
	struct hold h = {.entered = 0};
	struct qphs_config cfg;
	struct qphs_daemon *d;
	static int fds[N];
	uint8_t req[32], rep[64];
	size_t n = hs_test_frame(QPHS_HS_PROBE, "{}\n", req, sizeof(req));
	struct qphs_daemon_stats st;
	int first;

	ck_assert_int_eq(pipe(h.pipe), 0);
	hs_test_config(&cfg);
	cfg.listen_backlog = BACKLOG;
	cfg.max_conns_per_source = N + 1;
	cfg.max_connections = N + 1;
	cfg.request_timeout_ms = cfg.reply_timeout_ms = (int)unit_timeout(60) * 1000;
	d = hs_test_serve(&cfg, HS_BIT(QPHS_HS_PROBE), hold_loop, &h);
	first = hs_test_connect(qphs_daemon_port(d), 30);
	ck_assert_int_eq(send(first, req, n, MSG_NOSIGNAL), (ssize_t)n);
	for (int i = 0; i < 3000 && !atomic_load(&h.entered); i++)
		usleep(10000);
	ck_assert_int_eq(atomic_load(&h.entered), 1);
	/* The loop is held.  The accept thread takes more than the kernel's
	 * BACKLOG + 1 could hold (how many more depends on timing: a client
	 * whose SYN was dropped comes again a second later, and one whose
	 * last ACK was dropped under SYN cookies only when it sends). */
	connect_many(qphs_daemon_port(d), fds, N);
	for (int i = 0; i < (int)(unit_timeout(10) * 100); i++) {
		qphs_daemon_stats(d, &st);
		if (st.accept_thread_took > BACKLOG + 1)
			break;
		usleep(10000);
	}
	ck_assert_msg(st.accept_thread_took > BACKLOG + 1,
		      "the accept thread took %llu of %d connections while the loop was held",
		      (unsigned long long)st.accept_thread_took, N);
	/* Its queue is bounded: the rest wait in the kernel, not in the
	 * daemon's memory. */
	usleep(200000);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_le(st.accept_thread_took, ACCEPT_QUEUE);
	ck_assert_uint_eq(st.accepted, 1);
	ck_assert_int_eq(write(h.pipe[1], "g", 1), 1);
	/* Every connection is answered once the loop runs (those whose SYN
	 * was dropped after their client's next retransmission). */
	for (int i = 0; i < N; i++) {
		struct pollfd pf = {.fd = fds[i], .events = POLLOUT};
		size_t got = 0;
		ssize_t r;

		ck_assert_int_eq(poll(&pf, 1, (int)(unit_timeout(30) * 1000)), 1);
		ck_assert_int_eq(send(fds[i], req, n, MSG_NOSIGNAL), (ssize_t)n);
		pf.events = POLLIN;
		while (poll(&pf, 1, (int)(unit_timeout(30) * 1000)) == 1 &&
		       (r = recv(fds[i], rep + got, sizeof(rep) - got, 0)) > 0)
			got += (size_t)r;
		ck_assert_uint_eq(got, sizeof(PROBE_REPLY) - 1);
		ck_assert_mem_eq(rep, PROBE_REPLY, got);
		close(fds[i]);
	}
	ck_assert_int_eq(recv(first, rep, sizeof(rep), MSG_WAITALL), (ssize_t)sizeof(PROBE_REPLY) - 1);
	close(first);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.accepted, N + 1);
	qphs_daemon_free(d);
	close(h.pipe[0]);
	close(h.pipe[1]);
}
END_TEST

/* A loop that keeps up takes its own connections: the accept thread only
 * stands in when the kernel's queue is half full, which one client at a
 * time never makes it (each hand-over would cost a thread wake-up). */
START_TEST(daemon_accept_thread_stays_out_while_the_loop_keeps_up)
{
	enum { N = 200 };
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	struct qphs_daemon_stats st;

	for (int i = 0; i < N; i++)
		expect_reply(d, QPHS_HS_PROBE, "{}\n", PROBE_REPLY, sizeof(PROBE_REPLY) - 1);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.accepted, N);
	ck_assert_uint_eq(st.accept_thread_took, 0);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_stops_promptly_with_connections_in_flight)
{
	struct qphs_daemon *d = NULL;
	struct qphs_request *req;
	struct timespec a, b;
	char addr[64];
	int fds[50];
	pthread_t t;

	d = hs_test_serve(NULL, HS_BIT(QPHS_HS_CONNECTION), hold, NULL);
	snprintf(addr, sizeof(addr), "%s", hs_test_addr(d));
	for (int i = 0; i < 50; i++)
		fds[i] = hs_test_connect(qphs_daemon_port(d), 5);
	pthread_create(&t, NULL, send_connection, addr);
	req = wait_held();
	clock_gettime(CLOCK_MONOTONIC, &a);
	qphs_daemon_free(d);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ck_assert_double_lt((double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
			    unit_timeout(2));
	/* The handler's late answer only frees the request. */
	ck_assert_int_eq(qphs_request_reply(req, "{}\n", 3), QPHS_ERR_STOPPED);
	unit_hit(QPHS_ERR_STOPPED);
	pthread_join(t, NULL);
	for (int i = 0; i < 50; i++)
		close(fds[i]);
}
END_TEST

/* The client side runs in a child process, so only the daemon's process
 * runs out of descriptors.  The child opens 40 idle connections, reports,
 * and closes them all when told to. */
static void fd_hog_child(int port_fd, int ready_fd, int go_fd)
{
	struct rlimit rl;
	uint16_t port;
	int fds[40];
	char c = 'r';

	if (read(port_fd, &port, sizeof(port)) != sizeof(port))
		_exit(1);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	for (int i = 0; i < 40; i++)
		fds[i] = hs_test_connect(port, 10);
	if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1)
		_exit(1);
	for (int i = 0; i < 40; i++)
		close(fds[i]);
	_exit(0);
}

START_TEST(daemon_survives_running_out_of_descriptors)
{
	struct qphs_daemon_stats st;
	struct qphs_daemon *d;
	struct qphs_config cfg;
	struct rlimit rl, saved;
	int ready[2], go[2], portp[2], status, highest;
	uint16_t port;
	uint64_t wakeups, acc_wakeups;
	pid_t pid;
	char c;

	/* Fork first, so the child holds no copy of the daemon. */
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(portp), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		fd_hog_child(portp[0], ready[1], go[0]);
	hs_test_config(&cfg);
	cfg.request_timeout_ms = (int)unit_timeout(30) * 1000;
	d = hs_test_daemon(&cfg, NULL);
	port = qphs_daemon_port(d);
	/* Leave the daemon room for at most 15 connections, before the child
	 * learns where to connect. */
	highest = dup(0);
	close(highest);
	getrlimit(RLIMIT_NOFILE, &rl);
	saved = rl;
	rl.rlim_cur = (rlim_t)highest + 15;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_int_eq(write(portp[1], &port, sizeof(port)), (ssize_t)sizeof(port));
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	/* The daemon holds what it could and refused the rest; now, with the
	 * limit reached and connections still open, it must not spin.  Its
	 * loop may wake for what happens (a refused connection, the listener's
	 * 100 ms pause ending), not a hundred times in half a second: a loop
	 * spinning on a listener it cannot accept from wakes thousands of
	 * times, however slow the machine, and a loop that spins slowly still
	 * counts every turn (a count of wake-ups, unlike a CPU share, does not
	 * depend on the machine's load or on QPLAB_TIME_MULTIPLIER).  The same
	 * holds for the accept thread, which is the one that meets EMFILE. */
	for (int i = 0; i < 2500; i++) {
		qphs_daemon_stats(d, &st);
		if (st.refused_no_fd > 0)
			break;
		usleep((useconds_t)(unit_timeout(1) * 2000));
	}
	usleep(100000); /* the refusals' own wake-ups are over */
	qphs_daemon_stats(d, &st);
	wakeups = st.loop_wakeups;
	acc_wakeups = st.accept_wakeups;
	usleep(500000);
	qphs_daemon_stats(d, &st);
	wakeups = st.loop_wakeups - wakeups;
	acc_wakeups = st.accept_wakeups - acc_wakeups;
	ck_assert_msg(st.refused_no_fd > 0, "no connection was refused for lack of fds");
	ck_assert_msg(wakeups < 100, "the loop woke %llu times in 0.5 s while out of descriptors",
		      (unsigned long long)wakeups);
	ck_assert_msg(acc_wakeups < 100,
		      "the accept thread woke %llu times in 0.5 s while out of descriptors",
		      (unsigned long long)acc_wakeups);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_uint_eq(hs_test_wait_open(d, 0, 5), 0);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
	/* Without CK_FORK (valgrind) the next tests share this process. */
	setrlimit(RLIMIT_NOFILE, &saved);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	close(portp[0]);
	close(portp[1]);
}
END_TEST

static int open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	int n = -1; /* the directory's own descriptor */

	ck_assert_ptr_nonnull(dir);
	while ((e = readdir(dir)))
		n += e->d_name[0] != '.';
	closedir(dir);
	return n;
}

/* A held request's body: '{', spaces, "}\n", n bytes in all. */
static char *big_body(size_t n)
{
	char *body = malloc(n);

	ck_assert_ptr_nonnull(body);
	memset(body, ' ', n);
	body[0] = '{';
	body[n - 2] = '}';
	body[n - 1] = '\n';
	return body;
}

/* One Connection request on a socket of its own, held by the handler. */
static struct qphs_request *send_held(struct qphs_daemon *d, int *fd)
{
	uint8_t frame[256];
	size_t flen = hs_test_frame(QPHS_HS_CONNECTION, CONN_BODY, frame, sizeof(frame));

	*fd = hs_test_connect(qphs_daemon_port(d), 10);
	ck_assert_int_eq(send(*fd, frame, flen, MSG_NOSIGNAL), (ssize_t)flen);
	return wait_held();
}

/* A reply from another thread that the socket cannot take at once (the
 * peer reads nothing until it is given): the loop writes it as the peer
 * makes room, and the peer gets every byte, counted once. */
START_TEST(daemon_reply_from_another_thread_too_big_for_the_socket_arrives_whole)
{
	size_t n = 16 << 20, got = 0;
	char *body = big_body(n);
	uint8_t *buf = malloc(n + 64);
	struct qphs_daemon *d = hs_test_serve(NULL, HS_BIT(QPHS_HS_CONNECTION), hold, NULL);
	struct qphs_daemon_stats st;
	int fd;
	struct qphs_request *req = send_held(d, &fd);
	ssize_t r;

	ck_assert_int_eq(qphs_request_reply(req, body, n), 0);
	while (got < n + 64 && (r = recv(fd, buf + got, n + 64 - got, 0)) > 0)
		got += (size_t)r;
	ck_assert_uint_eq(got, n + 9);
	ck_assert_uint_eq(buf[8], QPHS_HS_CONNECTION);
	ck_assert_uint_eq(buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24, n + 1);
	ck_assert_mem_eq(buf + 9, body, n);
	ck_assert_uint_eq(hs_test_wait_open(d, 0, 10), 0);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.replied, 1);
	close(fd);
	free(buf);
	free(body);
	qphs_daemon_free(d);
}
END_TEST

/* The handler's deadline passes first: the daemon closes the connection,
 * and the handler's late reply from another thread only frees the request
 * (nothing written, nothing counted, no descriptor left behind). */
START_TEST(daemon_reply_from_another_thread_after_the_deadline_only_frees)
{
	struct qphs_daemon *d = NULL;
	struct qphs_daemon_stats st;
	struct qphs_config cfg;
	struct qphs_request *req;
	char c;
	int fd, before;

	hs_test_config(&cfg);
	cfg.reply_timeout_ms = 100;
	d = hs_test_serve(&cfg, HS_BIT(QPHS_HS_CONNECTION), hold, NULL);
	before = open_fds();
	req = send_held(d, &fd);
	ck_assert_uint_eq(hs_test_wait_open(d, 0, 10), 0);
	ck_assert_int_eq(qphs_request_reply(req, "{}\n", 3), 0);
	ck_assert_int_eq(recv(fd, &c, 1, 0), 0); /* closed, no reply */
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.replied, 0);
	ck_assert_uint_eq(st.timed_out, 1);
	close(fd);
	ck_assert_int_eq(open_fds(), before);
	qphs_daemon_free(d);
}
END_TEST

/* The peer is gone (reset) before another thread replies: the writes
 * fail without SIGPIPE (default action here: raised, it would end the
 * test), the connection goes, nothing is counted, and no descriptor is
 * left behind. */
START_TEST(daemon_reply_from_another_thread_to_a_peer_gone_raises_no_sigpipe)
{
	size_t n = 4 << 20;
	char *body = big_body(n);
	struct qphs_daemon *d = hs_test_serve(NULL, HS_BIT(QPHS_HS_CONNECTION), hold, NULL);
	struct qphs_daemon_stats st;
	int before = open_fds();

	signal(SIGPIPE, SIG_DFL);
	for (int i = 0; i < 5; i++) {
		int fd;
		struct qphs_request *req = send_held(d, &fd);
		struct linger lg = {1, 0};

		/* An RST, not a FIN: the reply's first write already fails. */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
		qphs_request_reply(req, body, n);
	}
	ck_assert_uint_eq(hs_test_wait_open(d, 0, 10), 0);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.replied, 0);
	ck_assert_int_eq(open_fds(), before);
	free(body);
	qphs_daemon_free(d);
}
END_TEST

static int no_thread(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	(void)t, (void)attr, (void)fn, (void)arg;
	return EAGAIN;
}

/* A loop thread that cannot start is ERR_THREAD with pthread_create's
 * errno in the text, not "out of memory"; the failed start leaves no
 * descriptor open, and a second start works. */
START_TEST(daemon_start_without_a_thread_names_the_errno_and_can_be_retried)
{
	struct qphs_daemon *d;
	struct qphs_config cfg;
	int before;

	hs_test_config(&cfg);
	ck_assert_int_eq(qphs_daemon_new(&cfg, &d), 0);
	ck_assert_int_eq(qphs_daemon_listen(d, "127.0.0.1", 0), 0);
	before = open_fds();
	qphs__thread_set_create(no_thread);
	ck_assert_int_eq(qphs_daemon_start(d), QPHS_ERR_THREAD);
	qphs__thread_set_create(NULL);
	ck_assert_msg(strstr(qphs_daemon_errstr(d), strerror(EAGAIN)), "errstr '%s'",
		      qphs_daemon_errstr(d));
	ck_assert_int_eq(open_fds(), before);
	ck_assert_int_eq(qphs_daemon_start(d), 0);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
	ck_assert_int_eq(open_fds(), before - 1); /* the listener is gone too */
}
END_TEST

/* A start that fails half way — the epoll set made, the eventfd refused
 * for lack of descriptors — closes what it made: as many descriptors are
 * open as before, and a second start works. */
START_TEST(daemon_start_that_fails_half_way_leaks_no_descriptor)
{
	struct qphs_daemon *d;
	struct qphs_config cfg;
	struct rlimit saved, rl;
	int before, lowest, rc;

	hs_test_config(&cfg);
	ck_assert_int_eq(qphs_daemon_new(&cfg, &d), 0);
	ck_assert_int_eq(qphs_daemon_listen(d, "127.0.0.1", 0), 0);
	before = open_fds();
	lowest = open("/dev/null", O_RDONLY | O_CLOEXEC); /* every lower one is in use */
	ck_assert_int_ge(lowest, 0);
	close(lowest);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &saved), 0);
	rl = saved;
	rl.rlim_cur = (rlim_t)lowest + 1; /* room for one more */
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	rc = qphs_daemon_start(d);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &saved), 0);
	ck_assert_int_eq(rc, QPHS_ERR_SOCKET);
	ck_assert_msg(strstr(qphs_daemon_errstr(d), strerror(EMFILE)), "errstr '%s'",
		      qphs_daemon_errstr(d));
	ck_assert_int_eq(open_fds(), before);
	ck_assert_int_eq(qphs_daemon_start(d), 0);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

static rlim_t soft_nofile(void)
{
	struct rlimit rl;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	return rl.rlim_cur;
}

/* The descriptor limit is the process's: qphs_daemon_start leaves it
 * alone, and qphs_daemon_raise_nofile raises it when asked, to
 * max_connections + 256 or the hard limit, and never lowers it. */
START_TEST(daemon_raises_the_descriptor_limit_only_when_asked)
{
	struct rlimit saved, rl;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	uint64_t soft = 0;
	rlim_t low, want;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &saved), 0);
	hs_test_config(&cfg);
	cfg.max_connections = 2000;
	want = saved.rlim_max == RLIM_INFINITY || saved.rlim_max > 2256 ? 2256 : saved.rlim_max;
	low = want > 512 ? 512 : want - 1;
	rl = saved;
	rl.rlim_cur = low;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	d = hs_test_daemon(&cfg, NULL);
	ck_assert_uint_eq(soft_nofile(), low);
	ck_assert_int_eq(qphs_daemon_raise_nofile(&cfg, &soft, NULL, 0), 0);
	ck_assert_uint_eq(soft_nofile(), want);
	ck_assert_uint_eq(soft, want);
	cfg.max_connections = 1;
	ck_assert_int_eq(qphs_daemon_raise_nofile(&cfg, &soft, NULL, 0), 0);
	ck_assert_uint_eq(soft_nofile(), want);
	ck_assert_uint_eq(soft, want);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
	/* Without CK_FORK (valgrind) the next tests share this process. */
	setrlimit(RLIMIT_NOFILE, &saved);
}
END_TEST

Suite *suite_daemon(void)
{
	Suite *s = suite_create("daemon");
	TCase *tc = unit_tcase(s, "replies", 10);

	tcase_add_test(tc, daemon_answers_probe_byte_exact);
	tcase_add_test(tc, daemon_answers_notify_byte_exact);
	tcase_add_test(tc, daemon_sends_its_fin_with_the_reply);
	tcase_add_test(tc, daemon_reply_type_follows_request_type);
	tcase_add_test(tc, daemon_without_handler_answers_null_as_mooncake);
	tcase_add_test(tc, daemon_connection_of_wrong_shape_gets_reply_msg);
	tcase_add_test(tc, daemon_closes_probe_of_wrong_shape);
	tcase_add_test(tc, daemon_handler_answers_from_another_thread);
	tcase_add_test(tc, daemon_reply_arrives_whole_despite_bytes_after_the_request);
	tcase_add_test(tc, daemon_handler_failure_becomes_reply_msg_or_close);
	tcase_add_test(tc, daemon_picks_ports_in_the_rpc_range);
	tcase_add_test(tc, daemon_never_raises_sigpipe);
	tcase_add_test(tc, daemon_start_without_a_thread_names_the_errno_and_can_be_retried);
	tcase_add_test(tc, daemon_raises_the_descriptor_limit_only_when_asked);
	tcase_add_test(tc, daemon_start_that_fails_half_way_leaks_no_descriptor);
	tc = unit_tcase(s, "bad_frames", 20);
	tcase_add_loop_test(tc, daemon_closes_each_bad_frame_and_keeps_serving, 0, (int)N_BAD);
	tcase_add_test(tc, daemon_live_bytes_return_to_baseline_after_10000_bad_frames);
	tc = unit_tcase(s, "load", 20);
	tcase_add_test(tc, daemon_answers_200_clients_at_once);
	tcase_add_test(tc, daemon_accepts_while_the_loop_is_held);
	tcase_add_test(tc, daemon_accept_thread_stays_out_while_the_loop_keeps_up);
	tcase_add_test(tc, daemon_stalled_connections_do_not_delay_a_probe);
	tcase_add_test(tc, daemon_closes_a_silent_client_at_the_request_deadline);
	tcase_add_test(tc, daemon_refuses_connections_beyond_the_cap);
	tcase_add_test(tc, daemon_reply_from_another_thread_is_counted_once_and_closed);
	tcase_add_test(tc, daemon_delay_fault_holds_a_reply_from_another_thread);
	tcase_add_test(tc, daemon_reply_from_another_thread_too_big_for_the_socket_arrives_whole);
	tcase_add_test(tc, daemon_reply_from_another_thread_after_the_deadline_only_frees);
	tcase_add_test(tc, daemon_reply_from_another_thread_to_a_peer_gone_raises_no_sigpipe);
	tcase_add_test(tc, daemon_loop_thread_is_named_and_gone_after_stop);
	tcase_add_test(tc, daemon_accept_thread_takes_the_nice_value_it_is_given);
	tcase_add_test(tc, daemon_stops_promptly_with_connections_in_flight);
	tcase_add_test(tc, daemon_survives_running_out_of_descriptors);
	return s;
}
