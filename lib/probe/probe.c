/*
 * The probes of `qplab quirks`: each asks the driver one question on fresh
 * QPs and writes one row (two for the probes whose second step only means
 * something after the first).  A probe changes one thing of Mooncake's
 * setup (RdmaEndPoint::doSetupConnection's attributes, qpattr.c) and keeps
 * the rest, so a difference between drivers or kernels points at that one
 * thing.  The probes never stop at a failure:
 * a refused call is a result; every QP made is destroyed before the next
 * probe runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probe_int.h"
#include "qphs/error.h"

typedef size_t (*probe_fn)(struct qphs__probe_env *e, struct qphs_probe_row *r);

static const char *const names[] = {
	"reset-reset", "reset-reset-init", "skip-reset-rtr", "skip-init-rts",
	"rtr-no-av", "rtr-mtu-above-active", "rtr-bad-sgid-index", "rtr-zero-dgid",
	"unknown-qpn-retry7", "unknown-qpn-retry6", "reuse-rts-reset", "reuse-reconnect",
	"rd-atomic-16", "rtr-rd-atomic-over-limit", "rts-rd-atomic-over-limit", "err-reset",
	NULL,
};

const char *const *qphs_probe_names(void) { return names; }

const char *qphs_probe_errno_name(int e, char *buf, size_t len)
{
	const char *n;

	if (e == 0)
		return "";
	n = strerrorname_np(e);
	if (n)
		return n;
	snprintf(buf, len, "E%d", e);
	return buf;
}

/* ---- RESET -> RESET, then INIT (E810 fails the INIT) ------------------- */
static size_t p_reset_reset(struct qphs__probe_env *e, struct qphs_probe_row *r)
{
	struct qphs__qp qp;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};
	int mask;

	qphs__prow_begin(&r[0], names[0]);
	qphs__prow_begin(&r[1], names[1]);
	if (!qphs__prow_fresh_qp(e, &qp, &r[0])) {
		qphs__prow_skip(&r[1], "no QP");
		return 2;
	}
	snprintf(r[0].note, sizeof(r[0].note), "fresh QP (RESET), modify to RESET, mask STATE");
	qphs__prow_modify(&e->loc, &qp, &a, IBV_QP_STATE, &r[0]);
	qphs__pqp_init_attr(&e->loc, &a, &mask);
	snprintf(r[1].note, sizeof(r[1].note), "the same QP, RESET -> INIT (the setup's attributes)");
	qphs__prow_modify(&e->loc, &qp, &a, mask, &r[1]);
	qphs__pqp_destroy(&e->loc, &qp);
	return 2;
}

/* ---- one step with the full attributes, one thing changed ----------------
 * change() edits attr and mask and writes the note, or returns a reason to
 * skip. */
typedef const char *(*step_change)(struct qphs__probe_env *e, struct ibv_qp_attr *a, int *mask,
				   char *note, size_t len);

/* A probe of one modify_qp on a fresh QP: moved to INIT first or not, then
 * to `to` with the attributes a real setup sends for it, changed by
 * change (NULL: as they are, and note says what the step is). */
struct step_probe {
	const char *name;
	int from_init;
	enum ibv_qp_state to;
	step_change change;
	const char *note;
};

static void step_attr(struct qphs__probe_env *e, enum ibv_qp_state to, struct ibv_qp_attr *a,
		      int *mask)
{
	if (to == IBV_QPS_RTS)
		qphs__pqp_rts_attr(&e->loc, a, mask, e->o->qp_timeout, 7);
	else
		qphs__pqp_rtr_attr(&e->loc, &e->peer, QPHS_PROBE_UNKNOWN_QPN, a, mask);
}

static size_t step_probe(struct qphs__probe_env *e, struct qphs_probe_row *r,
			 const struct step_probe *p)
{
	struct qphs__qp qp;
	struct ibv_qp_attr a;
	int mask;
	const char *why = NULL;

	qphs__prow_begin(r, p->name);
	step_attr(e, p->to, &a, &mask);
	if (p->change)
		why = p->change(e, &a, &mask, r->note, sizeof(r->note));
	else
		snprintf(r->note, sizeof(r->note), "%s", p->note);
	if (why) {
		qphs__prow_skip(r, why);
		return 1;
	}
	if (!qphs__prow_fresh_qp(e, &qp, r))
		return 1;
	if (!p->from_init || qphs__prow_setup_init(e, &qp, r))
		qphs__prow_modify(&e->loc, &qp, &a, mask, r);
	qphs__pqp_destroy(&e->loc, &qp);
	return 1;
}

static const char *no_av(struct qphs__probe_env *e, struct ibv_qp_attr *a, int *mask, char *note,
			 size_t len)
{
	(void)e;
	(void)a;
	*mask &= ~IBV_QP_AV;
	snprintf(note, len, "INIT -> RTR, mask without IBV_QP_AV");
	return NULL;
}

static const char *mtu_above(struct qphs__probe_env *e, struct ibv_qp_attr *a, int *mask,
			     char *note, size_t len)
{
	(void)mask;
	if (e->loc.pa.active_mtu >= IBV_MTU_4096)
		return "active_mtu is already 4096";
	a->path_mtu = IBV_MTU_4096;
	snprintf(note, len, "path_mtu 4096, active_mtu %d, max_mtu %d",
		 qphs__verbs_mtu_bytes(e->loc.pa.active_mtu), qphs__verbs_mtu_bytes(e->loc.pa.max_mtu));
	return NULL;
}

/* rxe's GID table has 1024 entries, more than a uint8 sgid_index can name:
 * then the probe uses 255, an index inside the table whose entry is empty. */
static const char *sgid_oob(struct qphs__probe_env *e, struct ibv_qp_attr *a, int *mask,
			    char *note, size_t len)
{
	union ibv_gid g;
	int type, n = e->loc.pa.gid_tbl_len;

	(void)mask;
	if (n <= 255) {
		a->ah_attr.grh.sgid_index = (uint8_t)n;
		snprintf(note, len, "sgid_index %d (the table has %d entries)", n, n);
		return NULL;
	}
	if (!qphs__verbs_query_gid(e->loc.ib, e->loc.port, 255, &g, &type) &&
	    (g.global.subnet_prefix | g.global.interface_id))
		return "GID table longer than 255 and entry 255 is in use";
	a->ah_attr.grh.sgid_index = 255;
	snprintf(note, len, "sgid_index 255: the table has %d entries, 255 is empty", n);
	return NULL;
}

static const char *zero_dgid(struct qphs__probe_env *e, struct ibv_qp_attr *a, int *mask,
			     char *note, size_t len)
{
	(void)e;
	(void)mask;
	memset(&a->ah_attr.grh.dgid, 0, sizeof(a->ah_attr.grh.dgid));
	snprintf(note, len, "dgid :: (all zero)");
	return NULL;
}

static const char *dest_rd_over(struct qphs__probe_env *e, struct ibv_qp_attr *a, int *mask,
				char *note, size_t len)
{
	(void)mask;
	if (e->loc.da.max_qp_rd_atom >= 255)
		return "max_qp_rd_atom leaves no uint8 above it";
	a->max_dest_rd_atomic = (uint8_t)(e->loc.da.max_qp_rd_atom + 1);
	snprintf(note, len, "max_dest_rd_atomic %d (device max_qp_rd_atom %d)",
		 a->max_dest_rd_atomic, e->loc.da.max_qp_rd_atom);
	return NULL;
}

/* Run order: a probe of its own (fn), or one step (fn NULL).  The row
 * names come out in the order of names[]. */
static const struct {
	probe_fn fn;
	struct step_probe step;
} probes[] = {
	{p_reset_reset, {0}},
	{NULL, {"skip-reset-rtr", 0, IBV_QPS_RTR, NULL, "RESET -> RTR with the full RTR attributes"}},
	{NULL, {"skip-init-rts", 1, IBV_QPS_RTS, NULL, "INIT -> RTS with the full RTS attributes"}},
	{NULL, {"rtr-no-av", 1, IBV_QPS_RTR, no_av, NULL}},
	{NULL, {"rtr-mtu-above-active", 1, IBV_QPS_RTR, mtu_above, NULL}},
	{NULL, {"rtr-bad-sgid-index", 1, IBV_QPS_RTR, sgid_oob, NULL}},
	{NULL, {"rtr-zero-dgid", 1, IBV_QPS_RTR, zero_dgid, NULL}},
	{qphs__probe_unknown_qpn7, {0}},
	{qphs__probe_unknown_qpn6, {0}},
	{qphs__probe_reuse, {0}},
	{qphs__probe_rd_atomic_16, {0}},
	{NULL, {"rtr-rd-atomic-over-limit", 1, IBV_QPS_RTR, dest_rd_over, NULL}},
	{qphs__probe_rts_rd_over, {0}},
	{qphs__probe_err_reset, {0}},
};

static void fill_info(const struct qphs__probe_env *e, struct qphs_probe_info *in)
{
	const struct qphs__side *l = &e->loc;

	memset(in, 0, sizeof(*in));
	snprintf(in->device, sizeof(in->device), "%s", l->dev);
	snprintf(in->peer_device, sizeof(in->peer_device), "%s", e->peer.dev);
	snprintf(in->quirk, sizeof(in->quirk), "%s", e->o->quirk ? e->o->quirk : "");
	snprintf(in->driver, sizeof(in->driver), "%s",
		 l->da.vendor_id == 0xffffff ? "rxe" : l->da.vendor_id == 0x626d74 ? "siw" : "other");
	in->port = l->port;
	in->gid_index = l->gid_index;
	in->peer_gid_index = e->peer.gid_index;
	in->gid_tbl_len = l->pa.gid_tbl_len;
	in->active_mtu = qphs__verbs_mtu_bytes(l->pa.active_mtu);
	in->max_mtu = qphs__verbs_mtu_bytes(l->pa.max_mtu);
	in->max_qp_rd_atom = l->da.max_qp_rd_atom;
	in->max_qp_init_rd_atom = l->da.max_qp_init_rd_atom;
	in->vendor_id = l->da.vendor_id;
	in->qp_timeout = e->o->qp_timeout;
	in->deadline_ms = e->o->deadline_ms;
}

int qphs_probe_run(const struct qphs_probe_opts *opts, struct qphs_probe_info *info,
		   struct qphs_probe_row *rows, size_t max, size_t *nrows, char *err,
		   size_t errlen)
{
	struct qphs__probe_env e;
	struct qphs_probe_row tmp[2];
	int rc;

	*nrows = 0;
	if ((rc = qphs__probe_env_open(&e, opts, err, errlen)))
		return rc;
	fill_info(&e, info);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		size_t n = probes[i].fn ? probes[i].fn(&e, tmp) : step_probe(&e, tmp, &probes[i].step);

		for (size_t k = 0; k < n && *nrows < max; k++)
			rows[(*nrows)++] = tmp[k];
	}
	qphs__probe_env_close(&e);
	return 0;
}

void qphs_probe_opts_init(struct qphs_probe_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = 1;
	o->gid_index = -1;
	o->peer_gid_index = -1;
	o->qp_timeout = 14;
	o->deadline_ms = 3000;
}
