/* The runner's side of the agent protocol: request lines, reply lines,
 * and replies -> facts, checked against docs/agent-protocol.md's own
 * examples so the draft and the code agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/labwords.h"
#include "run/agent_msg.h"
#include "qphs.h"
#include "unit.h"

START_TEST(agent_request_lines_are_exact)
{
	static const uint8_t frame[] = {0x00, 0x0a, 0xff};
	char *l;

	l = qplab_agent_req_connect(3, "10.77.0.2:12001@rxe0", 5, 15000);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":3,\"op\":\"connect\",\"peer\":\"10.77.0.2:12001@rxe0\","
			    "\"at_realtime_ns\":5,\"deadline_ms\":15000}\n");
	free(l);
	l = qplab_agent_req_connect(4, "[fd00::2]:12001@rxe0", 0, -1);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":4,\"op\":\"connect\",\"peer\":\"[fd00::2]:12001@rxe0\"}\n");
	free(l);
	l = qplab_agent_req_raw_frame(8, "10.77.0.2:12001", frame, sizeof(frame), 2000);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":8,\"op\":\"raw_frame\",\"address\":\"10.77.0.2:12001\","
			    "\"hex\":\"000aff\",\"deadline_ms\":2000}\n");
	free(l);
	l = qplab_agent_req_report(9);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":9,\"op\":\"report\"}\n");
	free(l);
	l = qplab_agent_req_exit(10);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":10,\"op\":\"exit\"}\n");
	free(l);
	l = qplab_agent_req_datapath(11, "p", 4096, 10000, false, 0, 0, 0);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":11,\"op\":\"datapath\",\"peer\":\"p\",\"bytes\":4096,\"deadline_ms\":10000}\n");
	free(l);
	l = qplab_agent_req_datapath(12, "p", 8, 100, false, QPHS_RKEY_STALE, 0, 0);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":12,\"op\":\"datapath\",\"peer\":\"p\",\"bytes\":8,\"deadline_ms\":100,\"rkey\":\"stale\"}\n");
	free(l);
	l = qplab_agent_req_datapath(13, "p", 8, 100, false, 0, QPHS_DATA_SEND, 0);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":13,\"op\":\"datapath\",\"peer\":\"p\",\"bytes\":8,\"deadline_ms\":100,\"verb\":\"send\"}\n");
	free(l);
	l = qplab_agent_req_datapath_when_connected(15, "p", 900);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":15,\"op\":\"datapath\",\"peer\":\"p\",\"bytes\":4096,\"deadline_ms\":900,\"read_only\":true,\"wait_connected_ms\":900}\n");
	free(l);
	l = qplab_agent_req_region(14, QPHS_ACCESS_LOCAL_WRITE | QPHS_ACCESS_REMOTE_READ);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":14,\"op\":\"region\",\"access\":[\"local_write\",\"remote_read\"]}\n");
	free(l);
	l = qplab_agent_req_datapath(16, "p", 8, 100, false, 0, QPHS_DATA_WRITE, 10);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":16,\"op\":\"datapath\",\"peer\":\"p\",\"bytes\":8,\"deadline_ms\":100,\"verb\":\"write\",\"seed\":5}\n");
	free(l);
	l = qplab_agent_req_verify(17, 8, 10);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":17,\"op\":\"verify\",\"bytes\":8,\"seed\":5}\n");
	free(l);
	l = qplab_agent_req_region(15, 0);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":15,\"op\":\"region\",\"access\":[]}\n");
	free(l);
}
END_TEST

START_TEST(lab_words_index_and_spell_access_bits)
{
	char buf[64];

	ck_assert_int_eq(qplab_word_index(qplab_rkey_words, "descriptor"), QPHS_RKEY_DESCRIPTOR);
	ck_assert_int_eq(qplab_word_index(qplab_rkey_words, "stale"), QPHS_RKEY_STALE);
	ck_assert_int_eq(qplab_word_index(qplab_rkey_words, "Stale"), -1);
	ck_assert_int_eq(qplab_word_index(qplab_verb_words, "send"), QPHS_DATA_SEND);
	ck_assert_int_eq(qplab_word_index(qplab_verb_words, NULL), -1);
	ck_assert_int_eq(qplab_word_index(qplab_access_words, "remote_read"), 2);
	ck_assert_str_eq(qplab_access_text(QPHS_ACCESS_LOCAL_WRITE | QPHS_ACCESS_REMOTE_WRITE, buf,
					   sizeof(buf)), "local_write,remote_write");
	ck_assert_str_eq(qplab_access_text(0, buf, sizeof(buf)), "none");
	ck_assert_str_eq(qplab_access_text(7, buf, 12), "local_write");
}
END_TEST

START_TEST(agent_config_carries_only_what_the_scenario_set)
{
	const char *text = "{ \"description\": \"d\", \"source\": \"s\",\n"
			   "  \"hosts\": { \"a\": { \"agent\": { \"quirk\": \"e810\", \"ready_ack\": false,"
			   " \"qp_retry_cnt\": 3, \"advertise\": { \"qp_count\": 3 } },"
			   " \"fault\": { \"name\": \"delay\", \"ms\": 300 } },"
			   " \"b\": { \"fault\": { \"name\": \"reject\", \"text\": \"no: x\", \"types\": [\"connection\", \"old-protocol\"] } },"
			   " \"c\": { \"fault\": { \"name\": \"garbage\", \"seed\": 7 } },"
			   " \"d\": { \"agent\": { \"advertise\": { \"gid\": \"\" } } } },\n"
			   "  \"steps\": [ { \"do\": \"link_up\", \"host\": \"a\" } ],\n"
			   "  \"expect\": [ { \"host\": \"a\", \"daemon_alive\": true } ] }\n";
	struct qplab_plan *plan;
	json_object *c;

	ck_assert_int_eq(qplab_scenario_parse("t.json", text, strlen(text), &plan, NULL), 0);
	c = qplab_agent_config(&plan->hosts[0]);
	ck_assert_str_eq(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN),
			 "{\"agent\":{\"quirk\":\"e810\",\"ready_ack\":false,\"qp_retry_cnt\":3,"
			 "\"advertise\":{\"qp_count\":3}},\"fault\":{\"name\":\"delay\",\"ms\":300}}");
	json_object_put(c);
	c = qplab_agent_config(&plan->hosts[1]);
	ck_assert_str_eq(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN),
			 "{\"agent\":{},\"fault\":{\"name\":\"reject\",\"text\":\"no: x\","
			 "\"types\":[\"connection\",\"old-protocol\"]}}");
	json_object_put(c);
	ck_assert_uint_eq(plan->hosts[1].fault.types, (1u << 0) | (1u << 4));
	/* An empty GID is sent (an empty local_gid), not dropped as unset. */
	c = qplab_agent_config(&plan->hosts[3]);
	ck_assert_str_eq(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN),
			 "{\"agent\":{\"advertise\":{\"gid\":\"\"}}}");
	json_object_put(c);

	char spec[64];
	ck_assert_int_eq(qplab_fault_spec(&plan->hosts[0].fault, spec, sizeof(spec)), 0);
	ck_assert_str_eq(spec, "delay:300");
	ck_assert_int_eq(qplab_fault_spec(&plan->hosts[1].fault, spec, sizeof(spec)), 0);
	ck_assert_str_eq(spec, "reject:no: x");
	ck_assert_int_eq(qplab_fault_spec(&plan->hosts[2].fault, spec, sizeof(spec)), 0);
	ck_assert_str_eq(spec, "garbage");
	ck_assert_int_eq(plan->hosts[2].fault.seed, 7);
	ck_assert_int_eq(qplab_fault_spec(&plan->hosts[0].fault, spec, 4), QPHS_ERR_INVALID_ARGUMENT);
	qplab_plan_free(plan);
}
END_TEST

static const struct {
	const char *line;
	int rc;
	int type;
} lines[] = {
	{"{\"v\":2,\"type\":\"ready\",\"host\":\"a\"}", 0, QPLAB_AGENT_READY},
	{"{\"v\":2,\"type\":\"fatal\",\"code\":\"ERR_CONFIG_RANGE\",\"error\":\"MC_MTU=1000\"}", 0, QPLAB_AGENT_FATAL},
	{"{\"v\":2,\"type\":\"reply\",\"id\":2,\"op\":\"exit\",\"ok\":true,\"code\":\"OK\",\"error\":\"\"}", 0, QPLAB_AGENT_REPLY},
	{"{\"v\":1,\"type\":\"ready\"}", QPHS_ERR_INVALID_ARGUMENT, 0}, /* version 1: before region */
	{"{\"v\":3,\"type\":\"ready\",\"host\":\"a\"}", 0, QPLAB_AGENT_READY}, /* per-QP datapath */
	{"{\"v\":4,\"type\":\"ready\"}", QPHS_ERR_INVALID_ARGUMENT, 0},
	{"{\"type\":\"ready\"}", QPHS_ERR_INVALID_ARGUMENT, 0},
	{"{\"v\":2,\"type\":\"hello\"}", QPHS_ERR_INVALID_ARGUMENT, 0},
	{"{\"v\":2,\"type\":\"reply\",\"id\":2,\"ok\":\"yes\",\"code\":\"OK\",\"error\":\"\"}", QPHS_ERR_INVALID_ARGUMENT, 0},
	{"{\"v\":2,\"type\":\"reply\",\"id\":2,\"ok\":true,\"error\":\"\"}", QPHS_ERR_INVALID_ARGUMENT, 0},
	{"[1]", QPHS_ERR_MALFORMED_JSON, 0},
	{"{\"v\":2,", QPHS_ERR_MALFORMED_JSON, 0},
	{"{\"v\":2,\"type\":\"ready\"} trailing", QPHS_ERR_MALFORMED_JSON, 0},
	{"{\"v\":2,\"type\":null}", QPHS_ERR_INVALID_ARGUMENT, 0}, /* once a crash (strcmp) */
	{"{\"v\":2,\"type\":7}", QPHS_ERR_INVALID_ARGUMENT, 0},
	{"{\"v\":2.0,\"type\":\"ready\"}", QPHS_ERR_INVALID_ARGUMENT, 0},
	{"{\"v\":2,\"type\":\"fatal\",\"code\":null,\"error\":\"\"}", QPHS_ERR_INVALID_ARGUMENT, 0},
	{"{\"v\":2,\"type\":\"reply\",\"id\":\"2\",\"ok\":true,\"code\":\"OK\",\"error\":\"\"}",
	 QPHS_ERR_INVALID_ARGUMENT, 0},
};

START_TEST(agent_lines_are_decoded_strictly)
{
	struct qplab_agent_msg m;
	char err[128] = "";
	int rc = qplab_agent_parse_line(lines[_i].line, strlen(lines[_i].line), &m, err, sizeof(err));

	ck_assert_msg(rc == lines[_i].rc, "%s: %d (%s)", lines[_i].line, rc, err);
	if (rc == 0)
		ck_assert_int_eq(m.type, lines[_i].type);
	else
		unit_hit(rc);
	qplab_agent_msg_free(&m);
}
END_TEST

/* The ```json block of docs/agent-protocol.md that contains `needle`. */
static char *doc_block(const char *needle)
{
	FILE *f = fopen("docs/agent-protocol.md", "r");
	char line[2048], *block = NULL;
	size_t n = 0;
	int in = 0;

	ck_assert_msg(f != NULL, "docs/agent-protocol.md missing (run from the checkout root)");
	while (fgets(line, sizeof(line), f)) {
		if (!in && !strncmp(line, "```json", 7)) {
			in = 1;
			n = 0;
			continue;
		}
		if (in && !strncmp(line, "```", 3)) {
			in = 0;
			if (block && strstr(block, needle))
				break;
			continue;
		}
		if (in) {
			block = realloc(block, n + strlen(line) + 1);
			memcpy(block + n, line, strlen(line) + 1);
			n += strlen(line);
		}
	}
	fclose(f);
	ck_assert_msg(block && strstr(block, needle), "no example with %s", needle);
	return block;
}

static void facts_of_doc(const char *needle, const char *peer, struct qplab_facts *f)
{
	struct qplab_agent_msg m;
	char err[160] = "", *text = doc_block(needle);

	ck_assert_msg(qplab_agent_parse_line(text, strlen(text), &m, err, sizeof(err)) == 0, "%s", err);
	qplab_facts_init(f);
	ck_assert_msg(qplab_facts_from_reply(&m, peer, f, err, sizeof(err)) == 0, "%s", err);
	qplab_agent_msg_free(&m);
	free(text);
}

START_TEST(agent_doc_send_and_region_examples_map_to_facts)
{
	struct qplab_facts f;

	facts_of_doc("\"verb\": \"send\", \"rkey\": null", "10.77.0.2:12001@rxe0", &f);
	ck_assert_str_eq(f.datapath, "failed");
	ck_assert_str_eq(f.wc_status, "IBV_WC_RNR_RETRY_EXC_ERR");
	ck_assert_str_eq(f.code, "ERR_COMPLETION");
	qplab_facts_free(&f);
	facts_of_doc("\"op\": \"region\", \"ok\": true", NULL, &f);
	ck_assert_str_eq(f.code, "OK");
	qplab_facts_free(&f);
	facts_of_doc("\"op\": \"verify\", \"ok\": true", NULL, &f);
	ck_assert_str_eq(f.code, "ERR_DATA_MISMATCH");
	ck_assert_ptr_nonnull(strstr(f.error_text, "first at offset 0"));
	qplab_facts_free(&f);
}
END_TEST

START_TEST(agent_doc_report_example_maps_to_facts)
{
	struct qplab_facts f;

	facts_of_doc("\"op\": \"report\", \"ok\": true", "10.77.0.2:12001@rxe0", &f);
	ck_assert_str_eq(f.endpoint, "CONNECTED");
	ck_assert_int_eq(f.endpoints, 1);
	ck_assert_int_eq(f.nqp, 2);
	ck_assert_str_eq(f.qp_states[1], "RTS");
	ck_assert_int_eq(f.gid_index, 1);
	ck_assert_int_eq(f.path_mtu, 1024);
	ck_assert_int_eq(f.peer_ready_ack, 1);
	ck_assert_str_eq(f.gid_reason, "routable IPv4-mapped GID with a netdev");
	ck_assert_str_eq(f.code, "OK");
	ck_assert_str_eq(f.reply_received, "");
	ck_assert_int_eq(f.time_ms[QPLAB_TIME_READY_ACK], 1);
	ck_assert_int_eq(f.time_ms[QPLAB_TIME_RTR], 2);
	ck_assert_int_eq(f.time_ms[QPLAB_TIME_TCP_CONNECT], 0); /* 0 ms is a value */
	ck_assert_int_eq(f.time_ms[QPLAB_TIME_RESET], -1); /* null: skipped, did not happen */
	ck_assert_int_eq(f.time_ms[QPLAB_TIME_STEP], -1); /* the runner's, not the agent's */
	/* The endpoint's phases, on the agent's clock until the runner moves them. */
	ck_assert_int_eq(f.nevents, 6);
	ck_assert_str_eq(f.events[0].what, "tcp_connect");
	ck_assert_str_eq(f.events[1].what, "request");
	ck_assert(f.events[1].end_ms - f.events[1].start_ms > 3.26 && f.events[1].end_ms - f.events[1].start_ms < 3.28);
	ck_assert_str_eq(f.events[5].what, "ready_ack");
	ck_assert(f.events[5].start_ms > 81234607.40 && f.events[5].start_ms < 81234607.42);
	ck_assert_str_eq(f.events_peer, ""); /* the runner's to say */
	qplab_facts_free(&f);
}
END_TEST

START_TEST(agent_report_events_are_decoded_strictly)
{
	static const struct {
		const char *events, *err;
	} cases[] = {
		{"[]", NULL},
		{"7", "\"events\" must be an array, not an integer"},
		{"[3]", "must be an object"},
		{"[{\"what\": \"rtr\", \"start_ms\": 1}]", "an event needs what, start_ms and end_ms"},
		{"[{\"what\": \"rtr\", \"start_ms\": \"1\", \"end_ms\": 2}]", "\"start_ms\" must be a number"},
		{"[{\"what\": \"a_name_far_too_long\", \"start_ms\": 1, \"end_ms\": 2}]", "\"what\" is longer than 15 bytes"},
		{"[{},{},{},{},{},{},{},{},{}]", NULL}, /* nine: refused below */
	};
	char line[1024], err[200];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct qplab_agent_msg m;
		struct qplab_facts f;
		char evs[600];
		int rc;

		if (i == 6) {
			size_t n = 0;

			n += (size_t)snprintf(evs + n, sizeof(evs) - n, "[");
			for (int k = 0; k < QPLAB_FACT_MAX_EVENTS + 1; k++)
				n += (size_t)snprintf(evs + n, sizeof(evs) - n, "%s{\"what\":\"rtr\",\"start_ms\":%d,\"end_ms\":%d}",
						      k ? "," : "", k, k + 1);
			snprintf(evs + n, sizeof(evs) - n, "]");
		} else {
			snprintf(evs, sizeof(evs), "%s", cases[i].events);
		}
		snprintf(line, sizeof(line), "{\"v\":2,\"type\":\"reply\",\"id\":1,\"op\":\"report\",\"ok\":true,"
			 "\"code\":\"OK\",\"error\":\"\",\"endpoints\":[{\"peer\":\"y@r\",\"status\":\"CONNECTED\","
			 "\"events\":%s}],\"device_qps\":[]}", evs);
		ck_assert_int_eq(qplab_agent_parse_line(line, strlen(line), &m, err, sizeof(err)), 0);
		qplab_facts_init(&f);
		err[0] = '\0';
		rc = qplab_facts_from_reply(&m, "y@r", &f, err, sizeof(err));
		if (i == 0) {
			ck_assert_int_eq(rc, 0);
			ck_assert_int_eq(f.nevents, 0);
		} else if (i == 6) {
			ck_assert_int_eq(rc, QPHS_ERR_INVALID_ARGUMENT);
			ck_assert_msg(strstr(err, "more than 8 events"), "'%s'", err);
		} else {
			ck_assert_int_eq(rc, QPHS_ERR_INVALID_ARGUMENT);
			ck_assert_msg(strstr(err, cases[i].err), "case %zu: '%s'", i, err);
		}
		qplab_facts_free(&f);
		qplab_agent_msg_free(&m);
	}
}
END_TEST

START_TEST(agent_doc_connect_and_datapath_examples_map_to_facts)
{
	struct qplab_facts f;

	facts_of_doc("\"op\": \"connect\", \"ok\": true", NULL, &f);
	ck_assert_str_eq(f.code, "ERR_REJECT_HANDSHAKE");
	ck_assert(!strncmp(f.reply_received, "QP count mismatch in peer and local endpoints", 45));
	ck_assert(!strncmp(f.error_text, "Handshake rejected by", 21));
	ck_assert_int_eq(f.time_ms[QPLAB_TIME_RTR], -1); /* null: did not happen */
	ck_assert_int_eq(f.time_ms[QPLAB_TIME_HANDSHAKE], 3);
	qplab_facts_free(&f);

	facts_of_doc("\"op\": \"datapath\", \"ok\": true", NULL, &f);
	ck_assert_str_eq(f.datapath, "failed");
	ck_assert_str_eq(f.wc_status, "IBV_WC_RETRY_EXC_ERR");
	ck_assert_int_eq(f.wc_waited_ms, 3412);
	ck_assert_str_eq(f.code, "ERR_COMPLETION");
	qplab_facts_free(&f);
}
END_TEST

/* The datapath reply of docs/agent-protocol.md: two QPs, QP 1 failed. */
START_TEST(agent_doc_datapath_per_qp_example_maps_to_facts)
{
	struct qplab_facts f;

	facts_of_doc("\"failed_qp\": 1", NULL, &f);
	ck_assert_int_eq(f.dp_nqp, 2);
	ck_assert_int_eq(f.dp_failed_qp, 1);
	ck_assert_str_eq(f.dp_qps[0].result, "ok");
	ck_assert_int_eq(f.dp_qps[0].qpn, 17);
	ck_assert_int_eq(f.dp_qps[0].peer_qpn, 21);
	ck_assert_str_eq(f.dp_qps[0].read_wc, "IBV_WC_SUCCESS");
	ck_assert_int_eq(f.dp_qps[0].ms, 6);
	ck_assert_str_eq(f.dp_qps[1].result, "failed");
	ck_assert_int_eq(f.dp_qps[1].qpn, 18);
	ck_assert_str_eq(f.dp_qps[1].write_wc, "none");
	ck_assert_str_eq(f.dp_qps[1].read_wc, "IBV_WC_RETRY_EXC_ERR");
	ck_assert_ptr_nonnull(strstr(f.error_text, "(QP 1 of 2, qp_num 18)"));
	qplab_facts_free(&f);
}
END_TEST

#define DP_HEAD "{\"v\":3,\"type\":\"reply\",\"id\":5,\"op\":\"datapath\",\"ok\":true," \
		"\"code\":\"OK\",\"error\":\"\",\"datapath\":\"ok\""

/* Per-QP results are decoded strictly; a protocol 2 reply (the Mooncake
 * adapter's) has none, and leaves them "not collected". */
static const struct {
	const char *line;
	int rc, nqp, failed;
} dp_lines[] = {
	{DP_HEAD ",\"qps\":[{\"index\":0,\"qpn\":9,\"peer_qpn\":10,\"datapath\":\"ok\","
		 "\"write_wc\":\"IBV_WC_SUCCESS\",\"read_wc\":\"IBV_WC_SUCCESS\",\"ms\":1}],"
		 "\"failed_qp\":-1}", 0, 1, QPLAB_NO_FAILED_QP},
	{DP_HEAD ",\"qps\":[],\"failed_qp\":-1}", 0, 0, QPLAB_NO_FAILED_QP},
	{DP_HEAD ",\"qps\":null,\"failed_qp\":null}", 0, -1, -1},
	{"{\"v\":2,\"type\":\"reply\",\"id\":5,\"op\":\"datapath\",\"ok\":true,\"code\":\"OK\","
	 "\"error\":\"\",\"datapath\":\"ok\",\"wc_status\":\"IBV_WC_SUCCESS\",\"restored\":true}",
	 0, -1, -1},
	{DP_HEAD ",\"qps\":{},\"failed_qp\":-1}", QPHS_ERR_INVALID_ARGUMENT, -1, QPLAB_NO_FAILED_QP},
	{DP_HEAD ",\"qps\":[{\"qpn\":9}]}", QPHS_ERR_INVALID_ARGUMENT, 0, -1},
	{DP_HEAD ",\"qps\":[{\"datapath\":\"ok\",\"qpn\":\"9\"}]}", QPHS_ERR_INVALID_ARGUMENT, 1, -1},
	{DP_HEAD ",\"qps\":[{\"datapath\":\"ok\",\"qpn\":-1}]}", QPHS_ERR_INVALID_ARGUMENT, 1, -1},
	{DP_HEAD ",\"failed_qp\":\"none\"}", QPHS_ERR_INVALID_ARGUMENT, -1, -1},
	{DP_HEAD ",\"failed_qp\":255}", QPHS_ERR_INVALID_ARGUMENT, -1, -1},
	{DP_HEAD ",\"qps\":[1]}", QPHS_ERR_INVALID_ARGUMENT, 0, -1},
};

START_TEST(agent_datapath_qps_are_decoded_strictly)
{
	struct qplab_agent_msg m;
	struct qplab_facts f;
	char err[160] = "";
	int rc;

	ck_assert_msg(qplab_agent_parse_line(dp_lines[_i].line, strlen(dp_lines[_i].line), &m, err,
					     sizeof(err)) == 0, "%s", err);
	qplab_facts_init(&f);
	rc = qplab_facts_from_reply(&m, NULL, &f, err, sizeof(err));
	ck_assert_msg(rc == dp_lines[_i].rc, "%s: %d (%s)", dp_lines[_i].line, rc, err);
	ck_assert_int_eq(f.dp_nqp, dp_lines[_i].nqp);
	ck_assert_int_eq(f.dp_failed_qp, dp_lines[_i].failed);
	if (rc)
		ck_assert_msg(strstr(err, "qps") || strstr(err, "qpn") || strstr(err, "failed_qp"),
			      "%s", err);
	if (dp_lines[_i].nqp == 1 && rc == 0)
		ck_assert_int_eq(f.dp_qps[0].qpn, 9);
	qplab_facts_free(&f);
	qplab_agent_msg_free(&m);
}
END_TEST

/* Requests to a version 2 agent (the Mooncake adapter's ready line): the
 * same request, "v": 2; to ours or an unknown one, the line as built. */
START_TEST(agent_requests_follow_the_agents_version)
{
	char *l = qplab_agent_req_datapath(11, "p", 4096, 10000, false, 0, 0, 0), *same = l;

	l = qplab_agent_req_for_version(l, 2);
	ck_assert_str_eq(l, "{\"v\":2,\"id\":11,\"op\":\"datapath\",\"peer\":\"p\",\"bytes\":4096,"
			    "\"deadline_ms\":10000}\n");
	free(l);
	l = same = qplab_agent_req_report(3);
	ck_assert_ptr_eq(qplab_agent_req_for_version(l, QPLAB_AGENT_PROTO_VERSION), same);
	ck_assert_ptr_eq(qplab_agent_req_for_version(l, 0), same);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":3,\"op\":\"report\"}\n");
	free(l);
	l = malloc(8);
	snprintf(l, 8, "[1]\n");
	ck_assert_ptr_null(qplab_agent_req_for_version(l, 2));
	ck_assert_ptr_null(qplab_agent_req_for_version(NULL, 2));
}
END_TEST

/* A datapath with on_posted: the request asks for the posted line, and
 * that line (docs/agent-protocol.md's example) decodes with its id; a
 * posted line without an id is refused. */
START_TEST(agent_posted_lines_are_asked_for_and_decoded)
{
	char *l = qplab_agent_req_notify_posted(qplab_agent_req_datapath(5, "p", 4096, 3000, true, 0, 0, 0));
	char err[160] = "", *doc = doc_block("\"type\": \"posted\"");
	const char *bad = "{\"v\":3,\"type\":\"posted\",\"op\":\"datapath\"}";
	struct qplab_agent_msg m;

	ck_assert_str_eq(l, "{\"v\":3,\"id\":5,\"op\":\"datapath\",\"peer\":\"p\",\"bytes\":4096,"
			    "\"deadline_ms\":3000,\"read_only\":true,\"notify_posted\":true}\n");
	free(l);
	ck_assert_ptr_null(qplab_agent_req_notify_posted(NULL));
	ck_assert_msg(qplab_agent_parse_line(doc, strlen(doc), &m, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(m.type, QPLAB_AGENT_POSTED);
	ck_assert_int_eq(m.id, 12);
	ck_assert_str_eq(m.op, "datapath");
	qplab_agent_msg_free(&m);
	free(doc);
	ck_assert_int_eq(qplab_agent_parse_line(bad, strlen(bad), &m, err, sizeof(err)),
			 QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(err, "id"));
}
END_TEST

START_TEST(agent_report_picks_the_peers_endpoint_and_rejects_wrong_types)
{
	const char *two = "{\"v\":2,\"type\":\"reply\",\"id\":1,\"op\":\"report\",\"ok\":true,\"code\":\"OK\",\"error\":\"\","
			  "\"gid_index\":5,\"endpoints\":[{\"peer\":\"x@r\",\"status\":\"DESTROYING\"},{\"peer\":\"y@r\",\"status\":\"CONNECTED\"}],"
			  "\"device_qps\":[]}";
	const char *wrong = "{\"v\":2,\"type\":\"reply\",\"id\":1,\"op\":\"report\",\"ok\":true,\"code\":\"OK\",\"error\":\"\","
			    "\"endpoints\":5}";
	struct qplab_agent_msg m;
	struct qplab_facts f;
	char err[160] = "";

	ck_assert_int_eq(qplab_agent_parse_line(two, strlen(two), &m, err, sizeof(err)), 0);
	qplab_facts_init(&f);
	ck_assert_int_eq(qplab_facts_from_reply(&m, "y@r", &f, err, sizeof(err)), 0);
	ck_assert_str_eq(f.endpoint, "CONNECTED");
	ck_assert_int_eq(f.endpoints, 2);
	ck_assert_int_eq(f.nqp, 0);
	qplab_facts_free(&f);
	ck_assert_int_eq(qplab_facts_from_reply(&m, "z@r", &f, err, sizeof(err)), 0);
	ck_assert_str_eq(f.endpoint, "NONE"); /* two endpoints, neither is z's */
	ck_assert_int_eq(f.gid_index, 5);      /* the context's, without an endpoint */
	qplab_facts_free(&f);
	qplab_agent_msg_free(&m);

	ck_assert_int_eq(qplab_agent_parse_line(wrong, strlen(wrong), &m, err, sizeof(err)), 0);
	ck_assert_int_eq(qplab_facts_from_reply(&m, NULL, &f, err, sizeof(err)), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_str_eq(err, "agent reply: \"endpoints\" must be an array, not an integer");
	qplab_facts_free(&f);
	qplab_agent_msg_free(&m);
}
END_TEST

START_TEST(agent_probe_and_raw_frame_replies_map_to_facts)
{
	const char *probe = "{\"v\":2,\"type\":\"reply\",\"id\":1,\"op\":\"probe\",\"ok\":true,\"code\":\"OK\",\"error\":\"\",\"alive\":false}";
	const char *raw = "{\"v\":2,\"type\":\"reply\",\"id\":2,\"op\":\"raw_frame\",\"ok\":true,\"code\":\"OK\",\"error\":\"\","
			  "\"frame_outcome\":\"closed\",\"waited_ms\":3}";
	struct qplab_agent_msg m;
	struct qplab_facts f;
	char err[160];

	qplab_facts_init(&f);
	ck_assert_int_eq(qplab_agent_parse_line(probe, strlen(probe), &m, err, sizeof(err)), 0);
	ck_assert_int_eq(qplab_facts_from_reply(&m, NULL, &f, err, sizeof(err)), 0);
	ck_assert_int_eq(f.daemon_alive, 0);
	qplab_agent_msg_free(&m);
	ck_assert_int_eq(qplab_agent_parse_line(raw, strlen(raw), &m, err, sizeof(err)), 0);
	ck_assert_int_eq(qplab_facts_from_reply(&m, NULL, &f, err, sizeof(err)), 0);
	ck_assert_str_eq(f.frame_outcome, "closed");
	ck_assert_str_eq(f.code, "OK"); /* the daemon refused nothing */
	ck_assert_int_eq(f.daemon_alive, 0); /* the probe's, untouched by a reply without one */
	qplab_agent_msg_free(&m);
	qplab_facts_free(&f);
}
END_TEST

START_TEST(agent_doc_raw_frame_examples_map_to_facts)
{
	struct qplab_facts f;

	facts_of_doc("\"op\": \"raw_frame\", \"ok\": true,\n \"code\": \"ERR_FRAME_ZERO_LENGTH\"", NULL, &f);
	ck_assert_str_eq(f.frame_outcome, "closed");
	ck_assert_int_eq(f.daemon_alive, 1);
	ck_assert_str_eq(f.code, "ERR_FRAME_ZERO_LENGTH");
	ck_assert(!strncmp(f.error_text, "[Handshake] closing connection from ", 36));
	ck_assert_ptr_nonnull(strstr(f.error_text, "frame length is zero"));
	qplab_facts_free(&f);

	facts_of_doc("\"stale_qpns\"", NULL, &f);
	ck_assert_str_eq(f.frame_outcome, "replied");
	ck_assert_str_eq(f.code, "ERR_REJECT_HANDSHAKE");
	ck_assert_str_eq(f.reply_received, "Received stale RDMA ready ACK with mismatched peer QP numbers");
	ck_assert_int_eq(f.daemon_alive, -1); /* not asked */
	qplab_facts_free(&f);

	/* the target's reason for a frame another host sent: code and text */
	facts_of_doc("\"op\": \"daemon_refusal\", \"ok\": true,\n \"code\": \"ERR_FRAME_TRUNCATED\"", NULL, &f);
	ck_assert_str_eq(f.code, "ERR_FRAME_TRUNCATED");
	ck_assert(!strncmp(f.error_text, "[Handshake] closing connection from ", 36));
	ck_assert_ptr_nonnull(strstr(f.error_text, "connection ended inside a frame"));
	ck_assert_str_eq(f.frame_outcome, ""); /* the sender's fact, not this host's */
	ck_assert_int_eq(f.daemon_alive, -1);
	qplab_facts_free(&f);
}
END_TEST

START_TEST(agent_raw_frame_kind_lines_are_exact)
{
	char *l = qplab_agent_req_raw_frame_kind(4, NULL, "zero-length", NULL, 2000);

	ck_assert_str_eq(l, "{\"v\":3,\"id\":4,\"op\":\"raw_frame\",\"kind\":\"zero-length\",\"deadline_ms\":2000}\n");
	free(l);
	l = qplab_agent_req_raw_frame_kind(5, NULL, "stale_ack", "10.77.0.2:12001@rxe0", -1);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":5,\"op\":\"raw_frame\",\"kind\":\"stale_ack\","
			    "\"peer\":\"10.77.0.2:12001@rxe0\"}\n");
	free(l);
	/* a named frame to another host's daemon: its address */
	l = qplab_agent_req_raw_frame_kind(6, "10.77.0.2:12001", "oversize", NULL, 2000);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":6,\"op\":\"raw_frame\",\"address\":\"10.77.0.2:12001\","
			    "\"kind\":\"oversize\",\"deadline_ms\":2000}\n");
	free(l);
	l = qplab_agent_req_daemon_refusal(7, true, 200);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":7,\"op\":\"daemon_refusal\",\"mark\":true}\n");
	free(l);
	l = qplab_agent_req_daemon_refusal(8, false, 200);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":8,\"op\":\"daemon_refusal\",\"deadline_ms\":200}\n");
	free(l);
}
END_TEST

/* The requests of issue 19's CQ overflow and fan-in (docs/agent-protocol.md
 * "datapath" verb burst, "fan_in"). */
START_TEST(agent_burst_and_fan_in_lines_are_exact)
{
	char *l = qplab_agent_req_burst(20, "p", 4096, 3000, 16, 10);

	ck_assert_str_eq(l, "{\"v\":3,\"id\":20,\"op\":\"datapath\",\"peer\":\"p\",\"bytes\":4096,"
			    "\"deadline_ms\":3000,\"verb\":\"burst\",\"count\":16,\"seed\":5}\n");
	free(l);
	l = qplab_agent_req_fan_in(21, "p", 64, 1234567890123LL);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":21,\"op\":\"fan_in\",\"peer\":\"p\",\"count\":64,"
			    "\"at_realtime_ns\":1234567890123,\"check\":false}\n");
	free(l);
	l = qplab_agent_req_fan_in_check(22, 4096, 10000);
	ck_assert_str_eq(l, "{\"v\":3,\"id\":22,\"op\":\"fan_in_check\",\"bytes\":4096,"
			    "\"deadline_ms\":10000}\n");
	free(l);
}
END_TEST

/* rdma_max goes to the agent only when the scenario set it, "max" limits
 * (-1) left out. */
START_TEST(agent_config_carries_rdma_max)
{
	const char *text = "{ \"description\": \"d\", \"source\": \"s\",\n"
			   "  \"hosts\": { \"a\": { \"agent\": { \"rdma_max\": { \"hca_object\": 4 } } },"
			   " \"b\": {} },\n"
			   "  \"steps\": [ { \"do\": \"link_up\", \"host\": \"a\" } ],\n"
			   "  \"expect\": [ { \"host\": \"a\", \"daemon_alive\": true } ] }\n";
	const char *want[] = {"{\"agent\":{\"rdma_max\":{\"hca_object\":4}}}", "{\"agent\":{}}"};
	struct qplab_plan *plan;

	ck_assert_int_eq(qplab_scenario_parse("t.json", text, strlen(text), &plan, NULL), 0);
	for (int i = 0; i < 2; i++) {
		json_object *c = qplab_agent_config(&plan->hosts[i]);

		ck_assert_str_eq(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN), want[i]);
		json_object_put(c);
	}
	qplab_plan_free(plan);
}
END_TEST

Suite *suite_agent_msg(void)
{
	Suite *s = suite_create("agent_msg");
	TCase *tc = unit_tcase(s, "lines", 10);

	tcase_add_test(tc, agent_request_lines_are_exact);
	tcase_add_test(tc, agent_burst_and_fan_in_lines_are_exact);
	tcase_add_test(tc, agent_config_carries_rdma_max);
	tcase_add_test(tc, agent_config_carries_only_what_the_scenario_set);
	tcase_add_test(tc, lab_words_index_and_spell_access_bits);
	tcase_add_loop_test(tc, agent_lines_are_decoded_strictly, 0, sizeof(lines) / sizeof(lines[0]));
	tc = unit_tcase(s, "facts", 10);
	tcase_add_test(tc, agent_doc_report_example_maps_to_facts);
	tcase_add_test(tc, agent_report_events_are_decoded_strictly);
	tcase_add_test(tc, agent_doc_send_and_region_examples_map_to_facts);
	tcase_add_test(tc, agent_doc_connect_and_datapath_examples_map_to_facts);
	tcase_add_test(tc, agent_doc_datapath_per_qp_example_maps_to_facts);
	tcase_add_loop_test(tc, agent_datapath_qps_are_decoded_strictly, 0,
			    sizeof(dp_lines) / sizeof(dp_lines[0]));
	tcase_add_test(tc, agent_requests_follow_the_agents_version);
	tcase_add_test(tc, agent_posted_lines_are_asked_for_and_decoded);
	tcase_add_test(tc, agent_report_picks_the_peers_endpoint_and_rejects_wrong_types);
	tcase_add_test(tc, agent_probe_and_raw_frame_replies_map_to_facts);
	tcase_add_test(tc, agent_doc_raw_frame_examples_map_to_facts);
	tcase_add_test(tc, agent_raw_frame_kind_lines_are_exact);
	return s;
}
