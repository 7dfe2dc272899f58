/* hs_remote — `make bench`'s out-of-process daemon comparison (loopback).
 *
 *   hs_remote QPLAB [LOGFILE]    the comparison (about 3 minutes, bounded)
 *   hs_remote --ceiling          the ceiling server alone (what the
 *                                comparison starts as a child)
 *
 * Three servers run as processes of their own, started here and stopped
 * by their pids: the ceiling (load.h's one-thread epoll server that reads a
 * frame and writes a fixed reply), `qplab hs serve` logging its line per
 * request to LOGFILE, and `qplab hs serve --quiet`.  One closed-loop
 * generator thread of ours (load.h) drives Connection requests at each of
 * 1, 16 and 64 clients with 0, 50 and 500 stalled connections held open on
 * every server; within each repetition the three servers take turns, in a
 * rotating order, so a noisy neighbour hits all alike.  A server's CPU is
 * the sum of its threads' run time (/proc/PID/task/TID/schedstat, ns).
 *
 * Targets (README, bench): hs serve at least 0.9x the ceiling's
 * handshakes/s and at most 1.3x its CPU per handshake at every point; the
 * log line at most 5 % of hs serve's CPU per handshake.  A verdict takes
 * the ratios of the two servers paired by repetition (both measured in
 * it), their median and a distribution-free interval for that median:
 * MET when the interval is wholly on the target's side, MISSED when it is
 * wholly on the other, UNSETTLED when it holds the bound (judge.h).  The
 * log line's cost is per request, so its verdict pools every point's
 * repetitions (log_verdict): one point's runs spread too widely (0.7-1.4
 * on this machine) to tell 5 % apart.
 *
 * QPLAB_BENCH_PERF=FILE: record the logging hs serve's stacks for the
 * whole run with linux-perf (cpu-clock, a fixed period, frame pointers)
 * into FILE, for `make bench PROFILE=1`'s flame graph;
 * QPLAB_BENCH_PERF_SERVER=ceiling records the ceiling instead. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "judge.h"
#include "rss.h"

/* Repetitions per point: 15 runs narrow a median's interval to the 4th
 * to 12th of them (96.5 %); 7 leave only their whole range. */
#define REMOTE_REPS 15

enum { S_CEIL, S_LOG, S_QUIET, S_COUNT };
static const char *const server_name[S_COUNT] = {"ceiling", "serve", "serve-q"};

struct server {
	pid_t pid;
	uint16_t port;
};

/* Run time of every thread of pid so far, seconds. */
static double proc_cpu(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	char path[64];
	double sum = 0;
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((e = readdir(dir))) {
		unsigned long long ns;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", (int)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &ns) == 1)
			sum += (double)ns / 1e9;
		fclose(f);
	}
	closedir(dir);
	return sum;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* --ceiling: serve until SIGTERM. */
static int ceiling_main(void)
{
	struct ceiling c;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	raise_nofile();
	if (ceil_start(&c) != 0) {
		fprintf(stderr, "hs_remote --ceiling: cannot listen\n");
		return 1;
	}
	printf("listening on 127.0.0.1:%u\n", c.port);
	fflush(stdout);
	sigwait(&set, &sig);
	ceil_stop(&c);
	return 0;
}

/* Starts argv with stdout on a pipe and stderr on errfd; reads the
 * "listening on HOST:PORT" line.  Returns 0 or -1. */
static int spawn(struct server *s, char *const argv[], int errfd)
{
	char line[256] = "";
	int p[2];
	FILE *f;
	char *colon;

	if (pipe(p) != 0)
		return -1;
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		dup2(p[1], 1);
		dup2(errfd, 2);
		close(p[0]);
		close(p[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f); /* the child's later stdout writes go nowhere: it prints no more */
	colon = strrchr(line, ':');
	if (strncmp(line, "listening on ", 13) != 0 || !colon)
		return -1;
	s->port = (uint16_t)atoi(colon + 1);
	return s->port ? 0 : -1;
}

/* perf record on pid into file; its pid, or 0. */
static pid_t start_perf(const char *file, pid_t pid)
{
	char p[16], *argv[] = {(char *)"perf", (char *)"record", (char *)"-q", (char *)"-e",
			      (char *)"cpu-clock", (char *)"-c", (char *)"250000", (char *)"-g",
			      (char *)"-p", p, (char *)"-o", (char *)file, NULL};
	pid_t perf;

	snprintf(p, sizeof(p), "%d", (int)pid);
	perf = fork();
	if (perf == 0) {
		execvp("perf", argv);
		_exit(127);
	}
	if (perf > 0)
		usleep(500000); /* perf attaches before the load starts */
	return perf > 0 ? perf : 0;
}

static void stop(struct server *s, int sig)
{
	if (s->pid > 0) {
		kill(s->pid, sig);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
}

struct point {
	struct figures f[S_COUNT][REMOTE_REPS];
};

static struct judge_tally tally;

static double onoff[VERDICT_MAX]; /* log on / log off CPU per handshake, each run */
static int n_onoff, onoff_failed;
_Static_assert(REMOTE_REPS <= REPS_MAX, "median() holds REPS_MAX runs");
_Static_assert(9 * REMOTE_REPS <= VERDICT_MAX, "the log line pools nine points' runs");

static void one_point(struct server *sv, int clients, int stalled, double *lat, const char *log)
{
	static int fds[S_COUNT][STALLED];
	struct point p;
	struct figures m[S_COUNT];
	double v[REMOTE_REPS];
	char what[96];
	int n;

	for (int r = 0; r < REMOTE_REPS; r++) {
		for (int s = 0; s < S_COUNT; s++)
			open_stalled(sv[s].port, fds[s], stalled);
		for (int k = 0; k < S_COUNT; k++) {
			int s = (r + k) % S_COUNT;
			p.f[s][r] = measure(sv[s].port, QPHS_HS_CONNECTION, clients, lat, proc_cpu,
					    &sv[s].pid);
		}
		for (int s = 0; s < S_COUNT; s++)
			for (int i = 0; i < stalled; i++)
				close(fds[s][i]);
		if (log && truncate(log, 0) != 0)
			perror("hs_remote: truncate");
	}
	for (int s = 0; s < S_COUNT; s++) {
		struct figures copy[REMOTE_REPS];
		memcpy(copy, p.f[s], sizeof(copy));
		m[s] = median(copy, REMOTE_REPS);
		printf("%7d %7d  %-8s %9.0f %8.3f %8.3f %8.3f %9.1f %6llu\n", clients, stalled,
		       server_name[s], m[s].rate, m[s].p50, m[s].p99, m[s].max, m[s].cpu_us,
		       (unsigned long long)m[s].errors);
	}
	judge_targets(&tally, clients, stalled, p.f[S_LOG], p.f[S_CEIL], REMOTE_REPS);
	/* The log line's cost is per request, whatever the load: one verdict
	 * over every point's runs (log_verdict); each point's ratio is shown. */
	onoff_failed += judge_paired(p.f[S_LOG], p.f[S_QUIET], REMOTE_REPS, JUDGE_CPU, v, &n);
	snprintf(what, sizeof(what), "%d clients, %d stalled: CPU/hs log on/off", clients, stalled);
	if (n)
		printf("# %-44s %5.2f (median of %d paired runs; runs %.2f-%.2f)\n", what,
		       verdict_median(v, n), n, v[0], v[n - 1]);
	for (int r = 0; r < n && n_onoff < VERDICT_MAX; r++)
		onoff[n_onoff++] = v[r];
	fflush(stdout);
}

/* The log line's verdict, over every point's runs (its cost is per
 * request): the same verdict on all of them, the bound 1.05. */
static void log_verdict(void)
{
	char what[96];

	if (n_onoff < 8)
		return;
	sortd(onoff, (size_t)n_onoff);
	snprintf(what, sizeof(what), "all points: CPU/hs log on/off, %d runs", n_onoff);
	judge_print(&tally, what, onoff, n_onoff, onoff_failed, 1.05, true);
}

/* The daemon's memory, before any load (after it, freed memory that
 * malloc keeps would hide what connections cost): its RSS idle, with
 * STALLED connections open (each has sent 3 bytes of a header), and again
 * once they are closed; the ceiling's beside it.  Each wait (300 ms) is far below the request
 * deadline (5 s), so no stalled connection has been timed out yet. */
static void memory_phase(struct server *sv)
{
	static int fds[STALLED];
	static const int which[] = {S_QUIET, S_CEIL};

	printf("# memory (VmRSS of the server process, KiB; %d connections that sent 3 bytes)\n",
	       STALLED);
	for (size_t k = 0; k < sizeof(which) / sizeof(which[0]); k++) {
		struct server *s = &sv[which[k]];
		long idle, open_, after;

		usleep(300000);
		idle = bench_rss_kib(s->pid);
		open_stalled(s->port, fds, STALLED);
		usleep(300000);
		open_ = bench_rss_kib(s->pid);
		for (int i = 0; i < STALLED; i++)
			close(fds[i]);
		usleep(300000);
		after = bench_rss_kib(s->pid);
		printf("%s_rss_idle_kib %ld\n", server_name[which[k]], idle);
		printf("%s_rss_with_%d_open_kib %ld (%.0f bytes per connection)\n",
		       server_name[which[k]], STALLED, open_, (double)(open_ - idle) * 1024 / STALLED);
		printf("%s_rss_after_%d_closed_kib %ld (%+.1f %% of idle)\n", server_name[which[k]],
		       STALLED, after, idle > 0 ? 100.0 * (double)(after - idle) / (double)idle : 0);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const int counts[] = {1, 16, 64}, stalls[] = {0, 50, 500};
	struct server sv[S_COUNT] = {{0}}, perf = {0};
	const char *perf_file = getenv("QPLAB_BENCH_PERF");
	const char *log = argc > 2 ? argv[2] : "/dev/null";
	char self[] = "/proc/self/exe", ceil_flag[] = "--ceiling", hs[] = "hs", serve[] = "serve",
	     listen[] = "--listen", addr[] = "127.0.0.1:0", quiet[] = "--quiet", lim[] = "--limit",
	     conns[] = "max_conns_per_source=1048576", reqs[] = "max_requests_per_source=1048576";
	double *lat;
	int errfd, nullfd, rc = 0;

	if (argc == 2 && !strcmp(argv[1], "--ceiling"))
		return ceiling_main();
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: hs_remote QPLAB [LOGFILE] | hs_remote --ceiling\n");
		return 2;
	}
	alarm(600);
	raise_nofile();
	signal(SIGPIPE, SIG_IGN);
	lat = malloc(MAX_SAMPLES * sizeof(double));
	errfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	nullfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	char *ceil_argv[] = {self, ceil_flag, NULL};
	/* Every client and stalled socket comes from 127.0.0.1: the per-source
	 * limits (docs/hs.md) would otherwise refuse the bench's own load. */
	char *log_argv[] = {argv[1], hs, serve, listen, addr, lim, conns, lim, reqs, NULL};
	char *quiet_argv[] = {argv[1], hs, serve, listen, addr, lim, conns, lim, reqs, quiet, NULL};
	if (!lat || errfd < 0 || nullfd < 0 || spawn(&sv[S_CEIL], ceil_argv, nullfd) ||
	    spawn(&sv[S_LOG], log_argv, errfd) || spawn(&sv[S_QUIET], quiet_argv, nullfd)) {
		fprintf(stderr, "hs_remote: cannot start the servers (%s)\n", argv[1]);
		rc = 1;
		goto out;
	}
	if (perf_file && *perf_file)
		perf.pid = start_perf(perf_file, sv[getenv("QPLAB_BENCH_PERF_SERVER") &&
						     !strcmp(getenv("QPLAB_BENCH_PERF_SERVER"), "ceiling")
						 ? S_CEIL : S_LOG].pid);
	printf("# out-of-process daemon bench: Connection requests, one generator thread,\n"
	       "# each row the median of %d runs of %d ms, the servers in turn; serve = qplab\n"
	       "# hs serve logging each request to %s, serve-q = the same with --quiet;\n"
	       "# srv us/hs = the server process's CPU (all threads) per handshake.\n",
	       REMOTE_REPS, RUN_MS, log);
	memory_phase(sv);
	printf("%7s %7s  %-8s %9s %8s %8s %8s %9s %6s\n", "clients", "stalled", "server", "hs/s",
	       "p50 ms", "p99 ms", "max ms", "srv us/hs", "errors");
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
		for (size_t s = 0; s < sizeof(stalls) / sizeof(stalls[0]); s++)
			one_point(sv, counts[c], stalls[s], lat, argc > 2 ? log : NULL);
	log_verdict();
	judge_summary(&tally, "out-of-process daemon");
	usleep(300000);
	printf("serve-q_rss_after_the_load_kib %ld (%d stalled connections opened and closed "
	       "%d times)\n", bench_rss_kib(sv[S_QUIET].pid), STALLED, REMOTE_REPS * 3);
out:
	stop(&perf, SIGINT);
	for (int s = 0; s < S_COUNT; s++)
		stop(&sv[s], SIGTERM);
	free(lat);
	return rc;
}
