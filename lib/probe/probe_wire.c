/*
 * The probes that connect a QP: to a QPN nobody has (what the requester
 * hears), to a real QP on the peer side (reuse after RESET), and the
 * rd_atomic and ERR -> RESET probes, which need a QP past INIT.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "probe_int.h"

/* rxe posts an error completion first and moves the QP to ERR just after
 * (rxe_comp.c, rxe_completer, COMPST_ERROR: do_complete, then
 * rxe_qp_error), so a state read at once can still say RTS.  The row
 * records the state the completion leaves: read once the QP has left RTS,
 * or after 200 ms if it never does. */
static void settle(struct qphs__side *s, struct qphs__qp *qp)
{
	const struct timespec ms = {0, 1000000};

	for (int i = 0; i < 200 && qphs__pqp_state(s, qp) == IBV_QPS_RTS; i++)
		nanosleep(&ms, NULL);
}

/* Connect to QPHS_PROBE_UNKNOWN_QPN, post a WRITE, wait for its completion.
 * RTR is local, so it succeeds; what the requester then sees is the
 * driver's retry rule for an unanswered packet. */
static size_t unknown_qpn(struct qphs__probe_env *e, struct qphs_probe_row *r, const char *name,
			  int retry_cnt)
{
	struct qphs__qp qp;
	const char *step = "";
	int rc;

	qphs__prow_begin(r, name);
	if (!qphs__prow_fresh_qp(e, &qp, r))
		return 1;
	rc = qphs__pqp_connect(&e->loc, &qp, &e->peer, QPHS_PROBE_UNKNOWN_QPN, e->o->qp_timeout,
			       retry_cnt, &step);
	qphs__prow_result(&e->loc, &qp, r, rc);
	if (rc) {
		snprintf(r->note, sizeof(r->note), "setup step %s failed", step);
	} else {
		rc = qphs__pqp_write_wait(e, &e->loc, &qp, &e->peer, r->completion,
					  sizeof(r->completion), &r->ms);
		snprintf(r->note, sizeof(r->note),
			 "dest_qp_num 0x%x, timeout %d (%.1f ms), retry_cnt %d; WRITE 64 B%s",
			 QPHS_PROBE_UNKNOWN_QPN, e->o->qp_timeout,
			 4.096e-3 * (double)(1u << (e->o->qp_timeout & 31)), retry_cnt,
			 rc ? " (post failed)" : "");
		if (!rc && strcmp(r->completion, "IBV_WC_SUCCESS") && strncmp(r->completion, "none", 4))
			settle(&e->loc, &qp);
		qphs__prow_result(&e->loc, &qp, r, rc);
	}
	qphs__pqp_destroy(&e->loc, &qp);
	return 1;
}

size_t qphs__probe_unknown_qpn7(struct qphs__probe_env *e, struct qphs_probe_row *r)
{
	return unknown_qpn(e, r, "unknown-qpn-retry7", 7);
}

size_t qphs__probe_unknown_qpn6(struct qphs__probe_env *e, struct qphs_probe_row *r)
{
	return unknown_qpn(e, r, "unknown-qpn-retry6", 6);
}

/* Connects l (probed side) and p (peer side) to each other. */
static int pair(struct qphs__probe_env *e, struct qphs__qp *l, struct qphs__qp *p,
		const char **step)
{
	int rc = qphs__pqp_connect(&e->loc, l, &e->peer, p->qp->qp_num, e->o->qp_timeout, 7, step);

	if (!rc && (rc = qphs__pqp_connect(&e->peer, p, &e->loc, l->qp->qp_num, e->o->qp_timeout, 7,
					   NULL)))
		*step = "peer setup";
	return rc;
}

/* RTS -> RESET -> INIT -> RTR -> RTS on the same two QPs (the `reuse` reset
 * policy); a WRITE after the reconnect proves the QPs work again. */
size_t qphs__probe_reuse(struct qphs__probe_env *e, struct qphs_probe_row *r)
{
	struct qphs__qp l, p;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
	const char *step = "";
	char st[QPHS_PROBE_COMPLETION_LEN] = "";
	double ms;
	int rc;

	qphs__prow_begin(&r[0], "reuse-rts-reset");
	qphs__prow_begin(&r[1], "reuse-reconnect");
	if (!qphs__prow_fresh_qp(e, &l, &r[0]) || qphs__pqp_create(&e->peer, &p)) {
		qphs__prow_skip(&r[1], "no QPs");
		qphs__pqp_destroy(&e->loc, &l);
		return 2;
	}
	if ((rc = pair(e, &l, &p, &step)) ||
	    (rc = qphs__pqp_write_wait(e, &e->loc, &l, &e->peer, st, sizeof(st), &ms)) ||
	    strcmp(st, "IBV_WC_SUCCESS")) {
		qphs__prow_result(&e->loc, &l, &r[0], rc);
		snprintf(r[0].note, sizeof(r[0].note), "first connect: %s %s", rc ? step : "WRITE",
			 rc ? "failed" : st);
		qphs__prow_skip(&r[1], "the first connect failed");
		goto out;
	}
	snprintf(r[0].note, sizeof(r[0].note), "connected pair, WRITE ok; RTS -> RESET");
	qphs__prow_modify(&e->loc, &l, &a, IBV_QP_STATE, &r[0]);
	qphs__pqp_modify(&e->peer, &p, &a, IBV_QP_STATE);
	rc = pair(e, &l, &p, &step);
	qphs__prow_result(&e->loc, &l, &r[1], rc);
	if (rc) {
		snprintf(r[1].note, sizeof(r[1].note), "RESET -> INIT -> RTR -> RTS: %s failed", step);
		goto out;
	}
	rc = qphs__pqp_write_wait(e, &e->loc, &l, &e->peer, r[1].completion,
				  sizeof(r[1].completion), &r[1].ms);
	qphs__prow_result(&e->loc, &l, &r[1], rc);
	snprintf(r[1].note, sizeof(r[1].note), "RESET -> INIT -> RTR -> RTS, same QPNs; WRITE 64 B");
out:
	qphs__pqp_destroy(&e->peer, &p);
	qphs__pqp_destroy(&e->loc, &l);
	return 2;
}

/* INIT -> RTR with max_dest_rd_atomic `dest`, then RTS with max_rd_atomic
 * `init`; the row holds the first refusal or the RTS result. */
static void rd_atomic(struct qphs__probe_env *e, struct qphs_probe_row *r, int dest, int init)
{
	struct qphs__qp qp;
	struct ibv_qp_attr a;
	int mask;

	if (!qphs__prow_fresh_qp(e, &qp, r))
		return;
	if (qphs__prow_setup_init(e, &qp, r)) {
		qphs__pqp_rtr_attr(&e->loc, &e->peer, QPHS_PROBE_UNKNOWN_QPN, &a, &mask);
		a.max_dest_rd_atomic = (uint8_t)dest;
		qphs__prow_modify(&e->loc, &qp, &a, mask, r);
		snprintf(r->note, sizeof(r->note), "RTR max_dest_rd_atomic %d: %s", dest,
			 r->ret ? r->err : "ok");
		if (!r->ret) {
			qphs__pqp_rts_attr(&e->loc, &a, &mask, e->o->qp_timeout, 7);
			a.max_rd_atomic = (uint8_t)init;
			qphs__prow_modify(&e->loc, &qp, &a, mask, r);
			snprintf(r->note + strlen(r->note), sizeof(r->note) - strlen(r->note),
				 "; RTS max_rd_atomic %d (device max_qp_init_rd_atom %d)", init,
				 e->loc.da.max_qp_init_rd_atom);
		}
	}
	qphs__pqp_destroy(&e->loc, &qp);
}

size_t qphs__probe_rd_atomic_16(struct qphs__probe_env *e, struct qphs_probe_row *r)
{
	qphs__prow_begin(r, "rd-atomic-16");
	rd_atomic(e, r, 16, 16);
	return 1;
}

size_t qphs__probe_rts_rd_over(struct qphs__probe_env *e, struct qphs_probe_row *r)
{
	qphs__prow_begin(r, "rts-rd-atomic-over-limit");
	if (e->loc.da.max_qp_init_rd_atom >= 255)
		qphs__prow_skip(r, "max_qp_init_rd_atom leaves no uint8 above it");
	else
		rd_atomic(e, r, 1, e->loc.da.max_qp_init_rd_atom + 1);
	return 1;
}

/* A connected QP moved to ERR (Mooncake's retire), then ERR -> RESET. */
size_t qphs__probe_err_reset(struct qphs__probe_env *e, struct qphs_probe_row *r)
{
	struct qphs__qp qp;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	const char *step = "";
	int rc;

	qphs__prow_begin(r, "err-reset");
	if (!qphs__prow_fresh_qp(e, &qp, r))
		return 1;
	rc = qphs__pqp_connect(&e->loc, &qp, &e->peer, QPHS_PROBE_UNKNOWN_QPN, e->o->qp_timeout, 7,
			       &step);
	if (!rc)
		step = "RTS -> ERR";
	if (rc || (rc = qphs__pqp_modify(&e->loc, &qp, &a, IBV_QP_STATE))) {
		qphs__prow_result(&e->loc, &qp, r, rc);
		snprintf(r->note, sizeof(r->note), "setup step %s failed", step);
	} else {
		a.qp_state = IBV_QPS_RESET;
		snprintf(r->note, sizeof(r->note), "RTS -> ERR, then ERR -> RESET");
		qphs__prow_modify(&e->loc, &qp, &a, IBV_QP_STATE, r);
	}
	qphs__pqp_destroy(&e->loc, &qp);
	return 1;
}
