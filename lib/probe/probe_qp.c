/*
 * The QP steps of the probes: the setup's attributes from the builders a real
 * setup uses (qpattr.c), built into a caller's attr and mask so a probe can
 * change exactly one thing before the call, and on a probe side instead of
 * a context.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "probe_int.h"
#include "rdma/qpattr.h"

int qphs__pqp_create(struct qphs__side *s, struct qphs__qp *qp)
{
	struct ibv_qp_init_attr init = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
	};

	memset(qp, 0, sizeof(*qp));
	return s->v.ops->create_qp(&s->v, s->pd, &init, qp);
}

void qphs__pqp_destroy(struct qphs__side *s, struct qphs__qp *qp)
{
	if (qp->qp && !s->v.ops->destroy_qp(&s->v, qp))
		qp->qp = NULL;
}

int qphs__pqp_modify(struct qphs__side *s, struct qphs__qp *qp, struct ibv_qp_attr *a, int mask)
{
	return s->v.ops->modify_qp(&s->v, qp, a, mask);
}

int qphs__pqp_state(struct qphs__side *s, struct qphs__qp *qp)
{
	return qphs__verbs_qp_state(&s->v, qp);
}

/* What a real setup from s towards qpn on `to` would use with the default
 * configuration: the library's own mapping (qpattr.c), the probe's ACK
 * timeout and retry count, and path_mtu = min(active, MC_MTU) as Mooncake
 * computes it. */
static void params(const struct qphs__side *s, const struct qphs__side *to, uint32_t qpn,
		   int timeout, int retry_cnt, struct qphs__qp_params *q)
{
	struct qphs_config c;
	enum ibv_mtu cap;

	qphs_config_init(&c);
	c.qp_timeout = timeout;
	c.qp_retry_cnt = retry_cnt;
	qphs__qp_params_config(q, &c, s->port);
	cap = qphs__verbs_mtu_enum(c.mtu);
	q->path_mtu = s->pa.active_mtu < cap ? s->pa.active_mtu : cap;
	q->sgid_index = s->gid_index;
	if (to) {
		q->dgid = to->gid;
		q->dlid = to->pa.lid;
	}
	q->dest_qpn = qpn;
}

void qphs__pqp_init_attr(const struct qphs__side *s, struct ibv_qp_attr *a, int *mask)
{
	struct qphs__qp_params q;

	params(s, NULL, 0, 0, 0, &q);
	qphs__qpattr_init(&q, a, mask);
}

void qphs__pqp_rtr_attr(const struct qphs__side *s, const struct qphs__side *to, uint32_t qpn,
			struct ibv_qp_attr *a, int *mask)
{
	struct qphs__qp_params q;

	params(s, to, qpn, 0, 0, &q);
	qphs__qpattr_rtr(&q, a, mask);
}

void qphs__pqp_rts_attr(const struct qphs__side *s, struct ibv_qp_attr *a, int *mask,
			int timeout, int retry_cnt)
{
	struct qphs__qp_params q;

	params(s, NULL, 0, timeout, retry_cnt, &q);
	qphs__qpattr_rts(&q, a, mask);
}

int qphs__pqp_connect(struct qphs__side *s, struct qphs__qp *qp, const struct qphs__side *to,
		      uint32_t qpn, int timeout, int retry_cnt, const char **step)
{
	struct ibv_qp_attr a;
	int mask, rc;
	const char *dummy;

	step = step ? step : &dummy;
	*step = "INIT";
	qphs__pqp_init_attr(s, &a, &mask);
	if ((rc = qphs__pqp_modify(s, qp, &a, mask)))
		return rc;
	*step = "RTR";
	qphs__pqp_rtr_attr(s, to, qpn, &a, &mask);
	if ((rc = qphs__pqp_modify(s, qp, &a, mask)))
		return rc;
	*step = "RTS";
	qphs__pqp_rts_attr(s, &a, &mask, timeout, retry_cnt);
	if ((rc = qphs__pqp_modify(s, qp, &a, mask)))
		return rc;
	*step = "";
	return 0;
}

static void nap_ms(int ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Completions of other work requests (flushes of earlier probes) are
 * dropped: only ours counts. */
static int wait_wc(struct qphs__side *s, uint64_t id, double end, struct ibv_wc *out)
{
	struct ibv_wc wc[8];

	for (;;) {
		int n = qphs__verbs_poll_cq(s->cq, 8, wc);

		for (int i = 0; i < n; i++)
			if (wc[i].wr_id == id) {
				*out = wc[i];
				return 1;
			}
		if (n < 0 || qphs__mono_ms() > end)
			return 0;
		if (n == 0)
			nap_ms(1);
	}
}

int qphs__pqp_write_wait(struct qphs__probe_env *e, struct qphs__side *s, struct qphs__qp *qp,
			 const struct qphs__side *to, char *status, size_t len, double *ms)
{
	struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = 64, .lkey = s->mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = e->next_wr_id++,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {.remote_addr = (uintptr_t)to->buf, .rkey = to->mr->rkey},
	};
	struct ibv_wc wc;
	double t0 = qphs__mono_ms();
	int rc = qphs__verbs_post_send(qp->qp, &wr);

	*ms = 0;
	if (rc) {
		snprintf(status, len, "post failed");
		return rc;
	}
	if (wait_wc(s, wr.wr_id, t0 + e->o->deadline_ms, &wc))
		snprintf(status, len, "%s", qphs__verbs_wc_status_name(wc.status));
	else
		snprintf(status, len, "none within %d ms", e->o->deadline_ms);
	*ms = qphs__mono_ms() - t0;
	return 0;
}

/* ---- rows --------------------------------------------------------------- */

struct qphs_probe_row *qphs__prow_begin(struct qphs_probe_row *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->state, sizeof(r->state), "?");
	r->ran = 1;
	return r;
}

/* Records rc, its name and the QP's state as the driver reports it now. */
void qphs__prow_result(struct qphs__side *s, struct qphs__qp *qp, struct qphs_probe_row *r, int rc)
{
	char buf[16];

	r->ret = rc;
	snprintf(r->err, sizeof(r->err), "%s", qphs_probe_errno_name(rc, buf, sizeof(buf)));
	snprintf(r->state, sizeof(r->state), "%s",
		 qp->qp ? qphs__verbs_qp_state_name(qphs__pqp_state(s, qp)) : "?");
}

void qphs__prow_modify(struct qphs__side *s, struct qphs__qp *qp, struct ibv_qp_attr *a,
			 int mask, struct qphs_probe_row *r)
{
	double t0 = qphs__mono_ms();
	int rc = qphs__pqp_modify(s, qp, a, mask);

	r->ms = qphs__mono_ms() - t0;
	qphs__prow_result(s, qp, r, rc);
}

/* Creates qp on the probed side; on failure the row says so and 0 is
 * returned (the probe has nothing else to do). */
int qphs__prow_fresh_qp(struct qphs__probe_env *e, struct qphs__qp *qp, struct qphs_probe_row *r)
{
	int rc = qphs__pqp_create(&e->loc, qp);

	if (rc) {
		qphs__prow_result(&e->loc, qp, r, rc);
		snprintf(r->note, sizeof(r->note), "create_qp failed");
	}
	return !rc;
}

/* Moves a fresh QP to INIT as setup step; a failure is the row's result. */
int qphs__prow_setup_init(struct qphs__probe_env *e, struct qphs__qp *qp, struct qphs_probe_row *r)
{
	struct ibv_qp_attr a;
	int mask, rc;

	qphs__pqp_init_attr(&e->loc, &a, &mask);
	if (!(rc = qphs__pqp_modify(&e->loc, qp, &a, mask)))
		return 1;
	qphs__prow_result(&e->loc, qp, r, rc);
	snprintf(r->note, sizeof(r->note), "setup step RESET -> INIT failed");
	return 0;
}

void qphs__prow_skip(struct qphs_probe_row *r, const char *why)
{
	r->ran = 0;
	snprintf(r->state, sizeof(r->state), "-");
	snprintf(r->note, sizeof(r->note), "skipped: %s", why);
}
