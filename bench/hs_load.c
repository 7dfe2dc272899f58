/* hs_load — handshake load generator for `make bench` (loopback only).
 *
 * Measures, for 1, 16 and 64 concurrent clients and for Probe and
 * Connection bodies, handshakes per second and p50/p99/max latency of
 *   - qphs: libqphs's daemon (a Connection handler answering a canned desc),
 *   - ceiling: a minimal one-thread epoll server that reads one frame and
 *     writes a fixed reply of the same bytes — the machine's ceiling,
 * and the same at 64 clients while 500 stalled connections are held open.
 *
 * Every connection is one request and one reply, the server closes first
 * (so TIME_WAIT lands on the server side, never on the client's ephemeral
 * ports), and clients bind to 127.0.0.1-127.0.0.8 in turn with
 * IP_BIND_ADDRESS_NO_PORT, so ephemeral ports do not run out.  Each run is
 * bounded in time (RUN_MS); the whole program in wall time (alarm). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "qphs.h"

#define RUN_MS 300
#define REPS 7
#define MAX_CLIENTS 64
#define STALLED 500
#define SOURCES 8
#define MAX_SAMPLES 2000000

static const char probe_req[] = "{}\n";
static const char conn_req[] =
	"{\"local_gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:7f:00:00:01\",\"local_lid\":0,"
	"\"local_nic_path\":\"127.0.0.1:15001@rxe0\",\"payload\":\"\",\"peer_nic_path\":"
	"\"127.0.0.1:15002@rxe0\",\"qp_num\":[4660,4661],\"reply_msg\":\"\"}\n";
static const char probe_rep[] = "{\"status\":\"success\"}\n";
static const char conn_rep[] =
	"{\"local_gid\":\"00:00:00:00:00:00:00:00:00:00:ff:ff:7f:00:00:02\",\"local_lid\":0,"
	"\"local_nic_path\":\"127.0.0.1:15002@rxe0\",\"payload\":\"\",\"peer_nic_path\":"
	"\"127.0.0.1:15001@rxe0\",\"qp_num\":[1000,1001],\"reply_msg\":\"\"}\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A frame: 8-byte little-endian length, type byte, body. */
static size_t frame(int type, const char *body, uint8_t *out)
{
	size_t n = strlen(body);
	uint64_t len = n + 1;

	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(len >> (8 * i));
	out[8] = (uint8_t)type;
	memcpy(out + 9, body, n);
	return n + 9;
}

/* ---- The ceiling: read one frame, write a fixed reply, close. ---- */

struct ceil_conn {
	int fd;
	size_t got;
	uint8_t buf[512];
};

struct ceiling {
	int lfd, epfd;
	uint16_t port;
	volatile bool stop;
	pthread_t thread;
	uint8_t rep[2][512];
	size_t rep_len[2];
};

static void ceil_read(struct ceiling *c, struct ceil_conn *k)
{
	ssize_t n = recv(k->fd, k->buf + k->got, sizeof(k->buf) - k->got, 0);
	uint64_t len = 0;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		k->got += (size_t)n;
	if (n > 0 && k->got >= 9) {
		for (int i = 0; i < 8; i++)
			len |= (uint64_t)k->buf[i] << (8 * i);
		if (k->got < 8 + len && k->got < sizeof(k->buf))
			return;
		int t = k->buf[8] == QPHS_HS_CONNECTION ? 1 : 0;
		send(k->fd, c->rep[t], c->rep_len[t], MSG_NOSIGNAL);
	} else if (n > 0) {
		return;
	}
	close(k->fd);
	free(k);
}

static void *ceil_main(void *arg)
{
	struct ceiling *c = arg;
	struct epoll_event evs[128];

	while (!c->stop) {
		int n = epoll_wait(c->epfd, evs, 128, 50);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr) {
				ceil_read(c, evs[i].data.ptr);
				continue;
			}
			for (int j = 0; j < 64; j++) {
				int fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd < 0)
					break;
				struct ceil_conn *k = calloc(1, sizeof(*k));
				struct epoll_event e = {.events = EPOLLIN, .data.ptr = k};
				k->fd = fd;
				epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &e);
			}
		}
	}
	return NULL;
}

static int ceil_start(struct ceiling *c)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = NULL};
	int one = 1;

	memset(c, 0, sizeof(*c));
	c->rep_len[0] = frame(QPHS_HS_PROBE, probe_rep, c->rep[0]);
	c->rep_len[1] = frame(QPHS_HS_CONNECTION, conn_rep, c->rep[1]);
	c->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(c->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(c->lfd, 128) ||
	    getsockname(c->lfd, (struct sockaddr *)&sa, &sl))
		return -1;
	c->port = ntohs(sa.sin_port);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->lfd, &e);
	return pthread_create(&c->thread, NULL, ceil_main, c);
}

static void ceil_stop(struct ceiling *c)
{
	c->stop = true;
	pthread_join(c->thread, NULL);
	close(c->lfd);
	close(c->epfd);
	/* Connections still open (the stalled ones) are closed by the bench
	 * itself; their small buffers are left to process exit. */
}

/* ---- The load generator: N clients, one thread, epoll. ---- */

struct slot {
	int fd;
	bool sent;
	size_t got;
	double start;
};

struct run {
	uint16_t port;
	int clients;
	const uint8_t *req;
	size_t req_len;
	size_t rep_len;
	unsigned src;
	uint64_t done, errors;
	double *lat; /* seconds, one per handshake */
};

static int open_client(struct run *r, struct slot *s, int epfd)
{
	struct sockaddr_in src = {.sin_family = AF_INET}, dst = {.sin_family = AF_INET};
	struct epoll_event e = {.events = EPOLLOUT, .data.ptr = s};
	int one = 1;

	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -1;
	setsockopt(s->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
	src.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (r->src++ % SOURCES));
	bind(s->fd, (struct sockaddr *)&src, sizeof(src));
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons(r->port);
	s->sent = false;
	s->got = 0;
	s->start = now_s();
	if (connect(s->fd, (struct sockaddr *)&dst, sizeof(dst)) != 0 && errno != EINPROGRESS) {
		close(s->fd);
		return -1;
	}
	return epoll_ctl(epfd, EPOLL_CTL_ADD, s->fd, &e);
}

/* One event on a client.  Returns true when its handshake is over. */
static bool client_event(struct run *r, struct slot *s, int epfd)
{
	uint8_t buf[1024];
	ssize_t n;

	if (!s->sent) {
		struct epoll_event e = {.events = EPOLLIN, .data.ptr = s};
		if (send(s->fd, r->req, r->req_len, MSG_NOSIGNAL) != (ssize_t)r->req_len) {
			r->errors++;
			return true;
		}
		s->sent = true;
		epoll_ctl(epfd, EPOLL_CTL_MOD, s->fd, &e);
		return false;
	}
	while ((n = recv(s->fd, buf, sizeof(buf), 0)) > 0)
		s->got += (size_t)n;
	if (n < 0 && errno == EAGAIN)
		return false;
	/* EOF: the server closed first, after the reply. */
	if (s->got == r->rep_len) {
		if (r->done < MAX_SAMPLES)
			r->lat[r->done] = now_s() - s->start;
		r->done++;
	} else {
		r->errors++;
	}
	return true;
}

static void run_load(struct run *r)
{
	static struct slot slots[MAX_CLIENTS];
	struct epoll_event evs[MAX_CLIENTS];
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	double end = now_s() + RUN_MS / 1000.0;
	int active = 0;

	for (int i = 0; i < r->clients; i++)
		if (open_client(r, &slots[i], epfd) == 0)
			active++;
	while (active > 0) {
		int n = epoll_wait(epfd, evs, MAX_CLIENTS, 100);
		bool more = now_s() < end;
		for (int i = 0; i < n; i++) {
			struct slot *s = evs[i].data.ptr;
			if (!client_event(r, s, epfd))
				continue;
			close(s->fd);
			active--;
			if (more && open_client(r, s, epfd) == 0)
				active++;
		}
		if (now_s() > end + 5) /* a stuck peer must not hang the bench */
			break;
	}
	close(epfd);
}

/* Connections that connect and send three bytes of a header, then nothing. */
static void open_stalled(uint16_t port, int *fds, int n)
{
	struct sockaddr_in dst = {.sin_family = AF_INET};

	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons(port);
	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (connect(fds[i], (struct sockaddr *)&dst, sizeof(dst)) == 0)
			send(fds[i], "\x10\0\0", 3, MSG_NOSIGNAL);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct figures {
	double rate, p50, p99, max;
	double cpu_us; /* the server's CPU time per handshake */
	uint64_t errors;
};

/* CPU seconds of the whole process and of the calling (load) thread: the
 * difference is the server under test, the other server being idle in
 * epoll_wait.  Far steadier than hs/s on a shared machine. */
static double cpu_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct figures measure(uint16_t port, int type, int clients, double *lat)
{
	uint8_t req[512];
	struct run r = {.port = port, .clients = clients, .req = req, .lat = lat};
	struct figures f = {0};
	uint64_t n;
	double t0;

	r.req_len = frame(type, type == QPHS_HS_PROBE ? probe_req : conn_req, req);
	r.rep_len = 9 + strlen(type == QPHS_HS_PROBE ? probe_rep : conn_rep);
	double p0 = cpu_of(CLOCK_PROCESS_CPUTIME_ID), l0 = cpu_of(CLOCK_THREAD_CPUTIME_ID);

	t0 = now_s();
	run_load(&r);
	n = r.done < MAX_SAMPLES ? r.done : MAX_SAMPLES;
	f.rate = r.done / (now_s() - t0);
	if (r.done)
		f.cpu_us = ((cpu_of(CLOCK_PROCESS_CPUTIME_ID) - p0) -
			    (cpu_of(CLOCK_THREAD_CPUTIME_ID) - l0)) * 1e6 / r.done;
	f.errors = r.errors;
	if (n) {
		qsort(lat, n, sizeof(*lat), cmp_double);
		f.p50 = lat[n / 2] * 1e3;
		f.p99 = lat[(size_t)(n * 0.99)] * 1e3;
		f.max = lat[n - 1] * 1e3;
	}
	return f;
}

static void reply_conn(struct qphs_request *req, void *user)
{
	(void)user;
	qphs_request_reply(req, conn_rep, sizeof(conn_rep) - 1);
}

static void print_row(const char *body, int clients, int stalled, const char *server,
		      struct figures f, const struct figures *ceiling)
{
	printf("%-10s %7d %7d  %-7s %9.0f %8.3f %8.3f %8.3f %8.1f %6llu", body, clients,
	       stalled, server, f.rate, f.p50, f.p99, f.max, f.cpu_us,
	       (unsigned long long)f.errors);
	if (ceiling->rate > 0)
		printf("   %5.2f  %5.2f", f.rate / ceiling->rate, ceiling->cpu_us / f.cpu_us);
	printf("\n");
	fflush(stdout);
}

static int cmp_fig_rate(const void *a, const void *b)
{
	const struct figures *x = a, *y = b;
	return x->rate < y->rate ? -1 : x->rate > y->rate;
}

/* The median of REPS runs: rate and each latency figure taken
 * separately, errors summed. */
static struct figures median(struct figures *f)
{
	struct figures m;
	double v[REPS];

	qsort(f, REPS, sizeof(*f), cmp_fig_rate);
	m = f[REPS / 2];
	m.errors = 0;
	for (int i = 0; i < REPS; i++)
		m.errors += f[i].errors;
#define MEDIAN_OF(field)                                                       \
	do {                                                                   \
		for (int i = 0; i < REPS; i++)                                 \
			v[i] = f[i].field;                                     \
		qsort(v, REPS, sizeof(double), cmp_double);                    \
		m.field = v[REPS / 2];                                         \
	} while (0)
	MEDIAN_OF(p50);
	MEDIAN_OF(p99);
	MEDIAN_OF(max);
	MEDIAN_OF(cpu_us);
#undef MEDIAN_OF
	return m;
}

struct servers {
	uint16_t qport, cport;
	double *lat;
};

/* Ceiling and qphs in turn, REPS times each, so a noisy neighbour hits
 * both alike; prints both medians and returns qphs's, *ceil the other's. */
static struct figures pair(const struct servers *sv, int type, int clients, int stalled,
			   struct figures *ceil)
{
	static int fds_q[STALLED], fds_c[STALLED];
	const char *body = type == QPHS_HS_PROBE ? "probe" : "connection";
	struct figures q[REPS], c[REPS], qm;

	for (int r = 0; r < REPS; r++) {
		if (stalled) {
			open_stalled(sv->qport, fds_q, stalled);
			open_stalled(sv->cport, fds_c, stalled);
		}
		c[r] = measure(sv->cport, type, clients, sv->lat);
		q[r] = measure(sv->qport, type, clients, sv->lat);
		for (int i = 0; i < stalled; i++) {
			close(fds_q[i]);
			close(fds_c[i]);
		}
	}
	*ceil = median(c);
	qm = median(q);
	static const struct figures none;

	print_row(body, clients, stalled, "ceiling", *ceil, &none);
	print_row(body, clients, stalled, "qphs", qm, ceil);
	return qm;
}

static void verdict(const char *what, bool ok)
{
	printf("# %-58s %s\n", what, ok ? "meets" : "SHORT");
}

int main(void)
{
	static const int counts[] = {1, 16, 64};
	struct figures q64[2], qs[2], c64[2], cs[2], cf;
	struct qphs_daemon *d = NULL;
	struct qphs_config cfg;
	struct ceiling ceil;
	struct servers sv;
	char line[160];

	alarm(170);
	sv.lat = malloc(MAX_SAMPLES * sizeof(double));
	qphs_config_init(&cfg);
	cfg.request_timeout_ms = 60000; /* the stalled ones must stay for the run */
	if (!sv.lat || qphs_daemon_raise_nofile(&cfg, NULL, NULL, 0) || qphs_daemon_new(&cfg, &d) ||
	    qphs_daemon_set_handler(d, QPHS_HS_CONNECTION, reply_conn, NULL) ||
	    qphs_daemon_listen(d, "127.0.0.1", 0) || qphs_daemon_start(d) || ceil_start(&ceil)) {
		fprintf(stderr, "hs_load: setup failed\n");
		return 1;
	}
	sv.qport = qphs_daemon_port(d);
	sv.cport = ceil.port;
	printf("# handshake bench: loopback; each figure is the median of %d runs of %d ms,\n"
	       "# ceiling and qphs in turn; one request per connection; the server closes\n"
	       "# first (TIME_WAIT stays on the server side); clients bind 127.0.0.1-127.0.0.%d\n"
	       "# in turn; latency = connect start to the server's close.\n",
	       REPS, RUN_MS, SOURCES);
	printf("# srv us/hs = the server thread's CPU time per handshake; the last two\n"
	       "# columns are qphs as a fraction of the ceiling by hs/s and by CPU cost.\n");
	printf("%-10s %7s %7s  %-7s %9s %8s %8s %8s %8s %6s   %s\n", "body", "clients", "stalled",
	       "server", "hs/s", "p50 ms", "p99 ms", "max ms", "srv us/hs", "errors",
	       "of ceiling (hs/s, cpu)");
	for (int t = 0; t < 2; t++) {
		int type = t ? QPHS_HS_CONNECTION : QPHS_HS_PROBE;
		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			struct figures f = pair(&sv, type, counts[i], 0, &cf);
			if (counts[i] == 64) {
				q64[t] = f;
				c64[t] = cf;
			}
		}
		qs[t] = pair(&sv, type, 64, STALLED, &cs[t]);
	}
	for (int t = 0; t < 2; t++) {
		const char *b = t ? "connection" : "probe";
		snprintf(line, sizeof(line), "%s, 64 clients: %.2f of the ceiling (target >= 0.90)", b,
			 q64[t].rate / c64[t].rate);
		verdict(line, q64[t].rate >= 0.9 * c64[t].rate);
		snprintf(line, sizeof(line), "%s, 64 clients: %.2f of the ceiling's CPU cost per hs", b,
			 c64[t].cpu_us / q64[t].cpu_us);
		verdict(line, c64[t].cpu_us >= 0.9 * q64[t].cpu_us);
		snprintf(line, sizeof(line), "%s, 64 clients: p99 %.3f ms (target < 5 ms)", b, q64[t].p99);
		verdict(line, q64[t].p99 < 5);
		snprintf(line, sizeof(line), "%s, +500 stalled: hs/s %+.1f%%, p99 %+.1f%% (target 10%%)",
			 b, 100 * (qs[t].rate / q64[t].rate - 1), 100 * (qs[t].p99 / q64[t].p99 - 1));
		verdict(line, qs[t].rate >= 0.9 * q64[t].rate && qs[t].p99 <= 1.1 * q64[t].p99);
		snprintf(line, sizeof(line), "%s, +500 stalled: CPU per hs %+.1f%% (target 10%%)", b,
			 100 * (qs[t].cpu_us / q64[t].cpu_us - 1));
		verdict(line, qs[t].cpu_us <= 1.1 * q64[t].cpu_us);
	}
	qphs_daemon_free(d);
	ceil_stop(&ceil);
	free(sv.lat);
	return 0;
}
