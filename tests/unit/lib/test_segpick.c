/* codec/segpick.c: where the data-path check goes on a peer, from its
 * segment descriptor, and whether a Mooncake initiator would go the same
 * way (rkey[i] of devices[i]; the device from priority_matrix). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/segpick.h"
#include "qphs.h"
#include "unit.h"

#define DEVS "\"devices\":[{\"name\":\"rxe0\",\"lid\":0,\"gid\":\"g0\"},{\"name\":\"rxe1\",\"lid\":0,\"gid\":\"g1\"}]"
#define BUF(name, addr, len, keys) \
	"{\"name\":\"" name "\",\"addr\":" #addr ",\"length\":" #len ",\"rkey\":" keys ",\"lkey\":" keys "}"

static const struct {
	const char *what;
	const char *json;       /* the descriptor's body between { and } */
	const char *device;
	size_t bytes;
	int rc;                 /* 0 or QPHS_ERR_METADATA */
	size_t buffer;          /* when rc == 0 */
	unsigned rkey;
	int mooncake_ok;
	const char *says;       /* a part of err, or of mooncake_why */
} cases[] = {
	{"qplab's own shape", DEVS ",\"buffers\":[" BUF("cpu:0", 4096, 65536, "[11,22]")
	 "],\"priority_matrix\":{\"cpu:0\":[[\"rxe0\",\"rxe1\"],[]]}", "rxe1", 4096, 0, 0, 22, 1, NULL},
	{"no priority_matrix: a Mooncake initiator finds no device", DEVS ",\"buffers\":["
	 BUF("cpu:0", 4096, 65536, "[11,22]") "]", "rxe0", 4096, 0, 0, 11, 0, "no priority_matrix"},
	{"an empty priority_matrix", DEVS ",\"buffers\":[" BUF("cpu:0", 4096, 65536, "[11,22]")
	 "],\"priority_matrix\":{}", "rxe0", 4096, 0, 0, 11, 0, "an empty priority_matrix"},
	{"the matrix numbers the devices otherwise", DEVS ",\"buffers\":["
	 BUF("cpu:0", 4096, 65536, "[11,22]") "],\"priority_matrix\":{\"cpu:0\":[[\"rxe1\",\"rxe0\"],[]]}",
	 "rxe0", 4096, 0, 0, 11, 0, "numbers rxe0 #1 but devices[] lists it at #0"},
	{"the buffer's location does not list the device", DEVS ",\"buffers\":["
	 BUF("cpu:0", 4096, 65536, "[11,22]") "],\"priority_matrix\":{\"cpu:0\":[[\"rxe0\"],[]],\"cpu:1\":[[\"rxe1\"],[]]}",
	 "rxe1", 4096, 0, 0, 22, 0, "never picks it"},
	{"a device listed only among the others", DEVS ",\"buffers\":["
	 BUF("cpu:0", 4096, 65536, "[11,22]") "],\"priority_matrix\":{\"cpu:0\":[[\"rxe0\"],[\"rxe1\"]]}",
	 "rxe1", 4096, 0, 0, 22, 1, NULL},
	{"a location Mooncake cannot parse", DEVS ",\"buffers\":["
	 BUF("cpu:0", 4096, 65536, "[11,22]") "],\"priority_matrix\":{\"cpu:0\":[[\"rxe0\",\"rxe1\"]]}",
	 "rxe0", 4096, 0, 0, 11, 0, "is not [[preferred], [others]]"},
	{"the first remotely accessible buffer that is large enough", DEVS ",\"buffers\":["
	 BUF("cpu:0", 4096, 65536, "[]") "," BUF("cpu:0", 1048576, 1024, "[1,2]") ","
	 BUF("cpu:0", 2097152, 65536, "[3,4]") "],\"priority_matrix\":{\"cpu:0\":[[\"rxe0\",\"rxe1\"],[]]}",
	 "rxe0", 4096, 0, 2, 3, 1, NULL},
	{"a device the descriptor does not list", DEVS ",\"buffers\":[" BUF("cpu:0", 4096, 65536, "[11,22]")
	 "]", "mlx5_0", 4096, QPHS_ERR_METADATA, 0, 0, 0, "lists no device mlx5_0"},
	{"no buffer with rkeys", DEVS ",\"buffers\":[" BUF("cpu:0", 4096, 65536, "[]") "]", "rxe0",
	 4096, QPHS_ERR_METADATA, 0, 0, 0, "no remotely accessible buffer"},
	{"no buffer large enough", DEVS ",\"buffers\":[" BUF("cpu:0", 4096, 1024, "[11,22]") "]",
	 "rxe0", 4096, QPHS_ERR_METADATA, 0, 0, 0, "holds 1024 bytes, fewer than 4096"},
};

START_TEST(segpick_finds_the_buffer_and_key_as_mooncake_would)
{
	struct qphs_segment_desc s;
	struct qphs__seg_target t;
	char json[2048], err[256] = "";
	int rc;

	snprintf(json, sizeof(json), "{\"name\":\"h:1\",\"protocol\":\"rdma\",%s}", cases[_i].json);
	ck_assert_int_eq(qphs_segment_desc_parse(json, strlen(json), &s, err, sizeof(err)), 0);
	rc = qphs__seg_pick(&s, cases[_i].device, cases[_i].bytes, &t, err, sizeof(err));
	ck_assert_msg(rc == cases[_i].rc, "%s: rc %d (%s)", cases[_i].what, rc, err);
	if (rc == 0) {
		ck_assert_uint_eq(t.buffer, cases[_i].buffer);
		ck_assert_uint_eq(t.rkey, cases[_i].rkey);
		ck_assert_uint_eq(t.addr, s.buffers[t.buffer].addr);
		ck_assert_msg(t.mooncake_ok == cases[_i].mooncake_ok, "%s: mooncake_ok %d (%s)",
			      cases[_i].what, t.mooncake_ok, t.mooncake_why);
		if (cases[_i].says)
			ck_assert_msg(strstr(t.mooncake_why, cases[_i].says), "%s: %s", cases[_i].what,
				      t.mooncake_why);
	} else {
		unit_hit(rc);
		ck_assert_msg(strstr(err, cases[_i].says), "%s: %s", cases[_i].what, err);
	}
	qphs_segment_desc_clear(&s);
}
END_TEST

/* The "qphs" key: written only when set, read back, unknown keys in it
 * ignored, wrong types refused. */
START_TEST(segment_qphs_extension_round_trips)
{
	struct qphs_segment_desc s, r;
	char *out = NULL, err[256];
	size_t len = 0;
	static const char ext[] = "{\"name\":\"n\",\"protocol\":\"rdma\",\"qphs\":{\"checksum\":true,"
				  "\"crc32\":4294967295,\"crc_len\":4096,\"later\":1}}";
	static const char bad[] = "{\"name\":\"n\",\"protocol\":\"rdma\",\"qphs\":{\"checksum\":1}}";

	ck_assert_int_eq(qphs_segment_desc_init(&s), 0);
	ck_assert_int_eq(qphs_segment_desc_encode(&s, &out, &len), 0);
	ck_assert_ptr_null(strstr(out, "qphs"));
	free(out);
	s.qphs_checksum = true;
	ck_assert_int_eq(qphs_segment_desc_encode(&s, &out, &len), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"qphs\":{\"checksum\":true}"));
	free(out);
	qphs_segment_desc_clear(&s);
	ck_assert_int_eq(qphs_segment_desc_parse(ext, strlen(ext), &r, err, sizeof(err)), 0);
	ck_assert(r.qphs_checksum && r.has_crc);
	ck_assert_uint_eq(r.crc32, 4294967295u);
	ck_assert_uint_eq(r.crc_len, 4096);
	qphs_segment_desc_clear(&r);
	ck_assert_int_eq(qphs_segment_desc_parse(bad, strlen(bad), &r, err, sizeof(err)),
			 QPHS_ERR_BODY_WRONG_TYPE);
	ck_assert_ptr_nonnull(strstr(err, "qphs.checksum"));
}
END_TEST

Suite *suite_segpick(void)
{
	Suite *s = suite_create("segpick");
	TCase *tc = unit_tcase(s, "segpick", 10);

	tcase_add_loop_test(tc, segpick_finds_the_buffer_and_key_as_mooncake_would, 0,
			    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, segment_qphs_extension_round_trips);
	return s;
}
