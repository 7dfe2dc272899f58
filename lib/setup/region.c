/*
 * The check region registered again with chosen access flags (a lab hook,
 * qphs_context_register_region): a responder whose buffer refuses remote
 * WRITEs or READs, and, since the old registration is dropped, a stale
 * rkey in the hands of a peer that fetched the descriptor before.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "qphs/error.h"
#include "setup_int.h"

#define ACCESS_KNOWN (QPHS_ACCESS_LOCAL_WRITE | QPHS_ACCESS_REMOTE_WRITE | QPHS_ACCESS_REMOTE_READ)

/* QPHS_ACCESS_* bits as verbs' flags (pure). */
static int verbs_access(int access)
{
	return ((access & QPHS_ACCESS_LOCAL_WRITE) ? IBV_ACCESS_LOCAL_WRITE : 0) |
	       ((access & QPHS_ACCESS_REMOTE_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       ((access & QPHS_ACCESS_REMOTE_READ) ? IBV_ACCESS_REMOTE_READ : 0);
}

int qphs_context_register_region(struct qphs_context *ctx, int access, uint32_t *old_rkey,
				 uint32_t *new_rkey)
{
	struct qphs_rdma *r;
	struct ibv_mr *mr, *old;

	if (!ctx || (access & ~ACCESS_KNOWN) ||
	    ((access & QPHS_ACCESS_REMOTE_WRITE) && !(access & QPHS_ACCESS_LOCAL_WRITE))) {
		if (ctx)
			qphs__context_set_err(ctx, "access 0x%x: %s", (unsigned)access,
					      (access & ~ACCESS_KNOWN) ? "unknown access bit"
					      : "REMOTE_WRITE needs LOCAL_WRITE (ibv_reg_mr)");
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if (!ctx->region) {
		qphs__context_set_err(ctx, "%s: no check region to register", ctx->device);
		return QPHS_ERR_CONTEXT;
	}
	mr = qphs__verbs_reg_mr(ctx->pd, ctx->region, ctx->region_len, verbs_access(access));
	if (!mr) {
		qphs__context_set_err(ctx, "%s: ibv_reg_mr of the check region failed: %s",
				      ctx->device, strerror(errno ? errno : ENOMEM));
		return QPHS_ERR_CONTEXT;
	}
	r = ctx->rdma;
	pthread_mutex_lock(&r->lock);
	old = ctx->region_mr;
	ctx->region_mr = mr;
	pthread_mutex_unlock(&r->lock);
	if (old_rkey)
		*old_rkey = old ? old->rkey : 0;
	if (new_rkey)
		*new_rkey = mr->rkey;
	if (old && qphs__verbs_dereg_mr(old))
		QPHS_WARN("%s: ibv_dereg_mr of the old check region registration failed",
			  ctx->device);
	return 0;
}

int qphs_context_verify_region(struct qphs_context *ctx, size_t bytes, uint64_t seed,
			       struct qphs_verify_result *out)
{
	size_t at;
	uint8_t want = 0;

	memset(out, 0, sizeof(*out));
	if (!ctx || !ctx->region || bytes == 0 || bytes > QPHS_CHECK_REGION_BYTES) {
		snprintf(out->text, sizeof(out->text), "bytes must be 1..%u (and a check region)",
			 QPHS_CHECK_REGION_BYTES);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	out->bytes = bytes;
	out->mismatched = qphs_pattern_compare(ctx->region, bytes, seed, &out->first_mismatch,
					       &want);
	if (!out->mismatched) {
		snprintf(out->text, sizeof(out->text), "all %zu bytes arrived", bytes);
		return 0;
	}
	at = out->first_mismatch;
	snprintf(out->text, sizeof(out->text), "%zu of %zu bytes differ from what the requester "
		 "wrote; the first at offset %zu holds 0x%02x, not 0x%02x", out->mismatched, bytes,
		 at, ctx->region[at], want);
	return QPHS_ERR_DATA_MISMATCH;
}
