/* lib/client over loopback: every failure kind has its own code, against
 * the daemon's fault hooks and against listeners that misbehave. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/tcp.h> /* tcp_info with segs_in (glibc's has none) */
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "codec/descfast.h"
#include "hs/client_int.h"
#include "hs/net.h"
#include "hs_testutil.h"
#include "unit.h"

#define CONN_BODY "{\"local_nic_path\":\"a:1@x\",\"peer_nic_path\":\"b:2@y\",\"qp_num\":[7,8]}\n"

static void reply_fixed(struct qphs_request *req, void *user)
{
	const char *body = user;

	qphs_request_reply(req, body, strlen(body));
}

START_TEST(client_probe_returns_reply_and_peer)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	struct qphs_client_result res;
	struct qphs_config cfg;

	hs_test_config(&cfg);
	ck_assert_int_eq(qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_PROBE, "{}\n", 3,
					     &res), 0);
	ck_assert_str_eq(res.reply, "{\"status\":\"success\"}\n");
	ck_assert_int_eq(res.reply_type, QPHS_HS_PROBE);
	ck_assert_str_eq(res.peer, hs_test_addr(d));
	ck_assert_double_le(res.connect_ms, res.total_ms);
	free(res.reply);
	qphs_daemon_free(d);
}
END_TEST

/* Each fault of the daemon and the error the client must report. */
static const struct {
	const char *fault;
	int type;
	int code;
} fault_rows[] = {
	{"close", QPHS_HS_PROBE, QPHS_ERR_PEER_CLOSED},
	{"stall", QPHS_HS_PROBE, QPHS_ERR_REPLY_TIMEOUT},
	{"truncate", QPHS_HS_PROBE, QPHS_ERR_FRAME_TRUNCATED},
	{"oversize", QPHS_HS_PROBE, QPHS_ERR_FRAME_TOO_LONG},
	{"zero-length", QPHS_HS_PROBE, QPHS_ERR_FRAME_ZERO_LENGTH},
	{"garbage", QPHS_HS_PROBE, QPHS_ERR_FRAME_BAD_TYPE},
	{"empty-body", QPHS_HS_PROBE, QPHS_ERR_FRAME_EMPTY_BODY},
	{"not-json", QPHS_HS_PROBE, QPHS_ERR_FRAME_NOT_JSON},
	{"trailing", QPHS_HS_PROBE, QPHS_ERR_FRAME_TRAILING},
	{"wrong-type", QPHS_HS_PROBE, QPHS_ERR_REPLY_WRONG_TYPE},
	{"old-protocol", QPHS_HS_PROBE, QPHS_ERR_REPLY_OLD_PROTOCOL},
	{"truncate", QPHS_HS_CONNECTION, QPHS_ERR_FRAME_TRUNCATED},
	{"wrong-type", QPHS_HS_CONNECTION, QPHS_ERR_REPLY_WRONG_TYPE},
	{"delay:50", QPHS_HS_PROBE, 0},
	{"delay:60000", QPHS_HS_PROBE, QPHS_ERR_REPLY_TIMEOUT},
};

START_TEST(client_reports_each_daemon_fault)
{
	struct qphs_client_result res;
	struct qphs_fault f;
	struct qphs_config cfg;
	struct qphs_daemon *d;
	const char *body = fault_rows[_i].type == QPHS_HS_PROBE ? "{}\n" : CONN_BODY;
	char err[256];
	int rc;

	ck_assert_int_eq(qphs_fault_parse(fault_rows[_i].fault, &f, err, sizeof(err)), 0);
	/* The daemon holds a stalled connection for its reply_timeout_ms: make
	 * that far longer than the client's, so the client's timer fires first. */
	hs_test_config(&cfg);
	cfg.reply_timeout_ms = (int)(unit_timeout(20) * 1000);
	d = hs_test_daemon(&cfg, &f);
	cfg.reply_timeout_ms = (int)(unit_timeout(1) * 1000);
	rc = qphs_client_request(&cfg, hs_test_addr(d), fault_rows[_i].type, body, strlen(body),
				 &res);
	ck_assert_msg(rc == fault_rows[_i].code, "fault %s: got %s (%s), want %s",
		      fault_rows[_i].fault, qphs_errname(rc), res.errstr,
		      qphs_errname(fault_rows[_i].code));
	if (rc)
		unit_hit(rc);
	ck_assert(rc == 0 || res.errstr[0]);
	free(res.reply);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(client_fault_names_come_from_the_error_table)
{
	struct qphs_fault f;
	char err[256];
	int code;

	for (size_t i = 0; i < sizeof(fault_rows) / sizeof(fault_rows[0]); i++) {
		if (!fault_rows[i].code || !strncmp(fault_rows[i].fault, "delay", 5))
			continue;
		ck_assert_int_eq(qphs_errcode_by_name(fault_rows[i].fault, &code), 1);
		ck_assert_int_eq(code, fault_rows[i].code);
	}
	/* Every FAULT name of the error table is a fault the daemon knows. */
#define PARSE_ROW(name, code, fault, text)                                     \
	if ((fault)[0])                                                        \
		ck_assert_msg(qphs_fault_parse((fault), &f, err, sizeof(err)) == 0, \
			      "fault %s of %s: %s", (fault), #name, err);
	QPHS_ERRNO_MAP(PARSE_ROW)
#undef PARSE_ROW
	ck_assert_int_eq(qphs_fault_parse("reject:go away", &f, err, sizeof(err)), 0);
	ck_assert_int_eq(f.kind, QPHS_FAULT_REJECT);
	ck_assert_str_eq(f.text, "go away");
	ck_assert_int_eq(qphs_fault_parse("delay:x", &f, err, sizeof(err)), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_int_eq(qphs_fault_parse("explode", &f, err, sizeof(err)), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(err, "explode"));
}
END_TEST

START_TEST(client_garbage_fault_is_deterministic_per_seed)
{
	uint8_t a[256], b[256];
	struct qphs_fault f;
	struct qphs_daemon *d;
	ssize_t na, nb;
	uint8_t req[32];
	size_t n = hs_test_frame(QPHS_HS_PROBE, "{}\n", req, sizeof(req));

	qphs_fault_parse("garbage", &f, NULL, 0);
	f.seed = 42;
	d = hs_test_daemon(NULL, &f);
	na = hs_test_exchange(qphs_daemon_port(d), req, n, 0, a, sizeof(a));
	qphs_daemon_free(d);
	d = hs_test_daemon(NULL, &f);
	nb = hs_test_exchange(qphs_daemon_port(d), req, n, 0, b, sizeof(b));
	qphs_daemon_free(d);
	ck_assert_int_gt(na, 9);
	ck_assert_int_eq(na, nb);
	ck_assert_mem_eq(a, b, (size_t)na);
	ck_assert_uint_ge(a[8], 0x80);
}
END_TEST

START_TEST(client_rejection_carries_the_peers_text)
{
	static char rep[] = "{\"local_nic_path\":\"b:2@y\",\"peer_nic_path\":\"a:1@x\","
			    "\"qp_num\":[],\"reply_msg\":\"QP count mismatch in peer and local "
			    "endpoints, check MC_MAX_EP_PER_CTX\"}\n";
	struct qphs_client_result res;
	struct qphs_daemon *d = NULL;
	struct qphs_config cfg;
	int rc;

	hs_test_config(&cfg);
	d = hs_test_serve(&cfg, HS_BIT(QPHS_HS_CONNECTION), reply_fixed, rep);
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_CONNECTION, CONN_BODY,
				 strlen(CONN_BODY), &res);
	ck_assert_int_eq(rc, QPHS_ERR_REJECT_HANDSHAKE);
	unit_hit(rc);
	ck_assert_str_eq(res.errstr, "QP count mismatch in peer and local endpoints, check "
				     "MC_MAX_EP_PER_CTX");
	ck_assert_ptr_nonnull(res.reply);
	free(res.reply);
	qphs_daemon_free(d);
}
END_TEST

/* The one-pass reader takes a plain reply; an escape sends the reply to
 * json-c.  Either way the refusal's text is the peer's, unescaped. */
START_TEST(client_rejection_text_is_the_same_on_both_readers)
{
	static char plain[] = "{\"local_nic_path\":\"b:2@y\",\"peer_nic_path\":\"a:1@x\","
			      "\"qp_num\":[5],\"reply_msg\":\"Invalid argument: x\"}";
	static char escaped[] = "{\"local_nic_path\":\"b:2@y\",\"peer_nic_path\":\"a:1@x\","
				"\"qp_num\":[5],\"reply_msg\":\"Invalid argument: \\u0078\"}";
	char *reps[] = {plain, escaped};

	for (int i = 0; i < 2; i++) {
		struct qphs_client_result res;
		struct qphs_config cfg;
		struct qphs_daemon *d;
		int rc;

		hs_test_config(&cfg);
		d = hs_test_serve(&cfg, HS_BIT(QPHS_HS_CONNECTION), reply_fixed, reps[i]);
		rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_CONNECTION, CONN_BODY,
					 strlen(CONN_BODY), &res);
		ck_assert_int_eq(rc, QPHS_ERR_REJECT_HANDSHAKE);
		ck_assert_str_eq(res.errstr, "Invalid argument: x");
		free(res.reply);
		qphs_daemon_free(d);
	}
}
END_TEST

/* The setup layer's call against a daemon that answers rep: the reply
 * parsed into *reply (its strings in *block when block is not NULL). */
static int desc_request(char *rep, struct qphs_client_result *res, struct qphs_hs_desc *reply,
			void **block, struct qphs_daemon **d)
{
	struct qphs_config cfg;

	hs_test_config(&cfg);
	*d = hs_test_serve(&cfg, HS_BIT(QPHS_HS_CONNECTION), reply_fixed, rep);
	return qphs__client_request_desc(&cfg, hs_test_addr(*d), QPHS_HS_CONNECTION, CONN_BODY,
					 strlen(CONN_BODY), res, reply, block);
}

/* The setup layer's call: the reply comes back parsed.  Asked for a
 * block, the plain reply's strings and qp_num share one allocation; an
 * escaped one goes through json-c and owns its fields (block NULL).  Both
 * read the same, and qphs__hs_desc_release frees either (ASan and
 * valgrind runs see a wrong free). */
START_TEST(client_desc_reply_in_a_block_reads_as_the_struct)
{
	static char plain[] = "{\"local_gid\":\"fe80::1\",\"local_lid\":9,"
			      "\"local_nic_path\":\"b:2@y\",\"peer_nic_path\":\"a:1@x\","
			      "\"qp_num\":[5,6],\"reply_msg\":\"\"}";
	static char escaped[] = "{\"local_gid\":\"fe80::1\",\"local_lid\":9,"
				"\"local_nic_path\":\"b:2\\u0040y\",\"peer_nic_path\":\"a:1@x\","
				"\"qp_num\":[5,6],\"reply_msg\":\"\"}";
	char *reps[] = {plain, escaped};

	for (int i = 0; i < 2; i++) {
		for (int want_block = 0; want_block < 2; want_block++) {
			struct qphs_client_result res;
			struct qphs_hs_desc reply;
			struct qphs_daemon *d;
			void *block = NULL;

			ck_assert_int_eq(desc_request(reps[i], &res, &reply,
						      want_block ? &block : NULL, &d), 0);
			ck_assert_ptr_null(res.reply);
			if (want_block && i == 0)
				ck_assert_ptr_nonnull(block);
			else
				ck_assert_ptr_null(block);
			ck_assert_str_eq(reply.local_nic_path, "b:2@y");
			ck_assert_str_eq(reply.peer_nic_path, "a:1@x");
			ck_assert_str_eq(reply.local_gid, "fe80::1");
			ck_assert_str_eq(reply.reply_msg, "");
			ck_assert_str_eq(reply.payload, "");
			ck_assert_uint_eq(reply.local_lid, 9);
			ck_assert_uint_eq(reply.qp_count, 2);
			ck_assert_uint_eq(reply.qp_num[0], 5);
			ck_assert_uint_eq(reply.qp_num[1], 6);
			qphs__hs_desc_release(&reply, block);
			ck_assert_ptr_null(reply.local_nic_path);
			qphs_daemon_free(d);
		}
	}
}
END_TEST

/* A refusal read into a block: the code and text as without one. */
START_TEST(client_desc_refusal_in_a_block)
{
	static char rep[] = "{\"local_nic_path\":\"b:2@y\",\"peer_nic_path\":\"a:1@x\","
			    "\"qp_num\":[],\"reply_msg\":\"Invalid argument: x\"}";
	struct qphs_client_result res;
	struct qphs_hs_desc reply;
	struct qphs_daemon *d;
	void *block = NULL;

	ck_assert_int_eq(desc_request(rep, &res, &reply, &block, &d), QPHS_ERR_REJECT_HANDSHAKE);
	ck_assert_str_eq(res.errstr, "Invalid argument: x");
	ck_assert_ptr_nonnull(block);
	ck_assert_str_eq(reply.reply_msg, "Invalid argument: x");
	ck_assert_uint_eq(reply.qp_count, 0);
	ck_assert_ptr_null(reply.qp_num);
	qphs__hs_desc_release(&reply, block);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(client_connection_reply_of_wrong_shape_is_malformed_json)
{
	static char rep[] = "{\"qp_num\":\"seven\"}\n";
	struct qphs_client_result res;
	struct qphs_daemon *d = NULL;
	struct qphs_config cfg;
	int rc;

	hs_test_config(&cfg);
	d = hs_test_serve(&cfg, HS_BIT(QPHS_HS_CONNECTION), reply_fixed, rep);
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_CONNECTION, CONN_BODY,
				 strlen(CONN_BODY), &res);
	ck_assert_int_eq(rc, QPHS_ERR_MALFORMED_JSON);
	unit_hit(rc);
	ck_assert_ptr_nonnull(strstr(res.errstr, "qp_num"));
	free(res.reply);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(client_old_protocol_request_gets_untyped_reply)
{
	static char rep[] = "{\"local_nic_path\":\"b:2@y\",\"peer_nic_path\":\"a:1@x\","
			    "\"qp_num\":[1,2],\"reply_msg\":\"\"}\n";
	struct qphs_client_result res;
	struct qphs_daemon *d = NULL;
	struct qphs_config cfg;

	hs_test_config(&cfg);
	d = hs_test_serve(&cfg, HS_BIT(QPHS_HS_CONNECTION), reply_fixed, rep);
	ck_assert_int_eq(qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_OLD_PROTOCOL,
					     CONN_BODY, strlen(CONN_BODY), &res), 0);
	ck_assert_int_eq(res.reply_type, QPHS_HS_OLD_PROTOCOL);
	ck_assert_str_eq(res.reply, rep);
	free(res.reply);
	qphs_daemon_free(d);
}
END_TEST

/* A loopback port nobody listens on: bind, read the port, close. */
static uint16_t unused_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

START_TEST(client_refused_when_nobody_listens)
{
	struct qphs_client_result res;
	struct qphs_config cfg;
	char addr[64];
	int rc;

	hs_test_config(&cfg);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", unused_port());
	rc = qphs_client_request(&cfg, addr, QPHS_HS_PROBE, "{}\n", 3, &res);
	ck_assert_int_eq(rc, QPHS_ERR_CONNECT_REFUSED);
	unit_hit(rc);
	ck_assert_ptr_null(res.reply);
	ck_assert_ptr_nonnull(strstr(res.errstr, addr));
}
END_TEST

START_TEST(client_unresolvable_name_is_err_dns)
{
	struct qphs_client_result res;
	struct qphs_config cfg;
	int rc;

	hs_test_config(&cfg);
	rc = qphs_client_request(&cfg, "no-such-host.invalid:15000", QPHS_HS_PROBE, "{}\n", 3, &res);
	ck_assert_int_eq(rc, QPHS_ERR_DNS);
	unit_hit(rc);
	ck_assert_ptr_nonnull(strstr(res.errstr, "no-such-host.invalid"));
}
END_TEST

/* Malformed forms of a daemon's own address, each one a lenient parser
 * (strtoul, atoi, a 16-bit truncation, a default for an empty port) would
 * turn into that daemon's port, are refused as ERR_BAD_ADDRESS naming the
 * address with no connection made: the daemon they would have reached
 * accepted nothing, though a well-formed request reaches it right after. */
START_TEST(client_bad_address_is_rejected_before_any_traffic)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	unsigned port = qphs_daemon_port(d);
	struct qphs_client_result res;
	struct qphs_daemon_stats st;
	struct qphs_config cfg;
	char addr[8][64];
	int n = 0;

	hs_test_config(&cfg);
	cfg.handshake_port = (int)port; /* what an empty port would default to */
	snprintf(addr[n++], sizeof(addr[0]), "127.0.0.1:%ux", port);
	snprintf(addr[n++], sizeof(addr[0]), "127.0.0.1: %u", port);
	snprintf(addr[n++], sizeof(addr[0]), "127.0.0.1:+%u", port);
	snprintf(addr[n++], sizeof(addr[0]), "127.0.0.1:%u ", port);
	snprintf(addr[n++], sizeof(addr[0]), "127.0.0.1:%u", port + 65536);
	snprintf(addr[n++], sizeof(addr[0]), "127.0.0.1:");
	snprintf(addr[n++], sizeof(addr[0]), ":%u", port);
	snprintf(addr[n++], sizeof(addr[0]), "127.0.0.1:99999");
	for (int i = 0; i < n; i++) {
		int rc = qphs_client_request(&cfg, addr[i], QPHS_HS_PROBE, "{}\n", 3, &res);

		ck_assert_msg(rc == QPHS_ERR_BAD_ADDRESS, "'%s': %s", addr[i], qphs_errname(rc));
		ck_assert_msg(strstr(res.errstr, addr[i]), "'%s': errstr '%s'", addr[i], res.errstr);
		ck_assert_str_eq(res.peer, "");
		ck_assert_ptr_null(res.reply);
		unit_hit(rc);
	}
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.accepted, 0);
	hs_test_assert_probe(d);
	qphs_daemon_stats(d, &st);
	ck_assert_uint_eq(st.accepted, 1);
	qphs_daemon_free(d);
}
END_TEST

/* A listener whose accept queue is full drops further SYNs: the client's
 * connect can only time out. */
START_TEST(client_connect_times_out_against_a_full_backlog)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	struct qphs_client_result res;
	struct qphs_config cfg;
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fill[8], rc;
	char addr[64];

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 0), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	for (int i = 0; i < 8; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fill[i], (struct sockaddr *)&sa, sizeof(sa));
	}
	hs_test_config(&cfg);
	cfg.connect_timeout_s = 1;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sa.sin_port));
	rc = qphs_client_request(&cfg, addr, QPHS_HS_PROBE, "{}\n", 3, &res);
	ck_assert_msg(rc == QPHS_ERR_CONNECT_TIMEOUT, "got %s: %s", qphs_errname(rc), res.errstr);
	unit_hit(rc);
	ck_assert_double_ge(res.connect_ms, 950);
	ck_assert_double_le(res.connect_ms, 1000 + unit_timeout(1) * 1000);
	for (int i = 0; i < 8; i++)
		close(fill[i]);
	close(lfd);
}
END_TEST

struct plain_server {
	int lfd;
	struct tcp_info at_request; /* the accepted socket's, request read */
};

/* Accepts one connection, reads a probe ({}\n) and answers it as a server
 * that sends no FIN with its reply would. */
static void *plain_server_main(void *arg)
{
	struct plain_server *s = arg;
	socklen_t tl = sizeof(s->at_request);
	uint8_t req[64], reply[64];
	size_t want = hs_test_frame(QPHS_HS_PROBE, "{}\n", req, sizeof(req));
	size_t n = hs_test_frame(QPHS_HS_PROBE, "{\"status\":\"success\"}\n", reply, sizeof(reply));
	int fd = accept(s->lfd, NULL, NULL);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(recv(fd, req, want, MSG_WAITALL), (ssize_t)want);
	ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &s->at_request, &tl), 0);
	ck_assert_int_eq(send(fd, reply, n, MSG_NOSIGNAL), (ssize_t)n);
	recv(fd, req, sizeof(req), 0); /* until the client's close */
	close(fd);
	return NULL;
}

/* The client's request carries the ACK that completes TCP's handshake:
 * the server has seen two segments when the request is in (the SYN and
 * the request), not three (a bare ACK between them). */
START_TEST(client_request_carries_the_handshakes_last_ack)
{
	struct plain_server s = {.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	struct qphs_client_result res;
	struct qphs_config cfg;
	pthread_t t;
	char addr[64];

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s.lfd, 4), 0);
	ck_assert_int_eq(getsockname(s.lfd, (struct sockaddr *)&sa, &sl), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, plain_server_main, &s), 0);
	hs_test_config(&cfg);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sa.sin_port));
	ck_assert_int_eq(qphs_client_request(&cfg, addr, QPHS_HS_PROBE, "{}\n", 3, &res), 0);
	ck_assert_str_eq(res.reply, "{\"status\":\"success\"}\n");
	free(res.reply);
	pthread_join(t, NULL);
	close(s.lfd);
	ck_assert_msg(s.at_request.tcpi_segs_in == 2 && s.at_request.tcpi_data_segs_in == 1,
		      "segments in with the request %u (of them with data %u), want 2 (1)",
		      s.at_request.tcpi_segs_in, s.at_request.tcpi_data_segs_in);
}
END_TEST

/* A numeric address is connected to without the resolver; anything else
 * still goes through getaddrinfo: the inet_aton short form "127.1" and
 * the name "localhost" reach the same daemon, and the peer text is the
 * address actually connected to. */
START_TEST(client_short_forms_and_names_go_through_the_resolver)
{
	struct qphs_daemon *d = hs_test_daemon(NULL, NULL);
	struct qphs_client_result res;
	struct qphs_config cfg;
	char addr[64];

	hs_test_config(&cfg);
	snprintf(addr, sizeof(addr), "127.1:%u", qphs_daemon_port(d));
	ck_assert_int_eq(qphs_client_request(&cfg, addr, QPHS_HS_PROBE, "{}\n", 3, &res), 0);
	ck_assert_str_eq(res.peer, hs_test_addr(d));
	free(res.reply);
	snprintf(addr, sizeof(addr), "localhost:%u", qphs_daemon_port(d));
	ck_assert_int_eq(qphs_client_request(&cfg, addr, QPHS_HS_PROBE, "{}\n", 3, &res), 0);
	ck_assert_str_eq(res.reply, "{\"status\":\"success\"}\n");
	free(res.reply);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(client_and_daemon_speak_ipv6)
{
	struct qphs_client_result res;
	struct qphs_daemon *d = NULL;
	struct qphs_config cfg;
	char addr[80];
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (fd >= 0)
			close(fd);
		return; /* no IPv6 loopback here: nothing to test */
	}
	close(fd);
	hs_test_config(&cfg);
	ck_assert_int_eq(qphs_daemon_new(&cfg, &d), 0);
	ck_assert_int_eq(qphs_daemon_listen(d, "::1", 0), 0);
	ck_assert_int_eq(qphs_daemon_start(d), 0);
	snprintf(addr, sizeof(addr), "[::1]:%u", qphs_daemon_port(d));
	ck_assert_str_eq(qphs_daemon_address(d), addr);
	ck_assert_int_eq(qphs_client_request(&cfg, addr, QPHS_HS_PROBE, "{}\n", 3, &res), 0);
	ck_assert_str_eq(res.peer, addr);
	free(res.reply);
	qphs_daemon_free(d);
}
END_TEST

/* The daemon names a peer with its own IPv4 formatter: the text must be
 * what inet_ntop and "%s:%u" write, for the extremes and 4096 others,
 * and a buffer too short for the longest text falls back to snprintf's
 * cut. */
START_TEST(client_peer_text_is_inet_ntops)
{
	uint32_t x = 2463534242u;
	unsigned checked = 0;

	for (int i = 0; i < 4096 + 3; i++) {
		struct sockaddr_in in = {.sin_family = AF_INET};
		char got[64], host[INET_ADDRSTRLEN], want[64];

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		in.sin_addr.s_addr = i == 0 ? 0 : i == 1 ? 0xffffffffu : i == 2 ? htonl(0x0a000001) : x;
		in.sin_port = htons(i == 0 ? 0 : i == 1 ? 65535 : (uint16_t)(x >> 7));
		qphs__sockaddr_format((const struct sockaddr *)&in, got, sizeof(got));
		inet_ntop(AF_INET, &in.sin_addr, host, sizeof(host));
		snprintf(want, sizeof(want), "%s:%u", host, ntohs(in.sin_port));
		ck_assert_str_eq(got, want);
		qphs__sockaddr_format((const struct sockaddr *)&in, got, 8);
		want[7] = '\0';
		ck_assert_str_eq(got, want);
		checked++;
	}
	ck_assert_uint_eq(checked, 4099);
}
END_TEST

Suite *suite_client(void)
{
	Suite *s = suite_create("client");
	TCase *tc = unit_tcase(s, "replies", 10);

	tcase_add_test(tc, client_probe_returns_reply_and_peer);
	tcase_add_test(tc, client_request_carries_the_handshakes_last_ack);
	tcase_add_test(tc, client_rejection_carries_the_peers_text);
	tcase_add_test(tc, client_rejection_text_is_the_same_on_both_readers);
	tcase_add_test(tc, client_desc_reply_in_a_block_reads_as_the_struct);
	tcase_add_test(tc, client_desc_refusal_in_a_block);
	tcase_add_test(tc, client_connection_reply_of_wrong_shape_is_malformed_json);
	tcase_add_test(tc, client_old_protocol_request_gets_untyped_reply);
	tcase_add_test(tc, client_short_forms_and_names_go_through_the_resolver);
	tcase_add_test(tc, client_and_daemon_speak_ipv6);
	tcase_add_test(tc, client_peer_text_is_inet_ntops);
	tc = unit_tcase(s, "faults", 10);
	tcase_add_loop_test(tc, client_reports_each_daemon_fault, 0,
			    (int)(sizeof(fault_rows) / sizeof(fault_rows[0])));
	tcase_add_test(tc, client_fault_names_come_from_the_error_table);
	tcase_add_test(tc, client_garbage_fault_is_deterministic_per_seed);
	tc = unit_tcase(s, "connect", 10);
	tcase_add_test(tc, client_refused_when_nobody_listens);
	tcase_add_test(tc, client_unresolvable_name_is_err_dns);
	tcase_add_test(tc, client_bad_address_is_rejected_before_any_traffic);
	tcase_add_test(tc, client_connect_times_out_against_a_full_backlog);
	return s;
}
