/*
 * rdma_setup — connection-setup figures on real rxe (run by bench/rdma.sh
 * inside the lab VM, on two shared-mode hosts of netns/topo):
 *
 *   1. how many QPs one process can create on one rxe device (bounded);
 *   2. connect() to both sides ready, 1 endpoint x 2 QPs, repeated;
 *   3. N endpoints set up back to back and concurrently (N from argv);
 *   4. modify_qp latency per transition.
 *
 * Every N-endpoint phase also prints where the CPU went while it ran:
 * the guest's busy share and CPU ms per connection (/proc/stat: rxe's
 * softirq and kworkers included), our process's, and the server's loop,
 * ACK and worker threads' own CPU time.  A concurrent phase's time runs
 * from the start until the last connection is ready; its threads exit
 * after that.  QPLAB_BENCH_CONFIGS ("cold warm cmshape") and
 * QPLAB_BENCH_MODES ("latency back_to_back concurrent") pick a subset.
 *
 * Every loop is bounded in count and time.  Figures go to stdout as
 * "name value unit" lines that bench/rdma.sh reads.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "qphs.h"
#include "qphs/probe.h"
#include "envpair.h"
#include "procstat.h"
#include "rss.h"
#include "sortd.h"

#define QP_PROBE_CAP 2048
#define SETUP_REPEAT 20

static void die(const char *what, int rc, const char *text)
{
	fprintf(stderr, "rdma_setup: %s: %s %s\n", what, qphs_errname(rc), text ? text : "");
	exit(1);
}

static void stats(const char *name, double *v, int n, const char *unit)
{
	double sum = 0;

	sortd(v, (size_t)n);
	for (int i = 0; i < n; i++)
		sum += v[i];
	printf("%s_median %.3f %s\n%s_mean %.3f %s\n%s_p90 %.3f %s\n%s_min %.3f %s\n", name,
	       v[n / 2], unit, name, sum / n, unit, name, v[(n * 9) / 10], unit, name, v[0], unit);
}

#define HOST_TIDS 16
struct host {
	struct qphs_daemon *d;
	struct qphs_rdma *r;
	struct qphs_context *ctx;
	/* The library threads host_up started for a host with a daemon. */
	int tids[HOST_TIDS], ntids;
	char tnames[HOST_TIDS][16];
};

/* Keeps in h the library threads that are in after[] but not in before[]. */
static void host_threads(struct host *h, const int *before, int nb)
{
	int after[512], na;
	static char names[512][16];

	na = bench_tasks(after, names, 512);
	for (int i = 0; i < na && h->ntids < HOST_TIDS; i++) {
		int old = 0;

		for (int j = 0; j < nb && !old; j++)
			old = after[i] == before[j];
		if (old || strncmp(names[i], "qphs-", 5))
			continue;
		h->tids[h->ntids] = after[i];
		memcpy(h->tnames[h->ntids], names[i], sizeof(h->tnames[0]));
		h->tnames[h->ntids++][15] = 0;
	}
}

static void cfg_bench(struct qphs_config *cfg)
{
	qphs_config_init(cfg);
	cfg->max_cqe_per_ctx = 256;
	cfg->worker_threads = 4;
	/* Every connect of a burst comes from one source, the other host, and
	 * 256 at once pass the per-source defaults (128), which are ours, not
	 * Mooncake's (its daemon has no per-source limit): the bench lets one
	 * source use every connection, as a Mooncake daemon would. */
	cfg->max_conns_per_source = cfg->max_connections;
	cfg->max_requests_per_source = cfg->max_connections;
}

/* server NULL: a daemon on addr, named after it; else no daemon. */
static void host_up(struct host *h, const char *dev, const char *addr, const char *server,
		    const struct qphs_config *cfg)
{
	char err[256];
	int rc, before[512], nb = bench_tasks(before, NULL, 512);

	memset(h, 0, sizeof(*h));
	if (!server) {
		if ((rc = qphs_daemon_new(cfg, &h->d)) || (rc = qphs_daemon_listen(h->d, addr, 0)))
			die("daemon", rc, NULL);
		server = qphs_daemon_address(h->d);
	}
	if ((rc = qphs_rdma_new(cfg, server, &h->r, err, sizeof(err))))
		die("qphs_rdma_new", rc, err);
	if ((rc = qphs_rdma_open_device(h->r, dev, &h->ctx)))
		die("open", rc, qphs_rdma_errstr(h->r));
	if (h->d && ((rc = qphs_rdma_attach(h->r, h->d)) || (rc = qphs_daemon_start(h->d))))
		die("attach", rc, NULL);
	if (h->d)
		host_threads(h, before, nb);
}

static void host_down(struct host *h)
{
	if (h->d)
		qphs_daemon_stop(h->d);
	qphs_rdma_free(h->r);
	qphs_daemon_free(h->d);
}

/* 1. QPs one process can create on dev, up to QP_PROBE_CAP. */
static void probe_qps(const char *dev, const char *addr)
{
	struct qphs_config cfg;
	struct qphs_context_info ci;
	struct qphs_qp_capacity cap;
	struct host h;
	int rc;

	cfg_bench(&cfg);
	host_up(&h, dev, addr, "probe:1", &cfg);
	if ((rc = qphs_probe_qp_capacity(h.ctx, QP_PROBE_CAP, &cap)) ||
	    (rc = qphs_context_info(h.ctx, &ci)))
		die("QP probe", rc, NULL);
	printf("qp_probe_created %d QPs\nqp_probe_limit %s\nqp_create_mean %.3f ms\n", cap.created,
	       cap.limit_errno ? strerror(cap.limit_errno) : "cap-of-the-probe", cap.create_mean_ms);
	printf("qp_device_max_qp %d QPs\n", ci.max_qp);
	host_down(&h);
}

/* Where one connection's time went (the endpoints' phase fields). */
enum {
	PH_CREATE, PH_RPC_CONNECT, PH_RPC, PH_ACTIVE_TR, PH_ACK_CONNECT, PH_ACK,
	PH_P_QUEUE, PH_P_CREATE, PH_P_TR, PH_COUNT
};
static const char *const ph_name[PH_COUNT] = {
	"active_qp_create", "request_tcp_connect", "request_rtt", "active_transitions",
	"ack_tcp_connect", "ack_rtt", "passive_worker_wait", "passive_qp_create",
	"passive_transitions",
};

struct phases {
	double sum[PH_COUNT];
	int n;
};

static void phases_add(struct phases *ph, struct qphs_endpoint *ea, struct qphs_endpoint *eb)
{
	static struct qphs_endpoint_info ia, ib;
	int rc;

	if (!ph)
		return;
	if ((rc = qphs_endpoint_info(ea, &ia)) || (rc = qphs_endpoint_info(eb, &ib)))
		die("endpoint info", rc, NULL);
	const double v[PH_COUNT] = {ia.qp_take_ms, ia.tcp_connect_ms, ia.rpc_ms, ia.setup_ms,
				    ia.ack_tcp_connect_ms, ia.ack_ms, ib.worker_wait_ms,
				    ib.qp_take_ms, ib.passive_setup_ms};
	for (int i = 0; i < PH_COUNT; i++)
		ph->sum[i] += v[i];
	ph->n++;
}

static void phases_print(const char *tag, const struct phases *ph)
{
	for (int i = 0; i < PH_COUNT && ph->n; i++)
		printf("%sphase_%s_mean %.3f ms\n", tag, ph_name[i], ph->sum[i] / ph->n);
}

/* Warm runs, untimed: both pools full.  Each pool holds twice what the
 * timed part takes and the filler refills below half, so no refill runs
 * inside the timed part. */
static void pools_ready(struct qphs_context *a, struct qphs_context *b)
{
	if (qphs_context_fill_qp_pool(a, 120000) || qphs_context_fill_qp_pool(b, 120000))
		die("QP pool did not fill in 120 s", QPHS_ERR_BUSY, NULL);
}

/* Connects a -> b and waits for b's side; returns ms or dies.  The two
 * endpoints stay open (*ea, *eb) until conn_close: closing is not setup. */
static double connect_ready(struct qphs_context *a, struct qphs_context *b,
			    struct qphs_endpoint **ea, struct qphs_endpoint **eb)
{
	double t0 = bench_now_ms();
	int rc = qphs_connect(a, qphs_context_nic_path(b), ea);

	if (rc)
		die("connect", rc, *ea ? qphs_endpoint_errstr(*ea) : NULL);
	*eb = qphs_context_endpoint(b, qphs_context_nic_path(a));
	if (!*eb || (rc = qphs_endpoint_wait_ready(*eb, 10000)))
		die("passive ready", rc, NULL);
	return bench_now_ms() - t0;
}

static void conn_close(struct qphs_endpoint *ea, struct qphs_endpoint *eb)
{
	qphs_endpoint_close(ea);
	qphs_endpoint_close(eb);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
}

/* 2. connect() to both sides ready, 1 endpoint x 2 QPs, one at a time. */
static void setup_latency(struct host *a, struct host *b, const char *tag)
{
	struct qphs_endpoint *ea, *eb;
	struct phases ph = {0};
	double v[SETUP_REPEAT];
	char name[96];

	connect_ready(a->ctx, b->ctx, &ea, &eb); /* the first: ARP, first RTR */
	conn_close(ea, eb);
	for (int i = 0; i < SETUP_REPEAT; i++) {
		pools_ready(a->ctx, b->ctx);
		v[i] = connect_ready(a->ctx, b->ctx, &ea, &eb);
		phases_add(&ph, ea, eb);
		conn_close(ea, eb);
	}
	snprintf(name, sizeof(name), "%sconnect_ready_1ep_2qp", tag);
	stats(name, v, SETUP_REPEAT, "ms");
	phases_print(tag, &ph);
}

struct conn_job {
	struct qphs_context *a, *b;
	pthread_barrier_t *bar, *end, *leave;
	struct qphs_endpoint *ea, *eb;
	double ms, done_at;
};

/* A thread exits only after every connection is ready and the phase's
 * CPU marks and profile window are closed (the leave barrier): the exits
 * (stack unmapping, its madvise and TLB shootdowns) are the harness's
 * cost, not setup's. */
static void *conn_thread(void *arg)
{
	struct conn_job *j = arg;

	pthread_barrier_wait(j->bar);
	j->ms = connect_ready(j->a, j->b, &j->ea, &j->eb);
	j->done_at = bench_now_ms();
	pthread_barrier_wait(j->end);
	pthread_barrier_wait(j->leave);
	return NULL;
}

/* The QP shape of rdma-core's cmtime: one QP per connection, one WR, one
 * SGE, no inline data (Mooncake's is 2 QPs x 256 WRs x 4 SGEs, 64 inline). */
static void cmtime_shape(struct qphs_config *cfg)
{
	cfg->num_qp_per_ep = 1;
	cfg->max_wr = 1;
	cfg->max_sge = 1;
	cfg->max_inline = 0;
}

/* CPU spent while a phase runs: the whole guest's busy time from
 * /proc/stat (rxe's kernel work runs in softirq and kworkers, outside our
 * process) and, in nanoseconds, from /proc/schedstat (run_ms), and our
 * process's own, from getrusage. */
struct cpu_mark {
	double busy_ms, total_ms, proc_ms, run_ms;
	long csw;
	long listen_overflows, syn_retrans; /* TcpExt of /proc/net/netstat */
};

static void cpu_mark(struct cpu_mark *m)
{
	memset(m, 0, sizeof(*m));
	bench_guest_cpu(&m->busy_ms, &m->total_ms);
	m->run_ms = bench_guest_run_ms();
	m->proc_ms = bench_proc_ms(&m->csw);
	m->listen_overflows = bench_tcpext("ListenOverflows");
	m->syn_retrans = bench_tcpext("TCPSynRetrans");
}

static struct cpu_mark cpu_at[2];

/* CPU time of the server's own threads during a phase: whether its daemon
 * loop, ACK thread or workers are what the connections wait for.  The
 * threads are found by name (the library names them), and told from the
 * clients' by being the ones host_up started for the server (struct host's
 * tids). */
static double srv_at[2][HOST_TIDS], srv_wait_at[2][HOST_TIDS];

static void srv_mark(struct host *b, int k)
{
	for (int i = 0; i < b->ntids; i++) {
		srv_at[k][i] = bench_task_ms(b->tids[i]);
		srv_wait_at[k][i] = bench_task_wait_ms(b->tids[i]);
	}
}

static void srv_print(const char *ptag, struct host *b)
{
	int w = 0;

	for (int i = 0; i < b->ntids; i++) {
		double ms = srv_at[1][i] - srv_at[0][i];

		if (!strcmp(b->tnames[i], "qphs-loop")) {
			printf("%sserver_loop_thread_cpu %.1f ms\n", ptag, ms);
			/* Runnable but not running: a loop that waits for a CPU
			 * while the accept queue fills. */
			if (srv_wait_at[0][i] >= 0 && srv_wait_at[1][i] >= 0)
				printf("%sserver_loop_thread_runq_wait %.1f ms\n", ptag,
				       srv_wait_at[1][i] - srv_wait_at[0][i]);
		}
		else if (!strcmp(b->tnames[i], "qphs-ack"))
			printf("%sserver_ack_thread_cpu %.1f ms\n", ptag, ms);
		else if (!strcmp(b->tnames[i], "qphs-worker") && w < 6)
			printf("%sserver_worker%d_cpu %.1f ms\n", ptag, w++, ms);
	}
}

static void cpu_print(const char *ptag, int n)
{
	const struct cpu_mark *a = &cpu_at[0], *b = &cpu_at[1];
	double total = b->total_ms - a->total_ms;

	printf("%sguest_cpu_busy %.0f %%\n%sguest_cpu_ms_per_conn %.3f ms\n"
	       "%sprocess_cpu_ms_per_conn %.3f ms\n%scontext_switches_per_conn %.1f\n", ptag,
	       total > 0 ? 100 * (b->busy_ms - a->busy_ms) / total : 0, ptag,
	       (b->busy_ms - a->busy_ms) / n, ptag, (b->proc_ms - a->proc_ms) / n, ptag,
	       (double)(b->csw - a->csw) / n);
	if (a->run_ms >= 0 && b->run_ms >= a->run_ms)
		printf("%sguest_run_ms_per_conn %.3f ms\n", ptag, (b->run_ms - a->run_ms) / n);
	/* A full accept queue (listen backlog, MC_HANDSHAKE_LISTEN_BACKLOG)
	 * drops a SYN; the client sends it again 1 s later. */
	printf("%slisten_overflows %ld\n%ssyn_retransmits %ld\n", ptag,
	       b->listen_overflows - a->listen_overflows, ptag, b->syn_retrans - a->syn_retrans);
}

/* The process's RSS with every connection of the last phase still open
 * (read before they are closed). */
static long rss_open;

/* n connections to b, all started together; returns the wall time. */
static double burst(struct host *cl, struct host *b, int n, struct phases *ph)
{
	struct conn_job *jobs = calloc((size_t)n, sizeof(*jobs));
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	pthread_barrier_t bar, end, leave;
	double t0, t = 0;

	pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
	pthread_barrier_init(&end, NULL, (unsigned)n + 1);
	pthread_barrier_init(&leave, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		jobs[i] = (struct conn_job){
			.a = cl[i].ctx, .b = b->ctx, .bar = &bar, .end = &end, .leave = &leave};
		pthread_create(&th[i], NULL, conn_thread, &jobs[i]);
	}
	/* The profile's window is the timed one: the bench's own readings
	 * of /proc (srv_mark, cpu_mark) stay outside it. */
	srv_mark(b, 0);
	cpu_mark(&cpu_at[0]);
	bench_perf_ctl("enable");
	t0 = bench_now_ms();
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&end); /* the last connection is ready */
	bench_perf_ctl("disable");
	cpu_mark(&cpu_at[1]);
	srv_mark(b, 1);
	pthread_barrier_wait(&leave);
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (jobs[i].done_at - t0 > t)
			t = jobs[i].done_at - t0;
	}
	pthread_barrier_destroy(&bar);
	pthread_barrier_destroy(&end);
	pthread_barrier_destroy(&leave);
	rss_open = bench_rss_kib(0);
	for (int i = 0; i < n; i++) {
		phases_add(ph, jobs[i].ea, jobs[i].eb);
		conn_close(jobs[i].ea, jobs[i].eb);
	}
	free(jobs);
	free(th);
	return t;
}

/* n connections to b, one after the other; returns the wall time. */
static double one_by_one(struct host *cl, struct host *b, int n, struct phases *ph)
{
	struct qphs_endpoint **e = calloc(2 * (size_t)n, sizeof(*e));
	double t = 0;

	srv_mark(b, 0);
	cpu_mark(&cpu_at[0]);
	bench_perf_ctl("enable");
	for (int i = 0; i < n; i++) {
		t += connect_ready(cl[i].ctx, b->ctx, &e[2 * i], &e[2 * i + 1]);
		phases_add(ph, e[2 * i], e[2 * i + 1]);
	}
	bench_perf_ctl("disable");
	cpu_mark(&cpu_at[1]);
	srv_mark(b, 1);
	rss_open = bench_rss_kib(0);
	for (int i = 0; i < n; i++)
		conn_close(e[2 * i], e[2 * i + 1]);
	free(e);
	return t;
}

static void print_many(const char *tag, int n, const char *mode, double total,
		       const struct phases *ph, struct host *b)
{
	char ptag[96];

	printf("%sendpoints_%d_%s_total %.1f ms\n%sendpoints_%d_%s_per_conn %.3f ms\n", tag, n,
	       mode, total, tag, n, mode, total / n);
	snprintf(ptag, sizeof(ptag), "%sendpoints_%d_%s_", tag, n, mode);
	phases_print(ptag, ph);
	cpu_print(ptag, n);
	srv_print(ptag, b);
}

/* One timed phase of n endpoints: b and n clients (one context each,
 * distinct nic paths) brought up fresh, untimed, with pools (when on) of
 * twice what the phase takes: the filler refills below half, so no refill
 * runs inside the timed part. */
static void phase(const char *const d[2], const char *const ad[2],
		  const struct qphs_config *cfg, int n, int concurrent, const char *tag)
{
	struct host *cl = calloc((size_t)n, sizeof(*cl));
	struct qphs_config ccfg = *cfg, bcfg = *cfg;
	struct phases ph = {0};
	struct host b;
	char name[64];
	double t;
	long rss0;

	ccfg.worker_threads = 1; /* clients run no daemon */
	if (cfg->qp_pool_size)
		bcfg.qp_pool_size = 2 * n * cfg->num_qp_per_ep;
	host_up(&b, d[1], ad[1], NULL, &bcfg);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s:%d", ad[0], 20000 + i);
		host_up(&cl[i], d[0], ad[0], name, &ccfg);
	}
	for (int i = 0; i < n; i++)
		pools_ready(cl[i].ctx, b.ctx);
	bench_settle();
	rss0 = bench_rss_kib(0);
	t = concurrent ? burst(cl, &b, n, &ph) : one_by_one(cl, &b, n, &ph);
	print_many(tag, n, concurrent ? "concurrent" : "back_to_back", t, &ph, &b);
	/* Both ends of each connection live in this process: an endpoint of
	 * each side, num_qp_per_ep QPs each, with their queues mapped.  With
	 * a QP pool the QPs were made (and counted) before rss0: no figure. */
	if (!cfg->qp_pool_size)
		printf("%sendpoints_%d_%s_rss_per_connection %.1f KiB (one endpoint a side, %d QPs each; "
		       "VmRSS %ld -> %ld KiB)\n",
		       tag, n, concurrent ? "concurrent" : "back_to_back",
		       (double)(rss_open - rss0) / n, cfg->num_qp_per_ep, rss0, rss_open);
	for (int i = n - 1; i >= 0; i--)
		host_down(&cl[i]);
	host_down(&b);
	free(cl);
}

/* 4. modify_qp latency per transition, on m QP pairs. */
static void transitions(struct host *a, struct host *b, int m)
{
	double *v[4];
	int rc;

	for (int s = 0; s < 4; s++)
		v[s] = calloc((size_t)m, sizeof(double));
	if ((rc = qphs_probe_transition_us(a->ctx, b->ctx, m, v)))
		die("modify_qp", rc, NULL);
	stats("modify_qp_rts_to_reset", v[QPHS_TR_RESET], m, "us");
	stats("modify_qp_reset_to_init", v[QPHS_TR_INIT], m, "us");
	stats("modify_qp_init_to_rtr", v[QPHS_TR_RTR], m, "us");
	stats("modify_qp_rtr_to_rts", v[QPHS_TR_RTS], m, "us");
	for (int s = 0; s < 4; s++)
		free(v[s]);
}

/* The connection figures for one configuration of both sides (the QP
 * counts must match); tag prefixes every name. */
static int wanted(const char *var, const char *what);

static void figures(const char *const d[2], const char *const ad[2], struct qphs_config cfg,
		    const char *tag, int latency, int *ns, int nn)
{
	if (latency && wanted("QPLAB_BENCH_MODES", "latency")) {
		struct host a, b;

		host_up(&b, d[1], ad[1], NULL, &cfg);
		host_up(&a, d[0], ad[0], NULL, &cfg);
		setup_latency(&a, &b, tag);
		host_down(&a);
		host_down(&b);
	}
	for (int i = 0; i < nn; i++) {
		if (wanted("QPLAB_BENCH_MODES", "back_to_back"))
			phase(d, ad, &cfg, ns[i], 0, tag);
		if (wanted("QPLAB_BENCH_MODES", "concurrent"))
			phase(d, ad, &cfg, ns[i], 1, tag);
	}
}

/* A development knob: QPLAB_BENCH_CONFIGS ("cold warm cmshape") and
 * QPLAB_BENCH_MODES ("latency back_to_back concurrent") pick a subset;
 * unset, everything runs. */
static int wanted(const char *var, const char *what)
{
	const char *v = getenv(var);

	return !v || !*v || strstr(v, what);
}

int main(int argc, char **argv)
{
	char da[32], db[32], aa[32], ab[32];
	struct qphs_config cfg;
	int quick = argc > 1 && !strcmp(argv[1], "--quick"), ns[8], nn = 0;

	if (bench_env_pair("QPLAB_RDMA_DEVS", da, db, sizeof(da)) ||
	    bench_env_pair("QPLAB_RDMA_ADDRS", aa, ab, sizeof(aa))) {
		fprintf(stderr, "rdma_setup: set QPLAB_RDMA_DEVS and QPLAB_RDMA_ADDRS to two "
			"comma-separated names each (bench/rdma.sh does)\n");
		return 2;
	}
	for (int i = 1 + quick; i < argc && nn < 8; i++)
		ns[nn++] = atoi(argv[i]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Each client context holds 4 descriptors (uverbs, async, stop pipe):
	 * 256 of them exceed the usual soft limit of 1024. */
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	const char *const d[2] = {da, db}, *const ad[2] = {aa, ab};

	if (!quick) {
		struct host a, b;

		probe_qps(da, aa);
		cfg_bench(&cfg);
		host_up(&b, db, ab, NULL, &cfg);
		host_up(&a, da, aa, NULL, &cfg);
		transitions(&a, &b, 64);
		host_down(&a);
		host_down(&b);
	}
	/* Cold: the default, every QP created on the critical path. */
	cfg_bench(&cfg);
	if (wanted("QPLAB_BENCH_CONFIGS", "cold"))
		figures(d, ad, cfg, "", 1, ns, nn);
	/* Warm: a QP pool filled before the timed part (qp_pool_size). */
	cfg.qp_pool_size = 2 * cfg.num_qp_per_ep;
	if (wanted("QPLAB_BENCH_CONFIGS", "warm"))
		figures(d, ad, cfg, "warm_", 1, ns, nn);
	/* rdma-core cmtime's QP shape, no pool, like cmtime. */
	cfg_bench(&cfg);
	cmtime_shape(&cfg);
	if (wanted("QPLAB_BENCH_CONFIGS", "cmshape"))
		figures(d, ad, cfg, "cmshape_", 0, ns, nn);
	return 0;
}
