/*
 * setup_floor — the least a setup in Mooncake's protocol and QP shape
 * costs on these rxe devices, measured, not estimated (run by
 * bench/rdma-vm.sh inside the lab VM, beside bench/rdma_setup and
 * rdma-core's cmtime).
 *
 * It is not libqphs and not a handshake implementation: raw verbs and
 * blocking sockets, no JSON, no daemon, no hand-off between threads but
 * the accept thread's (below), one context a side.  It does only the work the
 * comparison rules fix, with the wake-ups that work needs:
 *
 *   active  (one thread per connection, all released at once): its QPs
 *           created (cold, cmshape) or taken from an array made before
 *           the timed part (warm); one TCP connection for the request
 *           (socket, connect, send, recv, close); RESET, INIT, RTR, RTS on
 *           each QP; one TCP connection for the ready ACK.  Its sockets
 *           make libqphs's two choices that spare segments: delayed ACKs
 *           asked for before the connect, and the reply's FIN sent with
 *           it (docs/hs.md).
 *   passive (--workers threads blocked in accept on one listener): a
 *           request's QPs created or taken, RESET, INIT, RTR, RTS on each,
 *           the reply; an ACK answered.  Each message is one connection,
 *           as in Mooncake's protocol.  When more connect at once than
 *           Mooncake's accept queue holds (128), one more thread only
 *           accepts and hands each connection to a worker: workers that
 *           set QPs up between accepts would let the queue fill.  That
 *           hand-off costs time where the queue suffices, so it is taken
 *           only then (--acceptor and --no-acceptor decide instead).
 *
 * The shapes are bench/rdma_setup's: cold and warm take libqphs's defaults
 * (qphs_config_init: Mooncake's two QPs an endpoint of 256 WRs x 4 SGEs
 * with 64 bytes inline), cmshape is cmtime's one QP of 1 WR x 1 SGE.  The
 * transitions carry the attributes of lib/rdma/qpattr.c (Mooncake's): the
 * port, P_Key index, SL, traffic class, RTS values and MTU cap from the
 * same defaults, the RTR's hop limit
 * and minimum RNR timer, which the library keeps private, written here;
 * the responder depth is clamped to the device as libqphs's default
 * does.  What it leaves out, libqphs does on top: the JSON bodies, the
 * port query, the daemon's loop and workers, the endpoint table.  A
 * burst's time runs from the release until the last ACK was answered.
 *
 * Usage: setup_floor [--workers K] [--acceptor|--no-acceptor] N [CONFIG...]
 * (CONFIG: cold warm cmshape, all three by default).
 * QPLAB_RDMA_DEVS=ACTIVE,PASSIVE and QPLAB_RDMA_ADDRS=A,B (IPv4) name the
 * devices and the addresses their GIDs carry.  Figures go to stdout as
 * "name value unit" lines.  Every wait is bounded (sockets time out after
 * 30 s).  QPLAB_BENCH_PERF_CTL (procstat.h) opens perf's window around
 * each burst, as rdma_setup's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "envpair.h"
#include "procstat.h"
#include "qphs.h"

#define MAX_CONNS 1024
#define MAX_WORKERS 16
#define SOCK_TIMEOUT_S 30
#define LISTEN_BACKLOG 128 /* MC_HANDSHAKE_LISTEN_BACKLOG's default, as libqphs's */
#define RING (2 * MAX_CONNS) /* a burst accepts two connections a setup */

/* One message: the request, its reply, the ACK and the ACK's reply. */
enum { MSG_REQUEST = 1, MSG_REPLY, MSG_ACK, MSG_ACK_REPLY };
struct msg {
	uint8_t type, nqp;
	uint16_t conn;
	uint32_t qpn[2];
	uint8_t gid[16];
};

struct shape {
	const char *name; /* the figures' prefix, as rdma_setup's */
	int nqp, wr, sge, inline_bytes, warm;
};
/* cold and warm are filled from the defaults (use_defaults). */
static struct shape shapes[] = {
	{"cold", 0, 0, 0, 0, 0},
	{"warm", 0, 0, 0, 0, 1},
	{"cmshape", 1, 1, 1, 0, 0},
};
static struct qphs_config defaults;

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	uint8_t rd_atomic;
};

struct run {
	const struct shape *sh;
	struct side a, b;
	struct sockaddr_in srv;
	int lfd, n;
	/* QPs: a side's, by connection; warm ones made before the burst. */
	struct ibv_qp *qa[MAX_CONNS][2], *qb[MAX_CONNS][2];
	pthread_barrier_t go;
	double t0, done_at[MAX_CONNS];
	int failed;
	/* With an accept thread: the accepted sockets, handed from it to the
	 * workers; closed once the listener is shut down. */
	int acceptor, ring[RING], closed;
	unsigned head, tail;
	pthread_mutex_t lock;
	pthread_cond_t more;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "setup_floor: %s: %s\n", what, err ? strerror(err) : "failed");
	exit(1);
}

/* libqphs's defaults (Mooncake's): the shape of cold and warm; the RTS
 * attributes and the MTU cap are read from defaults where they are used.
 * A message carries at most two QPs. */
static void use_defaults(void)
{
	qphs_config_init(&defaults);
	if (defaults.num_qp_per_ep < 1 || defaults.num_qp_per_ep > 2)
		die("the default QP count is not 1 or 2", 0);
	for (int s = 0; s < 2; s++) {
		shapes[s].nqp = defaults.num_qp_per_ep;
		shapes[s].wr = defaults.max_wr;
		shapes[s].sge = defaults.max_sge;
		shapes[s].inline_bytes = defaults.max_inline;
	}
}

/* An MTU in bytes as verbs numbers it (256 -> IBV_MTU_256 ...). */
static enum ibv_mtu mtu_enum(int bytes)
{
	int m = IBV_MTU_256;

	while (m < IBV_MTU_4096 && (256 << (m - IBV_MTU_256)) < bytes)
		m++;
	return (enum ibv_mtu)m;
}

/* The GID index of addr (IPv4, as a RoCE v2 GID ::ffff:a.b.c.d) on the
 * default port (ib_port, MC_IB_PORT's default). */
static int find_gid(struct side *s, struct in_addr addr)
{
	struct ibv_port_attr pa;
	uint8_t want[16] = {[10] = 0xff, [11] = 0xff};

	memcpy(&want[12], &addr, 4);
	if (ibv_query_port(s->ctx, (uint8_t)defaults.ib_port, &pa))
		return -1;
	s->mtu = pa.active_mtu < mtu_enum(defaults.mtu) ? pa.active_mtu : mtu_enum(defaults.mtu);
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(s->ctx, (uint32_t)defaults.ib_port, (uint32_t)i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2 || memcmp(e.gid.raw, want, 16))
			continue;
		s->gid_index = i;
		s->gid = e.gid;
		return 0;
	}
	return -1;
}

static void side_open(struct side *s, const char *dev, const char *addr)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device_attr da;
	struct in_addr in;

	memset(s, 0, sizeof(*s));
	for (int i = 0; list && list[i] && !s->ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			s->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!s->ctx)
		die(dev, ENODEV);
	if (inet_pton(AF_INET, addr, &in) != 1)
		die("QPLAB_RDMA_ADDRS wants IPv4 addresses", EINVAL);
	if (!(s->pd = ibv_alloc_pd(s->ctx)) || !(s->cq = ibv_create_cq(s->ctx, 256, NULL, NULL, 0)))
		die("PD or CQ", errno);
	if (find_gid(s, in))
		die("no RoCE v2 GID of the address on port 1", ENOENT);
	if (ibv_query_device(s->ctx, &da))
		die("query device", errno);
	/* Mooncake asks 16; libqphs clamps it to the device by default. */
	s->rd_atomic = 16;
	if (da.max_qp_rd_atom > 0 && s->rd_atomic > da.max_qp_rd_atom)
		s->rd_atomic = (uint8_t)da.max_qp_rd_atom;
	if (da.max_qp_init_rd_atom > 0 && s->rd_atomic > da.max_qp_init_rd_atom)
		s->rd_atomic = (uint8_t)da.max_qp_init_rd_atom;
}

static void side_close(struct side *s)
{
	ibv_destroy_cq(s->cq);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
}

static struct ibv_qp *qp_new(const struct side *s, const struct shape *sh)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 0,
		.cap = {.max_send_wr = (uint32_t)sh->wr, .max_recv_wr = (uint32_t)sh->wr,
			.max_send_sge = (uint32_t)sh->sge, .max_recv_sge = (uint32_t)sh->sge,
			.max_inline_data = (uint32_t)sh->inline_bytes},
	};

	return ibv_create_qp(s->pd, &a);
}

/* RESET, INIT, RTR, RTS with Mooncake's attributes (lib/rdma/qpattr.c). */
static int qp_up(const struct side *s, struct ibv_qp *qp, uint32_t dest_qpn,
		 const uint8_t *dgid)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_RESET};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_INIT, .port_num = (uint8_t)defaults.ib_port,
		.pkey_index = (uint16_t)defaults.pkey_index,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				      IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = s->mtu,
		.dest_qp_num = dest_qpn, .max_dest_rd_atomic = s->rd_atomic, .min_rnr_timer = 12,
		.ah_attr = {.is_global = 1, .port_num = (uint8_t)defaults.ib_port,
			    .sl = (uint8_t)defaults.ib_sl,
			    .grh = {.sgid_index = (uint8_t)s->gid_index, .hop_limit = 16,
				    .traffic_class = (uint8_t)defaults.ib_tc}}};
	memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER |
				      IBV_QP_AV | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN |
				      IBV_QP_RQ_PSN))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = (uint8_t)defaults.qp_timeout,
		.retry_cnt = (uint8_t)defaults.qp_retry_cnt,
		.rnr_retry = (uint8_t)defaults.qp_rnr_retry, .max_rd_atomic = s->rd_atomic};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void timeouts(int fd)
{
	struct timeval tv = {.tv_sec = SOCK_TIMEOUT_S};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* One message on one connection: the active side's RPC. */
static int rpc(const struct run *r, const struct msg *req, struct msg *rep)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok = 0;

	if (fd < 0)
		return -1;
	timeouts(fd);
	/* As libqphs's client: the request carries the handshake's last ACK. */
	setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &(int){0}, sizeof(int));
	if (!connect(fd, (const struct sockaddr *)&r->srv, sizeof(r->srv)) &&
	    send(fd, req, sizeof(*req), MSG_NOSIGNAL) == (ssize_t)sizeof(*req))
		ok = recv(fd, rep, sizeof(*rep), MSG_WAITALL) == (ssize_t)sizeof(*rep);
	close(fd);
	return ok ? 0 : -1;
}

struct job {
	struct run *r;
	int i;
};

static void *active_main(void *arg)
{
	struct job *j = arg;
	struct run *r = j->r;
	const struct shape *sh = r->sh;
	struct msg req = {.type = MSG_REQUEST, .nqp = (uint8_t)sh->nqp, .conn = (uint16_t)j->i};
	struct msg rep;
	int bad = 0;

	pthread_barrier_wait(&r->go);
	for (int q = 0; q < sh->nqp && !bad; q++) {
		if (!sh->warm)
			r->qa[j->i][q] = qp_new(&r->a, sh);
		bad = !r->qa[j->i][q];
		if (!bad)
			req.qpn[q] = r->qa[j->i][q]->qp_num;
	}
	memcpy(req.gid, r->a.gid.raw, 16);
	bad = bad || rpc(r, &req, &rep) || rep.type != MSG_REPLY || rep.nqp != sh->nqp;
	for (int q = 0; q < sh->nqp && !bad; q++)
		bad = qp_up(&r->a, r->qa[j->i][q], rep.qpn[q], rep.gid) != 0;
	req.type = MSG_ACK;
	bad = bad || rpc(r, &req, &rep) || rep.type != MSG_ACK_REPLY;
	r->done_at[j->i] = bench_now_ms();
	if (bad)
		__atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* The next connection accepted on the listener, or -1 once it is shut
 * down. */
static int accept_one(int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0 || (errno != EINTR && errno != ECONNABORTED))
			return fd;
	}
}

/* The accept thread: only accepts, and hands each connection to a worker.  It
 * asks for nice -20 as libqphs's accept thread does (accept_thread_nice's
 * default), and keeps its own when the process may not raise it. */
static void *acceptor_main(void *arg)
{
	struct run *r = arg;
	int fd;

	setpriority(PRIO_PROCESS, (id_t)gettid(), -20);
	while ((fd = accept_one(r->lfd)) >= 0) {
		pthread_mutex_lock(&r->lock);
		if (r->tail - r->head < RING) {
			r->ring[r->tail++ % RING] = fd;
			fd = -1;
			pthread_cond_signal(&r->more);
		}
		pthread_mutex_unlock(&r->lock);
		if (fd >= 0) { /* more than a burst's connections: not ours */
			close(fd);
			__atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_lock(&r->lock);
	r->closed = 1;
	pthread_cond_broadcast(&r->more);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* A worker's next connection: accepted itself, or handed over by the
 * accept thread; -1 once the listener is shut down. */
static int next_conn(struct run *r)
{
	int fd = -1;

	if (!r->acceptor)
		return accept_one(r->lfd);
	pthread_mutex_lock(&r->lock);
	while (r->head == r->tail && !r->closed)
		pthread_cond_wait(&r->more, &r->lock);
	if (r->head != r->tail)
		fd = r->ring[r->head++ % RING];
	pthread_mutex_unlock(&r->lock);
	return fd;
}

/* The passive side: one message per accepted connection, until the
 * listener is shut down. */
static void *passive_main(void *arg)
{
	struct run *r = arg;
	const struct shape *sh = r->sh;

	for (;;) {
		int fd = next_conn(r), bad = 0;
		struct msg m, rep = {.nqp = (uint8_t)sh->nqp};

		if (fd < 0)
			return NULL;
		timeouts(fd);
		bad = recv(fd, &m, sizeof(m), MSG_WAITALL) != (ssize_t)sizeof(m) ||
		      m.conn >= r->n || m.nqp != sh->nqp;
		if (!bad && m.type == MSG_REQUEST) {
			rep.type = MSG_REPLY;
			memcpy(rep.gid, r->b.gid.raw, 16);
			for (int q = 0; q < sh->nqp && !bad; q++) {
				struct ibv_qp *qp = sh->warm ? r->qb[m.conn][q] : qp_new(&r->b, sh);

				r->qb[m.conn][q] = qp;
				bad = !qp || qp_up(&r->b, qp, m.qpn[q], m.gid) != 0;
				if (!bad)
					rep.qpn[q] = qp->qp_num;
			}
		} else if (!bad && m.type == MSG_ACK) {
			rep.type = MSG_ACK_REPLY;
		} else {
			bad = 1;
		}
		if (!bad)
			/* As libqphs's daemon: the FIN leaves with the reply. */
			bad = send(fd, &rep, sizeof(rep), MSG_NOSIGNAL | MSG_MORE) !=
			      (ssize_t)sizeof(rep);
		if (bad)
			__atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
		close(fd);
	}
}

static void burst(struct run *r, int workers)
{
	pthread_t act[MAX_CONNS], pas[MAX_WORKERS], acc;
	struct job jobs[MAX_CONNS];
	double b0, all0, b1, all1, run0, run1, end = 0;
	int lfd, on = 1;
	long csw0, csw1, ovf0, ovf1, syn0, syn1;
	socklen_t len = sizeof(r->srv);

	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    bind(lfd, (struct sockaddr *)&r->srv, sizeof(r->srv)) || listen(lfd, LISTEN_BACKLOG) ||
	    getsockname(lfd, (struct sockaddr *)&r->srv, &len))
		die("listen", errno);
	r->lfd = lfd;
	for (int i = 0; i < r->n && r->sh->warm; i++)
		for (int q = 0; q < r->sh->nqp; q++)
			if (!(r->qa[i][q] = qp_new(&r->a, r->sh)) || !(r->qb[i][q] = qp_new(&r->b, r->sh)))
				die("warm QPs", errno);
	pthread_barrier_init(&r->go, NULL, (unsigned)r->n + 1);
	r->head = r->tail = 0;
	r->closed = 0;
	if (r->acceptor && pthread_create(&acc, NULL, acceptor_main, r))
		die("accept thread", EAGAIN);
	for (int w = 0; w < workers; w++)
		if (pthread_create(&pas[w], NULL, passive_main, r))
			die("passive thread", EAGAIN);
	for (int i = 0; i < r->n; i++) {
		jobs[i] = (struct job){r, i};
		if (pthread_create(&act[i], NULL, active_main, &jobs[i]))
			die("active thread", EAGAIN);
	}
	bench_settle();
	bench_proc_ms(&csw0);
	ovf0 = bench_tcpext("ListenOverflows");
	syn0 = bench_tcpext("TCPSynRetrans");
	bench_guest_cpu(&b0, &all0);
	run0 = bench_guest_run_ms();
	bench_perf_ctl("enable");
	r->t0 = bench_now_ms();
	pthread_barrier_wait(&r->go);
	for (int i = 0; i < r->n; i++)
		pthread_join(act[i], NULL);
	bench_perf_ctl("disable");
	bench_guest_cpu(&b1, &all1);
	run1 = bench_guest_run_ms();
	bench_proc_ms(&csw1);
	ovf1 = bench_tcpext("ListenOverflows");
	syn1 = bench_tcpext("TCPSynRetrans");
	for (int i = 0; i < r->n; i++)
		if (r->done_at[i] - r->t0 > end)
			end = r->done_at[i] - r->t0;
	shutdown(lfd, SHUT_RDWR);
	if (r->acceptor)
		pthread_join(acc, NULL);
	for (int w = 0; w < workers; w++)
		pthread_join(pas[w], NULL);
	close(lfd);
	pthread_barrier_destroy(&r->go);
	if (r->failed)
		die("a connection failed", 0);
	printf("floor_%s_%d_concurrent_per_conn %.3f ms\n", r->sh->name, r->n, end / r->n);
	printf("floor_%s_%d_concurrent_guest_cpu_ms_per_conn %.3f ms\n", r->sh->name, r->n,
	       (b1 - b0) / r->n);
	if (run0 >= 0 && run1 >= run0)
		printf("floor_%s_%d_concurrent_guest_run_ms_per_conn %.3f ms\n", r->sh->name, r->n,
		       (run1 - run0) / r->n);
	if (csw0 >= 0 && csw1 >= csw0)
		printf("floor_%s_%d_concurrent_context_switches_per_conn %.1f\n", r->sh->name,
		       r->n, (double)(csw1 - csw0) / r->n);
	/* A full accept queue drops a SYN; the client sends it again 1 s
	 * later: a floor with either is not a floor. */
	printf("floor_%s_%d_concurrent_listen_overflows %ld\n", r->sh->name, r->n, ovf1 - ovf0);
	printf("floor_%s_%d_concurrent_syn_retransmits %ld\n", r->sh->name, r->n, syn1 - syn0);
	for (int i = 0; i < r->n; i++)
		for (int q = 0; q < r->sh->nqp; q++) {
			if (r->qa[i][q])
				ibv_destroy_qp(r->qa[i][q]);
			if (r->qb[i][q])
				ibv_destroy_qp(r->qb[i][q]);
		}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: setup_floor [--workers K] [--acceptor|--no-acceptor] N\n"
		   "                   [cold|warm|cmshape]...\n"
		   "  N connections at once (1-%d), each in Mooncake's protocol and QP shape\n"
		   "  with nothing but the work the comparison rules fix; K passive threads\n"
		   "  (1-%d, default 4), each accepting its own connections up to N = %d\n"
		   "  (the accept queue's length), beyond it taking them from one accept\n"
		   "  thread (at nice -20 where the process may); --acceptor and\n"
		   "  --no-acceptor choose instead.  QPLAB_RDMA_DEVS=ACTIVE,PASSIVE and\n"
		   "  QPLAB_RDMA_ADDRS=A,B (IPv4) name the devices and their addresses.\n",
		MAX_CONNS, MAX_WORKERS, LISTEN_BACKLOG);
}

/* A whole decimal number from lo to hi, or -1. */
static int number(const char *s, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return !errno && end != s && !*end && v >= lo && v <= hi ? (int)v : -1;
}

int main(int argc, char **argv)
{
	char da[64], db[64], aa[64], ab[64];
	int workers = 4, n, argi = 1, acceptor = -1; /* -1: by N */
	static struct run r;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	while (argi < argc && !strncmp(argv[argi], "--", 2) && workers >= 0) {
		if (!strcmp(argv[argi], "--acceptor")) {
			acceptor = 1;
			argi++;
		} else if (!strcmp(argv[argi], "--no-acceptor")) {
			acceptor = 0;
			argi++;
		} else if (!strcmp(argv[argi], "--workers") && argi + 1 < argc) {
			workers = number(argv[argi + 1], 1, MAX_WORKERS);
			argi += 2;
		} else {
			workers = -1;
		}
	}
	n = argi < argc ? number(argv[argi++], 1, MAX_CONNS) : -1;
	if (workers < 0 || n < 0) {
		usage(stderr);
		return 2;
	}
	r.acceptor = acceptor >= 0 ? acceptor : n > LISTEN_BACKLOG;
	for (int k = argi; k < argc; k++) {
		size_t s = 0;

		while (s < sizeof(shapes) / sizeof(shapes[0]) && strcmp(argv[k], shapes[s].name))
			s++;
		if (s == sizeof(shapes) / sizeof(shapes[0])) {
			fprintf(stderr, "setup_floor: no configuration '%s' (cold, warm, cmshape)\n",
				argv[k]);
			return 2;
		}
	}
	if (bench_env_pair("QPLAB_RDMA_DEVS", da, db, sizeof(da)) ||
	    bench_env_pair("QPLAB_RDMA_ADDRS", aa, ab, sizeof(aa))) {
		fprintf(stderr, "setup_floor: QPLAB_RDMA_DEVS and QPLAB_RDMA_ADDRS want two "
				"comma-separated names each\n");
		return 2;
	}
	use_defaults();
	printf("# setup_floor: %d at once, %d worker%s %s\n", n, workers, workers > 1 ? "s" : "",
	       r.acceptor ? "fed by one accept thread" : "accepting for themselves");
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.more, NULL);
	side_open(&r.a, da, aa);
	side_open(&r.b, db, ab);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		int want = argi >= argc;

		for (int k = argi; k < argc; k++)
			want |= !strcmp(argv[k], shapes[s].name);
		if (!want)
			continue;
		memset(r.qa, 0, sizeof(r.qa));
		memset(r.qb, 0, sizeof(r.qb));
		memset(r.done_at, 0, sizeof(r.done_at));
		r.sh = &shapes[s];
		r.n = n;
		r.failed = 0;
		r.srv = (struct sockaddr_in){.sin_family = AF_INET};
		inet_pton(AF_INET, ab, &r.srv.sin_addr);
		burst(&r, workers);
		fflush(stdout);
	}
	side_close(&r.a);
	side_close(&r.b);
	pthread_cond_destroy(&r.more);
	pthread_mutex_destroy(&r.lock);
	return 0;
}
