/* The Mooncake adapter's pure part (mooncake/proto.h): its side of the
 * agent protocol, its readings of Mooncake's glog lines, showLinks and the
 * kernel's QP list, and the data path's helpers.  No Mooncake here: the
 * inputs are written from the formats the producers print (glog's line
 * prefix, Mooncake's log statements at 3b5a594). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "qphs.h"
#include "unit.h"

static const char *plain(json_object *o)
{
	static char out[8192];

	snprintf(out, sizeof(out), "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return out;
}

START_TEST(mca_requests_are_decoded_with_their_fields)
{
	static const char line[] = "{\"v\":2,\"id\":5,\"op\":\"datapath\",\"peer\":\"10.1.0.2:12001@rxe1\","
				   "\"bytes\":8192,\"deadline_ms\":3000,\"read_only\":true}";
	struct mca_request r;
	json_object *err;

	ck_assert_int_eq(mca_request_parse(line, strlen(line), 1, &r, &err), 0);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(r.op, MCA_OP_DATAPATH);
	ck_assert_str_eq(r.peer, "10.1.0.2:12001@rxe1");
	ck_assert_int_eq(r.bytes, 8192);
	ck_assert_int_eq(r.deadline_ms, 3000);
	ck_assert(r.read_only);
	ck_assert_ptr_null(r.address);
	ck_assert_int_eq(r.at_realtime_ns, -1);
	ck_assert_int_eq(json_object_get_int(r.id), 5);
	mca_request_free(&r);
}
END_TEST

static const struct {
	const char *line, *want;
} bad_lines[] = {
	{"not json", "{\"v\":2,\"type\":\"reply\",\"id\":null,\"op\":null,\"ok\":false,"
		     "\"code\":\"ERR_MALFORMED_JSON\",\"error\":\"line 7: not a JSON object\"}"},
	{"[1]", "{\"v\":2,\"type\":\"reply\",\"id\":null,\"op\":null,\"ok\":false,"
		"\"code\":\"ERR_MALFORMED_JSON\",\"error\":\"line 7: not a JSON object\"}"},
	{"{\"v\":1,\"id\":3,\"op\":\"report\"}", "{\"v\":2,\"type\":\"reply\",\"id\":3,\"op\":\"report\","
		"\"ok\":false,\"code\":\"ERR_INVALID_ARGUMENT\",\"error\":\"protocol version: want \\\"v\\\": 2\"}"},
	{"{\"v\":2,\"op\":\"report\"}", "{\"v\":2,\"type\":\"reply\",\"id\":null,\"op\":\"report\","
		"\"ok\":false,\"code\":\"ERR_INVALID_ARGUMENT\",\"error\":\"request: integer \\\"id\\\" missing\"}"},
	{"{\"v\":2,\"id\":4}", "{\"v\":2,\"type\":\"reply\",\"id\":4,\"op\":null,\"ok\":false,"
		"\"code\":\"ERR_INVALID_ARGUMENT\",\"error\":\"request: \\\"op\\\" missing\"}"},
	{"{\"v\":2,\"id\":4,\"op\":\"teleport\"}", "{\"v\":2,\"type\":\"reply\",\"id\":4,\"op\":\"teleport\","
		"\"ok\":false,\"code\":\"ERR_INVALID_ARGUMENT\",\"error\":\"unknown op \\\"teleport\\\"\"}"},
	{"{\"v\":2,\"id\":4,\"op\":\"connect\",\"peer\":7}", "{\"v\":2,\"type\":\"reply\",\"id\":4,"
		"\"op\":\"connect\",\"ok\":false,\"code\":\"ERR_INVALID_ARGUMENT\","
		"\"error\":\"request: \\\"peer\\\" must be a string, not an integer\"}"},
	{"{\"v\":2,\"id\":4,\"op\":\"probe\",\"deadline_ms\":0}", "{\"v\":2,\"type\":\"reply\",\"id\":4,"
		"\"op\":\"probe\",\"ok\":false,\"code\":\"ERR_INVALID_ARGUMENT\","
		"\"error\":\"request: \\\"deadline_ms\\\" must be in 1..2147483647\"}"},
	/* json-c's own getters would take 1.5 as 1 and "4096" as 4096. */
	{"{\"v\":2,\"id\":4,\"op\":\"probe\",\"deadline_ms\":1.5}", "{\"v\":2,\"type\":\"reply\",\"id\":4,"
		"\"op\":\"probe\",\"ok\":false,\"code\":\"ERR_INVALID_ARGUMENT\","
		"\"error\":\"request: \\\"deadline_ms\\\" must be an integer, not a number\"}"},
	{"{\"v\":2,\"id\":4,\"op\":\"datapath\",\"bytes\":\"4096\"}", "{\"v\":2,\"type\":\"reply\",\"id\":4,"
		"\"op\":\"datapath\",\"ok\":false,\"code\":\"ERR_INVALID_ARGUMENT\","
		"\"error\":\"request: \\\"bytes\\\" must be an integer, not a string\"}"},
	/* Invalid UTF-8 in a string: the strict reader refuses the line. */
	{"{\"v\":2,\"id\":4,\"op\":\"connect\",\"peer\":\"\xff\"}", "{\"v\":2,\"type\":\"reply\",\"id\":null,\"op\":null,\"ok\":false,"
		"\"code\":\"ERR_MALFORMED_JSON\",\"error\":\"line 7: not a JSON object\"}"},
};

START_TEST(mca_bad_requests_get_the_protocols_error_replies)
{
	struct mca_request r;
	json_object *err;

	ck_assert_int_eq(mca_request_parse(bad_lines[_i].line, strlen(bad_lines[_i].line), 7, &r, &err), -1);
	ck_assert_ptr_null(r.body);
	ck_assert_str_eq(plain(err), bad_lines[_i].want);
}
END_TEST

START_TEST(mca_a_line_over_64_kib_is_refused)
{
	size_t n = MCA_LINE_MAX + 1;
	char *line = malloc(n + 1);
	struct mca_request r;
	json_object *err;

	memset(line, ' ', n);
	line[n] = '\0';
	ck_assert_int_eq(mca_request_parse(line, n, 2, &r, &err), -1);
	ck_assert_str_eq(plain(err), "{\"v\":2,\"type\":\"reply\",\"id\":null,\"op\":null,\"ok\":false,"
				     "\"code\":\"ERR_INVALID_ARGUMENT\",\"error\":\"line 2: longer than 65536 bytes\"}");
	free(line);
}
END_TEST

START_TEST(mca_unsupported_says_why_in_its_own_field)
{
	json_object *id = json_object_new_int(9);

	ck_assert_str_eq(plain(mca_unsupported(id, "disconnect", "no such call")),
			 "{\"v\":2,\"type\":\"reply\",\"id\":9,\"op\":\"disconnect\",\"ok\":false,"
			 "\"code\":\"ERR_NOT_IMPLEMENTED\",\"error\":\"no such call\",\"unsupported\":\"no such call\"}");
	json_object_put(id);
}
END_TEST

static const struct {
	const char *config, *err;
} configs[] = {
	{"{\"impl\":\"mooncake\",\"agent\":{}}", NULL},
	{"{\"agent\":{},\"impl\":\"mooncake\"}", NULL},
	{"{\"impl\":\"mooncake\",\"agent\":{\"ready_ack\":false}}",
	 "--config: agent option \"ready_ack\" has no Mooncake equivalent (a Mooncake host takes MC_* variables only)"},
	{"{\"impl\":\"mooncake\",\"fault\":{\"name\":\"stall\"}}",
	 "--config: a daemon fault cannot be injected into Mooncake's own daemon"},
	{"{\"impl\":\"qplab\"}", "--config: \"impl\" must be \"mooncake\""},
	{"{\"impl\":\"mooncake\",\"colour\":1}", "--config: unknown key \"colour\""},
	{"{\"agent\":{}}", "--config: \"impl\": \"mooncake\" missing"},
	{"[]", "--config: not a JSON object"},
};

START_TEST(mca_config_takes_a_mooncake_host_and_nothing_else)
{
	char err[300] = "";
	int rc = mca_config_check(configs[_i].config, err, sizeof(err));

	ck_assert_int_eq(rc, configs[_i].err ? -1 : 0);
	if (configs[_i].err)
		ck_assert_str_eq(err, configs[_i].err);
}
END_TEST

START_TEST(mca_ready_line_names_the_mooncake_build)
{
	struct mca_ready_info in = {.host = "b", .listen = "10.1.0.2:12001", .device = "rxe1", .pid = 42,
				    .gid_index = 1, .gid = "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:01:00:02",
				    .commit = "3b5a594", .build = "/mc/build", .source = "/mc/src"};

	ck_assert_str_eq(plain(mca_ready(&in)),
			 "{\"v\":2,\"type\":\"ready\",\"host\":\"b\",\"impl\":\"mooncake\",\"pid\":42,"
			 "\"listen\":\"10.1.0.2:12001\",\"nic_path\":\"10.1.0.2:12001@rxe1\",\"device\":\"rxe1\","
			 "\"gid_index\":1,\"gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:01:00:02\","
			 "\"context_error\":null,\"mooncake\":{\"commit\":\"3b5a594\",\"build\":\"\\/mc\\/build\","
			 "\"source\":\"\\/mc\\/src\"},\"fault\":null}");
	in.context_code = "ERR_CONTEXT";
	in.context_text = "no transport";
	in.gid_index = -1;
	in.gid = "";
	ck_assert(strstr(plain(mca_ready(&in)), "\"gid_index\":null,\"gid\":null,\"context_error\":"
						 "{\"code\":\"ERR_CONTEXT\",\"text\":\"no transport\"}"));
}
END_TEST

START_TEST(mca_ring_keeps_the_last_lines_and_counts_the_lost)
{
	static struct mca_ring r;
	char line[32];
	uint64_t lost;
	json_object *a;

	memset(&r, 0, sizeof(r));
	mca_ring_push(&r, "one", 3);
	mca_ring_push(&r, "twoXX", 3);
	a = mca_ring_since(&r, 0, &lost);
	ck_assert_str_eq(plain(a), "[\"one\",\"two\"]");
	ck_assert_int_eq(lost, 0);
	ck_assert_str_eq(plain(mca_ring_since(&r, 1, NULL)), "[\"two\"]");
	ck_assert_str_eq(plain(mca_ring_since(&r, 2, NULL)), "[]");
	for (int i = 0; i < MCA_RING_LINES + 10; i++) {
		snprintf(line, sizeof(line), "l%d", i);
		mca_ring_push(&r, line, strlen(line));
	}
	a = mca_ring_since(&r, 1, &lost);
	ck_assert_int_eq(json_object_array_length(a), MCA_RING_LINES);
	ck_assert_int_eq(lost, 11); /* "two" and l0..l9 were overwritten */
	ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(a, 0)), "l10");
	json_object_put(a);
	ck_assert_ptr_null(mca_ring_at(&r, 0, 0));
	ck_assert_str_eq(mca_ring_at(&r, 12, 0), "l10");
	ck_assert_ptr_null(mca_ring_at(&r, r.pushed, 0));
}
END_TEST

START_TEST(mca_ring_cuts_a_long_line)
{
	static struct mca_ring r;
	char big[MCA_RING_LINE_BYTES + 100];

	memset(&r, 0, sizeof(r));
	memset(big, 'x', sizeof(big));
	mca_ring_push(&r, big, sizeof(big));
	ck_assert_int_eq(strlen(mca_ring_at(&r, 0, 0)), MCA_RING_LINE_BYTES - 1);
}
END_TEST

START_TEST(mca_glog_lines_are_recognised)
{
	const char *msg;
	char level;

	/* glog 0.6 (Debian 12) writes the year; older ones mmdd only. */
	ck_assert(mca_glog_parse("E20261201 21:37:04.818188 21503 rdma_context.cpp:1194] ibv_get_device_list failed",
				 &level, &msg));
	ck_assert_int_eq(level, 'E');
	ck_assert_str_eq(msg, "ibv_get_device_list failed");
	ck_assert(mca_glog_parse("W1201 21:37:04.818212 21503 rdma_transport.cpp:1123] Disable device rxe0", &level, &msg));
	ck_assert_int_eq(level, 'W');
	ck_assert_str_eq(msg, "Disable device rxe0");
	ck_assert(!mca_glog_parse("WARNING: Logging before InitGoogleLogging() is written to STDERR", &level, &msg));
	ck_assert(!mca_glog_parse("qplab-mooncake-agent: signal 15, exiting", &level, &msg));
	ck_assert(!mca_glog_parse("E2026 21:37:04.8 x] y", &level, &msg));
	ck_assert(!mca_glog_parse("", &level, &msg));
}
END_TEST

/* Messages as Mooncake's log statements at 3b5a594 build them, with the
 * code the function returns at that statement. */
static const struct {
	const char *msg;
	enum mca_side side;
	int code;
	const char *where;
} failures[] = {
	/* TransferMetadata::sendHandshake: LOG(ERROR) then ERR_METADATA */
	{"Handshake rejected by 10.1.0.1:12001: QP count mismatch in peer and local endpoints, check MC_MAX_EP_PER_CTX",
	 MCA_SIDE_CLIENT, QPHS_ERR_METADATA, "TransferMetadata::sendHandshake"},
	{"Invalid argument: received packet mismatch, local.local_nic_path: a, local.peer_nic_path: b, "
	 "peer.local_nic_path: c, peer.peer_nic_path: d", MCA_SIDE_CLIENT, QPHS_ERR_REJECT_HANDSHAKE,
	 "RdmaEndPoint::setupConnectionsByActive"},
	{"[Handshake] Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: Invalid argument",
	 MCA_SIDE_CLIENT, QPHS_ERR_ENDPOINT, "RdmaEndPoint::doSetupConnection"},
	{"[Handshake] QP count mismatch in peer and local endpoints, check MC_MAX_EP_PER_CTX", MCA_SIDE_DAEMON,
	 QPHS_ERR_INVALID_ARGUMENT, "RdmaEndPoint::doSetupConnection"},
	{"SocketHandShakePlugin: connect()10.1.0.2: Connection refused [111]", MCA_SIDE_CLIENT,
	 QPHS_ERR_SOCKET, "SocketHandShakePlugin::doConnect"},
	{"readString: zero length from socket", MCA_SIDE_DAEMON, QPHS_ERR_FRAME_ZERO_LENGTH, "readString"},
	{"readString: zero length from socket", MCA_SIDE_CLIENT, QPHS_ERR_SOCKET, "readString"},
	{"readString: too large length from socket: 134217729", MCA_SIDE_DAEMON, QPHS_ERR_FRAME_TOO_LONG, "readString"},
	{"readString: unexpected length, got: 3, expected: 100", MCA_SIDE_DAEMON, QPHS_ERR_FRAME_TRUNCATED, "readString"},
	{"SocketHandShakePlugin: failed to receive handshake message, malformed json format: * Line 1, Column 1",
	 MCA_SIDE_DAEMON, QPHS_ERR_FRAME_NOT_JSON, "SocketHandShakePlugin::startDaemon"},
	{"SocketHandShakePlugin: failed to receive metadata message, malformed json format: x", MCA_SIDE_CLIENT,
	 QPHS_ERR_MALFORMED_JSON, "SocketHandShakePlugin::doSend"},
	{"SocketHandShakePlugin: unexpected handshake message type", MCA_SIDE_DAEMON, QPHS_ERR_FRAME_BAD_TYPE,
	 "SocketHandShakePlugin::startDaemon"},
	{"SocketHandShakePlugin: unexpected handshake message type", MCA_SIDE_CLIENT, QPHS_ERR_SOCKET,
	 "doSend"},
	{"Unsupported segment descriptor, name 10.1.0.2:12001 protocol ", MCA_SIDE_CLIENT, QPHS_ERR_METADATA,
	 "TransferMetadata::decodeSegmentDesc"},
	{"P2P: No valid port found for local TCP service.", MCA_SIDE_CLIENT, QPHS_ERR_NO_PORT, "TransferEngineImpl::init"},
	{"RdmaTransport: No available RNIC", MCA_SIDE_CLIENT, QPHS_ERR_DEVICE_NOT_FOUND,
	 "RdmaTransport::initializeRdmaResources"},
	{"Transfer Engine RPC using P2P handshake, listening on 10.1.0.2:12001", MCA_SIDE_CLIENT, 0, NULL},
	{"Handshake rejected by x: y", MCA_SIDE_DAEMON, 0, NULL},
};

START_TEST(mca_log_failures_carry_mooncakes_codes)
{
	const char *where = NULL;
	int code = mca_log_failure(failures[_i].msg, failures[_i].side, &where);

	ck_assert_int_eq(code, failures[_i].code);
	if (failures[_i].where)
		ck_assert_ptr_nonnull(strstr(where, failures[_i].where));
	if (code)
		unit_hit(code);
}
END_TEST

START_TEST(mca_first_failure_skips_info_and_reads_the_completion_status)
{
	static struct mca_ring r;
	static const char *const lines[] = {
		"I20261201 22:55:46.098707   208 rdma_context.cpp:1363] Find best gid index: 1",
		"I20261201 22:55:46.200000   208 transfer_metadata.cpp:1] Handshake rejected by info-only: x",
		"W20261201 22:55:46.300000   208 worker_pool.cpp:477] Worker: Cannot make connection for endpoint: p",
		"E20261201 22:55:46.400000   208 worker_pool.cpp:654] Worker: Process failed for slice (opcode: 0, "
		"source_addr: 0x1, length: 64, dest_addr: 0x2, local_nic: rxe1, peer_nic: p, dest_rkey: 1, "
		"retry_cnt: 0, max_retry_cnt: 8): transport retry counter exceeded",
		"E20261201 22:55:46.500000   208 transfer_metadata.cpp:1520] Handshake rejected by p: later",
	};
	char text[700], wc[32];
	const char *where = NULL;

	memset(&r, 0, sizeof(r));
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		mca_ring_push(&r, lines[i], strlen(lines[i]));
	ck_assert_int_eq(mca_first_failure(&r, 0, MCA_SIDE_CLIENT, text, sizeof(text), wc, sizeof(wc), &where),
			 QPHS_ERR_COMPLETION);
	ck_assert_str_eq(wc, "IBV_WC_RETRY_EXC_ERR");
	ck_assert_ptr_nonnull(strstr(text, "Worker: Process failed for slice"));
	ck_assert_ptr_nonnull(strstr(where, "performPollCq"));
	ck_assert_int_eq(mca_first_failure(&r, 4, MCA_SIDE_CLIENT, text, sizeof(text), wc, sizeof(wc), NULL),
			 QPHS_ERR_METADATA);
	ck_assert_str_eq(text, "Handshake rejected by p: later");
	ck_assert_str_eq(wc, "");
	ck_assert_int_eq(mca_first_failure(&r, 5, MCA_SIDE_CLIENT, text, sizeof(text), wc, sizeof(wc), NULL), 0);
}
END_TEST

START_TEST(mca_wc_names_follow_ibv_wc_status_str)
{
	ck_assert_str_eq(mca_wc_name("success"), "IBV_WC_SUCCESS");
	ck_assert_str_eq(mca_wc_name("remote invalid request error"), "IBV_WC_REM_INV_REQ_ERR");
	ck_assert_str_eq(mca_wc_name("Work Request Flushed Error"), "IBV_WC_WR_FLUSH_ERR");
	ck_assert_str_eq(mca_wc_name("RNR retry counter exceeded"), "IBV_WC_RNR_RETRY_EXC_ERR");
	ck_assert_ptr_null(mca_wc_name("transport retry counter"));
}
END_TEST

START_TEST(mca_links_give_the_devices_gid)
{
	/* buildShowLinksJson (show_links.cpp): local_nics[], topology */
	static const char links[] =
		"{\"local_nics\": [{\"device\": \"qlx-b\", \"numa\": 0, \"gid\": \"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:01:00:02\","
		" \"gid_index\": 1, \"port\": 1, \"speed_gbps\": 0, \"source\": \"rdma_transport\"},"
		" {\"device\": \"qlx-t\", \"numa\": -1, \"gid\": \"\", \"gid_index\": -1, \"port\": 0,"
		" \"speed_gbps\": 0, \"source\": \"topology\"}], \"topology\": {\"cpu:0\": [[\"qlx-b\"], []]}}";
	char gid[64];
	int idx;

	ck_assert_int_eq(mca_links_gid(links, "qlx-b", &idx, gid, sizeof(gid)), 0);
	ck_assert_int_eq(idx, 1);
	ck_assert_str_eq(gid, "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:01:00:02");
	ck_assert_int_eq(mca_links_gid(links, "qlx-t", &idx, gid, sizeof(gid)), -1);
	ck_assert_int_eq(mca_links_gid(links, "qlx-z", &idx, gid, sizeof(gid)), -1);
	ck_assert_int_eq(mca_links_gid("(TENT mode or not initialized)", "qlx-b", &idx, gid, sizeof(gid)), -1);
}
END_TEST

START_TEST(mca_peer_buffer_is_the_first_with_rkeys_that_holds_the_bytes)
{
	static const char desc[] =
		"{\"buffers\":[{\"addr\":4096,\"length\":65536,\"lkey\":[1],\"name\":\"cpu:0\",\"rkey\":[]},"
		"{\"addr\":131072,\"length\":1024,\"lkey\":[2],\"name\":\"cpu:0\",\"rkey\":[2]},"
		"{\"addr\":262144,\"length\":1048576,\"lkey\":[3],\"name\":\"cpu:0\",\"rkey\":[3]}],"
		"\"devices\":[{\"gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:01:00:02\",\"lid\":0,\"name\":\"rxe1\"}],"
		"\"name\":\"10.1.0.2:12001\",\"priority_matrix\":{\"cpu:0\":[[\"rxe1\"],[]]},\"protocol\":\"rdma\","
		"\"tcp_data_port\":0,\"tcp_proto_version\":1,\"timestamp\":\"2026-12-01 00:00:00.000000\"}";
	struct qphs_segment_desc s;
	char err[300];

	ck_assert_int_eq(qphs_segment_desc_parse(desc, strlen(desc), &s, err, sizeof(err)), 0);
	ck_assert_int_eq(mca_pick_buffer(&s, 64, err, sizeof(err)), 1);
	ck_assert_int_eq(mca_pick_buffer(&s, 4096, err, sizeof(err)), 2);
	ck_assert_int_eq(mca_pick_buffer(&s, 2 << 20, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "the peer's segment descriptor lists no remotely accessible buffer of 2097152 bytes or more (3 buffers)");
	qphs_segment_desc_clear(&s);
}
END_TEST

START_TEST(mca_patterns_differ_by_seed_and_repeat_by_seed)
{
	uint8_t a[256], b[256], c[256];
	int same = 0;

	mca_pattern(a, sizeof(a), 7);
	mca_pattern(b, sizeof(b), 7);
	mca_pattern(c, sizeof(c), 8);
	ck_assert_mem_eq(a, b, sizeof(a));
	for (size_t i = 0; i < sizeof(a); i++)
		same += a[i] == c[i];
	ck_assert_int_lt(same, 16);
	ck_assert_str_eq(mca_status_name(4), "COMPLETED");
	ck_assert_str_eq(mca_status_name(6), "FAILED");
	ck_assert_str_eq(mca_status_name(9), "UNKNOWN");
}
END_TEST

START_TEST(mca_report_says_what_it_cannot_tell)
{
	struct mca_state st;
	struct mca_qp q[2] = {{17, "RTS"}, {18, "RESET"}};
	json_object *lines = json_object_new_array(), *o, *v, *w;
	json_object *id = json_object_new_int(4);

	mca_state_init(&st);
	st.t_total = 12;
	snprintf(st.transfer_op, sizeof(st.transfer_op), "READ");
	snprintf(st.transfer_status, sizeof(st.transfer_status), "FAILED");
	mca_state_last(&st, "ERR_METADATA", "Handshake rejected by x: y", "TransferMetadata::sendHandshake");
	json_object_array_add(lines, json_object_new_string("E... Handshake rejected by x: y"));
	o = mca_report(id, &st, q, 2, 1, "g", lines, 0);
	ck_assert(json_object_object_get_ex(o, "device_qps", &v));
	ck_assert_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			 "[{\"qpn\":17,\"state\":\"RTS\"},{\"qpn\":18,\"state\":\"RESET\"}]");
	ck_assert(json_object_object_get_ex(o, "last", &v));
	ck_assert_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			 "{\"code\":\"ERR_METADATA\",\"error\":\"Handshake rejected by x: y\","
			 "\"where\":\"TransferMetadata::sendHandshake\"}");
	ck_assert(json_object_object_get_ex(o, "transfer", &v));
	ck_assert_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
			 "{\"op\":\"READ\",\"status\":\"FAILED\"}");
	ck_assert(json_object_object_get_ex(o, "time_ms", &v) && json_object_object_get_ex(v, "total", &w));
	ck_assert_int_eq(json_object_get_int(w), 12);
	ck_assert(json_object_object_get_ex(v, "rtr", &w) && !w);
	ck_assert(!json_object_object_get_ex(o, "endpoints", NULL));
	ck_assert(json_object_object_get_ex(o, "not_reported", &v) && json_object_object_get_ex(v, "endpoints", NULL));
	ck_assert(json_object_object_get_ex(o, "log", &v) && json_object_array_length(v) == 1);
	json_object_put(o);
	o = mca_report(id, &st, q, -1, -1, "", NULL, 3);
	ck_assert(json_object_object_get_ex(o, "device_qps", &v) && !v);
	ck_assert(json_object_object_get_ex(o, "gid_index", &v) && !v);
	ck_assert(json_object_object_get_ex(o, "log_lost", &v) && json_object_get_int(v) == 3);
	json_object_put(o);
	json_object_put(id);
}
END_TEST

Suite *suite_mcproto(void)
{
	Suite *s = suite_create("mcproto");
	TCase *tc = unit_tcase(s, "mcproto", 10);

	tcase_add_test(tc, mca_requests_are_decoded_with_their_fields);
	tcase_add_loop_test(tc, mca_bad_requests_get_the_protocols_error_replies, 0,
			    sizeof(bad_lines) / sizeof(bad_lines[0]));
	tcase_add_test(tc, mca_a_line_over_64_kib_is_refused);
	tcase_add_test(tc, mca_unsupported_says_why_in_its_own_field);
	tcase_add_loop_test(tc, mca_config_takes_a_mooncake_host_and_nothing_else, 0,
			    sizeof(configs) / sizeof(configs[0]));
	tcase_add_test(tc, mca_ready_line_names_the_mooncake_build);
	tcase_add_test(tc, mca_ring_keeps_the_last_lines_and_counts_the_lost);
	tcase_add_test(tc, mca_ring_cuts_a_long_line);
	tcase_add_test(tc, mca_glog_lines_are_recognised);
	tcase_add_loop_test(tc, mca_log_failures_carry_mooncakes_codes, 0, sizeof(failures) / sizeof(failures[0]));
	tcase_add_test(tc, mca_first_failure_skips_info_and_reads_the_completion_status);
	tcase_add_test(tc, mca_wc_names_follow_ibv_wc_status_str);
	tcase_add_test(tc, mca_links_give_the_devices_gid);
	tcase_add_test(tc, mca_peer_buffer_is_the_first_with_rkeys_that_holds_the_bytes);
	tcase_add_test(tc, mca_patterns_differ_by_seed_and_repeat_by_seed);
	tcase_add_test(tc, mca_report_says_what_it_cannot_tell);
	return s;
}
