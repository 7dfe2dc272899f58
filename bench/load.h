/* load.h — the handshake load generator and the ceiling server that
 * bench/hs_load (in process) and bench/hs_remote (out of process) share.
 *
 * Clients: N at once on one thread and one epoll set, closed loop (a client
 * that finished opens the next connection at once), one request per
 * connection, each bound to 127.0.0.1-127.0.0.SOURCES in turn with
 * IP_BIND_ADDRESS_NO_PORT so ephemeral ports do not run out.  The server
 * closes first.  The ceiling: one thread, epoll, reads one frame and writes
 * a fixed reply of the right type, no parsing.  A single program includes
 * this once, so everything is static. */
#ifndef QPLAB_BENCH_LOAD_H
#define QPLAB_BENCH_LOAD_H

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
#include "sortd.h"

#define RUN_MS 300
#define REPS_MAX 16 /* any bench's, at most (median) */
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

struct figures {
	double rate, p50, p99, max;
	double cpu_us; /* the server's CPU time per handshake */
	uint64_t errors;
};

/* The server under test's CPU seconds so far, whatever that is for the
 * caller (a thread, a process). */
typedef double (*server_cpu_fn)(void *arg);

static struct figures measure(uint16_t port, int type, int clients, double *lat,
			      server_cpu_fn cpu, void *arg)
{
	uint8_t req[512];
	struct run r = {.port = port, .clients = clients, .req = req, .lat = lat};
	struct figures f = {0};
	uint64_t n;
	double t0;

	r.req_len = frame(type, type == QPHS_HS_PROBE ? probe_req : conn_req, req);
	r.rep_len = 9 + strlen(type == QPHS_HS_PROBE ? probe_rep : conn_rep);
	double c0 = cpu(arg);

	t0 = now_s();
	run_load(&r);
	n = r.done < MAX_SAMPLES ? r.done : MAX_SAMPLES;
	f.rate = r.done / (now_s() - t0);
	if (r.done)
		f.cpu_us = (cpu(arg) - c0) * 1e6 / r.done;
	f.errors = r.errors;
	if (n) {
		sortd(lat, n);
		f.p50 = lat[n / 2] * 1e3;
		f.p99 = lat[(size_t)(n * 0.99)] * 1e3;
		f.max = lat[n - 1] * 1e3;
	}
	return f;
}

static int cmp_fig_rate(const void *a, const void *b)
{
	const struct figures *x = a, *y = b;
	return x->rate < y->rate ? -1 : x->rate > y->rate;
}

/* The median of n runs (n <= REPS_MAX): rate and each latency figure
 * taken separately, errors summed. */
static struct figures median(struct figures *f, int n)
{
	struct figures m;
	double v[REPS_MAX];

	qsort(f, (size_t)n, sizeof(*f), cmp_fig_rate);
	m = f[n / 2];
	m.errors = 0;
	for (int i = 0; i < n; i++)
		m.errors += f[i].errors;
#define MEDIAN_OF(field)                                                       \
	do {                                                                   \
		for (int i = 0; i < n; i++)                                    \
			v[i] = f[i].field;                                     \
		sortd(v, (size_t)n);                                           \
		m.field = v[n / 2];                                            \
	} while (0)
	MEDIAN_OF(p50);
	MEDIAN_OF(p99);
	MEDIAN_OF(max);
	MEDIAN_OF(cpu_us);
#undef MEDIAN_OF
	return m;
}

#endif
