/*
 * Two measurements of the driver under a library context, for make bench
 * (qphs/probe.h): how many QPs one process may create, and what each
 * modify_qp of a setup costs.  The QPs are the library's own (rdma/qp.c),
 * so the shape and any quirk profile are those of the context.
 */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "qphs/error.h"
#include "qphs/probe.h"
#include "rdma/rdma_int.h"

int qphs_probe_qp_capacity(struct qphs_context *ctx, int cap, struct qphs_qp_capacity *out)
{
	struct qphs__qp *qps;
	double t0;
	int n = 0, rc = 0;

	memset(out, 0, sizeof(*out));
	if (!ctx || cap <= 0 || !(qps = calloc((size_t)cap, sizeof(*qps))))
		return QPHS_ERR_INVALID_ARGUMENT;
	t0 = qphs__mono_ms();
	while (n < cap && !(rc = qphs__qp_create(ctx, &qps[n])))
		n++;
	out->created = n;
	out->limit_errno = n < cap ? rc : 0;
	out->create_mean_ms = (qphs__mono_ms() - t0) / (n ? n : 1);
	while (n > 0)
		qphs__qp_destroy(ctx, &qps[--n]);
	free(qps);
	return 0;
}

/* One round: a fresh pair, a's QP through the four steps, then back to
 * RESET.  Returns 0 or the code of the step that failed. */
static int one_round(struct qphs_context *a, struct qphs_context *b, double v[4])
{
	struct qphs__rtr_params p = {.sgid_index = a->gid_index, .rd_atomic = 16,
				     .path_mtu = IBV_MTU_1024, .dgid = b->gid};
	struct qphs__qp qa = {0}, qb = {0};
	int skipped, rc = QPHS_ERR_MODIFY_QP;
	double t;

	if (qphs__qp_create(a, &qa) || qphs__qp_create(b, &qb)) {
		rc = QPHS_ERR_CREATE_QP;
		goto out;
	}
	p.dest_qpn = qb.qp->qp_num;
	t = qphs__mono_ms();
	if (qphs__qp_to_init(a, &qa))
		goto out;
	v[QPHS_TR_INIT] = (qphs__mono_ms() - t) * 1e3;
	t = qphs__mono_ms();
	if (qphs__qp_to_rtr(a, &qa, &p))
		goto out;
	v[QPHS_TR_RTR] = (qphs__mono_ms() - t) * 1e3;
	t = qphs__mono_ms();
	if (qphs__qp_to_rts(a, &qa, 16))
		goto out;
	v[QPHS_TR_RTS] = (qphs__mono_ms() - t) * 1e3;
	t = qphs__mono_ms();
	if (qphs__qp_to_reset(a, &qa, 1, &skipped))
		goto out;
	v[QPHS_TR_RESET] = (qphs__mono_ms() - t) * 1e3;
	rc = 0;
out:
	if (qa.qp)
		qphs__qp_destroy(a, &qa);
	if (qb.qp)
		qphs__qp_destroy(b, &qb);
	return rc;
}

int qphs_probe_transition_us(struct qphs_context *a, struct qphs_context *b, int m,
			     double *const us[4])
{
	if (!a || !b || m < 0)
		return QPHS_ERR_INVALID_ARGUMENT;
	for (int i = 0; i < m; i++) {
		double v[4] = {0};
		int rc = one_round(a, b, v);

		for (int s = 0; s < 4; s++)
			us[s][i] = v[s];
		if (rc)
			return rc;
	}
	return 0;
}
