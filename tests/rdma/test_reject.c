/* Rejections: the passive side refuses before touching a QP,
 * the active side gets ERR_REJECT_HANDSHAKE with the peer's reply_msg —
 * Mooncake's text as an exact prefix, our detail in brackets — and no QP is
 * left half way on either side. */
#include <stdio.h>
#include <string.h>

#include "lab_conf.h" /* the lab's addresses (netns/lab.conf) */
#include "rdmatest.h"

/* a connects to path; expects code and the Mooncake prefix. */
static struct qphs_endpoint *expect_fail(struct lab_host *a, const char *path, int code,
					 const char *prefix)
{
	struct qphs_endpoint *ep = NULL;
	int rc = qphs_connect(a->ctx, path, &ep);

	ck_assert_msg(rc == code, "connect %s: got %s, want %s (%s)", path, qphs_errname(rc),
		      qphs_errname(code), ep ? qphs_endpoint_errstr(ep) : "");
	unit_hit(rc);
	ck_assert_ptr_nonnull(ep);
	printf("# %s: %s\n", qphs_errname(rc), qphs_endpoint_errstr(ep));
	lab_assert_mooncake(qphs_endpoint_errstr(ep), prefix);
	lab_assert_reset(ep);
	return ep;
}

START_TEST(reject_qp_count_mismatch)
{
	struct lab_host a, b;
	struct qphs_config ca, cb;
	struct qphs_endpoint *ea, *eb;
	struct qphs_endpoint_info info;

	lab_config(&ca);
	lab_config(&cb);
	cb.num_qp_per_ep = 3;
	lab_up(&a, 0, &ca);
	lab_up(&b, 1, &cb);
	ea = expect_fail(&a, b.path, QPHS_ERR_REJECT_HANDSHAKE,
			 "QP count mismatch in peer and local endpoints, check MC_MAX_EP_PER_CTX");
	ck_assert_ptr_nonnull(strstr(qphs_endpoint_errstr(ea), "MC_NUM_QP_PER_EP"));
	ck_assert_int_eq(qphs_endpoint_info(ea, &info), 0);
	ck_assert_str_eq(info.reply_msg_received, qphs_endpoint_errstr(ea));
	/* Checked before any endpoint or QP was touched on b. */
	eb = qphs_context_endpoint(b.ctx, a.path);
	ck_assert_ptr_null(eb);
	ck_assert_int_eq(lab_count_qps(b.dev), 0);
	qphs_endpoint_put(ea);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

START_TEST(reject_bad_peer_gid)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea;
	struct qphs_rdma_hooks h = {.advertise_gid = "fe80::1"};

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	qphs_context_set_hooks(a.ctx, &h);
	ea = expect_fail(&a, b.path, QPHS_ERR_REJECT_HANDSHAKE, "Invalid peer GID: fe80::1");
	ck_assert_ptr_null(qphs_context_endpoint(b.ctx, a.path));
	qphs_endpoint_put(ea);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

/* b calls itself by another name than the one a dialled. */
START_TEST(reject_peer_nic_path_inconsistency_passive)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea;
	char path[400];

	lab_up(&a, 0, NULL);
	lab_up_named(&b, 1, NULL, "hostb.lab:12001");
	snprintf(path, sizeof(path), "%s@%s", qphs_daemon_address(b.d), b.dev);
	ea = expect_fail(&a, path, QPHS_ERR_REJECT_HANDSHAKE,
			 "Invalid argument: peer nic path inconsistency, expect hostb.lab:12001@");
	ck_assert_ptr_null(qphs_context_endpoint(b.ctx, a.path));
	qphs_endpoint_put(ea);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

/* b answers under another name: the active side's own check. */
START_TEST(active_detects_peer_nic_path_inconsistency)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea;
	struct qphs_rdma_hooks h = {.advertise_server = QPLAB_LAB_NET4 ".0.250:1"};

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	qphs_context_set_hooks(b.ctx, &h);
	/* Mooncake's active-side words (setupConnectionsByActive). */
	ea = expect_fail(&a, b.path, QPHS_ERR_NIC_PATH_MISMATCH,
			 "Invalid argument: received packet mismatch, local.local_nic_path: ");
	ck_assert_ptr_nonnull(strstr(qphs_endpoint_errstr(ea), "peer.local_nic_path: " QPLAB_LAB_NET4 ".0.250:1@"));
	qphs_endpoint_put(ea);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

START_TEST(reject_unknown_device)
{
	struct lab_host a, b;
	struct qphs_endpoint *ea;
	char path[400];

	lab_up(&a, 0, NULL);
	lab_up(&b, 1, NULL);
	snprintf(path, sizeof(path), "%s@nosuchdev", qphs_daemon_address(b.d));
	/* The device name only follows Mooncake's text (onSetupRdmaConnections). */
	ea = expect_fail(&a, path, QPHS_ERR_REJECT_HANDSHAKE,
			 "Local RDMA context not found for handshake NIC: nosuchdev");
	ck_assert_int_eq(lab_count_qps(b.dev), 0);
	qphs_endpoint_put(ea);
	lab_down(&a);
	lab_down(&b);
}
END_TEST

START_TEST(open_unknown_device_fails)
{
	struct qphs_config cfg;
	struct qphs_rdma *r;
	struct qphs_context *ctx;
	char err[256];
	int rc;

	lab_config(&cfg);
	ck_assert_int_eq(qphs_rdma_new(&cfg, QPLAB_LAB_NET4 ".0.201:1", &r, err, sizeof(err)), 0);
	rc = qphs_rdma_open_device(r, "nosuchdev", &ctx);
	unit_hit(rc);
	ck_assert_int_eq(rc, QPHS_ERR_DEVICE_NOT_FOUND);
	ck_assert_ptr_nonnull(strstr(qphs_rdma_errstr(r), "nosuchdev"));
	qphs_rdma_free(r);
}
END_TEST

START_TEST(connect_bad_nic_path_fails_locally)
{
	struct lab_host a;
	struct qphs_endpoint *ea = NULL;

	lab_up(&a, 0, NULL);
	ck_assert_int_eq(qphs_connect(a.ctx, "no-at-sign", &ea), QPHS_ERR_BAD_NIC_PATH);
	ck_assert_ptr_null(ea);
	unit_hit(QPHS_ERR_BAD_NIC_PATH);
	lab_down(&a);
}
END_TEST

Suite *suite_reject(void)
{
	Suite *s = suite_create("reject");

	tcase_add_test(rdma_smoke_tcase(s, "qp_count", 20), reject_qp_count_mismatch);
	tcase_add_test(unit_tcase(s, "gid", 20), reject_bad_peer_gid);
	tcase_add_test(unit_tcase(s, "path_passive", 20), reject_peer_nic_path_inconsistency_passive);
	tcase_add_test(unit_tcase(s, "path_active", 20), active_detects_peer_nic_path_inconsistency);
	tcase_add_test(unit_tcase(s, "device", 20), reject_unknown_device);
	tcase_add_test(unit_tcase(s, "open_device", 20), open_unknown_device_fails);
	tcase_add_test(unit_tcase(s, "bad_path", 20), connect_bad_nic_path_fails_locally);
	return s;
}
