/*
 * fanin — `make bench`'s fan-in phase: many servers on several hosts
 * connect to one target at the same moment (the storm of Mooncake PR 2793:
 * 240 concurrent handshakes to one target).  Run by bench/fanin-vm.sh in
 * the lab VM on netns-mode hosts of netns/topo, one rxe device and one
 * network namespace per host.
 *
 *   fanin run --target NS,DEV,ADDR --client NS,DEV,ADDR [--client ...] N...
 *       for each N: a fresh target and N servers spread over the client
 *       hosts; prints the figures as "name value unit" lines
 *   fanin target DEV ADDR
 *   fanin clients DEV ADDR COUNT PEER_NIC_PATH
 *       the two roles, each a process that `run` starts in its host's
 *       namespace (`ip netns exec NS`) and drives over its stdin and stdout
 *
 * The target runs the library's defaults (qphs_config_init: listen backlog
 * 128, 4 passive-setup workers, 2 QPs per endpoint), a daemon and one
 * context.  A client host runs COUNT servers, each a qphs_rdma with a
 * context on the host's device and a nic path of its own (ADDR:20000+i, no
 * daemon: a connecting server needs none), one thread each.  `run` sends
 * every host one go instant, 300 ms ahead (one kernel, so one
 * CLOCK_MONOTONIC for every namespace); every thread sleeps until it and
 * the clock starts there.  A connection is CONNECTED when its connect
 * returned (the passive side flips on the ready ACK before it answers);
 * `run` takes the last return as the time until all are CONNECTED, and
 * the target confirms its count of CONNECTED endpoints afterwards.
 *
 * Counters: ListenOverflows and ListenDrops in the target's namespace (its
 * accept queue), TCPSynRetrans summed over the clients' (a dropped SYN
 * costs its connector 1 s), the target process's CPU (its daemon loop,
 * workers and ACK threads, user and system) and the guest's busy CPU
 * (rxe's softirqs and kworkers included).  Every step is bounded: each
 * process ends itself after 600 s (alarm), reads are line by line from
 * pipes whose writers exit with it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qphs.h"
#include "procstat.h"
#include "rss.h"
#include "sortd.h"

#define FANIN_MAX_CLIENTS 7 /* netns/topo: 8 hosts, one is the target */
#define FANIN_MAX_N 1024
#define FANIN_PORT0 20000
#define FANIN_ALARM_S 600
#define FANIN_GO_AHEAD_MS 300

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fanin: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* One line from f without its newline; dies on end of file (the other
 * side exited: its stderr said why). */
static void get_line(FILE *f, char *buf, size_t len, const char *who)
{
	if (!fgets(buf, (int)len, f))
		die("%s ended without answering", who);
	buf[strcspn(buf, "\n")] = 0;
}

/* ---- the target ------------------------------------------------------- */

#define TARGET_TIDS 64
/* The CPU of the target's library threads by kind, and of the process. */
struct target_mark {
	double proc, loop, workers, ack;
	long overflows, drops;
};

static void target_mark(struct target_mark *m)
{
	int tids[TARGET_TIDS], n;
	char names[TARGET_TIDS][16];

	memset(m, 0, sizeof(*m));
	m->proc = bench_proc_ms(NULL);
	n = bench_tasks(tids, names, TARGET_TIDS);
	for (int i = 0; i < n; i++) {
		double ms = bench_task_ms(tids[i]);

		if (ms < 0)
			continue;
		if (!strcmp(names[i], "qphs-loop"))
			m->loop += ms;
		else if (!strcmp(names[i], "qphs-worker"))
			m->workers += ms;
		else if (!strcmp(names[i], "qphs-ack"))
			m->ack += ms;
	}
	m->overflows = bench_tcpext("ListenOverflows");
	m->drops = bench_tcpext("ListenDrops");
}

/* How many endpoints ctx holds and how many of them are CONNECTED. */
static void target_count(struct qphs_context *ctx, int *all, int *connected)
{
	static struct qphs_endpoint *eps[FANIN_MAX_N];
	static struct qphs_endpoint_info info;
	int n = qphs_context_endpoints(ctx, eps, FANIN_MAX_N);

	*all = n;
	*connected = 0;
	for (int i = 0; i < n && i < FANIN_MAX_N; i++) {
		if (!qphs_endpoint_info(eps[i], &info) && info.status == QPHS_EP_CONNECTED)
			++*connected;
		qphs_endpoint_put(eps[i]);
	}
}

static int role_target(const char *dev, const char *addr)
{
	struct qphs_config cfg;
	struct qphs_daemon *d;
	struct qphs_rdma *r;
	struct qphs_context *ctx;
	struct target_mark m0 = {0}, m1;
	char err[256], cmd[64];
	long rss0 = 0;
	int rc, all, conn;

	qphs_config_init(&cfg);
	if ((rc = qphs_daemon_new(&cfg, &d)) || (rc = qphs_daemon_listen(d, addr, 0)))
		die("target daemon on %s: %s", addr, qphs_strerror(rc));
	if ((rc = qphs_rdma_new(&cfg, qphs_daemon_address(d), &r, err, sizeof(err))))
		die("target: %s", err);
	if ((rc = qphs_rdma_open_device(r, dev, &ctx)))
		die("target device %s: %s", dev, qphs_rdma_errstr(r));
	if ((rc = qphs_rdma_attach(r, d)) || (rc = qphs_daemon_start(d)))
		die("target daemon start: %s", qphs_strerror(rc));
	printf("ready %s\n", qphs_context_nic_path(ctx));
	while (fgets(cmd, sizeof(cmd), stdin)) {
		if (!strncmp(cmd, "mark", 4)) {
			target_mark(&m0);
			rss0 = bench_rss_kib(0);
			printf("marked\n");
		} else if (!strncmp(cmd, "end", 3)) {
			target_mark(&m1);
			target_count(ctx, &all, &conn);
			printf("result connected=%d endpoints=%d cpu_ms=%.1f loop_ms=%.1f workers_ms=%.1f "
			       "ack_ms=%.1f overflows=%ld drops=%ld rss_kib=%ld\n",
			       conn, all, m1.proc - m0.proc, m1.loop - m0.loop, m1.workers - m0.workers,
			       m1.ack - m0.ack, m1.overflows - m0.overflows, m1.drops - m0.drops,
			       bench_rss_kib(0) - rss0);
		} else if (!strncmp(cmd, "quit", 4)) {
			break;
		}
	}
	qphs_daemon_stop(d);
	qphs_rdma_free(r);
	qphs_daemon_free(d);
	return 0;
}

/* ---- a client host ---------------------------------------------------- */

/* The go: open, and the CLOCK_MONOTONIC instant (ms) every thread of
 * every host starts its connect at. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open;
	double at;
};

struct server {
	struct qphs_rdma *r;
	struct qphs_context *ctx;
	struct qphs_endpoint *ep;
	const char *peer;
	struct gate *gate;
	int rc;
	double started_at, done_at, ms;
	char text[200];
};

static void *server_connect(void *arg)
{
	struct server *s = arg;
	struct timespec at;
	double ms;

	pthread_mutex_lock(&s->gate->lock);
	while (!s->gate->open)
		pthread_cond_wait(&s->gate->cond, &s->gate->lock);
	ms = s->gate->at;
	pthread_mutex_unlock(&s->gate->lock);
	at.tv_sec = (time_t)(ms / 1e3);
	at.tv_nsec = (long)((ms - (double)at.tv_sec * 1e3) * 1e6);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
	s->started_at = qphs_monotonic_ms();
	s->rc = qphs_connect(s->ctx, s->peer, &s->ep);
	s->done_at = qphs_monotonic_ms();
	s->ms = s->done_at - s->started_at;
	if (s->rc)
		snprintf(s->text, sizeof(s->text), "%s",
			 s->ep ? qphs_endpoint_errstr(s->ep) : qphs_strerror(s->rc));
	return NULL;
}

/* Where a connect's time went (qphs_endpoint_info of the active side):
 * taking or creating its QPs, the request's TCP connect, the request's
 * round trip (the target's passive setup inside), our transitions, the
 * ready ACK's TCP connect and round trip. */
#define NPHASE 6
static const char *const phase_name[NPHASE] = {"qp_create", "request_tcp_connect",
					       "request_rtt", "active_transitions",
					       "ack_tcp_connect", "ack_rtt"};

static void phases_sum(struct qphs_endpoint *ep, double *sum)
{
	static struct qphs_endpoint_info info;

	if (qphs_endpoint_info(ep, &info))
		return;
	sum[0] += info.qp_take_ms;
	sum[1] += info.tcp_connect_ms;
	sum[2] += info.rpc_ms;
	sum[3] += info.setup_ms;
	sum[4] += info.ack_tcp_connect_ms;
	sum[5] += info.ack_ms;
}

/* The figures of one host's connects: "result ..." on stdout; late is
 * when its last thread started after the go instant, ph the sums of the
 * connected ones' phases. */
static void clients_report(struct server *s, int n, double go_at, long syn0)
{
	double *ms = calloc((size_t)n, sizeof(*ms)), last = go_at, late = 0, ph[NPHASE] = {0};
	int ok = 0, first = -1;

	if (!ms)
		die("out of memory");
	for (int i = 0; i < n; i++) {
		ms[i] = s[i].ms;
		if (s[i].done_at > last)
			last = s[i].done_at;
		if (s[i].started_at - go_at > late)
			late = s[i].started_at - go_at;
		if (!s[i].rc) {
			ok++;
			phases_sum(s[i].ep, ph);
		} else if (first < 0) {
			first = i;
		}
	}
	sortd(ms, (size_t)n);
	/* err= comes last: the text may hold spaces. */
	printf("result ok=%d late=%.3f last=%.3f median=%.3f max=%.3f syn=%ld "
	       "ph=%.3f,%.3f,%.3f,%.3f,%.3f,%.3f err=%s\n",
	       ok, late, last, ms[n / 2], ms[n - 1], bench_tcpext("TCPSynRetrans") - syn0, ph[0],
	       ph[1], ph[2], ph[3], ph[4], ph[5],
	       first < 0 ? "" : s[first].text);
	free(ms);
}

static int role_clients(const char *dev, const char *addr, int n, const char *peer)
{
	struct server *s = calloc((size_t)n, sizeof(*s));
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
	struct qphs_config cfg;
	char name[300], err[256], cmd[64];
	double go_at;
	long syn0;
	int rc;

	if (!s || !th)
		die("out of memory");
	qphs_config_init(&cfg);
	cfg.worker_threads = 1;   /* no daemon: no passive setups to run */
	cfg.max_cqe_per_ctx = 256; /* as rdma_setup's clients: COUNT contexts */
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s:%d", addr, FANIN_PORT0 + i);
		if ((rc = qphs_rdma_new(&cfg, name, &s[i].r, err, sizeof(err))))
			die("server %s: %s", name, err);
		if ((rc = qphs_rdma_open_device(s[i].r, dev, &s[i].ctx)))
			die("server %s, device %s: %s", name, dev, qphs_rdma_errstr(s[i].r));
		s[i].peer = peer;
		s[i].gate = &gate;
		if (pthread_create(&th[i], NULL, server_connect, &s[i]))
			die("server %s: no thread", name);
	}
	printf("ready\n");
	if (!fgets(cmd, sizeof(cmd), stdin) || sscanf(cmd, "go %lf", &go_at) != 1)
		die("clients on %s: no go", addr);
	syn0 = bench_tcpext("TCPSynRetrans");
	pthread_mutex_lock(&gate.lock);
	gate.at = go_at;
	gate.open = 1;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	clients_report(s, n, go_at, syn0);
	while (fgets(cmd, sizeof(cmd), stdin) && strncmp(cmd, "quit", 4))
		;
	for (int i = n - 1; i >= 0; i--) {
		if (s[i].ep) {
			qphs_endpoint_close(s[i].ep);
			qphs_endpoint_put(s[i].ep);
		}
		qphs_rdma_free(s[i].r);
	}
	free(th);
	free(s);
	return 0;
}

/* ---- run: the driver -------------------------------------------------- */

struct host {
	char ns[64], dev[64], addr[64];
};

struct child {
	pid_t pid;
	FILE *in, *out; /* its stdin (we write), its stdout (we read) */
	char who[96];
};

static const char *self_path;

/* Starts `ip netns exec NS SELF ROLE ARGS...` with pipes on its stdin and
 * stdout; its stderr is ours. */
static void child_start(struct child *c, const char *ns, char *const *args, const char *who)
{
	int to[2], from[2];
	char *argv[16];
	int k = 0;

	snprintf(c->who, sizeof(c->who), "%s", who);
	if (pipe(to) || pipe(from))
		die("pipe: %s", strerror(errno));
	argv[k++] = (char *)"ip";
	argv[k++] = (char *)"netns";
	argv[k++] = (char *)"exec";
	argv[k++] = (char *)ns;
	argv[k++] = (char *)self_path;
	for (int i = 0; args[i] && k < 15; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	fflush(stdout);
	c->pid = fork();
	if (c->pid < 0)
		die("fork: %s", strerror(errno));
	if (!c->pid) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		execvp("ip", argv);
		fprintf(stderr, "fanin: exec ip: %s\n", strerror(errno));
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = fdopen(to[1], "w");
	c->out = fdopen(from[0], "r");
	if (!c->in || !c->out)
		die("fdopen: %s", strerror(errno));
	setvbuf(c->in, NULL, _IOLBF, 0);
}

static void child_say(struct child *c, const char *line)
{
	if (fprintf(c->in, "%s\n", line) < 0 || fflush(c->in))
		die("%s: write: %s", c->who, strerror(errno));
}

static void child_end(struct child *c)
{
	int st;

	fprintf(c->in, "quit\n");
	fclose(c->in);
	fclose(c->out);
	if (waitpid(c->pid, &st, 0) == c->pid && (!WIFEXITED(st) || WEXITSTATUS(st)))
		die("%s exited with status %d", c->who, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void parse_host(struct host *h, const char *spec)
{
	if (sscanf(spec, "%63[^,],%63[^,],%63s", h->ns, h->dev, h->addr) != 3)
		die("'%s': want NS,DEV,ADDR", spec);
}

struct client_result {
	int ok;
	double late, last, median, max, ph[NPHASE];
	long syn;
	char err[256];
};

/* One round: a fresh target, n servers over the k client hosts, one go. */
static void round_run(const struct host *t, const struct host *cl, int k, int n)
{
	struct child tc, cc[FANIN_MAX_CLIENTS];
	struct client_result res[FANIN_MAX_CLIENTS];
	char line[1024], peer[300], count[16], who[96];
	double b0, tot0, b1, tot1, t0, last = 0, med_max = 0, worst = 0, late = 0,
					       ph[NPHASE] = {0};
	int ok = 0, connected = -1, endpoints = -1;
	long syn = 0, overflows = -1, drops = -1, rss = -1;
	double cpu = -1, loop = -1, workers = -1, ack = -1;
	char *targs[] = {(char *)"target", (char *)t->dev, (char *)t->addr, NULL};

	snprintf(who, sizeof(who), "target on %s", t->ns);
	child_start(&tc, t->ns, targs, who);
	get_line(tc.out, line, sizeof(line), tc.who);
	if (sscanf(line, "ready %299s", peer) != 1)
		die("target: '%s'", line);
	for (int i = 0; i < k; i++) {
		int c = n / k + (i < n % k);
		char *cargs[] = {(char *)"clients", (char *)cl[i].dev, (char *)cl[i].addr, count,
				 peer, NULL};

		snprintf(count, sizeof(count), "%d", c);
		snprintf(who, sizeof(who), "%d servers on %s", c, cl[i].ns);
		child_start(&cc[i], cl[i].ns, cargs, who);
	}
	for (int i = 0; i < k; i++) {
		get_line(cc[i].out, line, sizeof(line), cc[i].who);
		if (strcmp(line, "ready"))
			die("%s: '%s'", cc[i].who, line);
	}
	bench_settle();
	child_say(&tc, "mark");
	get_line(tc.out, line, sizeof(line), tc.who);
	bench_guest_cpu(&b0, &tot0);
	/* The go instant: far enough ahead that every host has read it while
	 * the guest is still idle; each host reports how late its last
	 * thread started after it. */
	t0 = qphs_monotonic_ms() + FANIN_GO_AHEAD_MS;
	snprintf(line, sizeof(line), "go %.3f", t0);
	for (int i = 0; i < k; i++)
		child_say(&cc[i], line);
	for (int i = 0; i < k; i++) {
		struct client_result *r = &res[i];
		char *e;

		get_line(cc[i].out, line, sizeof(line), cc[i].who);
		r->err[0] = 0;
		if (sscanf(line,
			   "result ok=%d late=%lf last=%lf median=%lf max=%lf syn=%ld "
			   "ph=%lf,%lf,%lf,%lf,%lf,%lf",
			   &r->ok, &r->late, &r->last, &r->median, &r->max, &r->syn, &r->ph[0],
			   &r->ph[1], &r->ph[2], &r->ph[3], &r->ph[4], &r->ph[5]) != 12)
			die("%s: '%s'", cc[i].who, line);
		if ((e = strstr(line, " err=")))
			snprintf(r->err, sizeof(r->err), "%s", e + 5);
	}
	bench_guest_cpu(&b1, &tot1);
	child_say(&tc, "end");
	get_line(tc.out, line, sizeof(line), tc.who);
	sscanf(line, "result connected=%d endpoints=%d cpu_ms=%lf loop_ms=%lf workers_ms=%lf "
		     "ack_ms=%lf overflows=%ld drops=%ld rss_kib=%ld",
	       &connected, &endpoints, &cpu, &loop, &workers, &ack, &overflows, &drops, &rss);
	for (int i = 0; i < k; i++) {
		ok += res[i].ok;
		syn += res[i].syn;
		if (res[i].last > last)
			last = res[i].last;
		if (res[i].median > med_max)
			med_max = res[i].median;
		if (res[i].max > worst)
			worst = res[i].max;
		if (res[i].late > late)
			late = res[i].late;
		for (int p = 0; p < NPHASE; p++)
			ph[p] += res[i].ph[p];
		if (res[i].err[0])
			printf("# fanin %d: %s: first failure: %s\n", n, cc[i].who, res[i].err);
	}
	printf("fanin_%d_hosts %d client hosts (%d-%d servers each) to 1 target\n", n, k, n / k,
	       n / k + (n % k != 0));
	printf("fanin_%d_connected %d of %d (the target holds %d CONNECTED of %d endpoints)\n", n,
	       ok, n, connected, endpoints);
	printf("fanin_%d_all_connected %.1f ms (the go instant until the last connect returned)\n",
	       n, last - t0);
	printf("fanin_%d_start_late %.2f ms (the last of the %d threads to start, after the go "
	       "instant)\n",
	       n, late, n);
	printf("fanin_%d_connect_median_worst_host %.1f ms\nfanin_%d_connect_max %.1f ms\n", n,
	       med_max, n, worst);
	for (int p = 0; p < NPHASE && ok; p++)
		printf("fanin_%d_phase_%s_mean %.3f ms\n", n, phase_name[p], ph[p] / ok);
	printf("fanin_%d_listen_overflows %ld\nfanin_%d_listen_drops %ld\n", n, overflows, n, drops);
	printf("fanin_%d_syn_retransmits %ld (the clients' namespaces)\n", n, syn);
	printf("fanin_%d_target_cpu %.1f ms (%.3f ms per connection; loop thread %.1f, workers "
	       "%.1f, ACK thread %.1f)\n",
	       n, cpu, cpu / n, loop, workers, ack);
	printf("fanin_%d_guest_cpu %.1f ms (%.0f %% busy; %.3f ms per connection, both sides and "
	       "rxe)\n",
	       n, b1 - b0, tot1 > tot0 ? 100 * (b1 - b0) / (tot1 - tot0) : 0, (b1 - b0) / n);
	printf("fanin_%d_target_rss_per_endpoint %.1f KiB\n", n, rss >= 0 ? (double)rss / n : -1.0);
	for (int i = 0; i < k; i++)
		child_end(&cc[i]);
	child_end(&tc);
	if (ok != n || connected != n)
		die("fan-in of %d: %d connected, the target holds %d CONNECTED", n, ok, connected);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: fanin run --target NS,DEV,ADDR --client NS,DEV,ADDR [--client ...] N...\n"
		   "       fanin target DEV ADDR\n"
		   "       fanin clients DEV ADDR COUNT PEER_NIC_PATH\n"
		   "N: servers connecting to the target at once (1..%d), spread over the\n"
		   "client hosts (1..%d); run by bench/fanin-vm.sh inside the lab VM.\n",
		   FANIN_MAX_N, FANIN_MAX_CLIENTS);
}

static int role_run(int argc, char **argv)
{
	struct host t, cl[FANIN_MAX_CLIENTS];
	int k = 0, ns[8], nn = 0, have_t = 0;
	char *end;

	memset(&t, 0, sizeof(t));
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--target") && i + 1 < argc) {
			parse_host(&t, argv[++i]);
			have_t = 1;
		} else if (!strcmp(argv[i], "--client") && i + 1 < argc) {
			if (k == FANIN_MAX_CLIENTS)
				die("at most %d client hosts", FANIN_MAX_CLIENTS);
			parse_host(&cl[k++], argv[++i]);
		} else {
			long v = strtol(argv[i], &end, 10);

			if (*end || v < 1 || v > FANIN_MAX_N || nn == 8)
				die("'%s': want a count of 1..%d (at most 8 of them)", argv[i],
				    FANIN_MAX_N);
			ns[nn++] = (int)v;
		}
	}
	if (!have_t || !k || !nn) {
		usage(stderr);
		return 2;
	}
	for (int i = 0; i < nn; i++) {
		if (ns[i] < k)
			die("%d servers over %d hosts: fewer than one each", ns[i], k);
		round_run(&t, cl, k, ns[i]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char exe[4096];
	ssize_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	alarm(FANIN_ALARM_S);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "run")) {
		len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (len <= 0)
			die("readlink /proc/self/exe: %s", strerror(errno));
		exe[len] = 0;
		self_path = exe;
		return role_run(argc - 2, argv + 2);
	}
	if (argc == 4 && !strcmp(argv[1], "target"))
		return role_target(argv[2], argv[3]);
	if (argc == 6 && !strcmp(argv[1], "clients")) {
		char *end;
		long n = strtol(argv[4], &end, 10);

		if (*end || n < 1 || n > FANIN_MAX_N)
			die("COUNT '%s': want 1..%d", argv[4], FANIN_MAX_N);
		/* Each context holds a few descriptors: raise the soft limit. */
		struct rlimit rl;
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		return role_clients(argv[2], argv[3], (int)n, argv[5]);
	}
	usage(stderr);
	return 2;
}
