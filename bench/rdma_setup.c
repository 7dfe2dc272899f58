/*
 * rdma_setup — connection-setup figures on real rxe (run by bench/rdma.sh
 * inside the lab VM, on two shared-mode hosts of netns/topo):
 *
 *   1. how many QPs one process can create on one rxe device (bounded);
 *   2. connect() to both sides ready, 1 endpoint x 2 QPs, repeated;
 *   3. N endpoints set up back to back and concurrently (N from argv);
 *   4. modify_qp latency per transition.
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

#include "qphs.h"
#include "rdma_int.h"

#define QP_PROBE_CAP 2048
#define SETUP_REPEAT 20

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what, int rc, const char *text)
{
	fprintf(stderr, "rdma_setup: %s: %s %s\n", what, qphs_errname(rc), text ? text : "");
	exit(1);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void stats(const char *name, double *v, int n, const char *unit)
{
	double sum = 0;

	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	for (int i = 0; i < n; i++)
		sum += v[i];
	printf("%s_median %.3f %s\n%s_mean %.3f %s\n%s_p90 %.3f %s\n%s_min %.3f %s\n", name,
	       v[n / 2], unit, name, sum / n, unit, name, v[(n * 9) / 10], unit, name, v[0], unit);
}

struct host {
	struct qphs_daemon *d;
	struct qphs_rdma *r;
	struct qphs_context *ctx;
};

static void cfg_bench(struct qphs_config *cfg)
{
	qphs_config_init(cfg);
	cfg->max_cqe_per_ctx = 256;
	cfg->worker_threads = 4;
}

/* server NULL: a daemon on addr, named after it; else no daemon. */
static void host_up(struct host *h, const char *dev, const char *addr, const char *server,
		    const struct qphs_config *cfg)
{
	char err[256];
	int rc;

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
	static struct qphs__qp qps[QP_PROBE_CAP];
	struct qphs_config cfg;
	struct host h;
	int n = 0, rc = 0;
	double t0;

	cfg_bench(&cfg);
	host_up(&h, dev, addr, "probe:1", &cfg);
	t0 = now_ms();
	while (n < QP_PROBE_CAP && !(rc = qphs__qp_create(h.ctx, &qps[n])))
		n++;
	printf("qp_probe_created %d QPs\nqp_probe_limit %s\nqp_create_mean %.3f ms\n", n,
	       n == QP_PROBE_CAP ? "cap-of-the-probe" : strerror(rc), (now_ms() - t0) / (n ? n : 1));
	printf("qp_device_max_qp %d QPs\n", h.ctx->dev_attr.max_qp);
	while (n > 0)
		qphs__qp_destroy(h.ctx, &qps[--n]);
	host_down(&h);
}

static double ph_rpc[SETUP_REPEAT + 1], ph_setup[SETUP_REPEAT + 1], ph_ack[SETUP_REPEAT + 1],
	ph_passive[SETUP_REPEAT + 1];
static int ph_n = -1; /* < 0: not recording */

static void record_phases(struct qphs_endpoint *ea, struct qphs_endpoint *eb)
{
	struct qphs_endpoint_info ia, ib;

	if (ph_n < 0 || ph_n > SETUP_REPEAT)
		return;
	qphs_endpoint_info(ea, &ia);
	qphs_endpoint_info(eb, &ib);
	ph_rpc[ph_n] = ia.rpc_ms;
	ph_setup[ph_n] = ia.setup_ms;
	ph_ack[ph_n] = ia.ack_ms;
	ph_passive[ph_n] = ib.passive_setup_ms;
	ph_n++;
}

/* Connects a -> b and waits for b's side; returns ms or dies. */
static double connect_ready(struct qphs_context *a, struct qphs_context *b)
{
	struct qphs_endpoint *ea = NULL, *eb;
	double t0 = now_ms(), t;
	int rc = qphs_connect(a, qphs_context_nic_path(b), &ea);

	if (rc)
		die("connect", rc, ea ? qphs_endpoint_errstr(ea) : NULL);
	eb = qphs_context_endpoint(b, qphs_context_nic_path(a));
	if (!eb || (rc = qphs_endpoint_wait_ready(eb, 10000)))
		die("passive ready", rc, NULL);
	t = now_ms() - t0;
	record_phases(ea, eb);
	qphs_endpoint_close(ea);
	qphs_endpoint_close(eb);
	qphs_endpoint_put(ea);
	qphs_endpoint_put(eb);
	return t;
}

/* 2. connect() to both sides ready, 1 endpoint x 2 QPs. */
static void setup_latency(struct host *a, struct host *b)
{
	double v[SETUP_REPEAT];

	connect_ready(a->ctx, b->ctx); /* warm: ARP, first RTR */
	ph_n = 0;
	for (int i = 0; i < SETUP_REPEAT; i++)
		v[i] = connect_ready(a->ctx, b->ctx);
	stats("connect_ready_1ep_2qp", v, SETUP_REPEAT, "ms");
	stats("phase_connection_rtt", ph_rpc, ph_n, "ms");
	stats("phase_passive_transitions", ph_passive, ph_n, "ms");
	stats("phase_active_transitions", ph_setup, ph_n, "ms");
	stats("phase_ready_ack_rtt", ph_ack, ph_n, "ms");
	ph_n = -1;
}

struct conn_job {
	struct qphs_context *a, *b;
	pthread_barrier_t *bar;
	double ms;
};

static void *conn_thread(void *arg)
{
	struct conn_job *j = arg;

	pthread_barrier_wait(j->bar);
	j->ms = connect_ready(j->a, j->b);
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

/* 3. n endpoints: n clients (one context each, distinct nic paths) to b. */
static void many(const char *dev, const char *addr, struct host *b, int n, int shape,
		 const char *tag)
{
	struct host *cl = calloc((size_t)n, sizeof(*cl));
	struct conn_job *jobs = calloc((size_t)n, sizeof(*jobs));
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	pthread_barrier_t bar;
	struct qphs_config cfg;
	char name[64];
	double t0, seq, conc;

	cfg_bench(&cfg);
	cfg.worker_threads = 1;
	if (shape)
		cmtime_shape(&cfg);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s:%d", addr, 20000 + i);
		host_up(&cl[i], dev, addr, name, &cfg);
	}
	t0 = now_ms();
	for (int i = 0; i < n; i++)
		connect_ready(cl[i].ctx, b->ctx);
	seq = now_ms() - t0;
	pthread_barrier_init(&bar, NULL, (unsigned)n);
	t0 = now_ms();
	for (int i = 0; i < n; i++) {
		jobs[i] = (struct conn_job){.a = cl[i].ctx, .b = b->ctx, .bar = &bar};
		pthread_create(&th[i], NULL, conn_thread, &jobs[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	conc = now_ms() - t0;
	pthread_barrier_destroy(&bar);
	printf("%sendpoints_%d_back_to_back_total %.1f ms\n%sendpoints_%d_back_to_back_per_conn "
	       "%.3f ms\n", tag, n, seq, tag, n, seq / n);
	printf("%sendpoints_%d_concurrent_total %.1f ms\n%sendpoints_%d_concurrent_per_conn %.3f ms\n",
	       tag, n, conc, tag, n, conc / n);
	for (int i = n - 1; i >= 0; i--)
		host_down(&cl[i]);
	free(cl);
	free(jobs);
	free(th);
}

/* 4. modify_qp latency per transition, on m QP pairs. */
static void transitions(struct host *a, struct host *b, int m)
{
	double *v[4];
	struct qphs__rtr_params p = {.sgid_index = a->ctx->gid_index, .rd_atomic = 16,
				     .path_mtu = IBV_MTU_1024};
	struct qphs__qp qa, qb;
	int skipped;

	for (int s = 0; s < 4; s++)
		v[s] = calloc((size_t)m, sizeof(double));
	for (int i = 0; i < m; i++) {
		double t;

		if (qphs__qp_create(a->ctx, &qa) || qphs__qp_create(b->ctx, &qb))
			die("create", QPHS_ERR_CREATE_QP, NULL);
		p.dgid = b->ctx->gid;
		p.dest_qpn = qb.qp->qp_num;
		t = now_ms();
		if (qphs__qp_to_init(a->ctx, &qa))
			die("init", QPHS_ERR_MODIFY_QP, NULL);
		v[1][i] = (now_ms() - t) * 1e3;
		t = now_ms();
		if (qphs__qp_to_rtr(a->ctx, &qa, &p))
			die("rtr", QPHS_ERR_MODIFY_QP, NULL);
		v[2][i] = (now_ms() - t) * 1e3;
		t = now_ms();
		if (qphs__qp_to_rts(a->ctx, &qa, 16))
			die("rts", QPHS_ERR_MODIFY_QP, NULL);
		v[3][i] = (now_ms() - t) * 1e3;
		t = now_ms();
		if (qphs__qp_to_reset(a->ctx, &qa, 1, &skipped))
			die("reset", QPHS_ERR_MODIFY_QP, NULL);
		v[0][i] = (now_ms() - t) * 1e3;
		qphs__qp_destroy(a->ctx, &qa);
		qphs__qp_destroy(b->ctx, &qb);
	}
	stats("modify_qp_rts_to_reset", v[0], m, "us");
	stats("modify_qp_reset_to_init", v[1], m, "us");
	stats("modify_qp_init_to_rtr", v[2], m, "us");
	stats("modify_qp_rtr_to_rts", v[3], m, "us");
	for (int s = 0; s < 4; s++)
		free(v[s]);
}

int main(int argc, char **argv)
{
	const char *devs = getenv("QPLAB_RDMA_DEVS"), *addrs = getenv("QPLAB_RDMA_ADDRS");
	char da[32], db[32], aa[32], ab[32];
	struct qphs_config cfg;
	struct host a, b;

	if (!devs || !addrs || sscanf(devs, "%31[^,],%31s", da, db) != 2 ||
	    sscanf(addrs, "%31[^,],%31s", aa, ab) != 2) {
		fprintf(stderr, "rdma_setup: set QPLAB_RDMA_DEVS and QPLAB_RDMA_ADDRS "
			"(bench/rdma.sh does)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Each client context holds 4 descriptors (uverbs, async, stop pipe):
	 * 256 of them exceed the usual soft limit of 1024. */
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	probe_qps(da, aa);
	cfg_bench(&cfg);
	host_up(&b, db, ab, NULL, &cfg);
	host_up(&a, da, aa, NULL, &cfg);
	setup_latency(&a, &b);
	transitions(&a, &b, 64);
	for (int i = 1; i < argc; i++)
		many(da, aa, &b, atoi(argv[i]), 0, "");
	host_down(&b);
	/* The passive side must have the same shape: its QP count must match. */
	cmtime_shape(&cfg);
	host_up(&b, db, ab, NULL, &cfg);
	for (int i = 1; i < argc; i++)
		many(da, aa, &b, atoi(argv[i]), 1, "cmshape_");
	host_down(&a);
	host_down(&b);
	return 0;
}
