/* qphs_hs_desc_encode's shortcut for plain strings (lib/codec/descwrite.c)
 * against the general writer: the same bytes, or no shortcut taken
 * (fuzz/fuzz_hs_desc_write covers what these rows do not). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "codec/jsonw.h"
#include "qphs.h"
#include "qphs/body.h"
#include "unit.h"

struct row {
	const char *gid, *nic, *payload, *peer, *reply;
	uint16_t lid;
	size_t qps;
	int mtu;
	bool has_ack, ack;
	int plain; /* the shortcut writes it */
};

static const struct row rows[] = {
	{"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01", "10.0.0.1:15123@mlx5_0", "",
	 "10.0.0.2:16000@mlx5_1", "", 0, 2, 0, true, false, 1},
	{"", "", "", "", "", 0, 0, 0, false, false, 1},
	{NULL, NULL, NULL, NULL, NULL, 65535, 255, 4096, false, true, 1},
	{"g", "a:1@x", "p", "b:2@y", "Invalid argument: /x/ [y] {z} 'q'", 7, 1, 256, true, true, 1},
	{"", "", "DEL \x7f is written as it is", "", "", 0, 0, 2147483647, false, false, 1},
	/* Strings that need an escape, and MTUs the shortcut leaves alone. */
	{"", "a\"b", "", "", "", 0, 0, 0, false, false, 0},
	{"", "", "a\\b", "", "", 0, 0, 0, false, false, 0},
	{"", "", "", "tab\there", "", 0, 0, 0, false, false, 0},
	{"", "", "", "", "caf\xc3\xa9", 0, 0, 0, false, false, 0},
	{"\xf0\x9f\x98\x80", "", "", "", "", 0, 0, 0, false, false, 0},
	{"", "", "", "", "", 0, 0, -1, false, false, 0},
};

static void fill(const struct row *r, struct qphs_hs_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->local_gid = (char *)r->gid;
	d->local_nic_path = (char *)r->nic;
	d->payload = (char *)r->payload;
	d->peer_nic_path = (char *)r->peer;
	d->reply_msg = (char *)r->reply;
	d->local_lid = r->lid;
	d->qp_count = r->qps;
	d->qp_num = r->qps ? malloc(r->qps * sizeof(uint32_t)) : NULL;
	for (size_t i = 0; i < r->qps; i++)
		d->qp_num[i] = i % 2 ? UINT32_MAX - (uint32_t)i : (uint32_t)i * 1000u;
	d->path_mtu = r->mtu;
	d->has_ready_ack = r->has_ack;
	d->ready_ack = r->ack;
}

START_TEST(descwrite_matches_the_general_writer)
{
	const struct row *r = &rows[_i];
	struct qphs_hs_desc d;
	char *a = NULL, *b = NULL, *c = NULL;
	size_t na = 0, nb = 0, nc = 0;

	fill(r, &d);
	ck_assert_int_eq(qphs__hs_desc_encode_general(&d, &b, &nb), 0);
	ck_assert_int_eq(qphs__hs_desc_encode_plain(&d, &a, &na), r->plain);
	if (r->plain) {
		ck_assert_uint_eq(na, nb);
		ck_assert_str_eq(a, b);
	} else {
		ck_assert_ptr_null(a);
	}
	ck_assert_int_eq(qphs_hs_desc_encode(&d, &c, &nc), 0);
	ck_assert_uint_eq(nc, nb);
	ck_assert_str_eq(c, b);
	free(a);
	free(b);
	free(c);
	free(d.qp_num);
}
END_TEST

START_TEST(descwrite_leaves_other_transports_keys_to_the_tree)
{
	struct qphs_hs_desc d;
	char *a = NULL, *c = NULL;
	size_t na = 0, nc = 0;

	fill(&rows[0], &d);
	d.extra = json_object_new_object();
	json_object_object_add(d.extra, "efa_addr", json_object_new_string("x"));
	ck_assert_int_eq(qphs__hs_desc_encode_plain(&d, &a, &na), 0);
	ck_assert_ptr_null(a);
	ck_assert_int_eq(qphs_hs_desc_encode(&d, &c, &nc), 0);
	ck_assert_ptr_nonnull(strstr(c, "\"efa_addr\":\"x\""));
	free(c);
	json_object_put(d.extra);
	free(d.qp_num);
}
END_TEST

Suite *suite_descwrite(void)
{
	Suite *s = suite_create("descwrite");
	TCase *tc = unit_tcase(s, "plain writer", 10);

	tcase_add_loop_test(tc, descwrite_matches_the_general_writer, 0,
			    sizeof(rows) / sizeof(rows[0]));
	tcase_add_test(tc, descwrite_leaves_other_transports_keys_to_the_tree);
	return s;
}
