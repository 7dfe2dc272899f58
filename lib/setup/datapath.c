/*
 * Data-path check: proves the QPs carry data, not just that they reached
 * RTS (mixed MTUs and wrong GIDs pass RTR and fail here), against any
 * peer that publishes a segment descriptor: qplab, or Mooncake.  Every QP
 * of the endpoint makes the round trip on its own, QP 0 first: local QP i
 * is connected to the peer's QP i, and only posting on QP i proves it.
 *
 * The peer's buffer and key are found as a Mooncake initiator finds them
 * (codec/segpick.c): the first remotely accessible buffer that holds the
 * range, the rkey of the device we are connected to.  The peer's memory
 * is its own, so it is left as it was: RDMA READ its bytes, RDMA WRITE a
 * per-run random pattern, READ it back and compare, WRITE the original
 * bytes back and READ them to prove it.  A qplab peer also checksums its
 * copy of the pattern (the "qphs" extension of its descriptor); a read-only
 * check only READs.  Every wait has a deadline: some rxe faults never
 * complete.  The first QP that fails ends the check (rdma.h says why).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "codec/segpick.h"
#include "handshake.h"
#include "qphs/error.h"
#include "setup_int.h"

enum { BUF_ORIG, BUF_SRC, BUF_DST, NBUF };

struct check {
	struct qphs_endpoint *ep;
	struct qphs_data_result *res;
	const struct qphs_data_opts *o;
	uint8_t *buf[NBUF];
	struct ibv_mr *mr[NBUF];
	uint64_t raddr;
	uint32_t rkey;
	uint64_t posted;  /* wr_id of the last WR posted */
	int qi;           /* the QP posted on (index into ep->qp) */
	int have_orig;    /* buf[BUF_ORIG] holds the peer's bytes */
	int told_posted;  /* o->on_posted was called */
	double write_ms, read_ms; /* qi's last WRITE (or SEND) and READ */
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

/* A driver may deliver an error completion before its QP leaves RTS: rxe
 * posts it first and moves the QP to ERR right after (rxe_comp.c
 * rxe_completer, COMPST_ERROR: do_complete, then rxe_qp_error), so a state
 * read at once can still say RTS.  Wait, bounded, until the QP the error
 * came on is in ERR, so the report shows the state the driver settles in
 * (a driver that never moves it shows RTS after the bound). */
#define ERR_SETTLE_MS 200
static void settle_after_error(struct check *c)
{
	double end = qphs__mono_ms() + ERR_SETTLE_MS;
	struct timespec ts = {0, 1000000};

	while (qphs__qp_state(c->ep->ctx, &c->ep->qp[c->qi]) != IBV_QPS_ERR &&
	       qphs__mono_ms() < end)
		nanosleep(&ts, NULL);
}

/* Polls for wr_id with a deadline; names the status or "no completion". */
static int wait_wc(struct check *c, uint64_t wr_id, int timeout_ms, char *status, size_t len,
		   double *ms)
{
	double t0 = qphs__mono_ms(), end = t0 + timeout_ms;
	struct ibv_wc wc;

	for (;;) {
		int n = qphs__verbs_poll_cq(c->ep->ctx->cq, 1, &wc);

		if (n > 0 && wc.wr_id == wr_id) {
			*ms = qphs__mono_ms() - t0;
			snprintf(status, len, "%s", qphs__verbs_wc_status_name(wc.status));
			if (wc.status == IBV_WC_SUCCESS)
				return 0;
			settle_after_error(c);
			return QPHS_ERR_COMPLETION;
		}
		if (n < 0 || qphs__mono_ms() > end) {
			*ms = qphs__mono_ms() - t0;
			snprintf(status, len, "no completion within %d ms", timeout_ms);
			return QPHS_ERR_COMPLETION_TIMEOUT;
		}
		if (n == 0) {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
}

/* One WRITE (SEND) from buf[which] or READ into it on QP c->qi, waited
 * for; its completion goes into that QP's result. */
static int op(struct check *c, enum ibv_wr_opcode opcode, int which)
{
	struct qphs_data_qp_result *q = &c->res->qp[c->qi];
	int reading = opcode == IBV_WR_RDMA_READ;
	char *status = reading ? q->read_status : q->write_status;
	size_t slen = reading ? sizeof(q->read_status) : sizeof(q->write_status);
	double *ms = reading ? &c->read_ms : &c->write_ms;
	struct ibv_mr *mr = c->mr[which];
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)mr->addr,
			      .length = (uint32_t)c->o->bytes, .lkey = mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = ++c->posted, .sg_list = &sge, .num_sge = 1, .opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {.remote_addr = c->raddr, .rkey = c->rkey},
	};
	const char *name = opcode == IBV_WR_RDMA_WRITE ? "WRITE"
			   : opcode == IBV_WR_SEND ? "SEND" : "READ";
	int rc;

	if (opcode != IBV_WR_SEND)
		c->res->rkey = c->rkey;
	q->ran = 1;
	if ((rc = qphs__verbs_post_send(c->ep->qp[c->qi].qp, &wr))) {
		snprintf(status, slen, "not posted");
		snprintf(c->res->text, sizeof(c->res->text), "ibv_post_send(%s): %s", name,
			 strerror(rc));
		return QPHS_ERR_COMPLETION;
	}
	if (c->o->on_posted && !c->told_posted) {
		c->told_posted = 1;
		c->o->on_posted(c->o->on_posted_arg);
	}
	if ((rc = wait_wc(c, c->posted, c->o->timeout_ms, status, slen, ms)))
		snprintf(c->res->text, sizeof(c->res->text), "RDMA %s: %s", name, status);
	return rc;
}

/* The rkey to post, per the caller's rkey_mode; remembers the
 * descriptor's for a later stale check.  check_lock held. */
static int pick_rkey(struct check *c, uint32_t published)
{
	uint32_t stale = c->ep->last_rkey;

	c->ep->last_rkey = published;
	switch (c->o->rkey_mode) {
	case QPHS_RKEY_BAD:
		c->rkey = published ^ 0xffu;
		return 0;
	case QPHS_RKEY_STALE:
		if (!stale) {
			snprintf(c->res->text, sizeof(c->res->text), "no earlier check to this peer "
				 "found an rkey to use stale");
			return QPHS_ERR_INVALID_ARGUMENT;
		}
		c->rkey = stale;
		return 0;
	default:
		c->rkey = published;
		return 0;
	}
}

/* The peer's buffer and key from its segment descriptor; notes whether a
 * Mooncake initiator could reach it the same way. */
static int find_target(struct check *c, const char *server, const char *dev)
{
	struct qphs_segment_desc s;
	struct qphs__seg_target t;
	char txt[256];
	int rc = qphs__seg_fetch(c->ep->ctx, server, NULL, &s, txt, sizeof(txt));

	if (rc) {
		snprintf(c->res->text, sizeof(c->res->text), "metadata request failed: %.200s", txt);
		return rc;
	}
	rc = qphs__seg_pick(&s, dev, c->o->bytes, &t, txt, sizeof(txt));
	if (rc) {
		snprintf(c->res->text, sizeof(c->res->text), "%s", txt);
	} else {
		c->raddr = t.addr;
		c->res->descriptor_rkey = t.rkey;
		rc = pick_rkey(c, t.rkey);
		c->res->peer_checksum = s.qphs_checksum;
		snprintf(c->res->peer_buffer, sizeof(c->res->peer_buffer), "%s",
			 s.buffers[t.buffer].name);
		if (!t.mooncake_ok) {
			pthread_mutex_lock(&c->ep->lock);
			char w[QPHS__TEXT_LEN];

			snprintf(w, sizeof(w), "[Handshake] %s's segment descriptor: %s", server,
				 t.mooncake_why);
			qphs__ep_set_text(c->ep, QPHS__EP_WARNING, "%s", w);
			QPHS_WARN("%s", w);
			pthread_mutex_unlock(&c->ep->lock);
		}
	}
	qphs_segment_desc_clear(&s);
	return rc;
}

/* A qplab peer's CRC of its copy: the "qphs-checksum LEN" extension. */
static int peer_crc(struct check *c, const char *server, uint32_t *crc)
{
	struct qphs_segment_desc s;
	char ask[64], txt[256];
	int rc;

	snprintf(ask, sizeof(ask), "qphs-checksum %zu", c->o->bytes);
	if ((rc = qphs__seg_fetch(c->ep->ctx, server, ask, &s, txt, sizeof(txt)))) {
		snprintf(c->res->text, sizeof(c->res->text), "checksum request failed: %.200s",
			 txt);
		return rc;
	}
	rc = s.has_crc && s.crc_len == c->o->bytes ? 0 : QPHS_ERR_METADATA;
	*crc = s.crc32;
	if (rc)
		snprintf(c->res->text, sizeof(c->res->text), "the peer advertised the checksum "
			 "extension but answered no CRC of %zu bytes", c->o->bytes);
	qphs_segment_desc_clear(&s);
	return rc;
}

/* Pattern out, read back, compared (and checksummed by a qplab peer). */
static int write_and_verify(struct check *c, const char *server)
{
	struct qphs_data_result *res = c->res;
	int rc;

	fill_pattern(c->buf[BUF_SRC], c->o->bytes);
	memset(c->buf[BUF_DST], 0, c->o->bytes);
	res->restored = 0;
	if ((rc = op(c, IBV_WR_RDMA_WRITE, BUF_SRC)) || (rc = op(c, IBV_WR_RDMA_READ, BUF_DST)))
		return rc;
	res->local_crc = qphs__crc32(c->buf[BUF_SRC], c->o->bytes);
	if (memcmp(c->buf[BUF_SRC], c->buf[BUF_DST], c->o->bytes)) {
		snprintf(res->text, sizeof(res->text), "READ returned other bytes than written");
		return QPHS_ERR_DATA_MISMATCH;
	}
	if (!res->peer_checksum)
		return 0;
	if ((rc = peer_crc(c, server, &res->peer_crc)))
		return rc;
	if (res->peer_crc != res->local_crc) {
		snprintf(res->text, sizeof(res->text), "peer CRC %08x differs from ours %08x",
			 res->peer_crc, res->local_crc);
		return QPHS_ERR_DATA_MISMATCH;
	}
	return 0;
}

/* The peer's own bytes back where they were, and read to prove it. */
static int restore(struct check *c)
{
	int rc;

	memset(c->buf[BUF_DST], 0, c->o->bytes);
	if ((rc = op(c, IBV_WR_RDMA_WRITE, BUF_ORIG)) || (rc = op(c, IBV_WR_RDMA_READ, BUF_DST)))
		return rc;
	c->res->restored = !memcmp(c->buf[BUF_ORIG], c->buf[BUF_DST], c->o->bytes);
	if (!c->res->restored) {
		snprintf(c->res->text, sizeof(c->res->text), "the peer's original bytes did not "
			 "read back after they were written back");
		return QPHS_ERR_DATA_MISMATCH;
	}
	return 0;
}

/* QP c->qi's round trip.  The first READ that succeeds on any QP gives
 * the peer's original bytes; later QPs READ into the scratch buffer, so a
 * QP that failed between its WRITE and its restore cannot pass its pattern
 * off as the original. */
static int transfer(struct check *c, const char *server)
{
	int rc = op(c, IBV_WR_RDMA_READ, c->have_orig ? BUF_DST : BUF_ORIG);
	int rc2;

	if (!rc)
		c->have_orig = 1;
	if (rc || c->o->read_only)
		return rc;
	rc = write_and_verify(c, server);
	/* Restore whatever the outcome, as long as the QP still carries data. */
	if (rc == QPHS_ERR_COMPLETION_TIMEOUT || rc == QPHS_ERR_COMPLETION)
		return rc;
	rc2 = restore(c);
	return rc ? rc : rc2;
}

/* A WR that never completed still points at our buffers: move the QP to
 * ERR so the driver flushes it, and reap the flush before freeing them. */
static void flush_outstanding(struct check *c)
{
	char status[48];
	double ms;

	qphs__qp_to_err(c->ep->ctx, &c->ep->qp[c->qi]);
	wait_wc(c, c->posted, QPHS_DATA_FLUSH_WAIT_MS, status, sizeof(status), &ms);
	qphs__ep_set_err(c->ep, QPHS_ERR_COMPLETION_TIMEOUT,
			 "data-path check: no completion; QP %u moved to ERR",
			 c->ep->qp[c->qi].qp->qp_num);
}

static int buffers(struct check *c)
{
	size_t len = (c->o->bytes + 4095) & ~(size_t)4095;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;

	for (int i = 0; i < NBUF; i++) {
		if (!(c->buf[i] = aligned_alloc(4096, len)))
			return QPHS_ERR_MEMORY;
		memset(c->buf[i], 0, len);
		if (!(c->mr[i] = qphs__verbs_reg_mr(c->ep->ctx->pd, c->buf[i], c->o->bytes, access))) {
			snprintf(c->res->text, sizeof(c->res->text), "ibv_reg_mr failed");
			return QPHS_ERR_MEMORY;
		}
	}
	return 0;
}

/* The QPs' numbers, before anything is posted: the result names every QP,
 * those not run too.  QPHS_DATA_WRITE and _SEND use QP 0 only. */
static void name_qps(struct check *c)
{
	struct qphs_endpoint *ep = c->ep;

	c->res->nqp = c->o->verb == QPHS_DATA_CHECK ? ep->nqp : 1;
	pthread_mutex_lock(&ep->lock);
	for (int i = 0; i < c->res->nqp; i++) {
		struct qphs_data_qp_result *q = &c->res->qp[i];

		q->qpn = ep->qp[i].qp ? ep->qp[i].qp->qp_num : 0;
		q->peer_qpn = ep->peer_qpn ? ep->peer_qpn[i] : 0;
		snprintf(q->write_status, sizeof(q->write_status), "not posted");
		snprintf(q->read_status, sizeof(q->read_status), "not posted");
	}
	pthread_mutex_unlock(&ep->lock);
}

/* The QP's outcome into its result, and into the check's top-level fields
 * when it failed or is the last one. */
static void qp_done(struct check *c, int rc, double t0)
{
	struct qphs_data_result *res = c->res;
	struct qphs_data_qp_result *q = &res->qp[c->qi];

	q->ok = rc == 0;
	q->ms = qphs__mono_ms() - t0;
	if (rc && res->failed_qp < 0)
		res->failed_qp = c->qi;
	memcpy(res->write_status, q->write_status, sizeof(res->write_status));
	memcpy(res->read_status, q->read_status, sizeof(res->read_status));
	res->write_ms = c->write_ms;
	res->read_ms = c->read_ms;
}

static int each_qp(struct check *c, const char *server)
{
	int rc = 0;

	for (c->qi = 0; c->qi < c->res->nqp; c->qi++) {
		double t0 = qphs__mono_ms();

		c->write_ms = c->read_ms = 0;
		rc = transfer(c, server);
		qp_done(c, rc, t0);
		if (rc)
			break;
	}
	return rc;
}

/* Reaps up to want completions of the burst until the deadline; counts
 * the failed ones and names the first. */
static int burst_reap(struct check *c, int want, double end, int *bad, char *first, size_t len)
{
	struct ibv_wc wc[16];
	int got = 0;

	while (got < want && qphs__mono_ms() <= end) {
		int n = qphs__verbs_poll_cq(c->ep->ctx->cq, 16, wc);

		for (int i = 0; i < n; i++, got++)
			if (wc[i].status != IBV_WC_SUCCESS && !(*bad)++)
				snprintf(first, len, "%s", qphs__verbs_wc_status_name(wc[i].status));
		if (n < 0)
			break;
		if (n == 0) {
			struct timespec ts = {0, 200000};
			nanosleep(&ts, NULL);
		}
	}
	return got;
}

/* QPHS_DATA_BURST (rdma.h): more signalled WRs than the CQ may hold, as
 * an application without Mooncake's guard posts them (Mooncake 3b5a594
 * RdmaEndPoint::submitPostSend, rdma_endpoint.cpp, posts no more than
 * max_cqe minus the CQ's outstanding count).  What rxe does with a
 * completion that finds its CQ full is the driver's (rxe_cq.c
 * rxe_cq_post): the text records it. */
static int burst(struct check *c)
{
	struct qphs_data_qp_result *q = &c->res->qp[0];
	struct qphs_context *ctx = c->ep->ctx;
	struct ibv_mr *mr = c->mr[BUF_SRC];
	struct ibv_sge sge = {.addr = (uint64_t)(uintptr_t)mr->addr,
			      .length = (uint32_t)c->o->bytes, .lkey = mr->lkey};
	char first[sizeof(q->write_status)] = "", perr[80] = ""; /* first goes into write_status */
	uint32_t ev0, ev1;
	double t0 = qphs__mono_ms(), end;
	int posted = 0, got, bad = 0, rc = 0, state;
	struct timespec hold = {QPHS_BURST_HOLD_MS / 1000, (QPHS_BURST_HOLD_MS % 1000) * 1000000L};

	pthread_mutex_lock(&ctx->event_lock);
	ev0 = ctx->event_count[IBV_EVENT_CQ_ERR];
	pthread_mutex_unlock(&ctx->event_lock);
	qphs_pattern_fill(c->buf[BUF_SRC], c->o->bytes, c->o->seed);
	c->res->rkey = c->rkey;
	q->ran = 1;
	for (; posted < c->o->count; posted++) {
		struct ibv_send_wr wr = {
			.wr_id = ++c->posted, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = {.remote_addr = c->raddr, .rkey = c->rkey},
		};
		int e = qphs__verbs_post_send(c->ep->qp[0].qp, &wr);

		if (e) {
			c->posted--;
			snprintf(perr, sizeof(perr), "; ibv_post_send refused WR %d: %s", posted + 1,
				 strerror(e));
			break;
		}
	}
	while (nanosleep(&hold, &hold))
		;
	end = qphs__mono_ms() + c->o->timeout_ms;
	got = burst_reap(c, posted, end, &bad, first, sizeof(first));
	state = qphs__qp_state(ctx, &c->ep->qp[0]);
	pthread_mutex_lock(&ctx->event_lock);
	ev1 = ctx->event_count[IBV_EVENT_CQ_ERR];
	pthread_mutex_unlock(&ctx->event_lock);
	c->write_ms = qphs__mono_ms() - t0;
	snprintf(q->write_status, sizeof(q->write_status), "%s",
		 bad ? first : got < posted ? "no completion" : posted ? "IBV_WC_SUCCESS"
								  : "not posted");
	rc = bad || perr[0] ? QPHS_ERR_COMPLETION : got < posted ? QPHS_ERR_COMPLETION_TIMEOUT : 0;
	snprintf(c->res->text, sizeof(c->res->text),
		 "burst: %d of %d signalled WRITEs completed (%d failed) within %d ms of a %d ms "
		 "hold; CQ of %d entries; QP 0 %s before any flush; IBV_EVENT_CQ_ERR x%u%s",
		 got, posted, bad, c->o->timeout_ms, QPHS_BURST_HOLD_MS, ctx->cq->cqe,
		 state < 0 ? "unreadable" : qphs__verbs_qp_state_name(state), ev1 - ev0, perr);
	return rc;
}

static int run(struct check *c)
{
	char *server = NULL, *dev = NULL;
	double t0 = qphs__mono_ms();
	int rc = qphs_nic_path_split(c->ep->peer_path, &server, &dev);

	if (rc)
		return rc;
	name_qps(c);
	if ((rc = buffers(c)))
		;
	else if (c->o->verb == QPHS_DATA_SEND) {
		rc = op(c, IBV_WR_SEND, BUF_SRC);
		qp_done(c, rc, t0);
	} else if (c->o->verb == QPHS_DATA_WRITE && !(rc = find_target(c, server, dev))) {
		qphs_pattern_fill(c->buf[BUF_SRC], c->o->bytes, c->o->seed);
		c->res->local_crc = qphs__crc32(c->buf[BUF_SRC], c->o->bytes);
		rc = op(c, IBV_WR_RDMA_WRITE, BUF_SRC);
		qp_done(c, rc, t0);
	} else if (c->o->verb == QPHS_DATA_CHECK && !(rc = find_target(c, server, dev)))
		rc = each_qp(c, server);
	else if (c->o->verb == QPHS_DATA_BURST && !(rc = find_target(c, server, dev))) {
		rc = burst(c);
		qp_done(c, rc, t0);
	}
	if (rc == QPHS_ERR_COMPLETION_TIMEOUT)
		flush_outstanding(c);
	for (int i = NBUF - 1; i >= 0; i--) {
		if (c->mr[i])
			qphs__verbs_dereg_mr(c->mr[i]);
		free(c->buf[i]);
	}
	free(server);
	free(dev);
	return rc;
}

long long qphs_data_check_max_wait_ms(const struct qphs_data_opts *o, int nqp)
{
	long long per = o->timeout_ms > 0 ? o->timeout_ms : 1;
	int waits = o->read_only ? 1 : QPHS_DATA_CHECK_WAITS_PER_QP;

	if (nqp < 1 || nqp > QPHS_EP_MAX_QPS)
		nqp = QPHS_EP_MAX_QPS;
	if (o->verb != QPHS_DATA_CHECK)
		waits = nqp = 1;
	return per * waits * nqp + QPHS_DATA_FLUSH_WAIT_MS;
}

int qphs_endpoint_check_data_opts(struct qphs_endpoint *ep, const struct qphs_data_opts *o,
				  struct qphs_data_result *res)
{
	struct check c = {.ep = ep, .res = res, .o = o};
	double t0 = qphs__mono_ms();
	int rc;

	memset(res, 0, sizeof(*res));
	res->failed_qp = -1;
	res->read_only = o->read_only;
	snprintf(res->write_status, sizeof(res->write_status), "not posted");
	snprintf(res->read_status, sizeof(res->read_status), "not posted");
	if (o->bytes == 0 || o->bytes > QPHS_CHECK_REGION_BYTES || o->timeout_ms <= 0 ||
	    o->rkey_mode < QPHS_RKEY_DESCRIPTOR || o->rkey_mode > QPHS_RKEY_STALE ||
	    o->verb < QPHS_DATA_CHECK || o->verb > QPHS_DATA_BURST ||
	    (o->verb == QPHS_DATA_BURST && (o->count < 1 || o->count > QPHS_BURST_MAX)) ||
	    (o->verb != QPHS_DATA_CHECK && o->read_only)) {
		snprintf(res->text, sizeof(res->text), "bytes must be 1..%u, timeout_ms above 0, "
			 "rkey_mode and verb known, a burst's count 1..%d", QPHS_CHECK_REGION_BYTES,
			 QPHS_BURST_MAX);
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
	if (rc && res->failed_qp >= 0 && res->nqp > 1) {
		size_t n = strnlen(res->text, sizeof(res->text) - 1);

		snprintf(res->text + n, sizeof(res->text) - n, " (QP %d of %d, qp_num %u)",
			 res->failed_qp, res->nqp, res->qp[res->failed_qp].qpn);
	}
	if (o->verb == QPHS_DATA_BURST)
		; /* burst() wrote what came back, success or not */
	else if (rc == 0 && o->verb == QPHS_DATA_SEND)
		snprintf(res->text, sizeof(res->text), "%zu bytes sent", o->bytes);
	else if (rc == 0 && o->verb == QPHS_DATA_WRITE)
		snprintf(res->text, sizeof(res->text), "%zu bytes written to \"%s\" (not read "
			 "back: the peer verifies them)", o->bytes, res->peer_buffer);
	else if (rc == 0 && o->read_only)
		snprintf(res->text, sizeof(res->text), "%zu bytes read from \"%s\"", o->bytes,
			 res->peer_buffer);
	else if (rc == 0)
		snprintf(res->text, sizeof(res->text), "%zu bytes written to \"%s\", read back%s, "
			 "and the peer's own bytes restored", o->bytes, res->peer_buffer,
			 res->peer_checksum ? ", checksummed by the peer" : "");
	if (rc == 0 && o->verb == QPHS_DATA_CHECK && res->nqp > 1) {
		size_t n = strnlen(res->text, sizeof(res->text) - 1);

		snprintf(res->text + n, sizeof(res->text) - n, ", on each of %d QPs", res->nqp);
	}
	return rc;
}

int qphs_endpoint_check_data(struct qphs_endpoint *ep, size_t bytes, int timeout_ms,
			     struct qphs_data_result *res)
{
	const struct qphs_data_opts o = {.bytes = bytes, .timeout_ms = timeout_ms};

	return qphs_endpoint_check_data_opts(ep, &o, res);
}
