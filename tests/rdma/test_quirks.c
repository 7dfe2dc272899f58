/* Quirk profiles (lib/rdma/verbs.c): each reproduces its driver's failure on
 * rxe, and the countermeasure makes the same setup succeed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdmatest.h"

static void hosts(struct lab_host *a, struct lab_host *b, const struct qphs_config *cfg)
{
	lab_up(a, 0, cfg);
	lab_up(b, 1, cfg);
}

static void down(struct lab_host *a, struct lab_host *b)
{
	lab_down(a);
	lab_down(b);
}

/* The passive side runs RTR first, so b's failure reaches a as a rejection. */
static void expect_reject(struct lab_host *a, struct lab_host *b, const char *prefix,
			  const char *detail)
{
	struct qphs_endpoint *ea = NULL;
	int rc = qphs_connect(a->ctx, b->path, &ea);

	ck_assert_msg(rc == QPHS_ERR_REJECT_HANDSHAKE, "got %s", qphs_errname(rc));
	unit_hit(rc);
	printf("# %s\n", qphs_endpoint_errstr(ea));
	lab_assert_mooncake(qphs_endpoint_errstr(ea), prefix);
	if (detail)
		ck_assert_msg(strstr(qphs_endpoint_errstr(ea), detail), "no '%s' in '%s'", detail,
			      qphs_endpoint_errstr(ea));
	lab_assert_reset(ea);
	qphs_endpoint_put(ea);
}

static void expect_works(struct lab_host *a, struct lab_host *b, int nqp)
{
	struct qphs_endpoint *ea, *eb;
	struct qphs_data_result res;

	lab_connect_ok(a, b, nqp, &ea, &eb);
	ck_assert_msg(qphs_endpoint_check_data(ea, 4096, rdma_ms(3000), &res) == 0, "%s", res.text);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
}

START_TEST(quirk_e810_reset_reset_then_init_fails)
{
	struct lab_host a, b;
	struct qphs_config cfg;

	lab_config(&cfg);
	snprintf(cfg.quirk_profile, sizeof(cfg.quirk_profile), "e810");
	cfg.strict_reset = true; /* the default, as Mooncake: RESET always sent */
	hosts(&a, &b, &cfg);
	expect_reject(&a, &b, "Failed to modify QP to INIT, check local context port num: "
		      "Invalid argument", "strict reset sent RESET to a QP already in RESET");
	down(&a, &b);
	cfg.strict_reset = false; /* countermeasure: skip RESET when in RESET */
	hosts(&a, &b, &cfg);
	expect_works(&a, &b, 2);
	down(&a, &b);
}
END_TEST

static void connect_disconnect(struct lab_host *a, struct lab_host *b)
{
	struct qphs_endpoint *ea, *eb;

	lab_connect_ok(a, b, 2, &ea, &eb);
	ck_assert_int_eq(qphs_endpoint_disconnect(ea), 0);
	ck_assert_int_eq(qphs_endpoint_disconnect(eb), 0);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
}

START_TEST(quirk_erdma_reuse_fails_reconstruct_works)
{
	struct lab_host a, b;
	struct qphs_config cfg;

	lab_config(&cfg);
	snprintf(cfg.quirk_profile, sizeof(cfg.quirk_profile), "erdma");
	cfg.reset_policy = QPHS_RESET_REUSE;
	hosts(&a, &b, &cfg);
	connect_disconnect(&a, &b);
	expect_reject(&a, &b, "Failed to modify QP to INIT, check local context port num: "
		      "Invalid argument", "reached RTS before and was reset for reuse");
	down(&a, &b);
	cfg.reset_policy = QPHS_RESET_RECONSTRUCT;
	hosts(&a, &b, &cfg);
	connect_disconnect(&a, &b);
	expect_works(&a, &b, 2);
	down(&a, &b);
}
END_TEST

/* The MTU drops after the contexts were opened. */
START_TEST(quirk_strict_path_mtu_needs_reread)
{
	const char *nd = getenv("QPLAB_RDMA_NETDEVS");
	char na[32], nb[32];
	struct lab_host a, b;
	struct qphs_config cfg;

	ck_assert_ptr_nonnull(nd);
	sscanf(nd, "%31[^,],%31s", na, nb);
	lab_config(&cfg);
	snprintf(cfg.quirk_profile, sizeof(cfg.quirk_profile), "strict-path-mtu");
	cfg.mtu_reread = false; /* Mooncake: active_mtu read once, at open */
	lab_set_mtu(na, 9000);
	lab_set_mtu(nb, 9000);
	hosts(&a, &b, &cfg);
	lab_set_mtu(nb, 1500);
	expect_reject(&a, &b, "Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: "
		      "Invalid argument", "path_mtu 4096 exceeds active_mtu 1024 on ");
	down(&a, &b);
	cfg.mtu_reread = true; /* countermeasure: re-read at every connect */
	lab_set_mtu(nb, 9000);
	hosts(&a, &b, &cfg);
	lab_set_mtu(nb, 1500);
	expect_works(&a, &b, 2);
	down(&a, &b);
	lab_set_mtu(na, 1500);
}
END_TEST

START_TEST(quirk_ionic_atomic_needs_clamp)
{
	struct lab_host a, b;
	struct qphs_config cfg;
	struct qphs_context_info ci;

	lab_config(&cfg);
	snprintf(cfg.quirk_profile, sizeof(cfg.quirk_profile), "ionic-atomic");
	cfg.rd_atomic_clamp = false; /* Mooncake before PR 3977: always 16 */
	hosts(&a, &b, &cfg);
	ck_assert_int_eq(qphs_context_info(b.ctx, &ci), 0);
	ck_assert_int_eq(ci.max_qp_rd_atom, 8);
	ck_assert_int_eq(ci.max_res_rd_atom, 16);
	expect_reject(&a, &b, "Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: "
		      "Invalid argument", "max_dest_rd_atomic 16 exceeds the device's max_qp_rd_atom 8");
	down(&a, &b);
	cfg.rd_atomic_clamp = true;
	hosts(&a, &b, &cfg);
	expect_works(&a, &b, 2);
	down(&a, &b);
}
END_TEST

/* Two endpoints on one ionic-like context.  Mooncake PR 3977 sizes each QP
 * from the device caps alone: the responder budget max_res_rd_atom (16) is
 * shared across a nominal 16 QPs, so 1 per QP, capped at max_qp_rd_atom
 * (8) — the same for every endpoint.  Dividing what was left by the
 * endpoint's QP count gave the first endpoint all of it and the second 0.
 * With 8 QPs per endpoint two endpoints fill the budget exactly; a third
 * asks 1 per QP with nothing left and fails RTR with EINVAL, and diag says
 * why. */
START_TEST(quirk_ionic_second_endpoint_gets_the_same_depth)
{
	struct lab_host a, b, c, d;
	struct qphs_config cfg;
	struct qphs_endpoint *ea[2], *ep[2], *ed = NULL;
	struct lab_host *peer[2] = {&b, &c};
	struct qphs_endpoint_info info;
	struct qphs_data_result res;
	int rc;

	lab_config(&cfg);
	snprintf(cfg.quirk_profile, sizeof(cfg.quirk_profile), "ionic-atomic");
	cfg.num_qp_per_ep = 8;
	lab_up(&a, 0, &cfg);
	lab_up(&b, 1, &cfg);
	lab_up(&c, 1, &cfg); /* a second server on b's device: another nic path */
	lab_up(&d, 1, &cfg);
	for (int i = 0; i < 2; i++) {
		lab_connect_ok(&a, peer[i], 8, &ea[i], &ep[i]);
		ck_assert_int_eq(qphs_endpoint_info(ea[i], &info), 0);
		printf("# ionic: endpoint %d of a: max_dest_rd_atomic %d per QP\n", i + 1,
		       info.rd_atomic);
		ck_assert_int_eq(info.rd_atomic, 1);
		rc = qphs_endpoint_check_data(ea[i], 4096, rdma_ms(3000), &res);
		ck_assert_msg(rc == 0, "a -> peer %d: %s", i + 1, res.text);
		rc = qphs_endpoint_check_data(ep[i], 4096, rdma_ms(3000), &res);
		ck_assert_msg(rc == 0, "peer %d -> a (READ served by a): %s", i + 1, res.text);
	}
	rc = qphs_connect(a.ctx, d.path, &ed);
	ck_assert_msg(rc == QPHS_ERR_MODIFY_QP, "third endpoint: %s", qphs_errname(rc));
	unit_hit(rc);
	printf("# %s\n", qphs_endpoint_errstr(ed));
	lab_assert_mooncake(qphs_endpoint_errstr(ed), "Failed to modify QP to RTR, check mtu, gid, "
			    "peer lid, peer qp num: Invalid argument");
	ck_assert_ptr_nonnull(strstr(qphs_endpoint_errstr(ed), "max_res_rd_atom is 16"));
	qphs_endpoint_put(ed);
	for (int i = 0; i < 2; i++) {
		qphs_endpoint_put(ea[i]);
		qphs_endpoint_put(ep[i]);
	}
	lab_down(&a);
	lab_down(&b);
	lab_down(&c);
	lab_down(&d);
}
END_TEST

START_TEST(unknown_quirk_profile_rejected)
{
	struct qphs_config cfg;
	struct qphs_rdma *r = NULL;
	char err[256];

	lab_config(&cfg);
	snprintf(cfg.quirk_profile, sizeof(cfg.quirk_profile), "mlx9");
	ck_assert_int_eq(qphs_rdma_new(&cfg, "x:1", &r, err, sizeof(err)), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(err, "mlx9"));
	ck_assert_ptr_null(r);
}
END_TEST

Suite *suite_quirks(void)
{
	Suite *s = suite_create("quirks");

	tcase_add_test(rdma_smoke_tcase(s, "e810", 30), quirk_e810_reset_reset_then_init_fails);
	tcase_add_test(unit_tcase(s, "erdma", 30), quirk_erdma_reuse_fails_reconstruct_works);
	tcase_add_test(unit_tcase(s, "strict_mtu", 30), quirk_strict_path_mtu_needs_reread);
	tcase_add_test(unit_tcase(s, "ionic", 30), quirk_ionic_atomic_needs_clamp);
	tcase_add_test(unit_tcase(s, "ionic_two_eps", 60),
		       quirk_ionic_second_endpoint_gets_the_same_depth);
	tcase_add_test(unit_tcase(s, "unknown", 10), unknown_quirk_profile_rejected);
	return s;
}
