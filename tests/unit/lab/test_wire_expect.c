/* Wire expectations: the `wire` section parsed, tshark's records read,
 * RoCE payload sizes from the IBTA header layout, each kind evaluated;
 * and a scenario's window cut out of a topology's pcap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "plan_testutil.h"
#include "run/run_capture.h"
#include "scenario/wire.h"
#include "unit.h"

#define HEAD                                                                                        \
	"{ \"description\": \"d\", \"source\": \"s\", \"hosts\": { \"a\": {}, \"b\": {} },\n"         \
	"  \"steps\": [ { \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\" } ],\n"                 \
	"  \"expect\": [ { \"hosts\": \"all\", \"daemon_alive\": true } ],\n"

static int parse_errors(const char *wire, char *first, size_t len)
{
	char text[4096];
	struct qplab_errors errs = {0};
	struct qplab_plan *p = NULL;
	int n;

	snprintf(text, sizeof(text), HEAD "  \"wire\": [ %s ] }\n", wire);
	qplab_scenario_parse("t.json", text, strlen(text), &p, &errs);
	n = (int)errs.n;
	snprintf(first, len, "%s", n ? errs.msgs[0] : "");
	qplab_errors_free(&errs);
	qplab_plan_free(p);
	return n;
}

START_TEST(wire_section_parses)
{
	struct qplab_plan *p = plan_test_parse(
		HEAD "  \"wire\": [\n"
		"    { \"why\": \"w1\", \"label\": \"l\", \"handshake\": { \"from\": \"a\", \"to\": \"b\", \"type\": \"connection\", \"role\": \"request\" }, \"count\": 1 },\n"
		"    { \"why\": \"w2\", \"roce_nak\": { \"from\": \"b\", \"syndrome\": \"psn_sequence_error\" }, \"count\": { \"min\": 1 } },\n"
		"    { \"why\": \"w3\", \"roce_payload\": {}, \"bytes\": { \"min\": 256, \"max\": 1024 } },\n"
		"    { \"why\": \"w4\", \"reply_msg\": { \"from\": \"b\", \"prefix\": \"Local\" } },\n"
		"    { \"why\": \"w5\", \"roce_packets\": {}, \"count\": 0 },\n"
		"    { \"why\": \"w6\", \"bad_frame\": { \"from\": \"a\", \"to\": \"b\", \"code\": \"ERR_FRAME_TRAILING\" }, \"count\": 1 },\n"
		"    { \"why\": \"w7\", \"bad_frame\": { \"from\": \"b\" }, \"count\": 0 }\n"
		"  ] }\n");

	ck_assert_uint_eq(p->nwire, 7);
	ck_assert_int_eq(p->wire[0].kind, QPLAB_WIRE_HANDSHAKE);
	ck_assert_int_eq(p->wire[0].from, 0);
	ck_assert_int_eq(p->wire[0].to, 1);
	ck_assert_str_eq(p->wire[0].type, "connection");
	ck_assert_str_eq(p->wire[0].role, "request");
	ck_assert_int_eq(p->wire[0].min, 1);
	ck_assert_int_eq(p->wire[0].max, 1);
	ck_assert_str_eq(p->wire[0].label, "l");
	ck_assert_int_eq(p->wire[1].syndrome, 0x60);
	ck_assert_int_eq(p->wire[1].max, -1);
	ck_assert_int_eq(p->wire[2].min, 256);
	ck_assert_int_eq(p->wire[2].max, 1024);
	ck_assert_int_eq(p->wire[3].kind, QPLAB_WIRE_REPLY_MSG);
	ck_assert_int_eq(p->wire[3].min, 1); /* at least one reply carried it */
	ck_assert_str_eq(p->wire[3].prefix, "Local");
	ck_assert_int_eq(p->wire[4].max, 0);
	ck_assert_int_eq(p->wire[5].kind, QPLAB_WIRE_BAD_FRAME);
	ck_assert_int_eq(p->wire[5].from, 0);
	ck_assert_int_eq(p->wire[5].to, 1);
	ck_assert_str_eq(p->wire[5].code, "ERR_FRAME_TRAILING");
	ck_assert_int_eq(p->wire[5].min, 1);
	ck_assert_int_eq(p->wire[5].max, 1);
	ck_assert_str_eq(p->wire[6].code, ""); /* any bad frame */
	ck_assert_int_eq(p->wire[6].to, -1);
	qplab_plan_free(p);
}
END_TEST

static const struct {
	const char *wire, *msg;
} bad[] = {
	{"{ \"roce_packets\": {}, \"count\": 0 }", "why"},
	{"{ \"why\": \"w\", \"count\": 0 }", "needs one of handshake"},
	{"{ \"why\": \"w\", \"roce_packets\": {}, \"roce_sends\": {}, \"count\": 0 }", "this one has more"},
	{"{ \"why\": \"w\", \"roce_nak\": { \"syndrome\": \"rnr\" }, \"count\": 1 }", "syndrome \"rnr\""},
	{"{ \"why\": \"w\", \"handshake\": { \"from\": \"z\" }, \"count\": 1 }", "z"},
	{"{ \"why\": \"w\", \"handshake\": { \"type\": \"hello\" }, \"count\": 1 }", "not one of connection"},
	{"{ \"why\": \"w\", \"handshake\": {}, \"count\": { \"min\": 3, \"max\": 2 } }", "min above max"},
	{"{ \"why\": \"w\", \"handshake\": {} }", "wants \"count\""},
	{"{ \"why\": \"w\", \"roce_payload\": {}, \"count\": 1, \"bytes\": 1 }", "bytes, not count"},
	{"{ \"why\": \"w\", \"roce_packets\": {}, \"count\": 1, \"bytes\": 1 }", "only roce_payload"},
	{"{ \"why\": \"w\", \"reply_msg\": { \"from\": \"b\" } }", "needs exact, prefix or contains"},
	{"{ \"why\": \"w\", \"roce_packets\": { \"type\": \"probe\" }, \"count\": 0 }", "type"},
	{"{ \"why\": \"w\", \"roce_packets\": {}, \"count\": -1 }", "count"},
	{"{ \"why\": \"w\", \"roce_packets\": {}, \"count\": 0, \"extra\": 1 }", "extra"},
	{"{ \"why\": \"w\", \"bad_frame\": { \"code\": \"ERR_FRAME_GARBAGE\" }, \"count\": 1 }",
	 "code \"ERR_FRAME_GARBAGE\" is not a name the dissector gives"},
	/* an error code, but not one the dissector puts in mooncake.error */
	{"{ \"why\": \"w\", \"bad_frame\": { \"code\": \"ERR_REJECT_HANDSHAKE\" }, \"count\": 1 }",
	 "not a name the dissector gives"},
	{"{ \"why\": \"w\", \"bad_frame\": { \"code\": 3 }, \"count\": 1 }", "code"},
	{"{ \"why\": \"w\", \"bad_frame\": { \"kind\": \"zero-length\" }, \"count\": 1 }", "kind"},
	{"{ \"why\": \"w\", \"bad_frame\": { \"from\": \"z\" }, \"count\": 1 }", "z"},
	{"{ \"why\": \"w\", \"bad_frame\": {} }", "wants \"count\""},
	{"{ \"why\": \"w\", \"bad_frame\": {}, \"bytes\": 1, \"count\": 1 }", "only roce_payload"},
	{"{ \"why\": \"w\", \"bad_frame\": {}, \"handshake\": {}, \"count\": 1 }", "this one has more"},
};

START_TEST(wire_section_refuses_bad_entries)
{
	char first[512];

	ck_assert_msg(parse_errors(bad[_i].wire, first, sizeof(first)) > 0, "accepted %s", bad[_i].wire);
	ck_assert_msg(strstr(first, bad[_i].msg) && !strncmp(first, "t.json:", 7), "'%s' lacks '%s'", first,
		      bad[_i].msg);
}
END_TEST

START_TEST(roce_payload_follows_the_header_layout)
{
	/* UDP 8 + BTH 12 + ICRC 4 around every packet. */
	ck_assert_int_eq(qplab_wire_roce_payload(8 + 12 + 16 + 1024 + 4, 0x0a, 0), 1024); /* WRITE only: RETH */
	ck_assert_int_eq(qplab_wire_roce_payload(8 + 12 + 1024 + 4, 0x07, 0), 1024);      /* WRITE middle */
	ck_assert_int_eq(qplab_wire_roce_payload(8 + 12 + 4 + 4096 + 4, 0x0d, 0), 4096);  /* READ resp first: AETH */
	ck_assert_int_eq(qplab_wire_roce_payload(8 + 12 + 16 + 4, 0x0c, 0), 0);           /* READ request */
	ck_assert_int_eq(qplab_wire_roce_payload(8 + 12 + 4 + 4, 0x11, 0), 0);            /* ACK */
	ck_assert_int_eq(qplab_wire_roce_payload(8 + 12 + 3 + 1 + 4, 0x02, 1), 3);        /* SEND last: 3 bytes, pad 1 */
	ck_assert_int_eq(qplab_wire_roce_payload(8 + 12 + 28 + 4, 0x13, 0), 0);           /* CmpSwap */
	ck_assert_int_eq(qplab_wire_roce_payload(100, 0x15, 0), -1);                      /* reserved */
	ck_assert_int_eq(qplab_wire_roce_payload(100, 0x64, 0), -1);                      /* UD SEND: not RC */
	ck_assert_int_eq(qplab_wire_roce_payload(20, 0x11, 0), -1);                       /* too short */
	ck_assert_int_eq(qplab_wire_syndrome("invalid_request"), 0x61);
	ck_assert_int_eq(qplab_wire_syndrome("remote_operational_error"), 0x63);
	ck_assert_int_eq(qplab_wire_syndrome("ack"), -1);
	ck_assert_str_eq(qplab_wire_syndrome_name(0x62), "remote_access_error");
	ck_assert_ptr_null(qplab_wire_syndrome_name(0x00));
}
END_TEST

/* tshark -T ek lines: an index line, and packets (values are strings). */
static const char *const ek[] = {
	"{\"index\":{\"_index\":\"packets-2026-12-02\",\"_type\":\"doc\"}}",
	/* a->b WRITE only, 1024 bytes */
	"{\"timestamp\":\"1\",\"layers\":{\"ip_src\":[\"10.199.0.1\"],\"ip_dst\":[\"10.199.0.2\"],\"udp_length\":[\"1064\"],"
	"\"infiniband_bth_opcode\":[\"10\"],\"infiniband_bth_psn\":[\"7\"],\"infiniband_bth_destqp\":[\"0x000012\"],"
	"\"infiniband_bth_padcnt\":[\"0\"]}}",
	/* the same PSN again: a retry */
	"{\"timestamp\":\"2\",\"layers\":{\"ip_src\":[\"10.199.0.1\"],\"ip_dst\":[\"10.199.0.2\"],\"udp_length\":[\"1064\"],"
	"\"infiniband_bth_opcode\":[\"10\"],\"infiniband_bth_psn\":[\"7\"],\"infiniband_bth_destqp\":[\"0x000012\"],"
	"\"infiniband_bth_padcnt\":[\"0\"]}}",
	/* b->a NAK invalid request */
	"{\"timestamp\":\"3\",\"layers\":{\"ip_src\":[\"10.199.0.2\"],\"ip_dst\":[\"10.199.0.1\"],\"udp_length\":[\"28\"],"
	"\"infiniband_bth_opcode\":[\"17\"],\"infiniband_bth_psn\":[\"7\"],\"infiniband_bth_destqp\":[\"0x000011\"],"
	"\"infiniband_bth_padcnt\":[\"0\"],\"infiniband_aeth_syndrome\":[\"97\"]}}",
	/* a->b Connection request, b->a two replies in one segment */
	"{\"timestamp\":\"4\",\"layers\":{\"ipv6_src\":[\"fd00:199::1\"],\"ipv6_dst\":[\"fd00:199::2\"],"
	"\"mooncake_type\":[\"connection\"],\"mooncake_role\":[\"request\"]}}",
	"{\"timestamp\":\"5\",\"layers\":{\"ip_src\":[\"10.199.0.2\"],\"ip_dst\":[\"10.199.0.1\"],"
	"\"mooncake_type\":[\"connection\",\"probe\"],\"mooncake_role\":[\"reply\",\"reply\"],"
	"\"mooncake_reply_msg\":[\"Local RDMA context not found for handshake NIC: mlx5_0\"]}}",
	/* a->b a bad frame (mooncake.lua bad_frame(): the error field, no
	 * type or role); a->b the FIN inside a frame (its postdissector);
	 * b->a a body that is not JSON. */
	"{\"timestamp\":\"6\",\"layers\":{\"ip_src\":[\"10.199.0.1\"],\"ip_dst\":[\"10.199.0.2\"],"
	"\"mooncake_error\":[\"ERR_FRAME_ZERO_LENGTH\"]}}",
	"{\"timestamp\":\"7\",\"layers\":{\"ipv6_src\":[\"fd00:199::1\"],\"ipv6_dst\":[\"fd00:199::2\"],"
	"\"mooncake_error\":[\"ERR_FRAME_TRUNCATED\"]}}",
	"{\"timestamp\":\"8\",\"layers\":{\"ip_src\":[\"10.199.0.2\"],\"ip_dst\":[\"10.199.0.1\"],"
	"\"mooncake_error\":[\"ERR_FRAME_NOT_JSON\"]}}",
};

static size_t load(struct qplab_wire_pkt *pk)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(ek) / sizeof(ek[0]); i++) {
		char err[256];
		int k = qplab_wire_pkt_parse(ek[i], strlen(ek[i]), &pk[n], err, sizeof(err));

		ck_assert_msg(k >= 0, "line %zu: %s", i, err);
		ck_assert_int_eq(k, i == 0);
		n += k == 0;
	}
	return n;
}

START_TEST(tshark_records_are_read)
{
	struct qplab_wire_pkt pk[8];
	size_t n = load(pk);
	char err[256];
	struct qplab_wire_pkt junk;

	ck_assert_uint_eq(n, 8);
	ck_assert(pk[0].roce);
	ck_assert_int_eq(pk[0].payload, 1024);
	ck_assert_int_eq(pk[0].destqp, 0x12);
	ck_assert_int_eq(pk[0].syndrome, -1);
	ck_assert_int_eq(pk[0].udp_sport, -1); /* not asked for here */
	ck_assert_int_eq(pk[2].syndrome, 0x61);
	ck_assert_int_eq(pk[2].payload, 0);
	ck_assert(!pk[3].roce);
	ck_assert_str_eq(pk[3].src, "fd00:199::1");
	ck_assert_uint_eq(pk[4].nmsg, 2);
	ck_assert_str_eq(pk[4].msg[1].type, "probe");
	ck_assert_ptr_null(pk[4].msg[1].reply_msg);
	ck_assert_uint_eq(pk[4].nerror, 0);
	ck_assert_uint_eq(pk[5].nerror, 1);
	ck_assert_str_eq(pk[5].error[0], "ERR_FRAME_ZERO_LENGTH");
	ck_assert_uint_eq(pk[5].nmsg, 0);
	ck_assert_uint_eq(pk[7].nerror, 1);
	ck_assert_str_eq(pk[7].error[0], "ERR_FRAME_NOT_JSON");
	ck_assert(qplab_wire_bad_frame_code("ERR_BODY_TOO_DEEP"));
	ck_assert(!qplab_wire_bad_frame_code("ERR_FRAME_GARBAGE"));
	ck_assert(!qplab_wire_bad_frame_code(NULL));
	for (size_t i = 0; i < n; i++)
		qplab_wire_pkt_free(&pk[i]);
	ck_assert_int_eq(qplab_wire_pkt_parse("not json", 8, &junk, err, sizeof(err)), -1);
	ck_assert_int_eq(qplab_wire_pkt_parse("{\"layers\":{\"infiniband_bth_opcode\":[\"x\"]}}", strlen("{\"layers\":{\"infiniband_bth_opcode\":[\"x\"]}}"), &junk, err,
					      sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a number") != NULL, "%s", err);
}
END_TEST

static const struct {
	const char *wire;
	bool ok;
	const char *observed;
} evals[] = {
	{"\"handshake\": { \"from\": \"a\", \"to\": \"b\", \"type\": \"connection\" }, \"count\": 1", true, "1"},
	{"\"handshake\": { \"from\": \"b\", \"role\": \"reply\" }, \"count\": 2", true, "2"},
	{"\"handshake\": { \"from\": \"b\", \"type\": \"metadata\" }, \"count\": { \"min\": 1 }", false, "0"},
	{"\"reply_msg\": { \"from\": \"b\", \"prefix\": \"Local RDMA context not found\" }", true, "1"},
	{"\"reply_msg\": { \"from\": \"a\", \"contains\": \"Local\" }", false, "0"},
	{"\"roce_nak\": { \"from\": \"b\", \"syndrome\": \"invalid_request\" }, \"count\": 1", true, "1"},
	{"\"roce_nak\": { \"syndrome\": \"psn_sequence_error\" }, \"count\": { \"min\": 1 }", false, "0"},
	{"\"roce_payload\": { \"from\": \"a\" }, \"bytes\": 1024", true, "1024 bytes"},
	{"\"roce_payload\": { \"from\": \"a\" }, \"bytes\": { \"max\": 512 }", false, "1024 bytes"},
	{"\"roce_sends\": { \"from\": \"a\", \"to\": \"b\" }, \"count\": 2", true, "2 (PSN 7)"},
	{"\"roce_sends\": { \"from\": \"b\" }, \"count\": { \"min\": 1 }", false, "no RoCE request"},
	{"\"roce_packets\": { \"from\": \"b\" }, \"count\": 0", false, "1"},
	{"\"roce_packets\": {}, \"count\": 3", true, "3"},
	/* one zero-length a->b over IPv4, one truncation over IPv6: both a's */
	{"\"bad_frame\": { \"from\": \"a\", \"to\": \"b\", \"code\": \"ERR_FRAME_ZERO_LENGTH\" }, \"count\": 1", true, "1"},
	{"\"bad_frame\": { \"from\": \"a\", \"code\": \"ERR_FRAME_TRUNCATED\" }, \"count\": 1", true, "1"},
	{"\"bad_frame\": { \"from\": \"a\" }, \"count\": 2", true, "2"},
	{"\"bad_frame\": { \"from\": \"b\", \"to\": \"a\", \"code\": \"ERR_FRAME_ZERO_LENGTH\" }, \"count\": 0", true, "0"},
	{"\"bad_frame\": { \"from\": \"a\", \"code\": \"ERR_FRAME_TOO_LONG\" }, \"count\": 1", false, "0"},
	{"\"bad_frame\": { \"from\": \"b\" }, \"count\": 0", false, "1"},
	{"\"bad_frame\": {}, \"count\": { \"min\": 3, \"max\": 3 }", true, "3"},
	/* a flagged frame is no handshake message: a's one Connection request,
	 * b's one probe reply */
	{"\"handshake\": { \"from\": \"b\", \"type\": \"probe\" }, \"count\": 1", true, "1"},
	{"\"handshake\": { \"from\": \"a\" }, \"count\": 1", true, "1"},
};

START_TEST(wire_expectations_evaluate)
{
	struct qplab_wire_pkt pk[8];
	size_t n = load(pk);
	struct qplab_wire_hosts hosts = {.addr = {{"10.199.0.1", "fd00:199::1"}, {"10.199.0.2", "fd00:199::2"}},
					 .n = 2};
	char text[2048], expected[256];

	snprintf(text, sizeof(text), HEAD "  \"wire\": [ { \"why\": \"w\", %s } ] }\n", evals[_i].wire);
	plan_test_wire_eval(text, pk, n, &hosts, evals[_i].ok, evals[_i].observed, expected,
			    sizeof(expected));
	ck_assert(expected[0]);
	for (size_t i = 0; i < n; i++)
		qplab_wire_pkt_free(&pk[i]);
}
END_TEST

/* Shared mode: every host's address is local to the one namespace, so the
 * client's source is the daemon's own address (b's here, 10.199.0.2) and
 * only the daemon's end names its host. */
static const char *const shared_ek[] = {
	"{\"timestamp\":\"1\",\"layers\":{\"ip_src\":[\"10.199.0.2\"],\"ip_dst\":[\"10.199.0.2\"],"
	"\"mooncake_type\":[\"connection\"],\"mooncake_role\":[\"request\"]}}",
	"{\"timestamp\":\"2\",\"layers\":{\"ip_src\":[\"10.199.0.2\"],\"ip_dst\":[\"10.199.0.2\"],"
	"\"mooncake_type\":[\"connection\"],\"mooncake_role\":[\"reply\"],"
	"\"mooncake_reply_msg\":[\"\"]}}",
	"{\"timestamp\":\"3\",\"layers\":{\"ip_src\":[\"10.199.0.2\"],\"ip_dst\":[\"10.199.0.2\"],"
	"\"mooncake_error\":[\"ERR_FRAME_ZERO_LENGTH\"]}}",
	/* a RoCE packet keeps its GIDs' addresses: matched by them */
	"{\"timestamp\":\"4\",\"layers\":{\"ip_src\":[\"10.199.0.1\"],\"ip_dst\":[\"10.199.0.2\"],\"udp_length\":[\"1064\"],"
	"\"infiniband_bth_opcode\":[\"10\"],\"infiniband_bth_psn\":[\"7\"],\"infiniband_bth_destqp\":[\"0x000012\"],"
	"\"infiniband_bth_padcnt\":[\"0\"]}}",
};

static const struct {
	const char *wire;
	bool ok;
	const char *observed;
} shared_evals[] = {
	{"\"handshake\": { \"from\": \"a\", \"to\": \"b\", \"role\": \"request\" }, \"count\": 1", true, "1"},
	{"\"handshake\": { \"from\": \"c\", \"to\": \"b\", \"role\": \"request\" }, \"count\": 1", true, "1"},
	{"\"handshake\": { \"from\": \"b\", \"to\": \"a\", \"role\": \"reply\" }, \"count\": 1", true, "1"},
	/* the daemon's end is b's: nothing went to a's daemon or came from it */
	{"\"handshake\": { \"from\": \"b\", \"to\": \"a\", \"role\": \"request\" }, \"count\": 0", true, "0"},
	{"\"handshake\": { \"to\": \"a\" }, \"count\": 1", true, "1"},
	{"\"handshake\": { \"from\": \"a\", \"role\": \"reply\" }, \"count\": 0", true, "0"},
	{"\"handshake\": { \"from\": \"b\", \"to\": \"b\" }, \"count\": 0", true, "0"},
	{"\"bad_frame\": { \"from\": \"a\", \"to\": \"b\" }, \"count\": 1", true, "1"},
	{"\"bad_frame\": { \"to\": \"a\" }, \"count\": 0", true, "0"},
	{"\"roce_packets\": { \"from\": \"a\", \"to\": \"b\" }, \"count\": 1", true, "1"},
	{"\"roce_packets\": { \"from\": \"b\" }, \"count\": 0", true, "0"},
};

START_TEST(wire_shared_mode_names_the_daemons_end)
{
	struct qplab_wire_pkt pk[4];
	struct qplab_wire_hosts hosts = {.addr = {{"10.199.0.1", ""}, {"10.199.0.2", ""}, {"10.199.0.3", ""}},
					 .n = 3};
	char text[2048], expected[256], err[256];

	for (size_t i = 0; i < 4; i++)
		ck_assert_msg(qplab_wire_pkt_parse(shared_ek[i], strlen(shared_ek[i]), &pk[i], err, sizeof(err)) == 0,
			      "%zu: %s", i, err);
	snprintf(text, sizeof(text),
		 "{ \"description\": \"d\", \"source\": \"s\", \"hosts\": { \"a\": {}, \"b\": {}, \"c\": {} },\n"
		 "  \"steps\": [ { \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\" } ],\n"
		 "  \"expect\": [ { \"hosts\": \"all\", \"daemon_alive\": true } ],\n"
		 "  \"wire\": [ { \"why\": \"w\", %s } ] }\n",
		 shared_evals[_i].wire);
	plan_test_wire_eval(text, pk, 4, &hosts, shared_evals[_i].ok, shared_evals[_i].observed,
			    expected, sizeof(expected));
	for (size_t i = 0; i < 4; i++)
		qplab_wire_pkt_free(&pk[i]);
}
END_TEST

/* A pcap (microseconds) with records at the given seconds, 10 bytes each. */
static void write_pcap(const char *path, const int *secs, size_t n, bool cut_last)
{
	FILE *f = fopen(path, "wb");
	unsigned int hdr[6] = {0xa1b2c3d4u, 2 | (4u << 16), 0, 0, 65535, 1};

	ck_assert_ptr_nonnull(f);
	fwrite(hdr, 4, 6, f);
	for (size_t i = 0; i < n; i++) {
		unsigned int rec[4] = {(unsigned)secs[i], 500000, 10, 10};
		unsigned char data[10];

		memset(data, (int)i, sizeof(data));
		fwrite(rec, 4, 4, f);
		fwrite(data, 1, cut_last && i + 1 == n ? 4 : 10, f);
	}
	fclose(f);
}

START_TEST(pcap_split_cuts_windows_and_bounds_them)
{
	char src[] = "/tmp/qplab-wire-XXXXXX", dst[64];
	int secs[] = {10, 20, 21, 30, 40};
	struct run_cap_result r;
	long off = 0;
	char err[256] = "";
	int fd = mkstemp(src);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(dst, sizeof(dst), "%s.out", src);
	write_pcap(src, secs, 5, true);
	/* [15, 25]: the records at 20 and 21; 10 is skipped. */
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(run_pcap_split(src, &off, 15, 25, dst, 1 << 20, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.packets, 2);
	ck_assert_int_eq(r.bytes, 2 * 26);
	ck_assert(!r.truncated);
	ck_assert_int_eq(off, 24 + 3 * 26);
	/* [25, 50]: 30 is taken; 40 is cut short, left for later. */
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(run_pcap_split(src, &off, 25, 50, dst, 1 << 20, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.packets, 1);
	ck_assert_int_eq(off, 24 + 4 * 26);
	/* The bound: one record fits in 30 bytes, the other is dropped. */
	write_pcap(src, secs, 5, false);
	off = 0;
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(run_pcap_split(src, &off, 15, 25, dst, 30, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.packets, 1);
	ck_assert_int_eq(r.dropped, 1);
	ck_assert(r.truncated);
	/* Not a pcap. */
	write_pcap(src, secs, 0, false);
	fd = open(src, O_WRONLY);
	ck_assert_int_eq(write(fd, "xxxx", 4), 4);
	close(fd);
	off = 0;
	ck_assert_int_eq(run_pcap_split(src, &off, 0, 50, dst, 30, &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a pcap"));
	unlink(src);
	unlink(dst);
}
END_TEST

Suite *suite_wire_expect(void)
{
	Suite *s = suite_create("wire_expect");
	TCase *tc = unit_tcase(s, "wire", 5);

	tcase_add_test(tc, wire_section_parses);
	tcase_add_loop_test(tc, wire_section_refuses_bad_entries, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, roce_payload_follows_the_header_layout);
	tcase_add_test(tc, tshark_records_are_read);
	tcase_add_loop_test(tc, wire_expectations_evaluate, 0, sizeof(evals) / sizeof(evals[0]));
	tcase_add_loop_test(tc, wire_shared_mode_names_the_daemons_end, 0, sizeof(shared_evals) / sizeof(shared_evals[0]));
	tcase_add_test(tc, pcap_split_cuts_windows_and_bounds_them);
	return s;
}
