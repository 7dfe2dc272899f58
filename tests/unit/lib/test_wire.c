/* The frame codec (lib/wire): golden frames, every split, every error. */
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "qphs.h"
#include "unit.h"
#include "qphs/frame.h"

#define MIB ((uint64_t)1 << 20)

/* The Connection body of the golden example: Mooncake's HandShakeDesc bytes
 * for these fields, as its jsoncpp FastWriter writes them. */
#define CONNECTION_JSON                                                        \
	"{\"local_gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01\","  \
	"\"local_lid\":0,\"local_nic_path\":\"10.0.0.1:15123@mlx5_0\","        \
	"\"payload\":\"\",\"peer_nic_path\":\"10.0.0.2:16000@mlx5_1\","        \
	"\"qp_num\":[1234,4294967295],\"ready_ack\":false,\"reply_msg\":\"\"}\n"

/* The segment descriptor of tests/golden/metadata-reply.hex, as jsoncpp
 * writes it for Mooncake (tests/compat/frames/metadata_reply.hex). */
#define METADATA_JSON                                                                          \
	"{\"buffers\":[{\"addr\":140000000000,\"length\":1048576,\"lkey\":[1234],\"name\":\"cpu:0\","   \
	"\"rkey\":[1234]}],\"devices\":[{\"gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:02\","  \
	"\"lid\":0,\"name\":\"rxe0\"}],\"name\":\"10.0.0.2:12001\",\"priority_matrix\":{\"cpu:0\":"   \
	"[[\"rxe0\"],[]]},\"protocol\":\"rdma\",\"tcp_data_port\":0,\"tcp_proto_version\":1,"           \
	"\"timestamp\":\"2026-12-01 00:00:00.000000\"}\n"

static const struct golden_case {
	const char *file;
	int type;
	const char *json;
} goldens[] = {
	{"probe-request.hex", QPHS_HS_PROBE, "{}\n"},
	{"probe-reply.hex", QPHS_HS_PROBE, "{\"status\":\"success\"}\n"},
	{"notify-request.hex", QPHS_HS_NOTIFY,
	 "{\"name\":\"10.0.0.1:15123\",\"notify_msg\":\"hello\"}\n"},
	{"notify-reply.hex", QPHS_HS_NOTIFY, "{\"name\":\"\",\"notify_msg\":\"success\"}\n"},
	{"connection-example.hex", QPHS_HS_CONNECTION, CONNECTION_JSON},
	{"old-protocol-connection.hex", QPHS_HS_OLD_PROTOCOL, CONNECTION_JSON},
	{"metadata-reply.hex", QPHS_HS_METADATA, METADATA_JSON},
};
#define N_GOLDENS (sizeof(goldens) / sizeof(goldens[0]))

/* ---- a driver that feeds any split of a stream and records the result ---- */

#define MAX_FRAMES 4

struct decoded {
	int err;             /* 0, or the error feed or eof returned */
	int err_at_eof;      /* the error came from qphs_decoder_eof */
	size_t err_from;     /* the failing feed covered stream bytes */
	size_t err_to;       /* [err_from, err_to) */
	int nframes;
	int type[MAX_FRAMES];
	char *json[MAX_FRAMES];
	size_t json_len[MAX_FRAMES];
};

static void decoded_clear(struct decoded *r)
{
	for (int i = 0; i < r->nframes; i++)
		free(r->json[i]);
	memset(r, 0, sizeof(*r));
}

static void take_frame(struct qphs_decoder *d, struct decoded *r)
{
	struct qphs_frame f;

	if (!qphs_decoder_frame(d, &f))
		return;
	ck_assert_int_lt(r->nframes, MAX_FRAMES);
	/* The JSON is NUL-terminated right after its json_len bytes. */
	ck_assert_int_eq(f.json[f.json_len], '\0');
	r->type[r->nframes] = f.type;
	r->json[r->nframes] = malloc(f.json_len + 1);
	memcpy(r->json[r->nframes], f.json, f.json_len + 1);
	r->json_len[r->nframes] = f.json_len;
	r->nframes++;
}

/* Feeds in[0..len) cut at cuts[0..ncuts) (ascending), taking out every
 * frame, then signals EOF. */
static void decode_split(uint64_t max, const uint8_t *in, size_t len,
			 const size_t *cuts, size_t ncuts, struct decoded *r)
{
	struct qphs_decoder *d = qphs_decoder_new(max);
	size_t start = 0;

	ck_assert_ptr_nonnull(d);
	memset(r, 0, sizeof(*r));
	for (size_t c = 0; c <= ncuts && !r->err; c++) {
		size_t end = c < ncuts ? cuts[c] : len;
		while (start < end) {
			ssize_t n = qphs_decoder_feed(d, in + start, end - start);
			if (n < 0) {
				r->err = (int)n;
				r->err_from = start;
				r->err_to = end;
				break;
			}
			ck_assert_int_le(n, end - start);
			take_frame(d, r);
			/* Bytes were offered: no progress would loop forever. */
			ck_assert_int_gt(n, 0);
			start += (size_t)n;
		}
	}
	if (!r->err && (r->err = qphs_decoder_eof(d)) != 0)
		r->err_at_eof = 1;
	qphs_decoder_free(d);
}

static void decode_all(uint64_t max, const uint8_t *in, size_t len, struct decoded *r)
{
	decode_split(max, in, len, NULL, 0, r);
}

static void decode_bytewise(uint64_t max, const uint8_t *in, size_t len, struct decoded *r)
{
	size_t *cuts = malloc((len + 1) * sizeof(*cuts));

	for (size_t i = 0; i < len; i++)
		cuts[i] = i + 1;
	decode_split(max, in, len, cuts, len, r);
	free(cuts);
}

/* xorshift32: the random splits are the same on every run. */
static uint32_t next_random(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

static void decode_random(uint64_t max, const uint8_t *in, size_t len, uint32_t *seed,
			  struct decoded *r)
{
	size_t cuts[8];
	size_t n = next_random(seed) % 9;

	for (size_t i = 0; i < n; i++)
		cuts[i] = next_random(seed) % (len + 1);
	qsort(cuts, n, sizeof(cuts[0]), cmp_size);
	decode_split(max, in, len, cuts, n, r);
}

static void expect_frame(const struct decoded *r, int i, int type, const char *json, size_t len)
{
	ck_assert_int_eq(r->err, 0);
	ck_assert_int_gt(r->nframes, i);
	ck_assert_int_eq(r->type[i], type);
	ck_assert_uint_eq(r->json_len[i], len);
	ck_assert(memcmp(r->json[i], json, len) == 0);
}

static void load(const char *file, uint8_t **buf, size_t *len)
{
	ck_assert_msg(golden_load(file, buf, len) == 0, "cannot load golden frame %s", file);
}

/* ---- names and headers ---- */

START_TEST(wire_type_names_round_trip)
{
	static const struct {
		int type;
		const char *name;
	} names[] = {
		{QPHS_HS_CONNECTION, "connection"}, {QPHS_HS_METADATA, "metadata"},
		{QPHS_HS_NOTIFY, "notify"},         {QPHS_HS_PROBE, "probe"},
		{QPHS_HS_OLD_PROTOCOL, "old-protocol"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ck_assert_str_eq(qphs_msg_type_name(names[i].type), names[i].name);
		ck_assert_int_eq(qphs_msg_type_from_name(names[i].name), names[i].type);
	}
	ck_assert_ptr_null(qphs_msg_type_name(4));
	ck_assert_ptr_null(qphs_msg_type_name(-1));
	ck_assert_ptr_null(qphs_msg_type_name(0xfe));
	ck_assert_int_eq(qphs_msg_type_from_name("Probe"), -1);
	ck_assert_int_eq(qphs_msg_type_from_name(""), -1);
	ck_assert_int_eq(qphs_msg_type_from_name(NULL), -1);
}
END_TEST

START_TEST(wire_header_length_is_little_endian)
{
	static const uint8_t want_typed[9] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x02};
	static const uint8_t want_old[8] = {0x16, 0x03, 0, 0, 0, 0, 0, 0};
	uint8_t hdr[9];

	/* length = json_len + 1 for the type byte. */
	ck_assert_uint_eq(qphs_frame_header(QPHS_HS_NOTIFY, 0x0807060504030200ull, hdr), 9);
	ck_assert(memcmp(hdr, want_typed, 9) == 0);
	/* Mooncake's own test: 790 is 0x16 0x03 0x00 ... on the wire. */
	ck_assert_uint_eq(qphs_frame_header(QPHS_HS_OLD_PROTOCOL, 790, hdr), 8);
	ck_assert(memcmp(hdr, want_old, 8) == 0);
	ck_assert_uint_eq(qphs_frame_header(4, 10, hdr), 0);
	ck_assert_uint_eq(qphs_frame_header(-1, 10, hdr), 0);
}
END_TEST

/* ---- golden frames ---- */

START_TEST(wire_encode_matches_golden_frames)
{
	for (size_t i = 0; i < N_GOLDENS; i++) {
		uint8_t *want, *got;
		size_t want_len, got_len;

		load(goldens[i].file, &want, &want_len);
		ck_assert_int_eq(qphs_frame_encode(goldens[i].type, goldens[i].json,
						    strlen(goldens[i].json), &got, &got_len), 0);
		ck_assert_msg(got_len == want_len && memcmp(got, want, got_len) == 0,
			      "%s: encoded bytes differ", goldens[i].file);
		free(got);
		free(want);
	}
}
END_TEST

/* Our segment codec writes Mooncake's bytes for the golden descriptor:
 * parsed and encoded again, it is the frame jsoncpp wrote. */
START_TEST(wire_golden_metadata_reply_is_our_encoding)
{
	struct qphs_segment_desc s;
	char *out = NULL, err[256];
	size_t n = 0;

	ck_assert_int_eq(qphs_segment_desc_parse(METADATA_JSON, strlen(METADATA_JSON), &s, err,
						 sizeof(err)), 0);
	ck_assert_int_eq(qphs_segment_desc_encode(&s, &out, &n), 0);
	ck_assert_str_eq(out, METADATA_JSON);
	free(out);
	qphs_segment_desc_clear(&s);
}
END_TEST

START_TEST(wire_golden_example_is_mooncakes_bytes)
{
	uint8_t *buf;
	size_t len;
	struct decoded r;

	load("connection-example.hex", &buf, &len);
	/* 232 bytes of JSON plus the type byte: 233 = 0xe9, then type 0. */
	ck_assert_uint_eq(len, 8 + 233);
	ck_assert_int_eq(buf[0], 0xe9);
	for (int i = 1; i < 9; i++)
		ck_assert_int_eq(buf[i], 0);
	ck_assert_int_eq(buf[len - 1], '\n');
	decode_all(0, buf, len, &r);
	ck_assert_int_eq(r.nframes, 1);
	expect_frame(&r, 0, QPHS_HS_CONNECTION, CONNECTION_JSON, strlen(CONNECTION_JSON));
	decoded_clear(&r);
	free(buf);
}
END_TEST

START_TEST(wire_decodes_golden_frames_at_every_split)
{
	const struct golden_case *g = &goldens[_i];
	size_t jlen = strlen(g->json);
	uint32_t seed = 0x9e3779b9u;
	uint8_t *buf;
	size_t len;
	struct decoded r;

	load(g->file, &buf, &len);
	decode_all(0, buf, len, &r);
	expect_frame(&r, 0, g->type, g->json, jlen);
	ck_assert_int_eq(r.nframes, 1);
	decoded_clear(&r);
	decode_bytewise(0, buf, len, &r);
	expect_frame(&r, 0, g->type, g->json, jlen);
	decoded_clear(&r);
	for (size_t cut = 0; cut <= len; cut++) {
		decode_split(0, buf, len, &cut, 1, &r);
		expect_frame(&r, 0, g->type, g->json, jlen);
		decoded_clear(&r);
	}
	for (int round = 0; round < 200; round++) {
		decode_random(0, buf, len, &seed, &r);
		expect_frame(&r, 0, g->type, g->json, jlen);
		ck_assert_int_eq(r.nframes, 1);
		decoded_clear(&r);
	}
	free(buf);
}
END_TEST

START_TEST(wire_feed_stops_after_first_frame)
{
	uint8_t *a, *b, *both;
	size_t alen, blen;
	struct qphs_decoder *d = qphs_decoder_new(0);
	struct qphs_frame f;
	uint32_t seed = 12345;
	struct decoded r;

	load("probe-request.hex", &a, &alen);
	load("old-protocol-connection.hex", &b, &blen);
	both = malloc(alen + blen);
	memcpy(both, a, alen);
	memcpy(both + alen, b, blen);
	ck_assert_int_eq(qphs_decoder_feed(d, both, alen + blen), (ssize_t)alen);
	ck_assert_int_eq(qphs_decoder_frame(d, &f), 1);
	ck_assert_int_eq(f.type, QPHS_HS_PROBE);
	ck_assert_uint_eq(f.json_len, 3);
	ck_assert_uint_eq(qphs_decoder_buffered(d), 0);
	ck_assert_int_eq(qphs_decoder_eof(d), 0);
	ck_assert_int_eq(qphs_decoder_feed(d, both + alen, blen), (ssize_t)blen);
	ck_assert_int_eq(qphs_decoder_frame(d, &f), 1);
	ck_assert_int_eq(f.type, QPHS_HS_OLD_PROTOCOL);
	qphs_decoder_free(d);
	for (int round = 0; round < 300; round++) {
		decode_random(0, both, alen + blen, &seed, &r);
		ck_assert_int_eq(r.nframes, 2);
		expect_frame(&r, 0, QPHS_HS_PROBE, "{}\n", 3);
		expect_frame(&r, 1, QPHS_HS_OLD_PROTOCOL, CONNECTION_JSON, strlen(CONNECTION_JSON));
		decoded_clear(&r);
	}
	free(both);
	free(a);
	free(b);
}
END_TEST

/* ---- bad frames: input, expected error, where it shows ---- */

#define AT_EOF ((size_t)-1)

static const struct bad_case {
	const char *name;
	const char *in;
	size_t len;
	int err;
	size_t at; /* index of the byte that proves the frame bad, or AT_EOF */
} bad_frames[] = {
	{"zero length", "\0\0\0\0\0\0\0\0", 8, QPHS_ERR_FRAME_ZERO_LENGTH, 7},
	{"zero length, then bytes", "\0\0\0\0\0\0\0\0\3{}\n", 12, QPHS_ERR_FRAME_ZERO_LENGTH, 7},
	{"1 MiB + 1", "\1\0\20\0\0\0\0\0\3{}", 11, QPHS_ERR_FRAME_TOO_LONG, 7},
	{"length 2^64-1", "\377\377\377\377\377\377\377\377", 8, QPHS_ERR_FRAME_TOO_LONG, 7},
	{"length 2^63 (big-endian 128)", "\0\0\0\0\0\0\0\200", 8, QPHS_ERR_FRAME_TOO_LONG, 7},
	{"type 0x80", "\4\0\0\0\0\0\0\0\200{}\n", 12, QPHS_ERR_FRAME_BAD_TYPE, 8},
	{"type 0xff", "\4\0\0\0\0\0\0\0\377{}\n", 12, QPHS_ERR_FRAME_BAD_TYPE, 8},
	{"type 0xfe of length 1", "\1\0\0\0\0\0\0\0\376", 9, QPHS_ERR_FRAME_BAD_TYPE, 8},
	{"connection, no JSON", "\1\0\0\0\0\0\0\0\0", 9, QPHS_ERR_FRAME_EMPTY_BODY, 8},
	{"probe, no JSON", "\1\0\0\0\0\0\0\0\3{}\n", 12, QPHS_ERR_FRAME_EMPTY_BODY, 8},
	{"EOF in the length", "\4\0\0\0", 4, QPHS_ERR_FRAME_TRUNCATED, AT_EOF},
	{"EOF after the length", "\4\0\0\0\0\0\0\0", 8, QPHS_ERR_FRAME_TRUNCATED, AT_EOF},
	{"EOF after the type", "\4\0\0\0\0\0\0\0\3", 9, QPHS_ERR_FRAME_TRUNCATED, AT_EOF},
	{"EOF inside the JSON", "\4\0\0\0\0\0\0\0\3{}", 11, QPHS_ERR_FRAME_TRUNCATED, AT_EOF},
	{"EOF inside old protocol", "\3\0\0\0\0\0\0\0{}", 10, QPHS_ERR_FRAME_TRUNCATED, AT_EOF},
	{"EOF after a whole frame", "\4\0\0\0\0\0\0\0\3{}\n\4", 13, QPHS_ERR_FRAME_TRUNCATED,
	 AT_EOF},
};
#define N_BAD (sizeof(bad_frames) / sizeof(bad_frames[0]))

static void expect_error(const struct bad_case *c, const struct decoded *r, const char *how)
{
	ck_assert_msg(r->err == c->err, "%s, %s: got %s, want %s", c->name, how,
		      qphs_errname(r->err), qphs_errname(c->err));
	if (c->at == AT_EOF) {
		ck_assert_msg(r->err_at_eof, "%s, %s: error before EOF", c->name, how);
	} else {
		ck_assert_msg(!r->err_at_eof, "%s, %s: error only at EOF", c->name, how);
		ck_assert_msg(r->err_from <= c->at && c->at < r->err_to,
			      "%s, %s: error in bytes [%zu, %zu), want at %zu", c->name, how,
			      r->err_from, r->err_to, c->at);
	}
}

START_TEST(wire_rejects_bad_frames_where_they_go_bad)
{
	const struct bad_case *c = &bad_frames[_i];
	const uint8_t *in = (const uint8_t *)c->in;
	uint32_t seed = 777;
	struct decoded r;

	decode_all(0, in, c->len, &r);
	expect_error(c, &r, "all at once");
	decoded_clear(&r);
	decode_bytewise(0, in, c->len, &r);
	expect_error(c, &r, "byte by byte");
	if (c->at != AT_EOF)
		ck_assert_uint_eq(r.err_from, c->at);
	decoded_clear(&r);
	for (int round = 0; round < 100; round++) {
		decode_random(0, in, c->len, &seed, &r);
		expect_error(c, &r, "random split");
		decoded_clear(&r);
	}
	unit_hit(c->err);
}
END_TEST

START_TEST(wire_error_is_sticky_until_reset)
{
	struct qphs_decoder *d = qphs_decoder_new(0);
	struct qphs_frame f;
	uint8_t *good;
	size_t len;

	ck_assert_int_eq(qphs_decoder_feed(d, "\0\0\0\0\0\0\0\0", 8), QPHS_ERR_FRAME_ZERO_LENGTH);
	ck_assert_int_eq(qphs_decoder_feed(d, "\4\0\0\0\0\0\0\0\3{}\n", 12),
			 QPHS_ERR_FRAME_ZERO_LENGTH);
	ck_assert_int_eq(qphs_decoder_frame(d, &f), 0);
	ck_assert_int_eq(qphs_decoder_eof(d), QPHS_ERR_FRAME_ZERO_LENGTH);
	unit_hit(QPHS_ERR_FRAME_ZERO_LENGTH);
	qphs_decoder_reset(d);
	ck_assert_int_eq(qphs_decoder_eof(d), 0);
	load("probe-reply.hex", &good, &len);
	ck_assert_int_eq(qphs_decoder_feed(d, good, len), (ssize_t)len);
	ck_assert_int_eq(qphs_decoder_frame(d, &f), 1);
	ck_assert_str_eq(f.json, "{\"status\":\"success\"}\n");
	free(good);
	qphs_decoder_free(d);
}
END_TEST

/* ---- old protocol: a first byte 0x04..0x7f is part of the JSON ---- */

static const struct old_case {
	const char *in;
	size_t len;
	const char *json;
	size_t json_len;
} old_frames[] = {
	{"\3\0\0\0\0\0\0\0{}\n", 11, "{}\n", 3},
	{"\1\0\0\0\0\0\0\0{", 9, "{", 1},       /* frame-level fine; JSON fails later */
	{"\1\0\0\0\0\0\0\0 ", 9, " ", 1},       /* whitespace only: desc says EMPTY_BODY */
	{"\2\0\0\0\0\0\0\0\4x", 10, "\4x", 2},  /* the lowest old-protocol byte */
	{"\2\0\0\0\0\0\0\0\177x", 10, "\177x", 2}, /* the highest */
	{"\5\0\0\0\0\0\0\0null\n", 13, "null\n", 5},
};

START_TEST(wire_decodes_old_protocol_frames)
{
	const struct old_case *c = &old_frames[_i];
	struct decoded r;

	decode_all(0, (const uint8_t *)c->in, c->len, &r);
	ck_assert_int_eq(r.nframes, 1);
	expect_frame(&r, 0, QPHS_HS_OLD_PROTOCOL, c->json, c->json_len);
	decoded_clear(&r);
	decode_bytewise(0, (const uint8_t *)c->in, c->len, &r);
	expect_frame(&r, 0, QPHS_HS_OLD_PROTOCOL, c->json, c->json_len);
	decoded_clear(&r);
}
END_TEST

/* ---- the MC_HANDSHAKE_MAX_LENGTH limit ---- */

/* Feeds only the 8 length bytes of a frame of `length`; returns feed's
 * result.  Nothing of the payload is needed to accept or reject it. */
static ssize_t feed_length(struct qphs_decoder *d, uint64_t length)
{
	uint8_t hdr[9];

	qphs_frame_header(QPHS_HS_OLD_PROTOCOL, length, hdr);
	return qphs_decoder_feed(d, hdr, 8);
}

static void expect_limit(uint64_t max, uint64_t accepted, uint64_t rejected)
{
	struct qphs_decoder *d = qphs_decoder_new(max);

	ck_assert_int_eq(feed_length(d, accepted), 8);
	ck_assert_uint_eq(qphs_decoder_buffered(d), 8);
	qphs_decoder_reset(d);
	ck_assert_int_eq(feed_length(d, rejected), QPHS_ERR_FRAME_TOO_LONG);
	qphs_decoder_free(d);
	unit_hit(QPHS_ERR_FRAME_TOO_LONG);
}

START_TEST(wire_limit_defaults_to_1_mib)
{
	expect_limit(0, MIB, MIB + 1);
}
END_TEST

START_TEST(wire_limit_below_1_mib_is_clamped_up)
{
	expect_limit(1000, MIB, MIB + 1);
	expect_limit(1, MIB, MIB + 1);
	expect_limit(MIB - 1, MIB, MIB + 1);
}
END_TEST

START_TEST(wire_limit_custom_and_clamped_to_128_mib)
{
	expect_limit(2 * MIB, 2 * MIB, 2 * MIB + 1);
	expect_limit(128 * MIB, 128 * MIB, 128 * MIB + 1);
	expect_limit(1024 * MIB, 128 * MIB, 128 * MIB + 1);
	expect_limit(UINT64_MAX, 128 * MIB, 128 * MIB + 1);
}
END_TEST

START_TEST(wire_accepts_a_frame_of_exactly_the_limit)
{
	size_t json_len = (size_t)MIB - 1;
	char *json = malloc(json_len);
	uint8_t *frame;
	size_t len;
	struct decoded r;

	memset(json, ' ', json_len);
	json[0] = '{';
	json[json_len - 2] = '}';
	json[json_len - 1] = '\n';
	ck_assert_int_eq(qphs_frame_encode(QPHS_HS_METADATA, json, json_len, &frame, &len), 0);
	ck_assert_uint_eq(len, 8 + MIB);
	decode_split(0, frame, len, (size_t[]){5, 9, 4000, 700000}, 4, &r);
	expect_frame(&r, 0, QPHS_HS_METADATA, json, json_len);
	decoded_clear(&r);
	/* One byte more is over the default limit... */
	free(frame);
	ck_assert_int_eq(qphs_frame_encode(QPHS_HS_OLD_PROTOCOL, "{", 1, &frame, &len), 0);
	frame[0] = 1, frame[1] = 0, frame[2] = 0x10; /* length 1 MiB + 1 */
	decode_all(0, frame, len, &r);
	ck_assert_int_eq(r.err, QPHS_ERR_FRAME_TOO_LONG);
	decoded_clear(&r);
	/* ...and within a 2 MiB one (EOF then: the body is not there). */
	decode_all(2 * MIB, frame, len, &r);
	ck_assert_int_eq(r.err, QPHS_ERR_FRAME_TRUNCATED);
	unit_hit(QPHS_ERR_FRAME_TRUNCATED);
	decoded_clear(&r);
	free(frame);
	free(json);
}
END_TEST

/* ---- encode, and the round trip ---- */

START_TEST(wire_encode_rejects_what_cannot_be_framed)
{
	static const struct {
		int type;
		const char *json;
		size_t len;
	} bad[] = {
		{4, "{}", 2},
		{-1, "{}", 2},
		{0xfe, "{}", 2},
		{QPHS_HS_PROBE, "", 0},
		{QPHS_HS_OLD_PROTOCOL, "", 0},
		{QPHS_HS_OLD_PROTOCOL, "\3{}", 3},   /* would read back as Probe */
		{QPHS_HS_OLD_PROTOCOL, "\200{}", 3}, /* would read back as bad type */
		{QPHS_HS_PROBE, NULL, 2},
	};
	uint8_t *out = NULL;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(qphs_frame_encode(bad[i].type, bad[i].json, bad[i].len, &out,
						    &len),
				 QPHS_ERR_INVALID_ARGUMENT);
		ck_assert_ptr_null(out);
	}
	unit_hit(QPHS_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(wire_encode_decode_round_trip)
{
	static const int types[] = {QPHS_HS_CONNECTION, QPHS_HS_METADATA, QPHS_HS_NOTIFY,
				    QPHS_HS_PROBE, QPHS_HS_OLD_PROTOCOL};
	static const size_t sizes[] = {1, 2, 3, 255, 256, 4097, 70000};
	uint32_t seed = 4242;

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			char *json = malloc(sizes[s]);
			uint8_t *frame;
			size_t len;
			struct decoded r;

			/* Any bytes at all, the first one a valid JSON start. */
			for (size_t i = 0; i < sizes[s]; i++)
				json[i] = (char)(next_random(&seed) & 0xff);
			json[0] = '[';
			ck_assert_int_eq(qphs_frame_encode(types[t], json, sizes[s], &frame, &len), 0);
			ck_assert_uint_eq(len, 8 + sizes[s] + (types[t] != QPHS_HS_OLD_PROTOCOL));
			decode_random(0, frame, len, &seed, &r);
			ck_assert_int_eq(r.nframes, 1);
			expect_frame(&r, 0, types[t], json, sizes[s]);
			decoded_clear(&r);
			free(frame);
			free(json);
		}
	}
}
END_TEST

START_TEST(wire_eof_between_frames_is_clean)
{
	struct qphs_decoder *d = qphs_decoder_new(0);
	struct qphs_frame f;

	ck_assert_int_eq(qphs_decoder_eof(d), 0);
	ck_assert_int_eq(qphs_decoder_feed(d, "", 0), 0);
	ck_assert_uint_eq(qphs_decoder_buffered(d), 0);
	ck_assert_int_eq(qphs_decoder_feed(d, "\4\0\0", 3), 3);
	ck_assert_uint_eq(qphs_decoder_buffered(d), 3);
	ck_assert_int_eq(qphs_decoder_feed(d, "\0\0\0\0\0\3{", 7), 7);
	ck_assert_uint_eq(qphs_decoder_buffered(d), 10);
	ck_assert_int_eq(qphs_decoder_frame(d, &f), 0);
	ck_assert_int_eq(qphs_decoder_feed(d, "}\nrest", 6), 2);
	ck_assert_int_eq(qphs_decoder_frame(d, &f), 1);
	ck_assert_str_eq(f.json, "{}\n");
	ck_assert_uint_eq(qphs_decoder_buffered(d), 0);
	ck_assert_int_eq(qphs_decoder_eof(d), 0);
	/* The next feed starts a new frame; the old one is gone. */
	ck_assert_int_eq(qphs_decoder_feed(d, "\2", 1), 1);
	ck_assert_int_eq(qphs_decoder_frame(d, &f), 0);
	ck_assert_int_eq(qphs_decoder_eof(d), QPHS_ERR_FRAME_TRUNCATED);
	qphs_decoder_reset(d);
	ck_assert_int_eq(qphs_decoder_eof(d), 0);
	qphs_decoder_free(d);
	qphs_decoder_free(NULL);
	unit_hit(QPHS_ERR_FRAME_TRUNCATED);
}
END_TEST

/* qphs_hex_decode: text, flags, room, then the expected code, bytes and
 * (on an error) the offset it names. */
static const struct {
	const char *text;
	unsigned flags;
	size_t cap;
	int rc;
	const char *bytes;
	size_t nbytes, bad_at;
} hex_rows[] = {
	{"", 0, 16, 0, "", 0, 0},
	{"0a0B ff", 0, 16, 0, "\x0a\x0b\xff", 3, 0},
	{" 08 00\t00\r\n00\n", 0, 16, 0, "\x08\0\0\0", 4, 0},
	{"# a comment\n01 # and another\n02", QPHS_HEX_COMMENTS, 16, 0, "\x01\x02", 2, 0},
	{"# a comment\n01", 0, 16, QPHS_ERR_INVALID_ARGUMENT, "", 0, 0},
	{"0 8", 0, 16, QPHS_ERR_INVALID_ARGUMENT, "", 0, 1},
	{"0a0", 0, 16, QPHS_ERR_INVALID_ARGUMENT, "\x0a", 1, 3},
	{"0a zz", 0, 16, QPHS_ERR_INVALID_ARGUMENT, "\x0a", 1, 3},
	{"0x0a", 0, 16, QPHS_ERR_INVALID_ARGUMENT, "", 0, 1},
	{"010203", 0, 2, QPHS_ERR_FRAME_TOO_LONG, "\x01\x02", 2, 4},
};

START_TEST(wire_hex_decode_table)
{
	uint8_t out[16];
	size_t n = 99, bad = 99;
	int rc = qphs_hex_decode(hex_rows[_i].text, strlen(hex_rows[_i].text), hex_rows[_i].flags,
				 out, hex_rows[_i].cap, &n, &bad);

	ck_assert_int_eq(rc, hex_rows[_i].rc);
	ck_assert_uint_eq(n, hex_rows[_i].nbytes);
	ck_assert_mem_eq(out, hex_rows[_i].bytes, n);
	if (rc)
		ck_assert_uint_eq(bad, hex_rows[_i].bad_at);
	else
		ck_assert_uint_eq(bad, 99); /* untouched on success */
}
END_TEST

Suite *suite_wire(void)
{
	Suite *s = suite_create("wire");
	TCase *tc;

	tc = unit_tcase(s, "names", 5);
	tcase_add_test(tc, wire_type_names_round_trip);
	tcase_add_test(tc, wire_header_length_is_little_endian);
	tc = unit_tcase(s, "golden", 30);
	tcase_add_test(tc, wire_encode_matches_golden_frames);
	tcase_add_test(tc, wire_golden_example_is_mooncakes_bytes);
	tcase_add_test(tc, wire_golden_metadata_reply_is_our_encoding);
	tcase_add_loop_test(tc, wire_decodes_golden_frames_at_every_split, 0, (int)N_GOLDENS);
	tcase_add_test(tc, wire_feed_stops_after_first_frame);
	tc = unit_tcase(s, "bad", 30);
	tcase_add_loop_test(tc, wire_rejects_bad_frames_where_they_go_bad, 0, (int)N_BAD);
	tcase_add_test(tc, wire_error_is_sticky_until_reset);
	tcase_add_loop_test(tc, wire_decodes_old_protocol_frames, 0,
			    (int)(sizeof(old_frames) / sizeof(old_frames[0])));
	tc = unit_tcase(s, "limit", 30);
	tcase_add_test(tc, wire_limit_defaults_to_1_mib);
	tcase_add_test(tc, wire_limit_below_1_mib_is_clamped_up);
	tcase_add_test(tc, wire_limit_custom_and_clamped_to_128_mib);
	tcase_add_test(tc, wire_accepts_a_frame_of_exactly_the_limit);
	tc = unit_tcase(s, "encode", 30);
	tcase_add_test(tc, wire_encode_rejects_what_cannot_be_framed);
	tcase_add_test(tc, wire_encode_decode_round_trip);
	tcase_add_test(tc, wire_eof_between_frames_is_clean);
	tc = unit_tcase(s, "hex", 5);
	tcase_add_loop_test(tc, wire_hex_decode_table, 0,
			    (int)(sizeof(hex_rows) / sizeof(hex_rows[0])));
	return s;
}
