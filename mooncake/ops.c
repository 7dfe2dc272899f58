/* The adapter's requests (docs/agent-protocol.md, "A Mooncake host").
 * connect and datapath run on a thread of their own: a Mooncake call that
 * does not return is a finding, so the request is answered when its
 * deadline passes (code ERR_COMPLETION_TIMEOUT, "hung") and the host stays
 * busy until the call returns; report, probe and raw_frame still work. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"
#include "cli/hwc.h"
#include "hs/bad_frame.h"
#include "hs/raw_frame.h"
#include "qphs/addr.h"
#include "qphs/client.h"
#include "qphs/error.h"
#include "qphs/frame.h"
#include "transfer_engine_c.h"

#define MAX_QPS 256

/* One connect or datapath, and what came of it. */
struct job {
	struct mc_host *h;
	enum mca_op op;
	char server[300], device[64];
	size_t bytes;
	bool read_only;
	double deadline;           /* monotonic ms */
	uint64_t mark;             /* log ring at the start */
	/* results */
	int code;
	char text[700];
	const char *where;
	char wc[32];
	const char *datapath;      /* "ok", "failed", "not_run" */
	bool restored;
	char peer_buffer[64];
	char call[40];             /* the Mooncake call in progress, for "hung" */
	int status;                /* the last transfer's, -1 none */
	const char *tr_op;
	bool unsupported;
	bool done, abandoned;
};

static void set_call(struct job *j, const char *what)
{
	pthread_mutex_lock(&j->h->mu);
	snprintf(j->call, sizeof(j->call), "%s", what);
	pthread_mutex_unlock(&j->h->mu);
}

/* The first failure Mooncake logged since mark, waiting up to grace ms
 * for it.  Mooncake's daemon logs a refusal before it closes the
 * connection (readString, SocketHandShakePlugin::startDaemon), yet the
 * line was seen to reach the pipe a few ms after the close had reached
 * us (glog writes at the end of the log statement, after formatting), so
 * the pipe is read again until the line is there or grace passed. */
static int first_failure_within(uint64_t mark, enum mca_side side, int grace, char *text, size_t textlen,
				char *wc, size_t wclen, const char **where)
{
	double end = mc_now_ms() + grace;
	int code;

	do {
		struct timespec ts = {0, 20 * 1000 * 1000};

		logtee_sync(200);
		code = logtee_first_failure(mark, side, text, textlen, wc, wclen, where);
		if (code || mc_now_ms() >= end)
			return code;
		nanosleep(&ts, NULL);
	} while (mc_now_ms() < end);
	return code;
}

/* The failure as Mooncake's log names it, else fallback. */
static void failure(struct job *j, int fallback, const char *fmt, const char *arg)
{
	const char *where = NULL;
	int code;

	code = first_failure_within(j->mark, MCA_SIDE_CLIENT, j->h->log_grace_ms, j->text, sizeof(j->text), j->wc,
				    sizeof(j->wc), &where);
	if (code) {
		j->code = code;
		j->where = where;
		return;
	}
	j->code = fallback;
	snprintf(j->text, sizeof(j->text), fmt, arg);
}

/* The peer's first remotely accessible buffer of j->bytes, from its
 * segment descriptor (a Metadata request of our own: the C API does not
 * hand out the descriptor openSegment fetched). */
static int peer_buffer(struct job *j, uint64_t *addr)
{
	struct qphs_segment_desc s;
	struct qphs_client_result res;
	char body[400], err[300];
	int rc, b = -1, known = 0;

	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"protocol\":\"rdma\"}", j->h->listen);
	memset(&res, 0, sizeof(res));
	rc = qphs_client_request(&j->h->cfg, j->server, QPHS_HS_METADATA, body, strlen(body), &res);
	if (rc) {
		j->code = rc;
		snprintf(j->text, sizeof(j->text), "the peer's segment descriptor: %s", res.errstr);
		free(res.reply);
		return -1;
	}
	rc = qphs_segment_desc_parse(res.reply, res.reply_len, &s, err, sizeof(err));
	free(res.reply);
	if (rc) {
		j->code = rc;
		snprintf(j->text, sizeof(j->text), "the peer's segment descriptor: %s", err);
		return -1;
	}
	for (size_t i = 0; i < s.device_count; i++)
		known |= !strcmp(s.devices[i].name, j->device);
	if (!known) {
		j->unsupported = true;
		snprintf(j->text, sizeof(j->text), "the peer has no device %s: a Mooncake initiator "
			 "takes the peer's device from its segment descriptor (RdmaTransport::"
			 "selectDevice, rdma_transport.cpp), and no C API call asks for another",
			 j->device);
	} else if ((b = mca_pick_buffer(&s, j->bytes, err, sizeof(err))) < 0) {
		j->code = QPHS_ERR_METADATA;
		snprintf(j->text, sizeof(j->text), "%s", err);
	} else {
		*addr = s.buffers[b].addr;
		snprintf(j->peer_buffer, sizeof(j->peer_buffer), "%s", s.buffers[b].name);
	}
	qphs_segment_desc_clear(&s);
	return known && b >= 0 ? 0 : -1;
}

/* One transfer; 0 when it completed, else j's outcome set. */
static int transfer(struct job *j, int seg, int opcode, void *local, uint64_t remote)
{
	int submit_rc = 0, st;

	j->tr_op = opcode == OPCODE_READ ? "READ" : "WRITE";
	set_call(j, opcode == OPCODE_READ ? "a READ" : "a WRITE");
	st = eng_transfer(j->h, seg, opcode, local, remote, j->bytes, j->deadline, &submit_rc);
	j->status = st;
	if (st == STATUS_COMPLETED)
		return 0;
	if (st < 0) {
		char what[64];

		snprintf(what, sizeof(what), "%d", submit_rc);
		failure(j, QPHS_ERR_INVALID_ARGUMENT, "submitTransfer returned Status code %s", what);
	} else if (st == STATUS_WAITING) {
		j->code = QPHS_ERR_COMPLETION_TIMEOUT;
		snprintf(j->text, sizeof(j->text), "the %s was still WAITING at the deadline", j->tr_op);
		snprintf(j->wc, sizeof(j->wc), "none");
	} else {
		failure(j, QPHS_ERR_COMPLETION, "the transfer ended %s (getTransferStatus)",
			mca_status_name(st));
	}
	return -1;
}

/* READ the peer's bytes, WRITE a pattern, READ it back, WRITE the
 * original back and READ it: the check of qphs_endpoint_check_data_opts,
 * through Mooncake's transfers. */
static void round_trip(struct job *j, int seg, uint64_t remote)
{
	uint8_t *src = j->h->staging, *back = j->h->staging + MCA_REGION_BYTES;
	uint8_t *orig = malloc(j->bytes);
	struct timespec ts;

	j->datapath = "failed";
	if (!orig) {
		j->code = QPHS_ERR_MEMORY;
		return;
	}
	if (transfer(j, seg, OPCODE_READ, back, remote))
		goto out;
	memcpy(orig, back, j->bytes);
	if (j->read_only) {
		j->datapath = "ok";
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	mca_pattern(src, j->bytes, (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 20);
	if (transfer(j, seg, OPCODE_WRITE, src, remote) || transfer(j, seg, OPCODE_READ, back, remote))
		goto out;
	if (memcmp(src, back, j->bytes)) {
		j->code = QPHS_ERR_DATA_MISMATCH;
		snprintf(j->text, sizeof(j->text), "the READ after the WRITE returned other bytes");
	}
	memcpy(src, orig, j->bytes);
	if (transfer(j, seg, OPCODE_WRITE, src, remote) || transfer(j, seg, OPCODE_READ, back, remote))
		goto out;
	j->restored = !memcmp(orig, back, j->bytes);
	if (!j->code)
		j->datapath = "ok";
out:
	free(orig);
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	uint64_t remote = 0;
	int seg;

	j->mark = logtee_mark();
	set_call(j, "openSegment");
	seg = eng_segment(j->h, j->server);
	if (seg < 0) {
		failure(j, QPHS_ERR_METADATA, "openSegment(\"%s\") failed", j->server);
	} else if (peer_buffer(j, &remote) == 0) {
		if (j->op == MCA_OP_CONNECT) {
			if (transfer(j, seg, OPCODE_READ, j->h->staging, remote) == 0)
				j->datapath = "ok";
		} else {
			round_trip(j, seg, remote);
		}
	}
	pthread_mutex_lock(&j->h->mu);
	j->done = true;
	if (j->abandoned) {
		j->h->busy = false;
		fprintf(stderr, "qplab-mooncake-agent: %s returned after its request's deadline\n", j->call);
		free(j);
	} else {
		pthread_cond_broadcast(&j->h->cv);
	}
	pthread_mutex_unlock(&j->h->mu);
	return NULL;
}

/* Runs j until it is done or its deadline (plus grace) passed.  Returns
 * 0 done, 1 abandoned (the thread frees j when its call returns). */
static int run_job(struct job *j)
{
	struct mc_host *h = j->h;
	struct timespec until;
	/* The job's own waits end at the deadline; a call that has not
	 * returned 1.5 s later is hung (the runner waits 2 s beyond it). */
	double wait = j->deadline - mc_now_ms() + 1500;
	pthread_t th;

	if (pthread_create(&th, NULL, job_main, j)) {
		j->code = QPHS_ERR_MEMORY;
		snprintf(j->text, sizeof(j->text), "cannot start a thread");
		return 0;
	}
	pthread_detach(th);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(wait / 1000);
	until.tv_nsec += (long)((long)wait % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&h->mu);
	while (!j->done && pthread_cond_timedwait(&h->cv, &h->mu, &until) != ETIMEDOUT)
		;
	if (!j->done) {
		j->abandoned = true;
		h->busy = true;
		snprintf(h->busy_what, sizeof(h->busy_what), "%s", j->call);
	}
	pthread_mutex_unlock(&h->mu);
	return !j->done;
}

/* Sleeps until the CLOCK_REALTIME barrier; returns how late we were (ns). */
static int64_t barrier(int64_t at_ns)
{
	struct timespec ts = {.tv_sec = at_ns / 1000000000, .tv_nsec = at_ns % 1000000000}, now;
	int64_t late;

	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	clock_gettime(CLOCK_REALTIME, &now);
	late = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - at_ns;
	return late > 0 ? late : 0;
}

/* A reply that no Mooncake call could be made for (no engine, busy). */
static json_object *refuse(struct mc_host *h, struct mca_request *r)
{
	char text[200];

	if (h->ctx_code[0]) {
		mca_state_last(&h->st, h->ctx_code, h->ctx_text, NULL);
		return mca_reply(r->id, r->op_name, true, h->ctx_code, h->ctx_text);
	}
	snprintf(text, sizeof(text), "busy: %s, called for an earlier request, has not returned",
		 h->busy_what);
	mca_state_last(&h->st, "ERR_BUSY", text, NULL);
	return mca_reply(r->id, r->op_name, true, "ERR_BUSY", text);
}

static json_object *op_transfer(struct mc_host *h, struct mca_request *r)
{
	struct job *j = calloc(1, sizeof(*j));
	char *server = NULL, *dev = NULL;
	int64_t late = 0;
	double t0;
	json_object *o;
	int gone;

	if (!j || !r->peer || qphs_nic_path_split(r->peer, &server, &dev)) {
		free(j);
		free(server);
		free(dev);
		return mca_reply(r->id, r->op_name, false, "ERR_INVALID_ARGUMENT",
				 "needs \"peer\", a nic path host:port@device");
	}
	j->h = h;
	j->op = r->op;
	j->status = -1;
	j->datapath = "not_run";
	j->bytes = r->op == MCA_OP_CONNECT ? MCA_CONNECT_READ : (size_t)(r->bytes > 0 ? r->bytes : 4096);
	j->read_only = r->read_only;
	snprintf(j->server, sizeof(j->server), "%s", server);
	snprintf(j->device, sizeof(j->device), "%s", dev);
	free(server);
	free(dev);
	if (j->bytes > MCA_REGION_BYTES) {
		free(j);
		return mca_reply(r->id, r->op_name, false, "ERR_INVALID_ARGUMENT",
				 "datapath: \"bytes\" is 1..1048576");
	}
	if (r->op == MCA_OP_CONNECT && r->at_realtime_ns > 0)
		late = barrier(r->at_realtime_ns);
	t0 = mc_now_ms();
	j->deadline = t0 + (r->deadline_ms > 0 ? r->deadline_ms : r->op == MCA_OP_CONNECT ? 15000 : 10000);
	gone = run_job(j);
	if (r->op == MCA_OP_CONNECT) {
		h->st.connects++;
		h->st.t_total = (long)(mc_now_ms() - t0 + 0.5);
	}
	if (gone) {
		char text[200];

		snprintf(text, sizeof(text), "hung: %s did not return within the request's deadline "
			 "(%.0f ms)", h->busy_what, mc_now_ms() - t0);
		mca_state_last(&h->st, "ERR_COMPLETION_TIMEOUT", text, NULL);
		o = mca_reply(r->id, r->op_name, true, "ERR_COMPLETION_TIMEOUT", text);
		json_object_object_add(o, "hung", json_object_new_string(h->busy_what));
		json_object_object_add(o, "datapath", json_object_new_string("failed"));
		json_object_object_add(o, "wc_status", json_object_new_string("none"));
		return o;
	}
	if (j->unsupported) {
		o = mca_unsupported(r->id, r->op_name, j->text);
		free(j);
		return o;
	}
	if (j->status >= 0) {
		snprintf(h->st.transfer_op, sizeof(h->st.transfer_op), "%s", j->tr_op);
		snprintf(h->st.transfer_status, sizeof(h->st.transfer_status), "%s", mca_status_name(j->status));
	}
	mca_state_last(&h->st, j->code ? qphs_errname(j->code) : "OK", j->code ? j->text : "", j->where);
	o = mca_reply(r->id, r->op_name, true, h->st.last_code, h->st.last_error);
	json_object_object_add(o, "where", j->where ? json_object_new_string(j->where) : NULL);
	json_object_object_add(o, "transfer", json_object_new_string(h->st.transfer_status));
	if (r->op == MCA_OP_CONNECT) {
		json_object *t = json_object_new_object();

		json_object_object_add(t, "total", json_object_new_int64(h->st.t_total));
		json_object_object_add(o, "time_ms", t);
		json_object_object_add(o, "late_ns", json_object_new_int64(late));
	} else {
		json_object_object_add(o, "datapath", json_object_new_string(j->datapath));
		json_object_object_add(o, "wc_waited_ms", json_object_new_int64((int64_t)(mc_now_ms() - t0 + 0.5)));
		json_object_object_add(o, "wc_status", json_object_new_string(
			!strcmp(j->datapath, "ok") ? "IBV_WC_SUCCESS" : j->wc[0] ? j->wc : "none"));
		json_object_object_add(o, "read_only", json_object_new_boolean(j->read_only));
		json_object_object_add(o, "restored", json_object_new_boolean(j->restored));
		json_object_object_add(o, "peer_checksum", json_object_new_boolean(0));
		json_object_object_add(o, "peer_buffer", json_object_new_string(j->peer_buffer));
	}
	free(j);
	return o;
}

/* The kernel's view of this host's QPs, as `rdma resource show qp` gives
 * it, read over RDMA netlink in this process: with a transfer left
 * WAITING, Mooncake's workers spin on every CPU (report_timing, below),
 * and starting `rdma` under them took up to 12.8 s in the 7.2 VM, so a
 * report missed the runner's deadline.  QP 1 (GSI, the kernel's) left
 * out. */
static int device_qps(const struct mc_host *h, struct mca_qp *qps, int max)
{
	static struct qplab_qp all[MAX_QPS + 2];
	char err[200];
	int n = qplab_qps_read(h->device, all, MAX_QPS + 2, err, sizeof(err)), k = 0;

	if (n < 0) {
		fprintf(stderr, "qplab-mooncake-agent %s: %s\n", h->host, err);
		return -1;
	}
	for (int i = 0; i < n && i < MAX_QPS + 2; i++) {
		if (all[i].qpn == 1)
			continue;
		if (k < max) {
			qps[k].qpn = all[i].qpn;
			snprintf(qps[k].state, sizeof(qps[k].state), "%s", qplab_qp_state_name(all[i].state));
		}
		k++;
	}
	return k > max ? max : k;
}

/* The process's CPU time (user + system, all threads) in ms. */
static double cpu_ms(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* A report slower than a second says where its time went, and how much
 * CPU the process burnt since the previous one: Mooncake's transfer
 * workers never park while a slice is outstanding (WorkerPool::
 * transferWorker, worker_pool.cpp, sleeps only when every submitted slice
 * is processed), so a transfer left WAITING keeps MC_WORKERS_PER_CTX (2)
 * threads spinning, and what the report does competes with them. */
static void report_timing(struct mc_host *h, double t0, double t_rdma, double t_links, double t_end)
{
	double cpu = cpu_ms(), wall = t_end - h->report_wall_ms;

	if (t_end - t0 >= 1000)
		fprintf(stderr, "qplab-mooncake-agent %s: report took %.0f ms (the QPs "
			"%.0f ms, showLinks %.0f ms, log %.0f ms); CPU since the previous report "
			"%.0f ms in %.0f ms\n", h->host, t_end - t0, t_rdma - t0, t_links - t_rdma,
			t_end - t_links, cpu - h->report_cpu_ms, wall);
	h->report_cpu_ms = cpu;
	h->report_wall_ms = t_end;
}

static json_object *op_report(struct mc_host *h, struct mca_request *r)
{
	struct mca_qp qps[MAX_QPS];
	double t0 = mc_now_ms(), t_rdma, t_links;
	int n = device_qps(h, qps, MAX_QPS), gid_index = -1;
	char gid[64] = "";
	uint64_t lost = 0, mark;
	json_object *lines;

	t_rdma = mc_now_ms();
	pthread_mutex_lock(&h->mu);
	if (!h->busy)
		eng_gid(h, &gid_index, gid, sizeof(gid));
	pthread_mutex_unlock(&h->mu);
	t_links = mc_now_ms();
	logtee_sync(200);
	mark = logtee_mark();
	lines = logtee_since(h->st.report_mark, &lost);
	h->st.report_mark = mark;
	report_timing(h, t0, t_rdma, t_links, mc_now_ms());
	return mca_report(r->id, &h->st, qps, n, gid_index, gid, lines, lost);
}

static json_object *op_probe(struct mc_host *h, struct mca_request *r)
{
	struct qphs_client_result res;
	struct qphs_config cfg = h->cfg;
	json_object *o;
	int rc;

	cfg.reply_timeout_ms = r->deadline_ms > 0 ? r->deadline_ms : 2000;
	cfg.connect_timeout_s = 1 + cfg.reply_timeout_ms / 1000;
	memset(&res, 0, sizeof(res));
	rc = qphs_client_request(&cfg, r->address ? r->address : h->listen, QPHS_HS_PROBE, "{}", 2, &res);
	o = mca_reply(r->id, "probe", true, rc ? qphs_errname(rc) : "OK", rc ? res.errstr : "");
	json_object_object_add(o, "alive", json_object_new_boolean(rc == 0));
	json_object_object_add(o, "time_ms", json_object_new_int64((int64_t)(res.total_ms + 0.5)));
	free(res.reply);
	return o;
}

/* Bytes to Mooncake's daemon; its reason is the line it logged. */
static json_object *op_raw_frame(struct mc_host *h, struct mca_request *r)
{
	const char *addr = r->address ? r->address : h->listen, *where = NULL;
	int ms = r->deadline_ms > 0 ? r->deadline_ms : 2000, fd, alive, code = 0;
	struct qplab_raw_outcome out = {.word = "silent"};
	uint8_t *bytes = NULL;
	char err[300] = "", text[700] = "";
	json_object *o, *de = NULL;
	uint64_t mark;
	long len;

	if (r->kind && !strcmp(r->kind, "stale_ack"))
		return mca_unsupported(r->id, "raw_frame", "stale_ack: a Mooncake host's QP numbers "
				       "and ready-ACKs are its engine's own; the C API sends none");
	if ((len = qplab_raw_request_bytes(r->hex, r->kind, &bytes, err, sizeof(err))) < 0) {
		free(bytes);
		return mca_reply(r->id, "raw_frame", false, "ERR_INVALID_ARGUMENT", err);
	}
	mark = logtee_mark();
	fd = qplab_raw_dial(addr, ms, err, sizeof(err));
	if (fd < 0) {
		free(bytes);
		return mca_reply(r->id, "raw_frame", false, "ERR_CONNECT_REFUSED", err);
	}
	qplab_raw_exchange(fd, bytes, (size_t)len, ms, &out);
	close(fd);
	free(bytes);
	if (!strcmp(addr, h->listen))
		code = first_failure_within(mark, MCA_SIDE_DAEMON, h->log_grace_ms, text, sizeof(text), NULL, 0, &where);
	alive = qplab_raw_probe(&h->cfg, addr, ms);
	mca_state_last(&h->st, code ? qphs_errname(code) : "OK", text, where);
	o = mca_reply(r->id, "raw_frame", true, h->st.last_code, text);
	json_object_object_add(o, "frame_outcome", json_object_new_string(out.word));
	json_object_object_add(o, "reply_hex", json_object_new_string(out.hex));
	json_object_object_add(o, "waited_ms", json_object_new_int64((int64_t)(out.waited_ms + 0.5)));
	json_object_object_add(o, "daemon_alive", json_object_new_boolean(alive));
	if (code) {
		de = json_object_new_object();
		json_object_object_add(de, "code", json_object_new_string(qphs_errname(code)));
		json_object_object_add(de, "text", json_object_new_string(text));
		json_object_object_add(de, "where", json_object_new_string(where));
	}
	json_object_object_add(o, "daemon_error", de);
	return o;
}

json_object *ops_serve(struct mc_host *h, struct mca_request *r, int *quit)
{
	bool busy;

	switch (r->op) {
	case MCA_OP_CONNECT:
	case MCA_OP_DATAPATH:
		pthread_mutex_lock(&h->mu);
		busy = h->busy;
		pthread_mutex_unlock(&h->mu);
		if (busy || h->ctx_code[0])
			return refuse(h, r);
		return op_transfer(h, r);
	case MCA_OP_REPORT:
		return op_report(h, r);
	case MCA_OP_DISCONNECT:
		return mca_unsupported(r->id, "disconnect", "disconnect: Mooncake's C API "
				       "(transfer_engine_c.h) has no call that drops an endpoint "
				       "(closeSegment does nothing)");
	case MCA_OP_PROBE:
		return op_probe(h, r);
	case MCA_OP_RAW_FRAME:
		return op_raw_frame(h, r);
	case MCA_OP_EXIT:
		*quit = 1;
		return mca_reply(r->id, "exit", true, "OK", "");
	}
	return mca_reply(r->id, r->op_name, false, "ERR_INVALID_ARGUMENT", "unknown op");
}
