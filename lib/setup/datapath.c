/*
 * Data-path check: proves the QPs carry data, not just that they reached
 * RTS (mixed MTUs and wrong GIDs pass RTR and fail here).  RDMA WRITE a
 * per-run random pattern into the peer's check region, RDMA READ it back
 * into a zeroed buffer, compare, and ask the peer for its own CRC of the
 * region.  Every wait has a deadline: some rxe faults never complete.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handshake.h"
#include "base/log.h"
#include "base/clock.h"
#include "qphs/error.h"
#include "setup_int.h"

struct check {
	struct qphs_endpoint *ep;
	struct qphs_data_result *res;
	size_t bytes;
	int timeout_ms;
	uint8_t *src, *dst;
	struct ibv_mr *src_mr, *dst_mr;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t posted;  /* wr_id of the last WR posted */
};

static void fill_pattern(uint8_t *p, size_t n)
{
	uint64_t x = (uint64_t)(qphs__mono_ms() * 1e6) ^ ((uint64_t)getpid() << 32) ^
		     (uint64_t)(uintptr_t)p;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

/* Polls for wr_id with a deadline; names the status or "no completion". */
static int wait_wc(struct check *c, uint64_t wr_id, char *status, size_t len, double *ms)
{
	double t0 = qphs__mono_ms(), end = t0 + c->timeout_ms;
	struct ibv_wc wc;

	for (;;) {
		int n = qphs__verbs_poll_cq(c->ep->ctx->cq, 1, &wc);

		if (n > 0 && wc.wr_id == wr_id) {
			*ms = qphs__mono_ms() - t0;
			snprintf(status, len, "%s", qphs__verbs_wc_status_name(wc.status));
			return wc.status == IBV_WC_SUCCESS ? 0 : QPHS_ERR_COMPLETION;
		}
		if (n < 0 || qphs__mono_ms() > end) {
			*ms = qphs__mono_ms() - t0;
			snprintf(status, len, "no completion within %d ms", c->timeout_ms);
			return QPHS_ERR_COMPLETION_TIMEOUT;
		}
		if (n == 0) {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
}

static int post(struct check *c, enum ibv_wr_opcode op, uint64_t wr_id)
{
	struct ibv_mr *mr = op == IBV_WR_RDMA_WRITE ? c->src_mr : c->dst_mr;
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)mr->addr,
			      .length = (uint32_t)c->bytes, .lkey = mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {.remote_addr = c->raddr, .rkey = c->rkey},
	};

	c->posted = wr_id;
	return qphs__verbs_post_send(c->ep->qp[0].qp, &wr);
}

/* The peer's check region: address and rkey from its segment descriptor. */
static int find_region(struct check *c, const char *server, const char *dev, uint32_t *crc)
{
	struct qphs_segment_desc s;
	char ask[128], prefix[96], txt[256];
	int rc;

	snprintf(ask, sizeof(ask), "qphs-checksum %s %zu", dev, c->bytes);
	if ((rc = qphs__seg_fetch(c->ep->ctx, server, crc ? ask : NULL, &s, txt, sizeof(txt)))) {
		snprintf(c->res->text, sizeof(c->res->text), "metadata request failed: %.200s", txt);
		return rc;
	}
	snprintf(prefix, sizeof(prefix), "qphs_check@%s", dev);
	rc = QPHS_ERR_METADATA;
	for (size_t i = 0; i < s.buffer_count; i++) {
		const struct qphs_seg_buffer *b = &s.buffers[i];

		if (strncmp(b->name, prefix, strlen(prefix)) || i >= b->rkey_count)
			continue;
		c->raddr = b->addr;
		c->rkey = b->rkey[i];
		rc = b->length >= c->bytes ? 0 : QPHS_ERR_INVALID_ARGUMENT;
		if (crc && sscanf(b->name + strlen(prefix), " crc32=%x", crc) != 1)
			rc = QPHS_ERR_METADATA;
	}
	qphs_segment_desc_clear(&s);
	if (rc)
		snprintf(c->res->text, sizeof(c->res->text), "peer has no usable check region for %s",
			 dev);
	return rc;
}

/* A WR that never completed still points at our buffers: move the QP to
 * ERR so the driver flushes it, and reap the flush before freeing them. */
static void flush_outstanding(struct check *c)
{
	char status[48];
	double ms;

	qphs__qp_to_err(c->ep->ctx, &c->ep->qp[0]);
	c->timeout_ms = 1000;
	wait_wc(c, c->posted, status, sizeof(status), &ms);
	qphs__ep_set_err(c->ep, QPHS_ERR_COMPLETION_TIMEOUT,
			 "data-path check: no completion; QP %u moved to ERR",
			 c->ep->qp[0].qp->qp_num);
}

static int transfer(struct check *c)
{
	struct qphs_data_result *res = c->res;
	int rc;

	if ((rc = post(c, IBV_WR_RDMA_WRITE, 1))) {
		snprintf(res->text, sizeof(res->text), "ibv_post_send(WRITE): %s", strerror(rc));
		return QPHS_ERR_COMPLETION;
	}
	if ((rc = wait_wc(c, 1, res->write_status, sizeof(res->write_status), &res->write_ms))) {
		snprintf(res->text, sizeof(res->text), "RDMA WRITE: %s", res->write_status);
		return rc;
	}
	if ((rc = post(c, IBV_WR_RDMA_READ, 2))) {
		snprintf(res->text, sizeof(res->text), "ibv_post_send(READ): %s", strerror(rc));
		return QPHS_ERR_COMPLETION;
	}
	if ((rc = wait_wc(c, 2, res->read_status, sizeof(res->read_status), &res->read_ms))) {
		snprintf(res->text, sizeof(res->text), "RDMA READ: %s", res->read_status);
		return rc;
	}
	return 0;
}

static int verify(struct check *c, const char *server, const char *dev)
{
	struct qphs_data_result *res = c->res;
	int rc;

	res->local_crc = qphs__crc32(c->src, c->bytes);
	if (memcmp(c->src, c->dst, c->bytes)) {
		snprintf(res->text, sizeof(res->text), "READ returned other bytes than written");
		return QPHS_ERR_DATA_MISMATCH;
	}
	if ((rc = find_region(c, server, dev, &res->peer_crc)))
		return rc;
	if (res->peer_crc != res->local_crc) {
		snprintf(res->text, sizeof(res->text), "peer CRC %08x differs from ours %08x",
			 res->peer_crc, res->local_crc);
		return QPHS_ERR_DATA_MISMATCH;
	}
	return 0;
}

static int run(struct check *c)
{
	struct qphs_context *ctx = c->ep->ctx;
	char *server = NULL, *dev = NULL;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	int rc = qphs_nic_path_split(c->ep->peer_path, &server, &dev);

	if (rc)
		return rc;
	c->src = aligned_alloc(4096, (c->bytes + 4095) & ~(size_t)4095);
	c->dst = aligned_alloc(4096, (c->bytes + 4095) & ~(size_t)4095);
	if (!c->src || !c->dst) {
		rc = QPHS_ERR_MEMORY;
		goto out;
	}
	fill_pattern(c->src, c->bytes);
	memset(c->dst, 0, c->bytes);
	c->src_mr = qphs__verbs_reg_mr(ctx->pd, c->src, c->bytes, access);
	c->dst_mr = qphs__verbs_reg_mr(ctx->pd, c->dst, c->bytes, access);
	if (!c->src_mr || !c->dst_mr) {
		snprintf(c->res->text, sizeof(c->res->text), "ibv_reg_mr failed");
		rc = QPHS_ERR_MEMORY;
		goto out;
	}
	if (!(rc = find_region(c, server, dev, NULL)) && !(rc = transfer(c)))
		rc = verify(c, server, dev);
	if (rc == QPHS_ERR_COMPLETION_TIMEOUT)
		flush_outstanding(c);
out:
	if (c->dst_mr)
		qphs__verbs_dereg_mr(c->dst_mr);
	if (c->src_mr)
		qphs__verbs_dereg_mr(c->src_mr);
	free(c->src);
	free(c->dst);
	free(server);
	free(dev);
	return rc;
}

int qphs_endpoint_check_data(struct qphs_endpoint *ep, size_t bytes, int timeout_ms,
			     struct qphs_data_result *res)
{
	struct check c = {.ep = ep, .res = res, .bytes = bytes, .timeout_ms = timeout_ms};
	double t0 = qphs__mono_ms();
	int rc;

	memset(res, 0, sizeof(*res));
	snprintf(res->write_status, sizeof(res->write_status), "not posted");
	snprintf(res->read_status, sizeof(res->read_status), "not posted");
	if (bytes == 0 || bytes > QPHS_CHECK_REGION_BYTES) {
		snprintf(res->text, sizeof(res->text), "bytes must be 1..%u", QPHS_CHECK_REGION_BYTES);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if (atomic_load(&ep->status) != QPHS_EP_CONNECTED) {
		snprintf(res->text, sizeof(res->text), "endpoint is %s, not CONNECTED",
			 qphs_ep_status_name(atomic_load(&ep->status)));
		return QPHS_ERR_ENDPOINT;
	}
	pthread_mutex_lock(&ep->ctx->check_lock);
	rc = run(&c);
	pthread_mutex_unlock(&ep->ctx->check_lock);
	res->total_ms = qphs__mono_ms() - t0;
	res->ok = rc == 0;
	if (rc == 0)
		snprintf(res->text, sizeof(res->text), "%zu bytes written, read back and checksummed "
			 "by the peer", bytes);
	return rc;
}
