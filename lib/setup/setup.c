/*
 * doSetupConnection (Mooncake's, rdma_endpoint.cpp): for each QP i paired
 * with the peer's QP i, RESET -> INIT -> RTR -> RTS.  The path MTU, the GID
 * index and the rd_atomic values are chosen here, once per setup, and
 * recorded on the endpoint for introspection.
 */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/clock.h"
#include "qphs/error.h"
#include "rdma/qpattr.h"
#include "setup_int.h"

static const char *const step_text[QPHS_TR_COUNT] = {
	"Failed to modify QP to RESET",
	"Failed to modify QP to INIT, check local context port num",
	"Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num",
	"Failed to modify QP to RTS",
};

int qphs__ep_mtu(struct qphs_endpoint *ep)
{
	struct qphs_context *ctx = ep->ctx;
	int active = ctx->active_mtu_at_open;

	if (!ctx->cfg->mtu_reread)
		return active;
	if (!ep->mtu_read) {
		qphs__context_active_mtu(ctx, &active, NULL);
		ep->mtu_read = active;
	}
	return ep->mtu_read;
}

/* path_mtu = min(active MTU (read for this setup, or at open when
 * mtu_reread is off), MC_MTU, the peer's qphs_path_mtu when negotiating). */
static int choose_mtu(struct qphs_endpoint *ep, int peer_mtu)
{
	struct qphs_context *ctx = ep->ctx;
	int active = qphs__ep_mtu(ep), mtu = ctx->cfg->mtu;

	if (active && active < mtu)
		mtu = active;
	if (ctx->cfg->mtu_negotiation && peer_mtu > 0 && peer_mtu < mtu)
		mtu = peer_mtu;
	return mtu;
}

/* Mooncake asks 16 responder and initiator resources per QP.  Clamping
 * (Mooncake PR 3977) sizes one QP without looking at the endpoints that
 * already exist: the device's responder budget (max_res_rd_atom) is shared
 * across a nominal RD_ATOM_NOMINAL_QPS QPs, at least 1 when the budget is
 * not zero, and capped at 16 and at max_qp_rd_atom; the initiator depth is
 * capped at that and at max_qp_init_rd_atom.  So every endpoint gets the
 * same depth — a second endpoint is not starved by the first (dividing
 * what is left by the QP count gave it 0).  Ours on top: never ask more
 * than what our own QPs left of the budget, but never less than 1: a QP
 * the budget cannot serve fails RTR with EINVAL, which diag explains,
 * instead of reaching RTS unable to answer a single READ. */
#define RD_ATOM_NOMINAL_QPS 16

static int clamp_responder(const struct ibv_device_attr *a, int used)
{
	int r = QPHS__RD_ATOMIC;

	if (a->max_qp_rd_atom > 0 && r > a->max_qp_rd_atom)
		r = a->max_qp_rd_atom;
	if (a->max_res_rd_atom > 0) {
		int share = a->max_res_rd_atom / RD_ATOM_NOMINAL_QPS;
		int left = a->max_res_rd_atom - used;

		if (share < 1)
			share = 1;
		if (r > share)
			r = share;
		if (r > left)
			r = left > 1 ? left : 1;
	}
	return r;
}

static void choose_rd_atomic(struct qphs_endpoint *ep, int *resp, int *init)
{
	struct qphs_context *ctx = ep->ctx;
	const struct ibv_device_attr *a = &ctx->dev_attr;
	int r = QPHS__RD_ATOMIC, i = QPHS__RD_ATOMIC;

	pthread_mutex_lock(&ctx->ep_lock);
	if (ctx->cfg->rd_atomic_clamp) {
		r = clamp_responder(a, ctx->rd_atom_used);
		i = r;
		if (a->max_qp_init_rd_atom > 0 && i > a->max_qp_init_rd_atom)
			i = a->max_qp_init_rd_atom;
	}
	ctx->rd_atom_used += r * ep->nqp;
	ep->rd_atom_taken += r * ep->nqp;
	pthread_mutex_unlock(&ctx->ep_lock);
	*resp = r;
	*init = i;
}

static void fail_step(struct qphs_endpoint *ep, int step, int err, int qi,
		      const struct qphs__rtr_params *p, int init_rd)
{
	char text[QPHS__TEXT_LEN];

	snprintf(text, sizeof(text), "%s: %s", step_text[step], strerror(err));
	qphs__diag(ep->ctx, step, &ep->qp[qi], p, init_rd, text, sizeof(text));
	ep->tr_failed[step]++;
	qphs__ep_set_err(ep, QPHS_ERR_MODIFY_QP, "%s", text);
	QPHS_ERR("[Handshake] %s (QP %d of %d, qpn %u, peer %s)", text, qi + 1, ep->nqp,
		 ep->qp[qi].qp ? ep->qp[qi].qp->qp_num : 0, ep->peer_path);
}

void qphs__ep_timings_clear(struct qphs_endpoint *ep)
{
	ep->tcp_ms = -1;
	for (int i = 0; i < QPHS_TR_COUNT; i++)
		ep->tr_ms[i] = -1;
	for (int i = 0; i < QPHS_PHASE_COUNT; i++)
		ep->ph_start[i] = ep->ph_end[i] = -1;
}

void qphs__ep_phase(struct qphs_endpoint *ep, int phase, double start, double end)
{
	if (phase < 0 || phase >= QPHS_PHASE_COUNT)
		return;
	if (ep->ph_start[phase] < 0)
		ep->ph_start[phase] = start;
	ep->ph_end[phase] = end;
}

/* Adds the time since t0 to transition step's total, and dates it. */
static void timed(struct qphs_endpoint *ep, int step, double t0)
{
	double now = qphs__mono_ms(), ms = now - t0;

	ep->tr_ms[step] = ep->tr_ms[step] < 0 ? ms : ep->tr_ms[step] + ms;
	qphs__ep_phase(ep, QPHS_PHASE_RESET + step, t0, now);
}

static int setup_one(struct qphs_endpoint *ep, int qi, struct qphs__rtr_params *p, int init_rd)
{
	struct qphs_context *ctx = ep->ctx;
	struct qphs__qp *qp = &ep->qp[qi];
	double t0 = qphs__mono_ms();
	int skipped, rc;

	rc = qphs__qp_to_reset(ctx, qp, ctx->cfg->strict_reset, &skipped);
	if (!skipped)
		timed(ep, QPHS_TR_RESET, t0); /* a skipped RESET did not happen */
	if (rc) {
		fail_step(ep, QPHS_TR_RESET, rc, qi, NULL, init_rd);
		return rc;
	}
	if (skipped)
		ep->reset_skipped++;
	else
		ep->tr_ok[QPHS_TR_RESET]++;
	t0 = qphs__mono_ms();
	rc = qphs__qp_to_init(ctx, qp);
	timed(ep, QPHS_TR_INIT, t0);
	if (rc) {
		fail_step(ep, QPHS_TR_INIT, rc, qi, NULL, init_rd);
		return rc;
	}
	ep->tr_ok[QPHS_TR_INIT]++;
	t0 = qphs__mono_ms();
	rc = qphs__qp_to_rtr(ctx, qp, p);
	timed(ep, QPHS_TR_RTR, t0);
	if (rc) {
		fail_step(ep, QPHS_TR_RTR, rc, qi, p, init_rd);
		return rc;
	}
	ep->tr_ok[QPHS_TR_RTR]++;
	t0 = qphs__mono_ms();
	rc = qphs__qp_to_rts(ctx, qp, init_rd);
	timed(ep, QPHS_TR_RTS, t0);
	if (rc) {
		fail_step(ep, QPHS_TR_RTS, rc, qi, p, init_rd);
		return rc;
	}
	ep->tr_ok[QPHS_TR_RTS]++;
	return 0;
}

/* We negotiate and the peer did not: Mooncake sends and reads no path MTU
 * (HandShakeDesc has none; doSetupConnection takes min(active MTU,
 * MC_MTU) on each side alone), so the two ends may run different path
 * MTUs.  RTR and RTS still succeed; a message longer than the smaller one
 * then fails at the responder (IBV_WC_REM_INV_REQ_ERR).  Say so once per
 * setup, where the user will look. */
static void unnegotiated_mtu(struct qphs_endpoint *ep, int mtu)
{
	char w[QPHS__TEXT_LEN];

	snprintf(w, sizeof(w),
		 "[Handshake] peer %s sent no qphs_path_mtu (a Mooncake peer does not negotiate): "
		 "path MTU %d is ours alone; if the peer's own min(active MTU, MC_MTU) differs, "
		 "RTS succeeds but transfers longer than the smaller MTU fail", ep->peer_path, mtu);
	qphs__ep_set_text(ep, QPHS__EP_WARNING, "%s", w);
	QPHS_WARN("%s", w);
}

int qphs__ep_setup_locked(struct qphs_endpoint *ep, const uint8_t peer_gid[16],
			  uint16_t peer_lid, const uint32_t *peer_qpn, int peer_mtu)
{
	struct qphs_context *ctx = ep->ctx;
	struct qphs__rtr_params p = {.dlid = peer_lid, .sgid_index = ctx->gid_index};
	int init_rd, mtu = choose_mtu(ep, peer_mtu);

	memcpy(p.dgid.raw, peer_gid, 16);
	if (ep->tx)
		ep->tx->warning[0] = '\0';
	for (int i = 0; i < QPHS_TR_COUNT; i++) {
		ep->tr_ms[i] = -1;
		ep->ph_start[QPHS_PHASE_RESET + i] = ep->ph_end[QPHS_PHASE_RESET + i] = -1;
	}
	p.path_mtu = qphs__verbs_mtu_enum(mtu);
	choose_rd_atomic(ep, &p.rd_atomic, &init_rd);
	ep->path_mtu = mtu;
	ep->peer_path_mtu = peer_mtu > 0 ? peer_mtu : 0;
	if (ctx->cfg->mtu_negotiation && peer_mtu <= 0)
		unnegotiated_mtu(ep, mtu);
	ep->rd_atomic = p.rd_atomic;
	for (int i = 0; i < ep->nqp; i++) {
		p.dest_qpn = peer_qpn[i];
		if (setup_one(ep, i, &p, init_rd))
			return QPHS_ERR_MODIFY_QP;
	}
	memcpy(ep->peer_qpn, peer_qpn, (size_t)ep->nqp * sizeof(*peer_qpn));
	ep->has_connected = 1;
	return 0;
}
