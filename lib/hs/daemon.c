/* The daemon: listener, epoll loop, timers and lifecycle.  One thread runs
 * the loop; nothing on it sleeps or blocks (epoll_wait is the only wait).
 * Per-connection work lives in daemon_conn.c, the cross-thread request API
 * in daemon_req.c. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon_int.h"
#include "base/log.h"
#include "base/thread.h"
#include "net.h"
#include "qphs/error.h"

/* epoll data for the three descriptors that are not connections. */
static char listener_tag, acceptor_tag, door_tag;

#define LISTEN_PAUSE_MS 100 /* back-off when no descriptor is left */
#define ACCEPT_BURST 64

static int set_err(struct qphs_daemon *d, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_err(struct qphs_daemon *d, int code, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->errstr, sizeof(d->errstr), fmt, ap);
	va_end(ap);
	QPHS_ERR("[Handshake] %s", d->errstr);
	errno = saved;
	return code;
}

void qphs__live_add(struct qphs_daemon *d, int64_t delta)
{
	atomic_fetch_add(&d->door->live_bytes, delta);
}

void qphs__timer_arm(struct qphs_daemon *d, struct conn *c, int list)
{
	qphs__timer_disarm(d, c);
	c->deadline = qphs__now_ms() + d->tdur[list];
	c->tlist = list;
	c->tnext = NULL;
	c->tprev = d->ttail[list];
	if (d->ttail[list])
		d->ttail[list]->tnext = c;
	else
		d->thead[list] = c;
	d->ttail[list] = c;
}

void qphs__timer_disarm(struct qphs_daemon *d, struct conn *c)
{
	int l = c->tlist;

	if (l == T_NONE)
		return;
	if (c->tprev)
		c->tprev->tnext = c->tnext;
	else
		d->thead[l] = c->tnext;
	if (c->tnext)
		c->tnext->tprev = c->tprev;
	else
		d->ttail[l] = c->tprev;
	c->tprev = c->tnext = NULL;
	c->tlist = T_NONE;
}

/* qphs/daemon.h.  Process-wide, so only ever on the caller's request. */
int qphs_daemon_raise_nofile(const struct qphs_config *cfg, uint64_t *soft, char *err,
			     size_t errlen)
{
	struct qphs_config defaults;
	struct rlimit rl;
	rlim_t want;

	if (!cfg) {
		qphs_config_init(&defaults);
		cfg = &defaults;
	}
	want = (rlim_t)(cfg->max_connections > 0 ? cfg->max_connections : 0) + 256;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		if (err && errlen)
			snprintf(err, errlen, "getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if (rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			if (err && errlen)
				snprintf(err, errlen, "setrlimit(RLIMIT_NOFILE, %llu): %s",
					 (unsigned long long)rl.rlim_cur, strerror(errno));
			return QPHS_ERR_INVALID_ARGUMENT;
		}
	}
	if (soft)
		*soft = (uint64_t)rl.rlim_cur;
	return 0;
}

int qphs_daemon_new(const struct qphs_config *cfg, struct qphs_daemon **out)
{
	struct qphs_daemon *d;
	char err[256];
	int rc;

	if (!out)
		return QPHS_ERR_INVALID_ARGUMENT;
	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return QPHS_ERR_MEMORY;
	if (cfg)
		d->cfg = *cfg;
	else
		qphs_config_init(&d->cfg);
	rc = qphs_config_validate(&d->cfg, err, sizeof(err));
	if (rc != 0) {
		QPHS_ERR("[Handshake] daemon configuration: %s", err);
		free(d);
		return rc;
	}
	d->lfd = d->epfd = -1;
	d->door = qphs__door_new();
	if (!d->door) {
		free(d);
		return QPHS_ERR_MEMORY;
	}
	if (qphs__acceptor_init(&d->acc) != 0) {
		qphs__door_unref(d->door);
		free(d);
		return QPHS_ERR_MEMORY;
	}
	if (pthread_mutex_init(&d->parser.mu, NULL) != 0) {
		qphs__acceptor_destroy(&d->acc);
		qphs__door_unref(d->door);
		free(d);
		return QPHS_ERR_MEMORY;
	}
	if (pthread_cond_init(&d->parser.cv, NULL) != 0) {
		pthread_mutex_destroy(&d->parser.mu);
		qphs__acceptor_destroy(&d->acc);
		qphs__door_unref(d->door);
		free(d);
		return QPHS_ERR_MEMORY;
	}
	/* Never below twice max_length: a body of the largest size a peer
	 * may send always fits when little else is buffered. */
	d->budget = (uint64_t)d->cfg.memory_budget_kib << 10;
	if (d->budget < 2 * d->cfg.max_length)
		d->budget = 2 * d->cfg.max_length;
	d->tdur[T_REQUEST] = d->cfg.request_timeout_ms;
	d->tdur[T_WRITE] = d->cfg.write_timeout_ms;
	d->tdur[T_WAIT] = d->cfg.reply_timeout_ms;
	d->fault_rng = 0x9e3779b97f4a7c15ull;
	*out = d;
	return 0;
}

int qphs_daemon_set_handler(struct qphs_daemon *d, int type, qphs_handler_fn fn, void *user)
{
	if (!d || type < QPHS_HS_CONNECTION || type > QPHS_HS_PROBE)
		return QPHS_ERR_INVALID_ARGUMENT;
	if (d->started)
		return set_err(d, QPHS_ERR_BUSY, "handlers must be set before the daemon starts");
	d->handlers[type].fn = fn;
	d->handlers[type].user = user;
	return 0;
}

int qphs_daemon_set_fault(struct qphs_daemon *d, const struct qphs_fault *f)
{
	if (!d)
		return QPHS_ERR_INVALID_ARGUMENT;
	if (d->started)
		return set_err(d, QPHS_ERR_BUSY, "faults must be set before the daemon starts");
	if (f) {
		d->fault = *f;
		d->fault.text[sizeof(d->fault.text) - 1] = '\0';
	} else {
		memset(&d->fault, 0, sizeof(d->fault));
	}
	d->fault_rng = d->fault.seed ? d->fault.seed : 0x9e3779b97f4a7c15ull;
	d->tdur[T_DELAY] = d->fault.kind == QPHS_FAULT_DELAY ? d->fault.delay_ms : 0;
	return 0;
}

/* Resolves host (NULL = any address of cfg's family) into ss. */
static int listen_addr(struct qphs_daemon *d, const char *host, struct sockaddr_storage *ss,
		       socklen_t *sl)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
	struct addrinfo *res = NULL;
	int rc;

	memset(ss, 0, sizeof(*ss));
	if (!host || !*host) {
		if (d->cfg.use_ipv6) {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
			in6->sin6_family = AF_INET6;
			in6->sin6_addr = in6addr_any;
			*sl = sizeof(*in6);
		} else {
			struct sockaddr_in *in = (struct sockaddr_in *)ss;
			in->sin_family = AF_INET;
			in->sin_addr.s_addr = htonl(INADDR_ANY);
			*sl = sizeof(*in);
		}
		return 0;
	}
	hints.ai_family = strchr(host, ':') ? AF_INET6 : AF_UNSPEC;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0 || !res)
		return set_err(d, QPHS_ERR_DNS, "cannot resolve listen address %s: %s", host,
			       gai_strerror(rc));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

static uint64_t port_rng(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
	       0x2545f4914f6cdd1dull;
}

/* Binds fd to the fixed port, or to a random port of the RPC range. */
static int bind_port(struct qphs_daemon *d, int fd, struct sockaddr_storage *ss, socklen_t sl,
		     uint16_t port)
{
	uint64_t x = port_rng();
	unsigned span = (unsigned)d->cfg.max_rpc_port - d->cfg.min_rpc_port + 1;

	if (port) {
		set_port(ss, port);
		if (bind(fd, (struct sockaddr *)ss, sl) == 0)
			return 0;
		return set_err(d, errno == EADDRINUSE ? QPHS_ERR_ADDR_IN_USE : QPHS_ERR_SOCKET,
			       "bind (port %u): %s", port, strerror(errno));
	}
	for (int tries = 0; tries < 500; tries++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		set_port(ss, (uint16_t)(d->cfg.min_rpc_port + x % span));
		if (bind(fd, (struct sockaddr *)ss, sl) == 0)
			return 0;
		if (errno != EADDRINUSE && errno != EACCES)
			return set_err(d, QPHS_ERR_SOCKET, "bind: %s", strerror(errno));
	}
	return set_err(d, QPHS_ERR_NO_PORT, "no free port in [%u, %u] after 500 tries",
		       d->cfg.min_rpc_port, d->cfg.max_rpc_port);
}

int qphs_daemon_listen(struct qphs_daemon *d, const char *host, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int one = 1, zero = 0, fd, rc;

	if (!d || d->lfd >= 0 || d->started)
		return QPHS_ERR_INVALID_ARGUMENT;
	rc = listen_addr(d, host, &ss, &sl);
	if (rc)
		return rc;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return set_err(d, QPHS_ERR_SOCKET, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	rc = bind_port(d, fd, &ss, sl, port);
	if (rc == 0 && listen(fd, d->cfg.listen_backlog) != 0)
		rc = set_err(d, QPHS_ERR_SOCKET, "listen: %s", strerror(errno));
	sl = sizeof(ss);
	if (rc == 0 && getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		rc = set_err(d, QPHS_ERR_SOCKET, "getsockname: %s", strerror(errno));
	if (rc) {
		close(fd);
		return rc;
	}
	d->lfd = fd;
	qphs__sockaddr_format((struct sockaddr *)&ss, d->addr, sizeof(d->addr));
	d->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	QPHS_INFO("[Handshake] listening on %s", d->addr);
	return 0;
}

const char *qphs_daemon_address(const struct qphs_daemon *d)
{
	return d ? d->addr : "";
}

uint16_t qphs_daemon_port(const struct qphs_daemon *d)
{
	return d ? d->port : 0;
}

const char *qphs_daemon_errstr(const struct qphs_daemon *d)
{
	return d ? d->errstr : "";
}

/* The listener in the loop's epoll set, exclusive: with both threads
 * waiting the kernel wakes only the first registered, the loop. */
static int listen_on(struct qphs_daemon *d)
{
	struct epoll_event le = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &listener_tag};

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->lfd, &le);
}

/* Out of descriptors with no reserve: stop listening for a moment, or the
 * loop would spin on a listener it cannot accept from.  An exclusive
 * registration cannot be modified, only removed and added again. */
static void pause_listener(struct qphs_daemon *d)
{
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->lfd, NULL);
	d->listen_paused_until = qphs__now_ms() + LISTEN_PAUSE_MS;
}

static void resume_listener(struct qphs_daemon *d)
{
	if (listen_on(d) != 0)
		QPHS_ERR("[Handshake] listening again: %s", strerror(errno));
	qphs__acceptor_rearm(&d->acc, d->lfd); /* behind the loop again */
	d->listen_paused_until = 0;
}

static void accept_some(struct qphs_daemon *d)
{
	for (int i = 0; i < ACCEPT_BURST; i++) {
		struct accepted a;
		int rc = qphs__accept_one(d, &d->cap_log, &a);

		if (rc < 0)
			pause_listener(d);
		if (rc != 1)
			return;
		qphs__admit(d, &a);
	}
}

static int next_timeout(struct qphs_daemon *d)
{
	int64_t next = INT64_MAX, now;

	for (int l = 0; l < T_COUNT; l++)
		if (d->thead[l] && d->thead[l]->deadline < next)
			next = d->thead[l]->deadline;
	if (d->listen_paused_until && d->listen_paused_until < next)
		next = d->listen_paused_until;
	if (d->trim_at && d->trim_at < next)
		next = d->trim_at;
	if (next == INT64_MAX)
		return -1;
	now = qphs__now_ms();
	return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

static void run_timers(struct qphs_daemon *d)
{
	int64_t now = qphs__now_ms();

	for (int l = 0; l < T_COUNT; l++) {
		while (d->thead[l] && d->thead[l]->deadline <= now) {
			struct conn *c = d->thead[l];
			qphs__timer_disarm(d, c);
			qphs__conn_timeout(d, c);
		}
	}
	if (d->listen_paused_until && d->listen_paused_until <= now)
		resume_listener(d);
	qphs__trim_run(d, now);
}

static void free_dead(struct qphs_daemon *d)
{
	while (d->dead) {
		struct conn *c = d->dead;
		d->dead = c->next;
		qphs__conn_free(d, c);
	}
}

static void *loop_main(void *arg)
{
	struct qphs_daemon *d = arg;
	struct epoll_event evs[128];

	pthread_mutex_lock(&d->door->mu);
	d->door->loop_thread = pthread_self();
	d->door->loop_running = true;
	pthread_mutex_unlock(&d->door->mu);
	while (!atomic_load(&d->stopping)) {
		int n = epoll_wait(d->epfd, evs, 128, next_timeout(d));

		atomic_fetch_add(&d->n_wakeups, 1);
		if (n < 0 && errno != EINTR) {
			QPHS_ERR("[Handshake] epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &listener_tag)
				accept_some(d);
			else if (p == &acceptor_tag)
				qphs__acceptor_drain(d);
			else if (p == &door_tag)
				qphs__door_drain(d);
			else
				qphs__conn_event(d, p, evs[i].events);
		}
		run_timers(d);
		free_dead(d);
	}
	return NULL;
}

/* Closes what a failed start opened, so that a retry starts afresh and
 * nothing leaks. */
static void start_undo(struct qphs_daemon *d)
{
	if (d->epfd >= 0)
		close(d->epfd);
	d->epfd = -1;
	qphs__acceptor_close(&d->acc);
	pthread_mutex_lock(&d->door->mu);
	if (d->door->efd >= 0)
		close(d->door->efd);
	d->door->efd = -1;
	d->door->daemon = NULL;
	pthread_mutex_unlock(&d->door->mu);
}

int qphs_daemon_start(struct qphs_daemon *d)
{
	struct epoll_event ae = {.events = EPOLLIN, .data.ptr = &acceptor_tag};
	struct epoll_event de = {.events = EPOLLIN, .data.ptr = &door_tag};
	int rc;

	if (!d || d->started)
		return QPHS_ERR_INVALID_ARGUMENT;
	if (d->lfd < 0)
		return set_err(d, QPHS_ERR_INVALID_ARGUMENT, "qphs_daemon_listen first");
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->door->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	/* The loop's listener registration before the accept thread's. */
	if (d->epfd < 0 || d->door->efd < 0 || listen_on(d) != 0 ||
	    qphs__acceptor_open(&d->acc, d->lfd) != 0 ||
	    epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->acc.efd, &ae) != 0 ||
	    epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->door->efd, &de) != 0) {
		rc = set_err(d, QPHS_ERR_SOCKET, "event loop setup: %s", strerror(errno));
		start_undo(d);
		return rc;
	}
	d->door->daemon = d;
	atomic_store(&d->stopping, false);
	if ((rc = qphs__parser_start(d)) != 0) {
		rc = set_err(d, QPHS_ERR_THREAD, "cannot start the parse thread: %s", strerror(rc));
		start_undo(d);
		return rc;
	}
	if ((rc = qphs__acceptor_start(d)) != 0) {
		rc = set_err(d, QPHS_ERR_THREAD, "cannot start the accept thread: %s", strerror(rc));
		qphs__parser_stop(d);
		start_undo(d);
		return rc;
	}
	if ((rc = qphs__thread_start(&d->thread, loop_main, d, "qphs-loop")) != 0) {
		rc = set_err(d, QPHS_ERR_THREAD, "cannot start the loop thread: %s", strerror(rc));
		qphs__acceptor_stop(d);
		qphs__parser_stop(d);
		start_undo(d);
		return rc;
	}
	d->started = true;
	return 0;
}

int qphs_daemon_stop(struct qphs_daemon *d)
{
	static const uint64_t one = 1;
	struct qphs_request *req, *next;

	if (!d || !d->started || d->stopped)
		return 0;
	atomic_store(&d->stopping, true);
	if (write(d->door->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		QPHS_ERR("[Handshake] waking the loop: %s", strerror(errno));
	pthread_join(d->thread, NULL);
	qphs__acceptor_stop(d);
	qphs__parser_stop(d);
	pthread_mutex_lock(&d->door->mu);
	d->door->stopped = true;
	d->door->loop_running = false;
	d->door->daemon = NULL;
	req = d->door->head;
	d->door->head = d->door->tail = NULL;
	pthread_mutex_unlock(&d->door->mu);
	/* Connections first: closing one unlinks the request it waits for,
	 * which may still sit in the queue taken above. */
	while (d->conns)
		qphs__conn_close(d, d->conns);
	for (; req; req = next) {
		next = req->next;
		qphs__request_free(req);
	}
	free_dead(d);
	close(d->lfd);
	d->lfd = -1;
	d->stopped = true;
	return 0;
}

void qphs_daemon_free(struct qphs_daemon *d)
{
	if (!d)
		return;
	qphs_daemon_stop(d);
	if (d->lfd >= 0)
		close(d->lfd);
	if (d->epfd >= 0)
		close(d->epfd);
	qphs__acceptor_close(&d->acc);
	pthread_mutex_lock(&d->door->mu);
	d->door->stopped = true;
	if (d->door->efd >= 0)
		close(d->door->efd);
	d->door->efd = -1;
	pthread_mutex_unlock(&d->door->mu);
	qphs__door_unref(d->door);
	pthread_cond_destroy(&d->parser.cv);
	pthread_mutex_destroy(&d->parser.mu);
	qphs__acceptor_destroy(&d->acc);
	free(d->spare_src);
	free(d);
}

void qphs__daemon_refusal(struct qphs_daemon *d, int code, const char *fmt, ...)
{
	char text[QPHS_DAEMON_REFUSAL_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	QPHS_WARN("%s", text);
	pthread_mutex_lock(&d->door->mu);
	d->n_refusals++;
	d->refusal_code = code;
	memcpy(d->refusal_text, text, sizeof(text));
	pthread_mutex_unlock(&d->door->mu);
}

void qphs_daemon_last_refusal(const struct qphs_daemon *d, struct qphs_daemon_refusal *out)
{
	memset(out, 0, sizeof(*out));
	if (!d)
		return;
	pthread_mutex_lock(&d->door->mu);
	out->count = d->n_refusals;
	out->code = d->refusal_code;
	memcpy(out->text, d->refusal_text, sizeof(out->text));
	pthread_mutex_unlock(&d->door->mu);
}

void qphs_daemon_stats(const struct qphs_daemon *d, struct qphs_daemon_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!d)
		return;
	out->accepted = atomic_load(&d->n_accepted);
	out->replied = atomic_load(&d->n_replied);
	out->timed_out = atomic_load(&d->n_timed_out);
	out->refused_at_cap = atomic_load(&d->n_refused_cap);
	out->refused_no_fd = atomic_load(&d->n_refused_nofd);
	for (int i = 0; i < 8; i++)
		out->rejected_frame[i] = atomic_load(&d->n_rejected_frame[i]);
	out->rejected_body = atomic_load(&d->n_rejected_body);
	out->open_connections = atomic_load(&d->n_open);
	out->live_bytes = (uint64_t)atomic_load(&d->door->live_bytes);
	out->loop_wakeups = atomic_load(&d->n_wakeups);
	out->accept_wakeups = atomic_load(&d->n_accept_wakeups);
	out->accept_thread_took = atomic_load(&d->n_accept_took);
	out->refused_per_source = atomic_load(&d->n_refused_source);
	out->refused_budget = atomic_load(&d->n_refused_budget);
	out->memory_trims = atomic_load(&d->n_trims);
	pthread_mutex_lock(&d->door->mu);
	memcpy(out->limited_source, d->limited_source, sizeof(out->limited_source));
	pthread_mutex_unlock(&d->door->mu);
}
