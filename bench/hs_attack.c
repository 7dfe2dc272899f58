/* hs_attack — a hostile peer against `qplab hs serve`, loopback only.
 *
 *   hs_attack [--check] QPLAB
 *
 * Starts QPLAB hs serve on 127.0.0.1 and plays the attacks of issue 25
 * while a legitimate peer (127.0.0.1) probes it:
 *   A  idle sockets from one source (127.0.1.1) far beyond the per-source
 *      connection limit;
 *   B  partial 1 MiB Metadata bodies from 64 sources (127.0.2.x), far beyond
 *      the memory budget;
 *   C  eight clients (127.0.3.x) sending 800 KB Metadata bodies of 100k
 *      keys, in a loop, and then of 30k keys (under max_body_keys, so
 *      parsed, by the parse worker);
 *   D  idle again: the RSS against the baseline taken before A.
 * It prints the probe latency (p50/p99/max) under each attack, the RSS,
 * and the daemon's counters (the "hs serve: stats:" line it prints when it
 * stops), then compares with the targets: probe p99 under 10 ms during C,
 * idle RSS after D within 10 % of the baseline.
 *
 * --check (tests/hostile/run.sh, in make check): the same at a small scale
 * with low limits (--limit), asserting behaviour, not speed: every probe
 * answered, each attack refused, counted and logged with its reason and
 * source, and the RSS back near its baseline; bounds are generous and
 * scaled by QPLAB_TIME_MULTIPLIER.  Exit 0 when all hold, 1 otherwise.
 *
 * Every loop is bounded in count and time, and the whole run by alarm();
 * the daemon is our child and is stopped (SIGTERM) and reaped at the end.
 * Against a qplab without --limit (an older build) run without --check:
 * the defaults then apply and the figures show the old behaviour. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rss.h"
#include "sortd.h"

#define MAX_SAMPLES 100000
#define PROBE_REPLY "{\"status\":\"success\"}"

struct scale {
	int idle_socks;     /* A */
	int mem_conns;      /* B: connections, spread over mem_sources */
	int mem_sources;
	size_t mem_partial; /* B: body bytes each sends of its 1 MiB */
	int parse_clients;  /* C */
	double parse_s;     /* C: seconds per body kind */
	int keys_big, keys_ok;
	size_t body_bytes;
};

static const struct scale full = {1100, 1000, 64, 512 << 10, 8, 4.0, 100000, 30000, 820000};
static const struct scale small = {200, 120, 12, 256 << 10, 4, 1.0, 100000, 30000, 820000};

static bool check_mode;
static double mult = 1;
static int failures;
static pid_t serve_pid = -1;
static char logpath[64];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Stops the daemon (our child) whatever way we leave. */
static void kill_serve(void)
{
	if (serve_pid > 0) {
		kill(serve_pid, SIGKILL);
		waitpid(serve_pid, NULL, 0);
		serve_pid = -1;
	}
	if (logpath[0])
		unlink(logpath);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "hs_attack: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void expect(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (!check_mode)
		return;
	va_start(ap, fmt);
	printf("%s - ", ok ? "ok" : "not ok");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	failures += !ok;
}

/* A socket bound to src (127/8), connected (blocking, with timeouts) to
 * 127.0.0.1:port, or -1. */
static int connect_from(const char *src, uint16_t port, double timeout_s)
{
	struct sockaddr_in sa = {.sin_family = AF_INET}, me = {.sin_family = AF_INET};
	struct timeval tv = {.tv_sec = (time_t)timeout_s,
			     .tv_usec = (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6)};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
	inet_pton(AF_INET, src, &me.sin_addr);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(port);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) != 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void put_header(uint8_t *out, int type, uint64_t len)
{
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(len >> (8 * i));
	out[8] = (uint8_t)type;
}

/* One probe from 127.0.0.1: its latency in ms, or -1 when it failed. */
static double probe(uint16_t port)
{
	uint8_t req[12], rep[64];
	double t0 = now_s();
	size_t got = 0;
	ssize_t n;
	int fd = connect_from("127.0.0.1", port, 2 * mult);

	if (fd < 0)
		return -1;
	put_header(req, 3, 3);
	memcpy(req + 9, "{}\n", 3);
	if (send(fd, req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req)) {
		close(fd);
		return -1;
	}
	while ((n = recv(fd, rep + got, sizeof(rep) - got, 0)) > 0 && (got += (size_t)n) < sizeof(rep))
		;
	close(fd);
	if (got < 9 + strlen(PROBE_REPLY) || memcmp(rep + 9, PROBE_REPLY, strlen(PROBE_REPLY)))
		return -1;
	return (now_s() - t0) * 1000;
}

struct prober {
	uint16_t port;
	volatile bool stop;
	double *lat;
	int n, failed;
	pthread_t thread;
};

/* Probes one after another, 2 ms apart, until told to stop. */
static void *prober_main(void *arg)
{
	struct prober *p = arg;
	struct timespec gap = {0, 2000000};

	while (!p->stop && p->n < MAX_SAMPLES) {
		double ms = probe(p->port);
		if (ms < 0)
			p->failed++;
		else
			p->lat[p->n++] = ms;
		nanosleep(&gap, NULL);
	}
	return NULL;
}

struct figures {
	double p50, p99, max;
	int n, failed;
};

static struct figures prober_stop(struct prober *p)
{
	struct figures f = {0, 0, 0, p->n, p->failed};

	p->stop = true;
	pthread_join(p->thread, NULL);
	if (p->n) {
		sortd(p->lat, (size_t)p->n);
		f.p50 = p->lat[p->n / 2];
		f.p99 = p->lat[(size_t)(p->n * 0.99)];
		f.max = p->lat[p->n - 1];
	}
	return f;
}

static void prober_start(struct prober *p, uint16_t port)
{
	p->port = port;
	p->stop = false;
	p->n = p->failed = 0;
	pthread_create(&p->thread, NULL, prober_main, p);
}

static void print_figures(const char *what, struct figures f)
{
	printf("%-44s probes %5d failed %3d  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n", what,
	       f.n, f.failed, f.p50, f.p99, f.max);
}

static long rss_kib(void)
{
	return bench_rss_kib(serve_pid);
}

/* Whether the peer closed fd (EOF or reset) within timeout_s. */
static bool closed_by_peer(int fd, double timeout_s)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char c;

	if (poll(&p, 1, (int)(timeout_s * 1000)) <= 0)
		return false;
	return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

/* ---- A: idle sockets from one source. ---- */
static void attack_idle(uint16_t port, const struct scale *sc, struct prober *p)
{
	int *fds = calloc((size_t)sc->idle_socks, sizeof(int));
	int opened = 0, refused = 0;
	struct figures f;

	if (!fds)
		return;
	for (int i = 0; i < sc->idle_socks; i++)
		if ((fds[i] = connect_from("127.0.1.1", port, 2 * mult)) >= 0)
			opened++;
	prober_start(p, port);
	nanosleep(&(struct timespec){0, 500000000}, NULL);
	f = prober_stop(p);
	for (int i = 0; i < sc->idle_socks; i++) {
		if (fds[i] < 0)
			continue;
		refused += closed_by_peer(fds[i], 0.001);
		close(fds[i]);
	}
	printf("A: %d idle sockets from 127.0.1.1: %d opened, %d closed at once by the daemon\n",
	       sc->idle_socks, opened, refused);
	print_figures("A: probe from 127.0.0.1 meanwhile", f);
	expect(f.failed == 0 && f.n > 0, "A: every probe answered (%d, %d failed)", f.n, f.failed);
	expect(refused >= sc->idle_socks - 32 - 8,
	       "A: the sockets beyond the per-source limit (32) were closed (%d of %d)", refused,
	       sc->idle_socks);
	free(fds);
}

/* ---- B: partial 1 MiB Metadata bodies from many sources. ---- */
static void attack_memory(uint16_t port, const struct scale *sc, struct prober *p, long *peak)
{
	int *fds = calloc((size_t)sc->mem_conns, sizeof(int));
	uint8_t *body = malloc(sc->mem_partial + 10);
	int sent_whole = 0, refused = 0;
	struct figures f;
	char src[32];

	if (!fds || !body)
		die("out of memory");
	put_header(body, 1, 1 << 20);
	memset(body + 9, ' ', sc->mem_partial + 1);
	body[9] = '{';
	prober_start(p, port);
	for (int i = 0; i < sc->mem_conns; i++) {
		snprintf(src, sizeof(src), "127.0.2.%d", 1 + i % sc->mem_sources);
		fds[i] = connect_from(src, port, 0.2 * mult);
		if (fds[i] < 0)
			continue;
		/* A refused one is closed: the send then fails or stops short. */
		if (send(fds[i], body, sc->mem_partial + 9, MSG_NOSIGNAL) ==
		    (ssize_t)(sc->mem_partial + 9))
			sent_whole++;
	}
	nanosleep(&(struct timespec){0, 300000000}, NULL);
	*peak = rss_kib();
	f = prober_stop(p);
	for (int i = 0; i < sc->mem_conns; i++) {
		if (fds[i] < 0)
			continue;
		refused += closed_by_peer(fds[i], 0.001);
		close(fds[i]);
	}
	printf("B: %d partial 1 MiB bodies (%zu KiB each sent) from %d sources: %d sent whole, "
	       "%d closed by the daemon; RSS during: %ld KiB\n",
	       sc->mem_conns, sc->mem_partial >> 10, sc->mem_sources, sent_whole, refused, *peak);
	print_figures("B: probe from 127.0.0.1 meanwhile", f);
	expect(f.failed == 0 && f.n > 0, "B: every probe answered (%d, %d failed)", f.n, f.failed);
	expect(refused > 0, "B: bodies beyond the budget were refused (%d)", refused);
	free(fds);
	free(body);
}

/* ---- C: large bodies with many keys from eight clients. ---- */
struct flooder {
	uint16_t port;
	int id;
	const uint8_t *frame;
	size_t len;
	double until;
	int sent;
	pthread_t thread;
};

static void *flooder_main(void *arg)
{
	struct flooder *fl = arg;
	char src[32], c[64];

	/* The attacker stands for another host: on this one it must not
	 * starve the daemon of CPU, or the figures measure the scheduler. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	snprintf(src, sizeof(src), "127.0.3.%d", 1 + fl->id);
	for (int i = 0; i < 100000 && now_s() < fl->until; i++) {
		/* The daemon answers once its parse worker is through the
		 * queue: wait for it, so the attack is over when we return. */
		int fd = connect_from(src, fl->port, 30 * mult);
		size_t off = 0;
		ssize_t n;

		if (fd < 0)
			continue;
		while (off < fl->len && (n = send(fd, fl->frame + off, fl->len - off, MSG_NOSIGNAL)) > 0)
			off += (size_t)n;
		fl->sent += off == fl->len;
		while (recv(fd, c, sizeof(c), 0) > 0) /* until the daemon closes */
			;
		close(fd);
	}
	return NULL;
}

/* A Metadata frame of about bytes, with keys distinct 3-character keys
 * ("abc":0), padded with spaces. */
static uint8_t *keys_frame(int keys, size_t bytes, size_t *len)
{
	static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint8_t *f = malloc(bytes + 64);
	size_t off = 9;

	if (!f || (size_t)keys * 8 + 16 > bytes)
		die("keys_frame: %d keys do not fit %zu bytes", keys, bytes);
	f[off++] = '{';
	for (int k = 0; k < keys; k++) {
		int a = k % 62, b = (k / 62) % 62, c = k / (62 * 62);
		off += (size_t)sprintf((char *)f + off, "%s\"%c%c%c\":0", k ? "," : "", al[a], al[b],
				       al[c % 62]);
	}
	while (off < bytes + 8)
		f[off++] = ' ';
	f[off++] = '}';
	put_header(f, 1, off - 8);
	*len = off;
	return f;
}

static struct figures attack_parse(uint16_t port, const struct scale *sc, struct prober *p,
				   int keys, int *sent)
{
	struct flooder fl[16];
	size_t len;
	uint8_t *frame = keys_frame(keys, sc->body_bytes, &len);
	struct figures f;

	*sent = 0;
	prober_start(p, port);
	for (int i = 0; i < sc->parse_clients; i++) {
		fl[i] = (struct flooder){port, i, frame, len, now_s() + sc->parse_s, 0, 0};
		pthread_create(&fl[i].thread, NULL, flooder_main, &fl[i]);
	}
	for (int i = 0; i < sc->parse_clients; i++) {
		pthread_join(fl[i].thread, NULL);
		*sent += fl[i].sent;
	}
	f = prober_stop(p);
	free(frame);
	return f;
}

/* ---- The daemon. ---- */
static uint16_t start_serve(const char *qplab)
{
	int out[2], logfd;
	char line[256];
	unsigned port = 0;
	FILE *f;

	snprintf(logpath, sizeof(logpath), "/tmp/qplab-hs-attack.%d.log", (int)getpid());
	logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0 || pipe(out) != 0)
		die("%s: %s", logpath, strerror(errno));
	serve_pid = fork();
	if (serve_pid == 0) {
		dup2(out[1], 1);
		dup2(logfd, 2);
		if (check_mode)
			execl(qplab, qplab, "hs", "serve", "--listen", "127.0.0.1:0", "--limit",
			      "max_conns_per_source=32", "--limit", "memory_budget_kib=8192",
			      (char *)NULL);
		else
			execl(qplab, qplab, "hs", "serve", "--listen", "127.0.0.1:0", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(logfd);
	f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "listening on 127.0.0.1:%u", &port) != 1) {
		die("%s hs serve did not start", qplab);
	}
	fclose(f);
	return (uint16_t)port;
}

/* Stops the daemon and returns its log (malloc'd). */
static char *stop_serve(void)
{
	char *text;
	long n;
	FILE *f;

	kill(serve_pid, SIGTERM);
	waitpid(serve_pid, NULL, 0);
	serve_pid = -1;
	if (!(f = fopen(logpath, "r")))
		die("%s: %s", logpath, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = calloc(1, (size_t)n + 1);
	if (!text || fread(text, 1, (size_t)n, f) != (size_t)n)
		die("%s: cannot read it", logpath);
	fclose(f);
	unlink(logpath);
	return text;
}

static void on_alarm(int sig)
{
	(void)sig;
	if (serve_pid > 0)
		kill(serve_pid, SIGKILL);
	if (logpath[0])
		unlink(logpath);
	_exit(3);
}

/* The value of "name=N" in the stats line, or -1. */
static long stat_of(const char *log, const char *name)
{
	const char *line = strstr(log, "hs serve: stats:"), *at;
	char key[64];

	if (!line)
		return -1;
	snprintf(key, sizeof(key), " %s=", name);
	at = strstr(line, key);
	return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

static long idle_rss(void)
{
	/* The daemon hands memory back 200 ms after the last large buffer. */
	nanosleep(&(struct timespec){1, 0}, NULL);
	return rss_kib();
}

int main(int argc, char **argv)
{
	const struct scale *sc;
	const char *qplab, *m = getenv("QPLAB_TIME_MULTIPLIER");
	struct prober p = {0};
	struct figures big, ok;
	long base, peak = 0, after;
	int sent_big, sent_ok;
	char *log;

	if (argc == 3 && !strcmp(argv[1], "--check"))
		check_mode = true;
	else if (argc != 2) {
		fprintf(stderr, "usage: hs_attack [--check] QPLAB\n");
		return 2;
	}
	qplab = argv[argc - 1];
	if (m && *m) {
		char *end;
		mult = strtod(m, &end);
		if (*end || !(mult >= 1 && mult <= 100)) {
			fprintf(stderr, "hs_attack: QPLAB_TIME_MULTIPLIER=%s: want 1..100\n", m);
			return 2;
		}
	}
	sc = check_mode ? &small : &full;
	atexit(kill_serve);
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm((unsigned)(120 * mult));
	p.lat = malloc(MAX_SAMPLES * sizeof(double));
	if (!p.lat)
		return 1;
	uint16_t port = start_serve(qplab);

	/* Baseline: warm up with legitimate traffic, then idle. */
	for (int i = 0; i < 200; i++)
		probe(port);
	base = idle_rss();
	printf("baseline idle RSS after 200 probes: %ld KiB\n", base);

	attack_idle(port, sc, &p);
	attack_memory(port, sc, &p, &peak);
	big = attack_parse(port, sc, &p, sc->keys_big, &sent_big);
	print_figures("C: probe, bodies of 100k keys (refused)", big);
	ok = attack_parse(port, sc, &p, sc->keys_ok, &sent_ok);
	print_figures("C: probe, bodies of 30k keys (parsed)", ok);
	printf("C: %d clients x %.0f s, 800 KB Metadata bodies: %d of 100k keys and %d of 30k "
	       "keys sent\n", sc->parse_clients, sc->parse_s, sent_big, sent_ok);
	after = idle_rss();
	printf("D: idle RSS after the attacks: %ld KiB (baseline %ld KiB, %+.1f %%)\n", after, base,
	       100.0 * (double)(after - base) / (double)base);
	log = stop_serve();
	{
		const char *line = strstr(log, "hs serve: stats:");
		printf("%.*s\n", line ? (int)strcspn(line, "\n") : 0, line ? line : "");
	}
	expect(big.failed == 0 && ok.failed == 0, "C: every probe answered (%d+%d failed)",
	       big.failed, ok.failed);
	expect(big.max < 2000 * mult && ok.max < 2000 * mult,
	       "C: no probe waited near a deadline (max %.1f / %.1f ms)", big.max, ok.max);
	expect(sent_big > 0 && sent_ok > 0, "C: the attack ran (%d, %d bodies)", sent_big, sent_ok);
	expect(stat_of(log, "refused_per_source") >= sc->idle_socks - 32 - 8,
	       "A: refusals counted (refused_per_source=%ld)", stat_of(log, "refused_per_source"));
	expect(strstr(log, "[Handshake] refusing a connection from 127.0.1.1") &&
	       strstr(log, "max_conns_per_source"), "A: the refusal is logged with its source");
	expect(stat_of(log, "refused_budget") > 0 || stat_of(log, "refused_per_source") > 0,
	       "B: refusals counted (refused_budget=%ld)", stat_of(log, "refused_budget"));
	expect(strstr(log, "does not fit the memory budget") != NULL,
	       "B: the budget refusal is logged with its reason");
	expect(peak < base + 64 * 1024, "B: RSS under attack bounded (%ld KiB, baseline %ld)",
	       peak, base);
	expect(strstr(log, "max_body_keys") != NULL && stat_of(log, "rejected_body") > 0,
	       "C: bodies of 100k keys refused before parsing, logged and counted (%ld)",
	       stat_of(log, "rejected_body"));
	expect(stat_of(log, "memory_trims") > 0, "D: memory handed back (memory_trims=%ld)",
	       stat_of(log, "memory_trims"));
	expect(after <= base * 1.25 + 2048, "D: idle RSS back near the baseline (%ld / %ld KiB)",
	       after, base);
	if (!check_mode) {
		printf("target: probe p99 under 10 ms during C: %s (%.2f / %.2f ms)\n",
		       big.p99 < 10 && ok.p99 < 10 ? "MET" : "MISSED", big.p99, ok.p99);
		printf("target: idle RSS after the attacks within 10 %% of the baseline: %s\n",
		       after <= base * 1.10 ? "MET" : "MISSED");
	}
	free(log);
	free(p.lat);
	return failures ? 1 : 0;
}
