/*
 * Our side of a Connection request (lib/setup/handshake.c): the
 * connecting side builds it in one allocation (qphs__hs_local_block), the
 * passive side into the daemon's descriptor (qphs__hs_local_desc).  Both
 * must put the same bytes on the wire, with and without the lab's hooks.
 * No device is needed: the context and endpoint are plain structs here,
 * with two QPs that only carry their numbers, and MTU negotiation off (it
 * would read the port).
 */
#include <stdlib.h>
#include <string.h>

#include "codec/descfast.h"
#include "qphs/body.h"
#include "qphs/config.h"
#include "qphs/error.h"
#include "setup/handshake.h"
#include "setup/setup_int.h"
#include "unit.h"

struct fake {
	struct qphs_config cfg;
	struct qphs_context ctx;
	struct qphs_endpoint ep;
	struct ibv_qp qp[2];
	struct qphs__qp slot[2];
};

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	ck_assert_ptr_nonnull(f);
	qphs_config_init(&f->cfg);
	f->cfg.mtu_negotiation = false;
	f->ctx.cfg = &f->cfg;
	strcpy(f->ctx.device, "rxe0");
	strcpy(f->ctx.nic_path, "10.0.0.1:12001@rxe0");
	strcpy(f->ctx.gid_str, "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01");
	f->ctx.lid = 7;
	pthread_mutex_init(&f->ctx.hook_lock, NULL);
	f->ep.ctx = &f->ctx;
	strcpy(f->ep.peer_path, "10.0.0.2:12001@rxe1");
	f->ep.nqp = 2;
	f->qp[0].qp_num = 17;
	f->qp[1].qp_num = 18;
	f->slot[0].qp = &f->qp[0];
	f->slot[1].qp = &f->qp[1];
	f->ep.qp = f->slot;
	return f;
}

static void fake_free(struct fake *f)
{
	pthread_mutex_destroy(&f->ctx.hook_lock);
	free(f);
}

/* Both builders' bodies, encoded: equal, and the block's fields as set. */
static void assert_same_bytes(struct fake *f)
{
	struct qphs_hs_desc a, b;
	void *block = NULL;
	char *ja = NULL, *jb = NULL;
	size_t la = 0, lb = 0;

	ck_assert_int_eq(qphs__hs_local_block(&f->ep, &a, &block), 0);
	ck_assert_ptr_nonnull(block);
	ck_assert_int_eq(qphs_hs_desc_init(&b), 0);
	ck_assert_int_eq(qphs__hs_local_desc(&f->ep, &b), 0);
	ck_assert_int_eq(qphs_hs_desc_encode(&a, &ja, &la), 0);
	ck_assert_int_eq(qphs_hs_desc_encode(&b, &jb, &lb), 0);
	ck_assert_str_eq(ja, jb);
	ck_assert_uint_eq(la, lb);
	ck_assert_str_eq(a.reply_msg, "");
	ck_assert_str_eq(a.payload, "");
	ck_assert(!a.has_ready_ack);
	free(ja);
	free(jb);
	qphs__hs_desc_release(&a, block);
	ck_assert_ptr_null(a.local_nic_path);
	qphs_hs_desc_clear(&b);
}

START_TEST(localdesc_block_writes_what_the_descriptor_does)
{
	struct fake *f = fake_new();
	struct qphs_hs_desc a;
	void *block;

	assert_same_bytes(f);
	/* And what it holds, written out here. */
	ck_assert_int_eq(qphs__hs_local_block(&f->ep, &a, &block), 0);
	ck_assert_str_eq(a.local_nic_path, "10.0.0.1:12001@rxe0");
	ck_assert_str_eq(a.peer_nic_path, "10.0.0.2:12001@rxe1");
	ck_assert_str_eq(a.local_gid, "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01");
	ck_assert_uint_eq(a.local_lid, 7);
	ck_assert_uint_eq(a.qp_count, 2);
	ck_assert_uint_eq(a.qp_num[0], 17);
	ck_assert_uint_eq(a.qp_num[1], 18);
	ck_assert_int_eq(a.path_mtu, 0);
	qphs__hs_desc_release(&a, block);
	fake_free(f);
}
END_TEST

/* The lab's hooks: another server in the nic path, another GID, more QP
 * numbers than QPs, one number for all. */
START_TEST(localdesc_block_follows_the_hooks)
{
	struct fake *f = fake_new();
	struct qphs_hs_desc a;
	void *block;

	f->ctx.hooks.advertise_server = "elsewhere:1";
	strcpy(f->ctx.hook_server, "elsewhere:1");
	f->ctx.hooks.advertise_gid = "fe80::9";
	strcpy(f->ctx.hook_gid, "fe80::9");
	f->ctx.hooks.advertise_qp_count = 3;
	assert_same_bytes(f);
	ck_assert_int_eq(qphs__hs_local_block(&f->ep, &a, &block), 0);
	ck_assert_str_eq(a.local_nic_path, "elsewhere:1@rxe0");
	ck_assert_str_eq(a.local_gid, "fe80::9");
	ck_assert_uint_eq(a.qp_count, 3);
	ck_assert_uint_eq(a.qp_num[2], 17); /* the QPs again, in turn */
	qphs__hs_desc_release(&a, block);

	f->ctx.hooks.advertise_qpn_set = true;
	f->ctx.hooks.advertise_qpn = 0;
	assert_same_bytes(f);
	ck_assert_int_eq(qphs__hs_local_block(&f->ep, &a, &block), 0);
	ck_assert_uint_eq(a.qp_num[0], 0);
	ck_assert_uint_eq(a.qp_num[1], 0);
	qphs__hs_desc_release(&a, block);
	fake_free(f);
}
END_TEST

Suite *suite_localdesc(void)
{
	Suite *s = suite_create("localdesc");
	TCase *tc = unit_tcase(s, "localdesc", 10);

	tcase_add_test(tc, localdesc_block_writes_what_the_descriptor_does);
	tcase_add_test(tc, localdesc_block_follows_the_hooks);
	return s;
}
