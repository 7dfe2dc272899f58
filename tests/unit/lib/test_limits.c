/* lib/daemon's limits (docs/hs.md "Limits"): connections and requests in
 * flight per source, the memory budget, the per-type body sizes, the key
 * count before parsing, the parse worker, and memory handed back.  Each
 * test sets one limit low and shows it refusing (closed, counted, logged
 * as the last refusal, the source named) while another peer is served.
 * The attacker is 127.0.0.2, the legitimate peer 127.0.0.1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hs_testutil.h"
#include "unit.h"

#define PROBE_REPLY "\x16\0\0\0\0\0\0\0\x03{\"status\":\"success\"}\n"

static int connect_from(const char *src, uint16_t port)
{
	return hs_test_connect_from(src, port, 5);
}

/* Sends len bytes on fd, then reads to EOF: the bytes read, -1 on the
 * receive timeout (the daemon kept the connection open). */
static ssize_t send_and_drain(int fd, const void *bytes, size_t len, uint8_t *out, size_t cap)
{
	size_t got = 0;
	ssize_t n;

	if (len)
		ck_assert_int_eq(send(fd, bytes, len, MSG_NOSIGNAL), (ssize_t)len);
	while ((n = recv(fd, out + got, cap - got, 0)) > 0 && (got += (size_t)n) < cap)
		;
	close(fd);
	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? -1 : (ssize_t)got;
}

/* A frame header declaring a body of len bytes (type byte included). */
static void header(uint8_t out[9], int type, uint64_t len)
{
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(len >> (8 * i));
	out[8] = (uint8_t)type;
}

static void expect_refusal(struct qphs_daemon *d, int code, const char *words,
			   const char *source)
{
	struct qphs_daemon_refusal r;
	struct qphs_daemon_stats st;

	qphs_daemon_last_refusal(d, &r);
	ck_assert_msg(r.code == code, "last refusal %s: %s", qphs_errname(r.code), r.text);
	ck_assert_msg(strstr(r.text, "[Handshake]") && strstr(r.text, words), "text '%s'",
		      r.text);
	qphs_daemon_stats(d, &st);
	if (source)
		ck_assert_str_eq(st.limited_source, source);
}

START_TEST(limits_connections_per_source)
{
	struct qphs_daemon_stats st;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	uint8_t rep[8];
	int fds[3];

	hs_test_config(&cfg);
	cfg.max_conns_per_source = 3;
	d = hs_test_daemon(&cfg, NULL);
	for (int i = 0; i < 3; i++)
		fds[i] = connect_from("127.0.0.2", qphs_daemon_port(d));
	ck_assert_uint_eq(hs_test_wait_open(d, 3, 5), 3);
	/* The fourth from the same source is closed at once... */
	ck_assert_int_eq(send_and_drain(connect_from("127.0.0.2", qphs_daemon_port(d)), NULL, 0,
					rep, sizeof(rep)), 0);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.refused_per_source, 1);
	expect_refusal(d, QPHS_ERR_LIMIT_SOURCE, "max_conns_per_source", "127.0.0.2");
	/* ...while another source is served. */
	hs_test_assert_probe(d);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	ck_assert_uint_eq(hs_test_wait_open(d, 0, 5), 0);
	/* Its connections gone, the source is welcome again. */
	ck_assert_int_eq(send_and_drain(connect_from("127.0.0.2", qphs_daemon_port(d)),
					"\x03\0\0\0\0\0\0\0\x03{}", 11, rep, sizeof(rep)),
			 (ssize_t)sizeof(rep));
	qphs_daemon_free(d);
}
END_TEST

START_TEST(limits_requests_in_flight_per_source)
{
	struct qphs_daemon_stats st;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	uint8_t hdr[10], req[32], rep[64];
	size_t n;
	int fds[2];

	hs_test_config(&cfg);
	cfg.max_requests_per_source = 2;
	d = hs_test_daemon(&cfg, NULL);
	/* Two requests in flight: a header and one byte of a 100-byte body. */
	header(hdr, QPHS_HS_PROBE, 100);
	hdr[9] = '{';
	for (int i = 0; i < 2; i++) {
		fds[i] = connect_from("127.0.0.2", qphs_daemon_port(d));
		ck_assert_int_eq(send(fds[i], hdr, sizeof(hdr), MSG_NOSIGNAL), (ssize_t)sizeof(hdr));
	}
	ck_assert_uint_eq(hs_test_wait_open(d, 2, 5), 2);
	/* A third request from that source is refused, whole as it is. */
	n = hs_test_frame(QPHS_HS_PROBE, "{}\n", req, sizeof(req));
	ck_assert_int_eq(send_and_drain(connect_from("127.0.0.2", qphs_daemon_port(d)), req, n,
					rep, sizeof(rep)), 0);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.refused_per_source, 1);
	expect_refusal(d, QPHS_ERR_LIMIT_SOURCE, "max_requests_per_source", "127.0.0.2");
	hs_test_assert_probe(d);
	for (int i = 0; i < 2; i++)
		close(fds[i]);
	qphs_daemon_free(d);
}
END_TEST

/* Partial Metadata bodies of 900 KB: two fit the budget (2 MiB: twice
 * max_length), the third is refused before anything is allocated for it;
 * a probe still fits. */
START_TEST(limits_memory_budget)
{
	struct qphs_daemon_stats st;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	uint8_t hdr[10], rep[8];
	int fds[2];

	hs_test_config(&cfg);
	cfg.memory_budget_kib = 1024; /* raised to twice max_length (1 MiB) */
	d = hs_test_daemon(&cfg, NULL);
	header(hdr, QPHS_HS_METADATA, 900000);
	hdr[9] = '{';
	for (int i = 0; i < 2; i++) {
		fds[i] = hs_test_connect(qphs_daemon_port(d), 5);
		ck_assert_int_eq(send(fds[i], hdr, sizeof(hdr), MSG_NOSIGNAL), (ssize_t)sizeof(hdr));
	}
	ck_assert_uint_eq(hs_test_wait_open(d, 2, 5), 2);
	ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), hdr, sizeof(hdr), 0, rep,
					  sizeof(rep)), 0);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.refused_budget, 1);
	ck_assert_uint_le(st.live_bytes, 2u << 20);
	ck_assert_uint_ge(st.live_bytes, 1800000);
	expect_refusal(d, QPHS_ERR_LIMIT_MEMORY, "memory budget", "127.0.0.1");
	hs_test_assert_probe(d);
	for (int i = 0; i < 2; i++)
		close(fds[i]);
	qphs_daemon_free(d);
}
END_TEST

/* A Probe, Notify or Connection frame above max_small_body is refused as
 * soon as its header and type byte are in; Metadata may be larger. */
START_TEST(limits_small_types_have_small_bodies)
{
	static const int types[] = {QPHS_HS_PROBE, QPHS_HS_NOTIFY, QPHS_HS_CONNECTION};
	struct qphs_daemon_stats st;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	uint8_t hdr[9], rep[8];
	int fd;

	hs_test_config(&cfg);
	d = hs_test_daemon(&cfg, NULL);
	for (size_t i = 0; i < 3; i++) {
		header(hdr, types[i], 65537);
		ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), hdr, sizeof(hdr), 0, rep,
						  sizeof(rep)), 0);
		expect_refusal(d, QPHS_ERR_FRAME_TOO_LONG, "max_small_body", NULL);
	}
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.rejected_frame[-QPHS_ERR_FRAME_TOO_LONG - 1000], 3);
	/* A Metadata header of the same length is waited for. */
	header(hdr, QPHS_HS_METADATA, 65537);
	fd = hs_test_connect(qphs_daemon_port(d), 5);
	ck_assert_int_eq(send(fd, hdr, sizeof(hdr), MSG_NOSIGNAL), (ssize_t)sizeof(hdr));
	ck_assert_uint_eq(hs_test_wait_open(d, 1, 5), 1);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.rejected_frame[-QPHS_ERR_FRAME_TOO_LONG - 1000], 3);
	close(fd);
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

/* A Probe body of n keys ({"k0":0,...}), framed, into a new buffer. */
static uint8_t *keys_frame(int n, size_t *len)
{
	size_t cap = 16 + (size_t)n * 16;
	uint8_t *buf = malloc(cap);
	size_t off = 9;

	ck_assert_ptr_nonnull(buf);
	buf[off++] = '{';
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf((char *)buf + off, cap - off, "%s\"k%d\":0", i ? "," : "",
					i);
	buf[off++] = '}';
	header(buf, QPHS_HS_PROBE, off - 8);
	*len = off;
	return buf;
}

/* Bodies with more keys than max_body_keys are refused before parsing,
 * checked on the loop (small) or by the parse worker (large). */
START_TEST(limits_keys_counted_before_parsing)
{
	static const int sizes[] = {40, 2000}; /* about 300 B and 16 KB */
	struct qphs_daemon_stats st;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	uint8_t rep[64], *f;
	size_t len;

	hs_test_config(&cfg);
	cfg.max_body_keys = 30;
	cfg.max_small_body = 1 << 20;
	d = hs_test_daemon(&cfg, NULL);
	for (size_t i = 0; i < 2; i++) {
		f = keys_frame(sizes[i], &len);
		ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), f, len, 0, rep,
						  sizeof(rep)), 0);
		free(f);
		expect_refusal(d, QPHS_ERR_BODY_TOO_MANY_KEYS, "max_body_keys", NULL);
	}
	/* At the limit it is answered. */
	f = keys_frame(30, &len);
	ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), f, len, 0, rep, sizeof(rep)),
			 (ssize_t)sizeof(PROBE_REPLY) - 1);
	free(f);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.rejected_body, 2);
	qphs_daemon_free(d);
}
END_TEST

/* A Connection body of the common shape (read without json-c, codec/
 * descfast.h) is weighed against max_body_keys like any other: above it,
 * the same refusal and reply_msg; at it, answered. */
static int qps_request(struct qphs_config *cfg, struct qphs_daemon *d, int qps,
		       struct qphs_client_result *res)
{
	char body[512];
	int off = snprintf(body, sizeof(body), "{\"local_nic_path\":\"a:1@x\",\"qp_num\":[");

	for (int i = 0; i < qps; i++)
		off += snprintf(body + off, sizeof(body) - (size_t)off, "%s%d", i ? "," : "", i);
	off += snprintf(body + off, sizeof(body) - (size_t)off, "]}\n");
	return qphs_client_request(cfg, hs_test_addr(d), QPHS_HS_CONNECTION, body, (size_t)off,
				   res);
}

START_TEST(limits_keys_counted_in_common_connection_bodies)
{
	struct qphs_client_result res;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	int rc;

	hs_test_config(&cfg);
	cfg.max_body_keys = 16;
	d = hs_test_daemon(&cfg, NULL);
	rc = qps_request(&cfg, d, 15, &res); /* 2 keys and 15 elements */
	ck_assert_msg(rc == QPHS_ERR_REJECT_HANDSHAKE, "%s %s", qphs_errname(rc), res.errstr);
	ck_assert_msg(res.reply && strstr(res.reply, "holds 2 keys and 15 array elements") &&
			      strstr(res.reply, "max_body_keys"),
		      "reply %s", res.reply);
	free(res.reply);
	expect_refusal(d, QPHS_ERR_BODY_TOO_MANY_KEYS, "max_body_keys", NULL);
	rc = qps_request(&cfg, d, 14, &res);
	/* No Connection handler: the built-in answer, null. */
	ck_assert_msg(rc == QPHS_ERR_PEER_NO_TRANSPORT, "%s %s", qphs_errname(rc), res.errstr);
	free(res.reply);
	qphs_daemon_free(d);
}
END_TEST

/* The daemon runs a parse worker beside its loop; a large Connection body
 * (above INLINE_PARSE_MAX, so checked by the worker) is answered exactly as
 * a small one, and a large one of the wrong shape gets its reply_msg. */
START_TEST(limits_large_bodies_are_checked_by_the_parse_worker)
{
	struct qphs_client_result res;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	char *body = malloc(8192);
	int rc;

	ck_assert_ptr_nonnull(body);
	hs_test_config(&cfg);
	d = hs_test_daemon(&cfg, NULL);
	ck_assert_int_eq(hs_test_threads_named("qphs-parse"), 1);
	/* 6000 bytes: a payload string of 3000 and 3000 bytes of spaces. */
	snprintf(body, 8192,
		 "{\"local_nic_path\":\"a:1@x\",\"peer_nic_path\":\"b:2@y\",\"qp_num\":[7,8],"
		 "\"payload\":\"%0*d\"%3000s}\n", 3000, 0, "");
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_CONNECTION, body, strlen(body),
				 &res);
	/* No Connection handler: the built-in answer, null. */
	ck_assert_msg(rc == QPHS_ERR_PEER_NO_TRANSPORT, "%s %s", qphs_errname(rc), res.errstr);
	free(res.reply);
	snprintf(body, 8192, "{\"local_nic_path\":7,\"payload\":\"%0*d\"}\n", 5000, 0);
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_CONNECTION, body, strlen(body),
				 &res);
	ck_assert_msg(rc == QPHS_ERR_REJECT_HANDSHAKE, "%s %s", qphs_errname(rc), res.errstr);
	ck_assert_msg(res.reply && strstr(res.reply, "local_nic_path"), "reply %s", res.reply);
	free(res.reply);
	free(body);
	qphs_daemon_free(d);
	ck_assert_int_eq(hs_test_threads_named("qphs-parse"), 0);
}
END_TEST

/* After a large body is freed, the daemon hands the memory back once it
 * has been quiet for a moment (memory_trims); small requests do not. */
START_TEST(limits_memory_is_handed_back_after_large_bodies)
{
	struct qphs_daemon_stats st;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	struct timespec ts = {0, 20000000};
	uint8_t rep[64], *f;
	size_t len;

	hs_test_config(&cfg);
	cfg.max_small_body = 1 << 20;
	d = hs_test_daemon(&cfg, NULL);
	hs_test_assert_probe(d);
	nanosleep(&(struct timespec){0, 400000000}, NULL);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.memory_trims, 0);
	f = keys_frame(30000, &len); /* about 290 KB */
	ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), f, len, 0, rep, sizeof(rep)),
			 (ssize_t)sizeof(PROBE_REPLY) - 1);
	free(f);
	for (double left = unit_timeout(5); left > 0; left -= 0.02) {
		qphs_daemon_stats(d, &st);
		if (st.memory_trims)
			break;
		nanosleep(&ts, NULL);
	}
	ck_assert_uint_eq(st.memory_trims, 1);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(limits_config_defaults_and_ranges)
{
	struct qphs_config cfg;
	char err[256];

	qphs_config_init(&cfg);
	ck_assert_int_eq(cfg.max_conns_per_source, 128);
	ck_assert_int_eq(cfg.max_requests_per_source, 128);
	ck_assert_int_eq(cfg.memory_budget_kib, 65536);
	ck_assert_int_eq(cfg.max_small_body, 65536);
	ck_assert_int_eq(cfg.max_body_keys, 32768);
	ck_assert_int_eq(qphs_config_validate(&cfg, err, sizeof(err)), 0);
	cfg.max_conns_per_source = 0;
	ck_assert_int_eq(qphs_config_validate(&cfg, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	ck_assert_ptr_nonnull(strstr(err, "max_conns_per_source"));
	qphs_config_init(&cfg);
	cfg.max_small_body = 100;
	ck_assert_int_eq(qphs_config_validate(&cfg, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	ck_assert_ptr_nonnull(strstr(err, "max_small_body"));
	qphs_config_init(&cfg);
	cfg.memory_budget_kib = 10;
	ck_assert_int_eq(qphs_config_validate(&cfg, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	qphs_config_init(&cfg);
	cfg.max_requests_per_source = -1;
	ck_assert_int_eq(qphs_config_validate(&cfg, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
	qphs_config_init(&cfg);
	cfg.max_body_keys = 1;
	ck_assert_int_eq(qphs_config_validate(&cfg, err, sizeof(err)), QPHS_ERR_CONFIG_RANGE);
}
END_TEST

static void expect_shape(const char *json, size_t keys, size_t elements, size_t depth)
{
	struct qphs_json_shape s;

	qphs_json_shape(json, strlen(json), &s);
	ck_assert_msg(s.keys == keys && s.elements == elements && s.depth == depth,
		      "%s: keys %zu elements %zu depth %zu", json, s.keys, s.elements, s.depth);
}

START_TEST(limits_json_shape_counts)
{
	expect_shape("{}", 0, 0, 1);
	expect_shape("[]", 0, 0, 1);
	expect_shape("[ ]", 0, 0, 1);
	expect_shape("[1]", 0, 1, 1);
	expect_shape("[1,2,3]", 0, 3, 1);
	expect_shape("{\"a\":1,\"b\":[1,2],\"c\":{\"d\":[]}}", 4, 2, 3);
	/* Colons, commas, brackets and escaped quotes inside strings. */
	expect_shape("{\"a:b,[\":\"x\\\",]:{\",\"c\":[\"[,]\",\"\\\\\"]}", 2, 2, 2);
	expect_shape("[[[],[1]],{\"k\":[{}]}]", 1, 6, 4);
	expect_shape("  7 ", 0, 0, 0);
	expect_shape("", 0, 0, 0);
}
END_TEST

Suite *suite_limits(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = unit_tcase(s, "limits", 20);

	tcase_add_test(tc, limits_connections_per_source);
	tcase_add_test(tc, limits_requests_in_flight_per_source);
	tcase_add_test(tc, limits_memory_budget);
	tcase_add_test(tc, limits_small_types_have_small_bodies);
	tcase_add_test(tc, limits_keys_counted_before_parsing);
	tcase_add_test(tc, limits_keys_counted_in_common_connection_bodies);
	tcase_add_test(tc, limits_large_bodies_are_checked_by_the_parse_worker);
	tcase_add_test(tc, limits_memory_is_handed_back_after_large_bodies);
	tcase_add_test(tc, limits_config_defaults_and_ranges);
	tcase_add_test(tc, limits_json_shape_counts);
	return s;
}
