/*
 * One RDMA device: port state, LID, GID index, PD, CQ, the check region;
 * it starts the async-event thread (events.c).  The active MTU is read here
 * at open for the record, and read again by every connect (ours; Mooncake
 * reads it once, in RdmaContext::openRdmaDevice): an MTU
 * lowered after open must not produce a path MTU above it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/body.h"
#include "gidrank.h"
#include "base/log.h"
#include "qphs/error.h"
#include "rdma_int.h"

void qphs__context_set_err(struct qphs_context *ctx, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->errstr, sizeof(ctx->errstr), fmt, ap);
	va_end(ap);
	errno = saved;
}

static const char *port_state_name(int s)
{
	return qphs__verbs_port_state_name(s);
}

int qphs__context_active_mtu(struct qphs_context *ctx, int *bytes, int *state)
{
	struct ibv_port_attr pa;
	int rc = ctx->verbs.ops->query_port(&ctx->verbs, ctx->ib, ctx->port, &pa);

	if (rc)
		return rc;
	*bytes = qphs__verbs_mtu_bytes(pa.active_mtu);
	if (state)
		*state = pa.state;
	return 0;
}

static void read_netdev(const char *dev, int port, int index, char *out, size_t len)
{
	char path[256];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d",
		 dev, port, index);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	else
		out[0] = '\0';
	fclose(f);
}

static int kind_of(int gid_type)
{
	if (gid_type == IBV_GID_TYPE_ROCE_V2)
		return QPHS__GID_ROCE_V2;
	if (gid_type == IBV_GID_TYPE_ROCE_V1)
		return QPHS__GID_ROCE_V1;
	return QPHS__GID_IB;
}

/* Auto mode: query every index and rank them (gidrank.c). */
static int choose_auto_gid(struct qphs_context *ctx, int tbl_len)
{
	struct qphs__gid_entry *e = calloc((size_t)tbl_len, sizeof(*e));
	int idx;

	if (!e)
		return QPHS_ERR_MEMORY;
	for (int i = 0; i < tbl_len; i++) {
		union ibv_gid g;
		int type = 0;

		e[i].index = i;
		e[i].ok = !qphs__verbs_query_gid(ctx->ib, ctx->port, i, &g, &type);
		if (e[i].ok) {
			memcpy(e[i].gid, g.raw, 16);
			e[i].kind = kind_of(type);
			read_netdev(ctx->device, ctx->port, i, e[i].netdev, sizeof(e[i].netdev));
		}
	}
	idx = qphs__gid_choose(e, (size_t)tbl_len, ctx->gid_reason, sizeof(ctx->gid_reason));
	free(e);
	if (idx < 0) {
		qphs__context_set_err(ctx, "No suitable GID found on %s port %d [%s]", ctx->device,
				      ctx->port, ctx->gid_reason);
		return QPHS_ERR_NO_SUITABLE_GID;
	}
	ctx->gid_index = idx;
	return 0;
}

static int choose_gid(struct qphs_context *ctx)
{
	int tbl_len = 0, type = 0, rc;
	char nd[32];

	if (qphs__verbs_gid_table_len(ctx->ib, ctx->port, &tbl_len) || tbl_len <= 0) {
		qphs__context_set_err(ctx, "No suitable GID found on %s port %d [empty GID table]",
				      ctx->device, ctx->port);
		return QPHS_ERR_NO_SUITABLE_GID;
	}
	if (ctx->cfg->gid_index >= 0) {
		ctx->gid_index = ctx->cfg->gid_index;
		read_netdev(ctx->device, ctx->port, ctx->gid_index, nd, sizeof(nd));
		snprintf(ctx->gid_reason, sizeof(ctx->gid_reason), "explicit: MC_GID_INDEX=%d%s",
			 ctx->gid_index, nd[0] ? "" : " (warning: index has no netdev)");
	} else if ((rc = choose_auto_gid(ctx, tbl_len))) {
		return rc;
	}
	memset(&ctx->gid, 0, sizeof(ctx->gid));
	if (ctx->gid_index >= tbl_len ||
	    qphs__verbs_query_gid(ctx->ib, ctx->port, ctx->gid_index, &ctx->gid, &type) ||
	    !(ctx->gid.global.subnet_prefix | ctx->gid.global.interface_id)) {
		qphs__context_set_err(ctx, "GID is NULL, please check your GID index by specifying "
				      "MC_GID_INDEX [%s port %d index %d, table length %d]",
				      ctx->device, ctx->port, ctx->gid_index, tbl_len);
		return QPHS_ERR_GID_NULL;
	}
	qphs_gid_format(ctx->gid.raw, ctx->gid_str);
	return 0;
}

static int check_port(struct qphs_context *ctx)
{
	struct ibv_port_attr pa;
	int rc = ctx->verbs.ops->query_port(&ctx->verbs, ctx->ib, ctx->port, &pa);

	if (rc) {
		qphs__context_set_err(ctx, "Device %s port %d: query failed: %s", ctx->device,
				      ctx->port, strerror(rc));
		return QPHS_ERR_CONTEXT;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		qphs__context_set_err(ctx, "Device %s port not active [port %d state %s]",
				      ctx->device, ctx->port, port_state_name(pa.state));
		return QPHS_ERR_PORT_NOT_ACTIVE;
	}
	ctx->lid = pa.lid;
	ctx->active_mtu_at_open = qphs__verbs_mtu_bytes(pa.active_mtu);
	return 0;
}

static int open_resources(struct qphs_context *ctx)
{
	ctx->pd = qphs__verbs_alloc_pd(ctx->ib);
	if (!ctx->pd)
		goto fail;
	ctx->cq = qphs__verbs_create_cq(ctx->ib, ctx->cfg->max_cqe_per_ctx);
	if (!ctx->cq)
		goto fail;
	if (ctx->region) {
		ctx->region_mr = qphs__verbs_reg_mr(ctx->pd, ctx->region, ctx->region_len,
						    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							    IBV_ACCESS_REMOTE_READ);
		if (!ctx->region_mr)
			goto fail;
	}
	return 0;
fail:
	qphs__context_set_err(ctx, "%s: cannot allocate %s: %s", ctx->device,
			      !ctx->pd ? "PD" : !ctx->cq ? "CQ" : "MR",
			      strerror(errno ? errno : ENOMEM));
	return QPHS_ERR_CONTEXT;
}

static void init_locks(struct qphs_context *ctx)
{
	pthread_mutex_init(&ctx->check_lock, NULL);
	pthread_mutex_init(&ctx->ep_lock, NULL);
	pthread_mutex_init(&ctx->hook_lock, NULL);
	pthread_mutex_init(&ctx->event_lock, NULL);
}

int qphs__context_open(const struct qphs__ctx_owner *owner, const char *device,
		       struct qphs_context **out)
{
	const struct qphs_config *cfg = owner->cfg;
	struct qphs_context *ctx = calloc(1, sizeof(*ctx));
	int rc;

	*out = NULL;
	if (!ctx)
		return QPHS_ERR_MEMORY;
	ctx->rdma = owner->rdma;
	ctx->region = owner->region;
	ctx->region_len = owner->region_len;
	ctx->cfg = cfg;
	ctx->on_event = owner->on_event;
	ctx->port = (uint8_t)cfg->ib_port;
	ctx->stop_pipe[0] = ctx->stop_pipe[1] = -1;
	init_locks(ctx);
	snprintf(ctx->device, sizeof(ctx->device), "%s", device);
	snprintf(ctx->nic_path, sizeof(ctx->nic_path), "%s@%s", owner->server, device);
	*out = ctx; /* the caller reads ctx->errstr and closes it on failure */
	if ((rc = qphs__verbs_open(device, &ctx->ib, ctx->errstr, sizeof(ctx->errstr))))
		return rc;
	if (qphs__verbs_init(&ctx->verbs, cfg->quirk_profile, ctx->ib, ctx->port)) {
		qphs__context_set_err(ctx, "unknown quirk profile '%s'", cfg->quirk_profile);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if ((rc = ctx->verbs.ops->query_device(&ctx->verbs, ctx->ib, &ctx->dev_attr))) {
		qphs__context_set_err(ctx, "%s: ibv_query_device: %s", device, strerror(rc));
		return QPHS_ERR_CONTEXT;
	}
	if ((rc = check_port(ctx)) || (rc = choose_gid(ctx)) || (rc = open_resources(ctx)))
		return rc;
	/* Each sets ctx->errstr when it fails. */
	if ((rc = qphs__qp_pool_start(ctx)) || (rc = qphs__events_start(ctx)))
		return rc;
	QPHS_INFO("[Handshake] opened %s port %d lid %u gid %s index %d (%s) active_mtu %d",
		  device, ctx->port, ctx->lid, ctx->gid_str, ctx->gid_index, ctx->gid_reason,
		  ctx->active_mtu_at_open);
	return 0;
}

/* Reverse order of open; every step runs even when an earlier one fails.
 * The owner destroyed its endpoints after stopping the event thread. */
void qphs__context_close(struct qphs_context *ctx)
{
	if (!ctx)
		return;
	qphs__events_stop(ctx);
	qphs__qp_pool_stop(ctx);
	if (ctx->region_mr && qphs__verbs_dereg_mr(ctx->region_mr))
		QPHS_WARN("%s: ibv_dereg_mr failed", ctx->device);
	if (ctx->cq && qphs__verbs_destroy_cq(ctx->cq))
		QPHS_WARN("%s: ibv_destroy_cq failed", ctx->device);
	if (ctx->pd && qphs__verbs_dealloc_pd(ctx->pd))
		QPHS_WARN("%s: ibv_dealloc_pd failed", ctx->device);
	qphs__verbs_fini(&ctx->verbs);
	if (ctx->ib && qphs__verbs_close(ctx->ib))
		QPHS_WARN("%s: ibv_close_device failed", ctx->device);
	pthread_mutex_destroy(&ctx->check_lock);
	pthread_mutex_destroy(&ctx->ep_lock);
	pthread_mutex_destroy(&ctx->hook_lock);
	pthread_mutex_destroy(&ctx->event_lock);
	free(ctx);
}
