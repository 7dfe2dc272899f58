/* The fast Connection reader (lib/codec/descfast.c) against the json-c
 * path: the same descriptor for the bodies it reads, hands off for every
 * other one (fuzz/fuzz_hs_desc_fast covers what these rows do not). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "codec/descfast.h"
#include "qphs.h"
#include "qphs/body.h"
#include "qphs/json.h"
#include "unit.h"

static void expect_same(const char *json, const struct qphs_hs_desc *a,
			const struct qphs_hs_desc *b)
{
	ck_assert_msg(!strcmp(a->local_nic_path, b->local_nic_path) &&
			      !strcmp(a->local_gid, b->local_gid) &&
			      !strcmp(a->peer_nic_path, b->peer_nic_path) &&
			      !strcmp(a->reply_msg, b->reply_msg) && !strcmp(a->payload, b->payload),
		      "%s: strings differ", json);
	ck_assert_msg(a->local_lid == b->local_lid && a->qp_count == b->qp_count &&
			      a->has_ready_ack == b->has_ready_ack &&
			      a->ready_ack == b->ready_ack && a->path_mtu == b->path_mtu &&
			      (a->extra ? b->extra && json_object_equal(a->extra, b->extra) : !b->extra),
		      "%s: numbers differ", json);
	ck_assert_msg(a->qp_count ? !memcmp(a->qp_num, b->qp_num, a->qp_count * sizeof(uint32_t))
				  : !a->qp_num && !b->qp_num,
		      "%s: qp_num differs", json);
}

/* json is read by the fast reader, as the json-c path reads it. */
static void expect_fast(const char *json, size_t len)
{
	struct qphs_hs_desc fast, ref;
	struct qphs_json_shape shape;
	char err[256] = "";
	size_t members = 0;
	void *block;

	ck_assert_msg(qphs__hs_desc_fast(json, len, &fast, &members) == 1, "%s: not read", json);
	ck_assert_msg(qphs__hs_desc_parse_json(json, len, &ref, err, sizeof(err)) == 0, "%s: %s",
		      json, err);
	expect_same(json, &fast, &ref);
	qphs_json_shape(json, len, &shape);
	ck_assert_uint_eq(members, shape.keys + shape.elements);
	qphs_hs_desc_clear(&fast);
	/* The daemon's variant: the same, in one block. */
	members = 0;
	ck_assert_msg(qphs__hs_desc_fast_block(json, len, &fast, &members, &block) == 1,
		      "%s: not read in a block", json);
	expect_same(json, &fast, &ref);
	ck_assert_uint_eq(members, shape.keys + shape.elements);
	free(block);
	qphs_hs_desc_clear(&ref);
}

static const char *const fast_rows[] = {
	/* What Mooncake writes (jsoncpp's FastWriter), and qplab. */
	"{\"local_gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01\",\"local_lid\":0,"
	"\"local_nic_path\":\"10.0.0.1:15123@mlx5_0\",\"payload\":\"\","
	"\"peer_nic_path\":\"10.0.0.2:16000@mlx5_1\",\"qp_num\":[1234,4294967295],"
	"\"ready_ack\":false,\"reply_msg\":\"\"}\n",
	"{\"local_gid\":\"\",\"local_lid\":65535,\"local_nic_path\":\"a\",\"payload\":\"p\","
	"\"peer_nic_path\":\"b\",\"qp_num\":[],\"qphs_path_mtu\":256,\"ready_ack\":true,"
	"\"reply_msg\":\"Invalid argument: it's /not/ {ok}, [x]: y\"}",
	"{}",
	" \t\r\n{ \"qp_num\" : [ 0 , 7 ,\n9 ] ,\r\n\t\"local_lid\" : 10 } \n\r\t",
	"{\"qphs_path_mtu\":512}", "{\"qphs_path_mtu\":1024}", "{\"qphs_path_mtu\":2048}",
	"{\"qphs_path_mtu\":4096}",
	"{\"payload\":\"'single' quotes inside\"}",
};

START_TEST(descfast_reads_common_bodies)
{
	expect_fast(fast_rows[_i], strlen(fast_rows[_i]));
}
END_TEST

START_TEST(descfast_reads_at_the_limits)
{
	/* 255 QPs of UINT32_MAX and strings of QPHS_MAX_STRING bytes. */
	size_t cap = 64 + QPHS_MAX_QPS * 11 + QPHS_MAX_STRING, off = 0;
	char *b = malloc(cap);

	ck_assert_ptr_nonnull(b);
	off += (size_t)snprintf(b + off, cap - off, "{\"qp_num\":[");
	for (int i = 0; i < QPHS_MAX_QPS; i++)
		off += (size_t)snprintf(b + off, cap - off, "%s4294967295", i ? "," : "");
	off += (size_t)snprintf(b + off, cap - off, "],\"payload\":\"");
	memset(b + off, 'x', QPHS_MAX_STRING);
	off += QPHS_MAX_STRING;
	off += (size_t)snprintf(b + off, cap - off, "\"}");
	expect_fast(b, off);
	free(b);
}
END_TEST

/* Bodies the fast reader hands to the json-c path: some Mooncake accepts,
 * most are refused, every one the json-c path's business. */
static const char *const handoff_rows[] = {
	"", " ", "[]", "null", "7", "{", "}", "{}x", "{},", "{} {}", "{\"local_lid\":0,}",
	"{,}", "{\"local_lid\"}", "{\"local_lid\":}", "{\"local_lid\" 0}", "{'local_lid':0}",
	"{\"local_lid\":0 \"payload\":\"\"}",
	/* A key it does not know, or one repeated. */
	"{\"efa_addr\":\"x\"}", "{\"other\":1}", "{\"local_lid\":1,\"local_lid\":2}",
	"{\"Local_lid\":1}", "{\"local_li\":1}", "{\"local_lidd\":1}", "{\"local\\u005flid\":1}",
	/* Strings: escapes, non-ASCII, control bytes, unterminated, too long. */
	"{\"payload\":\"a\\\"b\"}", "{\"payload\":\"\\u0041\"}", "{\"payload\":\"\xc3\xa9\"}",
	"{\"payload\":\"\x7f\"}", "{\"payload\":\"a\tb\"}", "{\"payload\":\"abc}",
	"{\"payload\":5}", "{\"payload\":null}", "{\"payload\":true}", "{\"payload\":[]}",
	/* Numbers: sign, fraction, exponent, leading zero, range, type. */
	"{\"local_lid\":-1}", "{\"local_lid\":-0}", "{\"local_lid\":1.0}", "{\"local_lid\":1e2}",
	"{\"local_lid\":1E2}", "{\"local_lid\":01}", "{\"local_lid\":00}", "{\"local_lid\":65536}",
	"{\"local_lid\":\"1\"}", "{\"local_lid\":null}", "{\"local_lid\":+1}",
	"{\"local_lid\":99999999999999999999999}", "{\"local_lid\":NaN}",
	"{\"qp_num\":[4294967296]}", "{\"qp_num\":[12345678901]}", "{\"qp_num\":[1,]}",
	"{\"qp_num\":[,1]}", "{\"qp_num\":[1 2]}", "{\"qp_num\":[\"1\"]}", "{\"qp_num\":null}",
	"{\"qp_num\":1}", "{\"qp_num\":[[1]]}", "{\"qp_num\":[1}",
	"{\"qphs_path_mtu\":0}", "{\"qphs_path_mtu\":300}", "{\"qphs_path_mtu\":8192}",
	"{\"qphs_path_mtu\":4096.0}",
	/* Bools: only true and false, spelled so. */
	"{\"ready_ack\":null}", "{\"ready_ack\":True}", "{\"ready_ack\":1}", "{\"ready_ack\":tru}",
	"{\"ready_ack\":truex}", "{\"ready_ack\":falsey}",
	/* Whitespace JSON does not know. */
	"{\v}", "\f{}",
};

START_TEST(descfast_hands_off_the_rest)
{
	const char *json = handoff_rows[_i];
	size_t len = strlen(json);
	struct qphs_hs_desc d, before, ref;
	char e1[256] = "", e2[256] = "";
	size_t members = 12345;
	void *block = &before;
	int rc1, rc2;

	memset(&d, 0x5A, sizeof(d));
	before = d;
	ck_assert_msg(qphs__hs_desc_fast(json, len, &d, &members) == 0, "%s: read", json);
	ck_assert_msg(!memcmp(&d, &before, sizeof(d)) && members == 12345, "%s: written", json);
	ck_assert_msg(qphs__hs_desc_fast_block(json, len, &d, &members, &block) == 0 &&
			      !memcmp(&d, &before, sizeof(d)) && members == 12345 &&
			      block == (void *)&before,
		      "%s: read in a block", json);
	/* The public reader answers exactly as the json-c path. */
	rc1 = qphs_hs_desc_parse(json, len, &d, e1, sizeof(e1));
	rc2 = qphs__hs_desc_parse_json(json, len, &ref, e2, sizeof(e2));
	ck_assert_msg(rc1 == rc2 && !strcmp(e1, e2), "%s: %d '%s' vs %d '%s'", json, rc1, e1, rc2,
		      e2);
	if (!rc1) {
		expect_same(json, &d, &ref);
		qphs_hs_desc_clear(&d);
		qphs_hs_desc_clear(&ref);
	}
}
END_TEST

START_TEST(descfast_hands_off_256_qps_and_long_strings)
{
	size_t cap = 64 + 256 * 2 + QPHS_MAX_STRING, off = 0;
	char *b = malloc(cap);
	struct qphs_hs_desc d;
	size_t members;

	ck_assert_ptr_nonnull(b);
	off += (size_t)snprintf(b + off, cap - off, "{\"qp_num\":[");
	for (int i = 0; i < QPHS_MAX_QPS + 1; i++)
		off += (size_t)snprintf(b + off, cap - off, "%s1", i ? "," : "");
	off += (size_t)snprintf(b + off, cap - off, "]}");
	ck_assert_int_eq(qphs__hs_desc_fast(b, off, &d, &members), 0);
	off = (size_t)snprintf(b, cap, "{\"payload\":\"");
	memset(b + off, 'x', QPHS_MAX_STRING + 1);
	off += QPHS_MAX_STRING + 1;
	off += (size_t)snprintf(b + off, cap - off, "\"}");
	ck_assert_int_eq(qphs__hs_desc_fast(b, off, &d, &members), 0);
	free(b);
}
END_TEST

START_TEST(descfast_reads_only_json_len_bytes)
{
	static const char body[] = "{\"local_lid\":12}trailing";
	struct qphs_hs_desc d;
	size_t members;

	ck_assert_int_eq(qphs__hs_desc_fast(body, 16, &d, &members), 1);
	ck_assert_uint_eq(d.local_lid, 12);
	ck_assert_uint_eq(members, 1);
	qphs_hs_desc_clear(&d);
	/* Cut inside a number or a word: not read. */
	ck_assert_int_eq(qphs__hs_desc_fast(body, 15, &d, &members), 0);
	ck_assert_int_eq(qphs__hs_desc_fast("{\"ready_ack\":true}", 15, &d, &members), 0);
}
END_TEST

Suite *suite_descfast(void)
{
	Suite *s = suite_create("descfast");
	TCase *tc = unit_tcase(s, "fast reader", 10);

	tcase_add_loop_test(tc, descfast_reads_common_bodies, 0,
			    sizeof(fast_rows) / sizeof(fast_rows[0]));
	tcase_add_test(tc, descfast_reads_at_the_limits);
	tcase_add_loop_test(tc, descfast_hands_off_the_rest, 0,
			    sizeof(handoff_rows) / sizeof(handoff_rows[0]));
	tcase_add_test(tc, descfast_hands_off_256_qps_and_long_strings);
	tcase_add_test(tc, descfast_reads_only_json_len_bytes);
	return s;
}
