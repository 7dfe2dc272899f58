/* qphs_probe_run on real rxe (the probes of `qplab quirks`).  Every probe
 * must run and produce its row; the rows asserted here are the ones a rule
 * outside rxe fixes on every kernel (the core's ib_modify_qp_is_ok table,
 * the IBTA retry rule), each with its reason.  Rows whose answer is rxe's
 * own choice and may change between kernels are docs/quirks.md's matrix,
 * not assertions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/probe.h"
#include "rdmatest.h"

static char devs[2][64];

static void lab_devices(void)
{
	const char *d = getenv("QPLAB_RDMA_DEVS");

	ck_assert_msg(d && sscanf(d, "%63[^,],%63s", devs[0], devs[1]) == 2,
		      "QPLAB_RDMA_DEVS not set");
}

static const struct qphs_probe_row *find(const struct qphs_probe_row *rows, size_t n,
					 const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	ck_abort_msg("no row %s", name);
	return NULL;
}

static size_t run(const char *quirk, struct qphs_probe_row *rows)
{
	struct qphs_probe_opts o;
	struct qphs_probe_info info;
	size_t n = 0;
	char err[256] = "";
	int rc;

	lab_devices();
	qphs_probe_opts_init(&o);
	o.device = devs[0];
	o.peer_device = devs[1];
	o.quirk = quirk;
	o.deadline_ms = rdma_ms(1500);
	rc = qphs_probe_run(&o, &info, rows, QPHS_PROBE_MAX_ROWS, &n, err, sizeof(err));
	ck_assert_msg(rc == 0, "qphs_probe_run: %s", err);
	for (size_t i = 0; i < n; i++)
		printf("# %-26s ret %-3d %-8s %-6s %s (%.1f ms)\n", rows[i].name, rows[i].ret,
		       rows[i].err, rows[i].state, rows[i].completion, rows[i].ms);
	return n;
}

static void assert_row(const struct qphs_probe_row *r, int ret, const char *state)
{
	ck_assert_msg(r->ran, "%s did not run: %s", r->name, r->note);
	ck_assert_msg(r->ret == ret && !strcmp(r->state, state), "%s: ret %d (%s) state %s, want %d %s",
		      r->name, r->ret, r->err, r->state, ret, state);
}

START_TEST(probe_rows_follow_the_transition_table)
{
	struct qphs_probe_row rows[QPHS_PROBE_MAX_ROWS];
	size_t n = run(NULL, rows);
	const char *const *names = qphs_probe_names();

	/* One row per probe, in the library's order. */
	for (size_t i = 0; names[i]; i++) {
		ck_assert_uint_gt(n, i);
		ck_assert_str_eq(rows[i].name, names[i]);
	}
	/* ib_modify_qp_is_ok: RESET -> RESET and ERR -> RESET are valid with
	 * no attributes; RESET -> RTR and INIT -> RTS are not transitions;
	 * INIT -> RTR of an RC QP requires IB_QP_AV.  A refused call leaves
	 * the state alone. */
	assert_row(find(rows, n, "reset-reset"), 0, "RESET");
	assert_row(find(rows, n, "skip-reset-rtr"), EINVAL, "RESET");
	assert_row(find(rows, n, "skip-init-rts"), EINVAL, "INIT");
	assert_row(find(rows, n, "rtr-no-av"), EINVAL, "INIT");
	assert_row(find(rows, n, "err-reset"), 0, "RESET");
	/* A counted retry_cnt runs out: seven transmissions nobody answers,
	 * then RETRY_EXC_ERR and the QP in ERR (IBTA: retry_cnt counts
	 * transport retries; only rnr_retry gives 7 the meaning "forever"). */
	assert_row(find(rows, n, "unknown-qpn-retry6"), 0, "ERR");
	ck_assert_str_eq(find(rows, n, "unknown-qpn-retry6")->completion, "IBV_WC_RETRY_EXC_ERR");
	/* A reconnected pair is a working pair: the peer is real. */
	ck_assert_str_eq(find(rows, n, "reuse-reconnect")->completion, "IBV_WC_SUCCESS");
}
END_TEST

/* The e810 profile fakes one rule (lib/rdma/verbs.c): after RESET -> RESET the
 * next INIT fails with EINVAL.  Probed, it must show exactly that. */
START_TEST(probe_shows_what_the_e810_profile_fakes)
{
	struct qphs_probe_row rows[QPHS_PROBE_MAX_ROWS];
	size_t n = run("e810", rows);

	assert_row(find(rows, n, "reset-reset"), 0, "RESET");
	assert_row(find(rows, n, "reset-reset-init"), EINVAL, "RESET");
	assert_row(find(rows, n, "reuse-reconnect"), 0, "RTS");
}
END_TEST

Suite *suite_probe(void)
{
	Suite *s = suite_create("probe");

	tcase_add_test(rdma_smoke_tcase(s, "probe_real", 60), probe_rows_follow_the_transition_table);
	tcase_add_test(rdma_smoke_tcase(s, "probe_e810", 60), probe_shows_what_the_e810_profile_fakes);
	return s;
}
