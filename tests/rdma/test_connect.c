/* Connect a -> b with 1, 2 and 8 QPs: every QP RTS on both sides (read back
 * with ibv_query_qp), the data path carries 4 KiB and 1 MiB. */
#include <stdio.h>
#include <string.h>

#include "rdmatest.h"
#include "setup/setup_int.h" /* b's check region, to look at it from outside */

static void check_data(struct qphs_endpoint *ep, size_t bytes)
{
	struct qphs_data_result res;
	int rc = qphs_endpoint_check_data(ep, bytes, rdma_ms(5000), &res);

	ck_assert_msg(rc == 0, "data check %zu bytes: %s: %s (write %s, read %s)", bytes,
		      qphs_errname(rc), res.text, res.write_status, res.read_status);
	ck_assert_str_eq(res.write_status, "IBV_WC_SUCCESS");
	ck_assert_str_eq(res.read_status, "IBV_WC_SUCCESS");
	ck_assert_uint_eq(res.local_crc, res.peer_crc);
	ck_assert_int_eq(res.peer_checksum, 1);
	ck_assert_int_eq(res.restored, 1);
	printf("# data %zu bytes: write %.2f ms read %.2f ms total %.2f ms crc %08x\n", bytes,
	       res.write_ms, res.read_ms, res.total_ms, res.local_crc);
}

static void connect_n(int nqp, int big)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea, *eb;
	struct qphs_endpoint_info ia, ib;
	struct qphs_config cfg;

	lab_config(&cfg);
	cfg.num_qp_per_ep = nqp;
	lab_up(&a, 0, &cfg);
	lab_up(&b, 1, &cfg);
	lab_connect_ok(&a, &b, nqp, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_info(ea, &ia), 0);
	ck_assert_int_eq(qphs_endpoint_info(eb, &ib), 0);
	for (int i = 0; i < nqp; i++) {
		/* QP i pairs with the peer's QP i, both ways. */
		ck_assert_uint_eq(ia.peer_qpn[i], ib.qpn[i]);
		ck_assert_uint_eq(ib.peer_qpn[i], ia.qpn[i]);
	}
	ck_assert_int_eq(ia.status, QPHS_EP_CONNECTED);
	ck_assert_int_eq(ib.status, QPHS_EP_CONNECTED);
	ck_assert_int_eq(ia.peer_ready_ack, 1);
	printf("# %d QPs: path_mtu %d gid_index %d rd_atomic %d\n", nqp, ia.path_mtu,
	       ia.gid_index, ia.rd_atomic);
	check_data(ea, 4096);
	if (big)
		check_data(ea, 1 << 20);
	check_data(eb, 4096);
	ck_assert_int_eq(lab_count_qps(a.dev), nqp);
	ck_assert_int_eq(lab_count_qps(b.dev), nqp);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down_clean(&a, &b);
}

START_TEST(connect_one_qp_rts_and_data)
{
	connect_n(1, 0);
}
END_TEST

START_TEST(connect_two_qps_rts_and_data_4k_1m)
{
	connect_n(2, 1);
}
END_TEST

START_TEST(connect_eight_qps_rts_and_data)
{
	connect_n(8, 1);
}
END_TEST

/* A second connect on a connected endpoint returns it at once. */
START_TEST(connect_again_reuses_endpoint)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea, *eb, *ea2;
	struct qphs_endpoint_info i1, i2;

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_connect(a.ctx, b.path, &ea2), 0);
	ck_assert_ptr_eq(ea, ea2);
	ck_assert_int_eq(qphs_endpoint_info(ea, &i1), 0);
	ck_assert_int_eq(qphs_endpoint_info(ea2, &i2), 0);
	ck_assert_uint_eq(i1.qpn[0], i2.qpn[0]);
	qphs_endpoint_put(ea2);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down_clean(&a, &b);
}
END_TEST

/* Against a peer that behaves as Mooncake (no checksum extension, no MTU
 * negotiation, its QPs built first): the check finds the peer's "cpu:0"
 * buffer and the rkey of our device in its segment descriptor, verifies
 * the round trip, and leaves the peer's memory byte for byte as it was;
 * a read-only check writes nothing. */
START_TEST(check_leaves_a_mooncake_peers_memory_as_it_was)
{
	struct lab_host a, b;
	struct qphs_config ca, cb;
	struct qphs_endpoint *ea, *eb;
	struct qphs_data_result res;
	struct qphs_data_opts ro = {.bytes = 4096, .timeout_ms = rdma_ms(5000), .read_only = true};
	static uint8_t before[65536];
	int rc;

	lab_config(&ca);
	lab_config(&cb);
	cb.checksum_extension = false;
	cb.mtu_negotiation = false;
	cb.passive_build_first = true;
	lab_up(&a, 0, &ca);
	lab_up(&b, 1, &cb);
	lab_connect_ok(&a, &b, 2, &ea, &eb);
	for (size_t i = 0; i < sizeof(before); i++)
		before[i] = (uint8_t)(i * 7 + 3);
	memcpy(b.r->region, before, sizeof(before));
	rc = qphs_endpoint_check_data(ea, sizeof(before), rdma_ms(5000), &res);
	ck_assert_msg(rc == 0, "%s: %s", qphs_errname(rc), res.text);
	ck_assert_str_eq(res.peer_buffer, "cpu:0");
	ck_assert_int_eq(res.peer_checksum, 0);
	ck_assert_int_eq(res.restored, 1);
	ck_assert_int_eq(memcmp(b.r->region, before, sizeof(before)), 0);
	rc = qphs_endpoint_check_data_opts(ea, &ro, &res);
	ck_assert_msg(rc == 0, "%s: %s", qphs_errname(rc), res.text);
	ck_assert_str_eq(res.write_status, "not posted");
	ck_assert_int_eq(memcmp(b.r->region, before, sizeof(before)), 0);
	/* And b, checking a qplab peer: a checksums its copy. */
	rc = qphs_endpoint_check_data(eb, 4096, rdma_ms(5000), &res);
	ck_assert_msg(rc == 0, "%s: %s", qphs_errname(rc), res.text);
	ck_assert_int_eq(res.peer_checksum, 1);
	ck_assert_uint_eq(res.local_crc, res.peer_crc);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	lab_down_clean(&a, &b);
}
END_TEST

Suite *suite_connect(void)
{
	Suite *s = suite_create("connect");

	tcase_add_test(rdma_smoke_tcase(s, "two", 30), connect_two_qps_rts_and_data_4k_1m);
	tcase_add_test(unit_tcase(s, "one", 30), connect_one_qp_rts_and_data);
	tcase_add_test(unit_tcase(s, "eight", 30), connect_eight_qps_rts_and_data);
	tcase_add_test(unit_tcase(s, "again", 30), connect_again_reuses_endpoint);
	tcase_add_test(rdma_smoke_tcase(s, "mooncake_peer", 60),
		       check_leaves_a_mooncake_peers_memory_as_it_was);
	return s;
}
