/* Message bodies (lib/desc): Mooncake's bytes out, strict shapes in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "qphs/body.h"
#include "codec/jsonw.h"
#include "qphs.h"
#include "unit.h"

/* The Connection body Mooncake writes (TransferHandshakeUtil::encode in
 * transfer_metadata.cpp, written by jsoncpp 1.9.5's FastWriter). */
static const char mooncake_body[] =
	"{\"local_gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01\",\"local_lid\":0,"
	"\"local_nic_path\":\"10.0.0.1:15123@mlx5_0\",\"payload\":\"\","
	"\"peer_nic_path\":\"10.0.0.2:16000@mlx5_1\",\"qp_num\":[1234,4294967295],"
	"\"ready_ack\":false,\"reply_msg\":\"\"}\n";

static void parse_ok(const char *json, struct qphs_hs_desc *d)
{
	char err[256] = "";
	int rc = qphs_hs_desc_parse(json, strlen(json), d, err, sizeof(err));

	ck_assert_msg(rc == 0, "%s: %s (%s)", json, qphs_errname(rc), err);
}

START_TEST(desc_encode_matches_mooncake_bytes)
{
	static const uint32_t qps[] = {1234, 4294967295u};
	struct qphs_hs_desc d;
	char *out;
	size_t len;

	ck_assert_int_eq(qphs_hs_desc_init(&d), 0);
	qphs_desc_set_str(&d.local_nic_path, "10.0.0.1:15123@mlx5_0");
	qphs_desc_set_str(&d.peer_nic_path, "10.0.0.2:16000@mlx5_1");
	qphs_desc_set_str(&d.local_gid, "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01");
	d.qp_num = malloc(sizeof(qps));
	memcpy(d.qp_num, qps, sizeof(qps));
	d.qp_count = 2;
	d.has_ready_ack = true;
	ck_assert_int_eq(qphs_hs_desc_encode(&d, &out, &len), 0);
	ck_assert_str_eq(out, mooncake_body);
	ck_assert_uint_eq(len, strlen(mooncake_body));
	free(out);
	qphs_hs_desc_clear(&d);
}
END_TEST

START_TEST(desc_encode_default_is_mooncakes_empty_desc)
{
	/* The passive reply to a ready-ACK (Mooncake's setupConnectionsByPassive
	 * leaves local_desc as constructed): no ready_ack key. */
	struct qphs_hs_desc d;
	char *out;
	size_t len;

	ck_assert_int_eq(qphs_hs_desc_init(&d), 0);
	ck_assert_int_eq(qphs_hs_desc_encode(&d, &out, &len), 0);
	ck_assert_str_eq(out, "{\"local_gid\":\"\",\"local_lid\":0,\"local_nic_path\":\"\","
			      "\"payload\":\"\",\"peer_nic_path\":\"\",\"qp_num\":[],"
			      "\"reply_msg\":\"\"}\n");
	free(out);
	qphs_hs_desc_clear(&d);
}
END_TEST

/* qphs_hs_desc_encode writes without a tree; the tree writer (which
 * tests/compat checks against jsoncpp) must give the same bytes for every
 * field: strings with every kind of escape, NULL strings, the number
 * extremes, 0..3 QPs, each ready_ack and path MTU form. */
START_TEST(desc_direct_writer_equals_the_tree)
{
	static const char *const strs[] = {
		NULL, "", "10.0.0.1:15123@mlx5_0", "a\"b\\c/d\b\f\n\r\t",
		"\x01\x1f\x7f", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xff\xc3", "\xed\xa0\x80z",
	};
	static const uint32_t qps[] = {0, 4294967295u, 17};
	const size_t ns = sizeof(strs) / sizeof(strs[0]);
	unsigned rows = 0;

	for (size_t k = 0; k < ns * 4; k++) {
		struct qphs_hs_desc d;
		char *a, *b;
		size_t alen, blen;

		ck_assert_int_eq(qphs_hs_desc_init(&d), 0);
		if (strs[k % ns]) {
			qphs_desc_set_str(&d.local_gid, strs[k % ns]);
			qphs_desc_set_str(&d.reply_msg, strs[(k + 1) % ns]);
			qphs_desc_set_str(&d.local_nic_path, strs[(k + 2) % ns]);
			qphs_desc_set_str(&d.peer_nic_path, strs[(k + 3) % ns]);
			qphs_desc_set_str(&d.payload, strs[(k + 5) % ns]);
		} else {
			/* every string NULL: written as "" */
			free(d.local_gid);
			free(d.reply_msg);
			free(d.local_nic_path);
			free(d.peer_nic_path);
			free(d.payload);
			d.local_gid = d.reply_msg = d.local_nic_path = d.peer_nic_path = d.payload = NULL;
		}
		d.local_lid = (uint16_t)(k & 1 ? 65535 : k);
		d.qp_count = k % 4;
		if (d.qp_count) {
			d.qp_num = malloc(d.qp_count * sizeof(*d.qp_num));
			memcpy(d.qp_num, qps, d.qp_count * sizeof(*d.qp_num));
		}
		d.has_ready_ack = k & 2;
		d.ready_ack = k & 4;
		d.path_mtu = k % 3 == 0 ? 0 : k % 3 == 1 ? 4096 : -1;
		ck_assert_int_eq(qphs_hs_desc_encode(&d, &a, &alen), 0);
		ck_assert_int_eq(qphs__hs_desc_encode_tree(&d, &b, &blen), 0);
		ck_assert_str_eq(a, b);
		ck_assert_uint_eq(alen, blen);
		free(a);
		free(b);
		qphs_hs_desc_clear(&d);
		rows++;
	}
	ck_assert_uint_eq(rows, ns * 4);
}
END_TEST

START_TEST(desc_parse_round_trips_mooncake_body)
{
	struct qphs_hs_desc d;
	char *out;
	size_t len;

	parse_ok(mooncake_body, &d);
	ck_assert_str_eq(d.local_nic_path, "10.0.0.1:15123@mlx5_0");
	ck_assert_str_eq(d.peer_nic_path, "10.0.0.2:16000@mlx5_1");
	ck_assert_uint_eq(d.qp_count, 2);
	ck_assert_uint_eq(d.qp_num[1], 4294967295u);
	ck_assert(d.has_ready_ack && !d.ready_ack);
	ck_assert_int_eq(d.path_mtu, 0);
	ck_assert_ptr_null(d.extra);
	ck_assert_int_eq(qphs_hs_desc_encode(&d, &out, &len), 0);
	ck_assert_str_eq(out, mooncake_body);
	free(out);
	qphs_hs_desc_clear(&d);
}
END_TEST

/* Escapes: '/' and DEL as they are, short forms, \u00XX lowercase,
 * surrogate pairs, U+FFFD for bytes that do not decode. */
static const struct {
	const char *in, *out;
} escape_rows[] = {
	{"a/b", "\"a/b\""},
	{"\"\\", "\"\\\"\\\\\""},
	{"\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\""},
	{"\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\""},
	{"\xc3\xa9", "\"\\u00e9\""},
	{"\xe2\x82\xac", "\"\\u20ac\""},
	{"\xf0\x9f\x98\x80", "\"\\ud83d\\ude00\""},
	{"\xff", "\"\\ufffd\""},
	{"a\xc3", "\"a\\ufffd\""},
	{"\xed\xa0\x80", "\"\\ufffd\""},
	{"\xf4\x90\x80\x80", "\"\\ud800\\udc00\""},
};

START_TEST(desc_writer_escapes_like_jsoncpp)
{
	struct json_object *s = json_object_new_string(escape_rows[_i].in);
	char *out, want[64];
	size_t len;

	ck_assert_int_eq(qphs__jsonw_write(s, &out, &len), 0);
	snprintf(want, sizeof(want), "%s\n", escape_rows[_i].out);
	ck_assert_str_eq(out, want);
	free(out);
	json_object_put(s);
}
END_TEST

/* Every escaped surrogate pair reads as its code point and is written back
 * the same way (json-c 0.16 alone turns some, like \ud876\udc00, into
 * U+FFFD; the fuzzer found it). */
START_TEST(desc_reads_every_surrogate_pair)
{
	for (unsigned hi = 0xD800; hi <= 0xDBFF; hi++) {
		for (unsigned lo = 0xDC00; lo <= 0xDFFF; lo += 0x3FF) {
			unsigned cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
			char json[64], want[64], *out;
			struct json_object *obj;
			const unsigned char *u;
			size_t len;

			snprintf(json, sizeof(json), "[\"\\u%04X\\u%04x\"]", hi, lo);
			ck_assert_int_eq(qphs_json_parse(json, strlen(json), &obj, NULL, 0), 0);
			u = (const unsigned char *)json_object_get_string(
				json_object_array_get_idx(obj, 0));
			ck_assert_uint_eq(u[0], 0xF0 | (cp >> 18));
			ck_assert_uint_eq(u[3], 0x80 | (cp & 0x3F));
			ck_assert_int_eq(qphs__jsonw_write(obj, &out, &len), 0);
			snprintf(want, sizeof(want), "[\"\\u%04x\\u%04x\"]\n", hi, lo);
			ck_assert_str_eq(out, want);
			free(out);
			json_object_put(obj);
		}
	}
}
END_TEST

START_TEST(desc_writer_sorts_keys_and_writes_numbers)
{
	static const char in[] = "{\"b\":1.5,\"a\":[3.0,1e20,-0.0,0.1],\"ab\":-7,\"B\":"
				 "18446744073709551615,\"A\":{\"z\":null,\"y\":true}}";
	static const char want[] = "{\"A\":{\"y\":true,\"z\":null},\"B\":18446744073709551615,"
				   "\"a\":[3.0,1e+20,-0.0,0.10000000000000001],\"ab\":-7,"
				   "\"b\":1.5}\n";
	struct json_object *obj;
	char *out;
	size_t len;

	ck_assert_int_eq(qphs_json_parse(in, strlen(in), &obj, NULL, 0), 0);
	ck_assert_int_eq(qphs__jsonw_write(obj, &out, &len), 0);
	ck_assert_str_eq(out, want);
	free(out);
	json_object_put(obj);
}
END_TEST

/* Numbers and bools in string keys read as jsoncpp's asString gives them. */
static const struct {
	const char *value, *text;
} stringify_rows[] = {
	{"5", "5"},       {"-7", "-7"},     {"1.5", "1.5"},   {"3.0", "3.0"},
	{"1e20", "1e+20"}, {"0.1", "0.10000000000000001"},   {"true", "true"},
	{"false", "false"}, {"null", ""},   {"18446744073709551615", "18446744073709551615"},
	{"123456789012345678901234567890", "1.2345678901234568e+29"},
};

START_TEST(desc_stringifies_scalars_in_string_keys)
{
	char json[128];
	struct qphs_hs_desc d;

	snprintf(json, sizeof(json), "{\"payload\":%s,\"reply_msg\":%s}", stringify_rows[_i].value,
		 stringify_rows[_i].value);
	parse_ok(json, &d);
	ck_assert_str_eq(d.payload, stringify_rows[_i].text);
	ck_assert_str_eq(d.reply_msg, stringify_rows[_i].text);
	qphs_hs_desc_clear(&d);
}
END_TEST

START_TEST(desc_reads_mooncake_quirks)
{
	struct qphs_hs_desc d;

	/* local_gid keeps only strings (isString); integral doubles are LIDs and
	 * QP numbers (isUInt); a null ready_ack still counts as present. */
	parse_ok("{\"local_gid\":5,\"local_lid\":1e2,\"qp_num\":[5.0,7],\"ready_ack\":null}", &d);
	ck_assert_str_eq(d.local_gid, "");
	ck_assert_uint_eq(d.local_lid, 100);
	ck_assert_uint_eq(d.qp_count, 2);
	ck_assert_uint_eq(d.qp_num[0], 5);
	ck_assert(d.has_ready_ack && !d.ready_ack);
	qphs_hs_desc_clear(&d);
	parse_ok("{\"local_lid\":null,\"qp_num\":null,\"payload\":null,\"unknown\":[1]}", &d);
	ck_assert_uint_eq(d.local_lid, 0);
	ck_assert_uint_eq(d.qp_count, 0);
	ck_assert_ptr_null(d.qp_num);
	ck_assert_str_eq(d.payload, "");
	ck_assert(!d.has_ready_ack);
	qphs_hs_desc_clear(&d);
}
END_TEST

START_TEST(desc_carries_mtu_and_other_transports_keys)
{
	static const char in[] = "{\"qp_num\":[1],\"qphs_path_mtu\":1024,\"efa_addr\":\"e\","
				 "\"jetty_num\":[2,3],\"barex_port\":9,\"cxi_addr\":null,\"x\":1}";
	static const char want[] =
		"{\"barex_port\":9,\"cxi_addr\":null,\"efa_addr\":\"e\",\"jetty_num\":[2,3],"
		"\"local_gid\":\"\",\"local_lid\":0,\"local_nic_path\":\"\",\"payload\":\"\","
		"\"peer_nic_path\":\"\",\"qp_num\":[1],\"qphs_path_mtu\":1024,\"reply_msg\":\"\"}\n";
	struct qphs_hs_desc d, copy;
	char *out;
	size_t len;

	parse_ok(in, &d);
	ck_assert_int_eq(d.path_mtu, 1024);
	ck_assert_int_eq(json_object_object_length(d.extra), 4);
	ck_assert_int_eq(qphs_hs_desc_copy(&copy, &d), 0);
	qphs_hs_desc_clear(&d);
	ck_assert_int_eq(qphs_hs_desc_encode(&copy, &out, &len), 0);
	ck_assert_str_eq(out, want);
	free(out);
	qphs_hs_desc_clear(&copy);
}
END_TEST

/* Bodies that must be refused: the code and a piece of the message (and
 * a control row or two that must pass). */
static const struct {
	const char *json;
	int code;
	const char *msg;
} reject_rows[] = {
	{"", QPHS_ERR_FRAME_EMPTY_BODY, "empty"},
	{" \r\n\t", QPHS_ERR_FRAME_EMPTY_BODY, "4 bytes"},
	{"{", QPHS_ERR_FRAME_NOT_JSON, "not JSON"},
	{"{'a':1}", QPHS_ERR_FRAME_NOT_JSON, "single quote"},
	{"NaN", QPHS_ERR_FRAME_NOT_JSON, "NaN"},
	{"{\"a\":1,}", QPHS_ERR_FRAME_NOT_JSON, "not JSON"},
	{"{\"a\":1}/**/", QPHS_ERR_FRAME_TRAILING, "at byte 7 (4 of them)"},
	{"{\"a\":\"\xff\"}", QPHS_ERR_FRAME_NOT_JSON, "utf-8"},
	{"{} x", QPHS_ERR_FRAME_TRAILING, "at byte 3 (1 of them)"},
	{"{}\n\n", 0, ""},
	{"{}{}", QPHS_ERR_FRAME_TRAILING, "at byte 2"},
	{"null", QPHS_ERR_BODY_NOT_OBJECT, "null"},
	{"[]", QPHS_ERR_BODY_NOT_OBJECT, "an array"},
	{"\"s\"", QPHS_ERR_BODY_NOT_OBJECT, "a string"},
	{"5", QPHS_ERR_BODY_NOT_OBJECT, "a number"},
	{"{\"local_nic_path\":[1]}", QPHS_ERR_BODY_WRONG_TYPE, "local_nic_path: an array"},
	{"{\"reply_msg\":{}}", QPHS_ERR_BODY_WRONG_TYPE, "reply_msg: an object"},
	{"{\"local_gid\":[]}", QPHS_ERR_BODY_WRONG_TYPE, "local_gid"},
	{"{\"payload\":\"a\\u0000\"}", QPHS_ERR_BODY_WRONG_TYPE, "NUL"},
	{"{\"local_lid\":\"7\"}", QPHS_ERR_BODY_WRONG_TYPE, "local_lid: \"7\" is a string"},
	{"{\"local_lid\":true}", QPHS_ERR_BODY_WRONG_TYPE, "local_lid: a bool"},
	{"{\"local_lid\":-1}", QPHS_ERR_BODY_OUT_OF_RANGE, "local_lid: -1 is not a LID (0..65535)"},
	{"{\"local_lid\":3.5}", QPHS_ERR_BODY_OUT_OF_RANGE, "3.5"},
	{"{\"local_lid\":70000}", QPHS_ERR_BODY_OUT_OF_RANGE, "70000"},
	{"{\"qp_num\":5}", QPHS_ERR_BODY_WRONG_TYPE, "qp_num: a number"},
	{"{\"qp_num\":{\"a\":1}}", QPHS_ERR_BODY_WRONG_TYPE, "qp_num: an object"},
	{"{\"qp_num\":[1,2,3,-1]}", QPHS_ERR_BODY_OUT_OF_RANGE,
	 "qp_num[3]: -1 is not a QP number (0..4294967295)"},
	{"{\"qp_num\":[1.5]}", QPHS_ERR_BODY_OUT_OF_RANGE, "qp_num[0]: 1.5"},
	{"{\"qp_num\":[4294967296]}", QPHS_ERR_BODY_OUT_OF_RANGE, "4294967296"},
	{"{\"qp_num\":[\"1\"]}", QPHS_ERR_BODY_WRONG_TYPE, "qp_num[0]: \"1\""},
	{"{\"qp_num\":[null]}", QPHS_ERR_BODY_WRONG_TYPE, "qp_num[0]: null"},
	{"{\"ready_ack\":1}", QPHS_ERR_BODY_WRONG_TYPE, "ready_ack"},
	{"{\"ready_ack\":\"true\"}", QPHS_ERR_BODY_WRONG_TYPE, "ready_ack"},
	{"{\"qphs_path_mtu\":1000}", QPHS_ERR_BODY_OUT_OF_RANGE, "1000 is not 256, 512"},
	{"{\"qphs_path_mtu\":8192}", QPHS_ERR_BODY_OUT_OF_RANGE, "8192"},
	{"{\"qphs_path_mtu\":\"1024\"}", QPHS_ERR_BODY_WRONG_TYPE, "qphs_path_mtu"},
};

START_TEST(desc_rejects_bad_bodies)
{
	struct qphs_hs_desc d;
	char err[256] = "";
	const char *json = reject_rows[_i].json;
	int rc = qphs_hs_desc_parse(json, strlen(json), &d, err, sizeof(err));

	ck_assert_msg(rc == reject_rows[_i].code, "%s: got %s (%s), want %s", json,
		      qphs_errname(rc), err, qphs_errname(reject_rows[_i].code));
	ck_assert_msg(strstr(err, reject_rows[_i].msg), "%s: message \"%s\" lacks \"%s\"", json,
		      err, reject_rows[_i].msg);
	if (rc)
		unit_hit(rc);
	else
		qphs_hs_desc_clear(&d);
}
END_TEST

/* A body of n repetitions of unit between head and tail; malloc'd. */
static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t len = strlen(head) + n * strlen(unit) + strlen(tail) + 1;
	char *s = malloc(len);

	strcpy(s, head);
	for (size_t i = 0; i < n; i++)
		strcat(s, unit);
	strcat(s, tail);
	return s;
}

START_TEST(desc_limits_qps_strings_and_depth)
{
	static const struct {
		const char *head, *unit, *tail;
		size_t n;
		int code;
	} rows[] = {
		{"{\"qp_num\":[", "1,", "1]}", 254, 0},
		{"{\"qp_num\":[", "1,", "1]}", 255, QPHS_ERR_BODY_TOO_MANY_QPS},
		{"{\"payload\":\"", "x", "\"}", 4096, 0},
		{"{\"payload\":\"", "x", "\"}", 4097, QPHS_ERR_BODY_STRING_TOO_LONG},
		{"{\"unknown\":[\"", "x", "\"]}", 4097, QPHS_ERR_BODY_STRING_TOO_LONG},
		{"{\"x\":", "[", "", 32, QPHS_ERR_BODY_TOO_DEEP},   /* never finished */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct qphs_hs_desc d;
		char err[256] = "";
		char *json = repeat(rows[i].head, rows[i].unit, rows[i].n, rows[i].tail);
		int rc = qphs_hs_desc_parse(json, strlen(json), &d, err, sizeof(err));

		ck_assert_msg(rc == rows[i].code, "row %zu: got %s (%s)", i, qphs_errname(rc), err);
		if (rc)
			unit_hit(rc);
		else
			qphs_hs_desc_clear(&d);
		free(json);
	}
}
END_TEST

START_TEST(desc_depth_32_parses_33_does_not)
{
	for (size_t depth = 31; depth <= 34; depth++) {
		char *json = repeat("", "[", depth, "");
		struct json_object *obj = NULL;
		char err[128] = "";
		int rc;

		json = realloc(json, 2 * depth + 1);
		memset(json + depth, ']', depth);
		json[2 * depth] = '\0';
		rc = qphs_json_parse(json, 2 * depth, &obj, err, sizeof(err));
		ck_assert_int_eq(rc, depth <= QPHS_MAX_DEPTH ? 0 : QPHS_ERR_BODY_TOO_DEEP);
		if (rc)
			unit_hit(rc);
		json_object_put(obj);
		free(json);
	}
}
END_TEST

START_TEST(desc_parse_reads_only_json_len_bytes)
{
	static const char buf[] = "{}\n{\"payload\":[]}";
	struct qphs_hs_desc d;

	ck_assert_int_eq(qphs_hs_desc_parse(buf, 3, &d, NULL, 0), 0);
	qphs_hs_desc_clear(&d);
	ck_assert_int_eq(qphs_hs_desc_parse(buf, 4, &d, NULL, 0), QPHS_ERR_FRAME_TRAILING);
	unit_hit(QPHS_ERR_FRAME_TRAILING);
}
END_TEST

START_TEST(desc_notify_and_probe)
{
	static const char in[] = "{\"name\":\"seg/1\",\"notify_msg\":5}";
	struct qphs_notify n = {0};
	char *out, err[128] = "";
	size_t len;

	ck_assert_int_eq(qphs_notify_parse(in, strlen(in), &n, err, sizeof(err)), 0);
	ck_assert_str_eq(n.name, "seg/1");
	ck_assert_str_eq(n.notify_msg, "5");
	qphs_notify_clear(&n);
	n.name = strdup("");
	n.notify_msg = strdup("success");
	ck_assert_int_eq(qphs_notify_encode(&n, &out, &len), 0);
	ck_assert_str_eq(out, "{\"name\":\"\",\"notify_msg\":\"success\"}\n");
	free(out);
	qphs_notify_clear(&n);
	ck_assert_int_eq(qphs_notify_parse("[1]", 3, &n, err, sizeof(err)),
			 QPHS_ERR_BODY_NOT_OBJECT);
	ck_assert_int_eq(qphs_notify_parse("{\"name\":[]}", 11, &n, err, sizeof(err)),
			 QPHS_ERR_BODY_WRONG_TYPE);
	ck_assert_int_eq(qphs_probe_parse("{}\n", 3, err, sizeof(err)), 0);
	ck_assert_int_eq(qphs_probe_parse("[]\n", 3, err, sizeof(err)), QPHS_ERR_BODY_NOT_OBJECT);
	unit_hit(QPHS_ERR_BODY_NOT_OBJECT);
	ck_assert_int_eq(qphs_probe_reply_encode(&out, &len), 0);
	ck_assert_str_eq(out, "{\"status\":\"success\"}\n");
	ck_assert_uint_eq(len, strlen(out));
	free(out);
}
END_TEST

static const char segment_body[] =
	"{\"buffers\":[{\"addr\":140737488355328,\"length\":18446744073709551615,"
	"\"lkey\":[11,12],\"name\":\"cpu:0\",\"rkey\":[21,22]}],\"devices\":[{\"gid\":"
	"\"fe:80:00:00:00:00:00:00:02:00:00:ff:fe:00:00:01\",\"lid\":0,\"name\":\"rxe0\"},"
	"{\"gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:02\",\"lid\":7,\"name\":"
	"\"rxe1\"}],\"name\":\"10.0.0.1:15000\",\"priority_matrix\":{\"cpu:0\":[[\"rxe0\"],"
	"[\"rxe1\"]]},\"protocol\":\"rdma\",\"rdma_server_name\":\"10.0.0.1:15000\","
	"\"tcp_data_port\":15001,\"tcp_proto_version\":1,\"timestamp\":"
	"\"2026-11-30 04:00:00.000001\"}\n";

START_TEST(desc_segment_round_trips)
{
	struct qphs_segment_desc s;
	char *out, err[256] = "";
	size_t len;

	ck_assert_int_eq(qphs_segment_desc_parse(segment_body, strlen(segment_body), &s, err,
						  sizeof(err)), 0);
	ck_assert_uint_eq(s.device_count, 2);
	ck_assert_str_eq(s.devices[1].name, "rxe1");
	ck_assert_uint_eq(s.devices[1].lid, 7);
	ck_assert_uint_eq(s.buffer_count, 1);
	ck_assert_uint_eq(s.buffers[0].length, UINT64_MAX);
	ck_assert_uint_eq(s.buffers[0].rkey[1], 22);
	ck_assert_int_eq(s.tcp_data_port, 15001);
	ck_assert_ptr_nonnull(s.priority_matrix);
	ck_assert_int_eq(qphs_segment_desc_encode(&s, &out, &len), 0);
	ck_assert_str_eq(out, segment_body);
	free(out);
	qphs_segment_desc_clear(&s);
}
END_TEST

static const struct {
	const char *json;
	int code;
	const char *msg;
} segment_rejects[] = {
	{"{\"devices\":[{\"name\":\"\",\"gid\":\"g\"}]}", QPHS_ERR_METADATA,
	 "Corrupted segment descriptor [devices[0]: empty name]"},
	{"{\"devices\":[{\"name\":\"d\",\"gid\":\"\"}]}", QPHS_ERR_METADATA, "empty gid"},
	{"{\"buffers\":[{\"name\":\"\",\"addr\":1,\"length\":1}]}", QPHS_ERR_METADATA, "empty name"},
	{"{\"buffers\":[{\"name\":\"b\",\"addr\":0,\"length\":1}]}", QPHS_ERR_METADATA, "addr is 0"},
	{"{\"buffers\":[{\"name\":\"b\",\"addr\":1,\"length\":0}]}", QPHS_ERR_METADATA,
	 "length is 0"},
	{"{\"buffers\":[{\"name\":\"b\",\"addr\":1,\"length\":1,\"rkey\":[1],\"lkey\":[1]}]}",
	 QPHS_ERR_METADATA, "1 rkeys, 1 lkeys, 0 devices"},
	{"{\"devices\":[{\"name\":\"d\",\"gid\":\"g\"}],\"buffers\":[{\"name\":\"b\",\"addr\":1,"
	 "\"length\":1,\"rkey\":[1],\"lkey\":[]}]}",
	 QPHS_ERR_METADATA, "1 rkeys, 0 lkeys"},
	{"{\"devices\":{}}", QPHS_ERR_BODY_WRONG_TYPE, "devices: not an array"},
	{"{\"devices\":[5]}", QPHS_ERR_BODY_WRONG_TYPE, "devices[0]: not an object"},
	{"{\"buffers\":[{\"name\":\"b\",\"addr\":\"1\"}]}", QPHS_ERR_BODY_WRONG_TYPE,
	 "buffers[0].addr"},
	{"{\"buffers\":[{\"name\":\"b\",\"addr\":-1}]}", QPHS_ERR_BODY_OUT_OF_RANGE,
	 "buffers[0].addr: -1"},
	{"{\"buffers\":[{\"rkey\":[4294967296]}]}", QPHS_ERR_BODY_OUT_OF_RANGE, "rkey[0]"},
	{"{\"tcp_data_port\":\"x\"}", QPHS_ERR_BODY_WRONG_TYPE, "tcp_data_port"},
	{"{\"tcp_data_port\":4294967296}", QPHS_ERR_BODY_OUT_OF_RANGE, "tcp_data_port"},
	{"{\"priority_matrix\":[]}", QPHS_ERR_BODY_WRONG_TYPE, "priority_matrix"},
	{"[]", QPHS_ERR_BODY_NOT_OBJECT, "not a JSON object"},
};

START_TEST(desc_segment_rejects_corrupt_descriptors)
{
	struct qphs_segment_desc s;
	char err[256] = "";
	const char *json = segment_rejects[_i].json;
	int rc = qphs_segment_desc_parse(json, strlen(json), &s, err, sizeof(err));

	ck_assert_msg(rc == segment_rejects[_i].code, "%s: got %s (%s)", json, qphs_errname(rc),
		      err);
	ck_assert_msg(strstr(err, segment_rejects[_i].msg), "%s: \"%s\" lacks \"%s\"", json, err,
		      segment_rejects[_i].msg);
	unit_hit(rc);
}
END_TEST

Suite *suite_desc(void)
{
	Suite *s = suite_create("desc");
	TCase *tc = unit_tcase(s, "connection", 10);

	tcase_add_test(tc, desc_encode_matches_mooncake_bytes);
	tcase_add_test(tc, desc_encode_default_is_mooncakes_empty_desc);
	tcase_add_test(tc, desc_parse_round_trips_mooncake_body);
	tcase_add_test(tc, desc_direct_writer_equals_the_tree);
	tcase_add_loop_test(tc, desc_writer_escapes_like_jsoncpp, 0,
			    sizeof(escape_rows) / sizeof(escape_rows[0]));
	tcase_add_test(tc, desc_reads_every_surrogate_pair);
	tcase_add_test(tc, desc_writer_sorts_keys_and_writes_numbers);
	tcase_add_loop_test(tc, desc_stringifies_scalars_in_string_keys, 0,
			    sizeof(stringify_rows) / sizeof(stringify_rows[0]));
	tcase_add_test(tc, desc_reads_mooncake_quirks);
	tcase_add_test(tc, desc_carries_mtu_and_other_transports_keys);
	tcase_add_loop_test(tc, desc_rejects_bad_bodies, 0,
			    sizeof(reject_rows) / sizeof(reject_rows[0]));
	tcase_add_test(tc, desc_limits_qps_strings_and_depth);
	tcase_add_test(tc, desc_depth_32_parses_33_does_not);
	tcase_add_test(tc, desc_parse_reads_only_json_len_bytes);
	tc = unit_tcase(s, "other bodies", 10);
	tcase_add_test(tc, desc_notify_and_probe);
	tcase_add_test(tc, desc_segment_round_trips);
	tcase_add_loop_test(tc, desc_segment_rejects_corrupt_descriptors, 0,
			    sizeof(segment_rejects) / sizeof(segment_rejects[0]));
	return s;
}
