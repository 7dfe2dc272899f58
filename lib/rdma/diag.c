/*
 * Say why a transition failed.  The driver returns one errno; what it
 * disliked is usually one of a few things we can check ourselves: the path
 * MTU against the port's active MTU, the GID index, the port state, the
 * rd_atomic values against the device caps, the peer's QPN and GID family.
 * The findings go after the Mooncake text as " [finding; finding]".
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rdma_int.h"

struct finding {
	char *buf;
	size_t len, used;
	int n;
};

static void add(struct finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct finding *f, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (f->used >= f->len)
		return;
	if (f->n++) {
		w = snprintf(f->buf + f->used, f->len - f->used, "; ");
		f->used += w > 0 ? (size_t)w : 0;
		if (f->used >= f->len)
			return;
	}
	va_start(ap, fmt);
	w = vsnprintf(f->buf + f->used, f->len - f->used, fmt, ap);
	va_end(ap);
	f->used += w > 0 ? (size_t)w : 0;
}

static void check_port(struct qphs_context *ctx, struct finding *f, int *active_mtu)
{
	struct ibv_port_attr pa;

	*active_mtu = 0;
	if (ctx->verbs.ops->query_port(&ctx->verbs, ctx->ib, ctx->port, &pa)) {
		add(f, "port %d of %s cannot be queried", ctx->port, ctx->device);
		return;
	}
	*active_mtu = qphs__verbs_mtu_bytes(pa.active_mtu);
	if (pa.state != IBV_PORT_ACTIVE)
		add(f, "port %d of %s is %s", ctx->port, ctx->device,
		    qphs__verbs_port_state_name(pa.state));
}

static void check_gid(struct qphs_context *ctx, struct finding *f, int index)
{
	union ibv_gid g;
	int type = 0, len = 0;

	qphs__verbs_gid_table_len(ctx->ib, ctx->port, &len);
	if (index >= len) {
		add(f, "gid index %d beyond the table (%d entries) on %s", index, len, ctx->device);
		return;
	}
	if (qphs__verbs_query_gid(ctx->ib, ctx->port, index, &g, &type)) {
		add(f, "gid index %d missing on %s port %d", index, ctx->device, ctx->port);
		return;
	}
	if (!(g.global.subnet_prefix | g.global.interface_id))
		add(f, "gid index %d is all zero on %s", index, ctx->device);
	else if (type == IBV_GID_TYPE_ROCE_V1)
		add(f, "gid index %d is RoCE v1, not v2", index);
}

static int v4_mapped(const uint8_t *g)
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(g, pfx, 12);
}

static void check_rtr(struct qphs_context *ctx, struct finding *f,
		      const struct qphs__rtr_params *p, int active_mtu)
{
	int mtu = qphs__verbs_mtu_bytes(p->path_mtu);

	if (active_mtu && mtu > active_mtu)
		add(f, "path_mtu %d exceeds active_mtu %d on %s port %d", mtu, active_mtu,
		    ctx->device, ctx->port);
	check_gid(ctx, f, p->sgid_index);
	if (p->rd_atomic > ctx->dev_attr.max_qp_rd_atom)
		add(f, "max_dest_rd_atomic %d exceeds the device's max_qp_rd_atom %d",
		    p->rd_atomic, ctx->dev_attr.max_qp_rd_atom);
	/* rd_atom_used already counts this setup's QPs. */
	if (ctx->dev_attr.max_res_rd_atom && ctx->rd_atom_used > ctx->dev_attr.max_res_rd_atom)
		add(f, "responder resources: this context's QPs ask %d, max_res_rd_atom is %d",
		    ctx->rd_atom_used, ctx->dev_attr.max_res_rd_atom);
	if (p->dest_qpn == 0)
		add(f, "peer qp num is 0");
	if (v4_mapped(p->dgid.raw) != v4_mapped(ctx->gid.raw))
		add(f, "peer gid is %s, local gid is %s", v4_mapped(p->dgid.raw) ? "IPv4" : "IPv6",
		    v4_mapped(ctx->gid.raw) ? "IPv4" : "IPv6");
}

void qphs__diag(struct qphs_context *ctx, int step, const struct qphs__qp *qp,
		const struct qphs__rtr_params *p, int init_rd_atomic, char *text, size_t len)
{
	char buf[384] = "";
	struct finding f = {.buf = buf, .len = sizeof(buf)};
	int active_mtu;

	check_port(ctx, &f, &active_mtu);
	if (step == QPHS_TR_INIT && qp && qp->reached_rts)
		add(&f, "this QP reached RTS before and was reset for reuse; some drivers "
		    "(eRDMA) cannot take such a QP to INIT again: use reset policy reconstruct");
	if (step == QPHS_TR_INIT && ctx->cfg->strict_reset)
		add(&f, "strict reset sent RESET to a QP already in RESET; some drivers (E810) "
		    "then refuse INIT: turn strict_reset off");
	if (step == QPHS_TR_INIT && ctx->cfg->pkey_index != 0)
		add(&f, "pkey index %d (MC_PKEY_INDEX) may be beyond the pkey table",
		    ctx->cfg->pkey_index);
	if (step == QPHS_TR_RTR && p)
		check_rtr(ctx, &f, p, active_mtu);
	if (step == QPHS_TR_RTS && init_rd_atomic > ctx->dev_attr.max_qp_init_rd_atom)
		add(&f, "max_rd_atomic %d exceeds the device's max_qp_init_rd_atom %d",
		    init_rd_atomic, ctx->dev_attr.max_qp_init_rd_atom);
	if (!f.n)
		add(&f, "no local cause found: port ACTIVE, active_mtu %d%s", active_mtu,
		    step == QPHS_TR_RTR && p ? ", gid index valid" : "");
	size_t used = strlen(text);
	if (used < len)
		snprintf(text + used, len - used, " [%s]", buf);
}
