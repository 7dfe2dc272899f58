/* Accepting: the loop's accept, and the accept thread that stands in for a
 * busy loop.
 *
 * Why a second thread.  The kernel holds at most listen_backlog + 1
 * connections that finished their handshake (Mooncake's default backlog is
 * 128); the next SYN is dropped and its client sends it again only a
 * second later.  When a burst of connects shares the CPUs with the loop,
 * the loop runs long turns and then waits behind the runnable threads, and
 * the queue fills meanwhile.
 *
 * Why it costs nothing while the loop keeps up.  The loop and the accept
 * thread each watch the listener with EPOLLEXCLUSIVE, the loop first, so
 * the kernel wakes the loop when it waits in epoll_wait and the accept
 * thread only when the loop does not.  Woken, the accept thread reads the
 * queue's length (TCP_INFO of a listening socket) and takes connections
 * only past half the backlog; below that it naps and looks again, going
 * back to sleep once the loop has taken the connections.  The naps double
 * from ACCEPT_NAP_MIN_MS to ACCEPT_NAP_MAX_MS and stay long until the
 * listener has been quiet for ACCEPT_QUIET_MS, so while the loop is merely
 * busy the thread wakes at most once in ACCEPT_NAP_MAX_MS.  Once it has
 * found the queue half full it takes every connection, with no nap and no
 * look at the queue, until ACCEPT_QUIET_MS pass without one.  What it takes
 * it queues for the loop (at most ACCEPT_QUEUE; then it waits and the
 * kernel holds the rest), and the loop makes them its own as it does its
 * own accepts (admit).
 *
 * Why a raised priority (accept_thread_nice, nice -20 by default).  Woken
 * in a burst, a thread at the connecting threads' own priority waits its
 * turn behind them, and the queue overflows meanwhile.  A nice value is a
 * weight, not a real-time class: the thread's work per turn is bounded by
 * ACCEPT_QUEUE, and without the privilege it keeps the value it has. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_int.h"
#include "base/log.h"
#include "base/thread.h"
#include "net.h"
#include "qphs/error.h"

#define ACCEPT_NAP_MIN_MS 1     /* the accept thread's look-again naps */
#define ACCEPT_NAP_MAX_MS 4
#define ACCEPT_QUIET_MS 100     /* a burst ends this long after the last take */
#define OUT_OF_FDS_PAUSE_MS 100 /* back-off when no descriptor is left */

/* Logs a refusal at most once a second.  The loop and the accept thread
 * each have their own rate limit (rl). */
void qphs__log_refusal(struct refusal_log *rl, const char *why)
{
	int64_t now = qphs__now_ms();

	if (now < rl->at) {
		rl->skipped++;
		return;
	}
	QPHS_WARN("[Handshake] refusing a connection: %s (%llu more since the last line)", why,
		  (unsigned long long)rl->skipped);
	rl->skipped = 0;
	rl->at = now + 1000;
}

/* Out of descriptors: a pending connection would wake us forever.  Spend
 * the reserve descriptor (shared by both threads, under a->mu) to accept
 * and close it.  Returns whether the caller must stop accepting for a
 * moment (no reserve, or nothing taken with it). */
static bool out_of_fds(struct qphs_daemon *d, struct refusal_log *rl, int err)
{
	struct acceptor *a = &d->acc;
	int fd = -1;
	bool have;

	pthread_mutex_lock(&a->mu);
	if (a->reserve_fd >= 0) {
		close(a->reserve_fd);
		fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			atomic_fetch_add(&d->n_refused_nofd, 1);
			close(fd);
		}
		a->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	have = a->reserve_fd >= 0;
	pthread_mutex_unlock(&a->mu);
	qphs__log_refusal(rl, strerror(err));
	return fd < 0 || !have;
}

int qphs__accept_one(struct qphs_daemon *d, struct refusal_log *rl, struct accepted *out)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(d->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0) {
			out->fd = fd;
			memcpy(&out->addr, &ss, sl < sizeof(out->addr) ? sl : sizeof(out->addr));
			return 1;
		}
		if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			return out_of_fds(d, rl, errno) ? -1 : 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			qphs__log_refusal(rl, strerror(errno));
		return 0;
	}
}

void qphs__admit(struct qphs_daemon *d, const struct accepted *a)
{
	int rc;

	if (d->open >= (uint64_t)d->cfg.max_connections) {
		atomic_fetch_add(&d->n_refused_cap, 1);
		close(a->fd);
		qphs__log_refusal(&d->cap_log, "the cap on open connections is reached");
		return;
	}
	rc = qphs__conn_accept(d, a->fd, &a->addr.sa);
	if (rc != 0) {
		close(a->fd);
		if (rc != QPHS_ERR_LIMIT_SOURCE) /* that one is logged */
			qphs__log_refusal(&d->cap_log, "out of memory");
	}
}

/* Whether the kernel's accept queue is past half full.  When TCP_INFO
 * cannot say, take the connections. */
static bool queue_high(int lfd)
{
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);

	/* For a listening socket: tcpi_unacked is the queue's length,
	 * tcpi_sacked its limit. */
	if (getsockopt(lfd, IPPROTO_TCP, TCP_INFO, &ti, &tl) != 0 || tl < sizeof(ti))
		return true;
	return 2 * (uint64_t)ti.tcpi_unacked > ti.tcpi_sacked;
}

/* Sleeps ms on the stop eventfd (a stop ends it at once). */
static void nap(struct acceptor *a, int ms)
{
	struct pollfd p = {.fd = a->stop_efd, .events = POLLIN};

	poll(&p, 1, ms);
}

/* Waits for room in the queue.  Returns false when stop was asked. */
static bool wait_room(struct acceptor *a)
{
	pthread_mutex_lock(&a->mu);
	while (a->n == ACCEPT_QUEUE && !atomic_load(&a->stop))
		pthread_cond_wait(&a->room, &a->mu);
	pthread_mutex_unlock(&a->mu);
	return !atomic_load(&a->stop);
}

/* Queues one connection; wakes the loop when the queue was empty (the
 * loop takes the whole queue per wake-up). */
static void push(struct acceptor *a, const struct accepted *c)
{
	static const uint64_t one = 1;
	bool was_empty;
	ssize_t n;

	pthread_mutex_lock(&a->mu);
	was_empty = a->n == 0;
	a->q[a->n++] = *c;
	pthread_mutex_unlock(&a->mu);
	if (!was_empty)
		return;
	do
		n = write(a->efd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
	/* EAGAIN: the counter is non-zero already, the loop will wake. */
}

/* Gives this thread the nice value accept_thread_nice asks for, unless
 * it already has that or a higher priority.  Linux keeps a nice value per
 * thread: the loop, the workers and the caller's threads keep theirs. */
static void take_priority(const struct qphs_daemon *d)
{
	int want = d->cfg.accept_thread_nice, have;
	id_t tid = (id_t)gettid();

	if (want == 0)
		return;
	errno = 0;
	have = getpriority(PRIO_PROCESS, tid);
	if (errno == 0 && have <= want)
		return;
	if (setpriority(PRIO_PROCESS, tid, want) != 0)
		QPHS_INFO("[Handshake] the accept thread keeps nice %d, not accept_thread_nice's "
			  "%d: %s (raising it needs CAP_SYS_NICE or RLIMIT_NICE)",
			  have, want, strerror(errno));
}

static void *acceptor_main(void *arg)
{
	struct qphs_daemon *d = arg;
	struct acceptor *a = &d->acc;
	struct epoll_event ev[2];
	bool look = false; /* after a nap: look without waiting */
	int nap_ms = ACCEPT_NAP_MIN_MS;
	int64_t burst_until = 0; /* taking everything until then */

	take_priority(d);
	while (!atomic_load(&a->stop)) {
		int64_t t0 = qphs__now_ms();
		int rc = 1, n = epoll_wait(a->epfd, ev, 2, look ? 0 : -1);

		if (n < 0 && errno != EINTR)
			break;
		if (n == 0) {
			look = false; /* the loop took them: wait for the next */
			continue;
		}
		/* Naps stay long through a burst; after a quiet spell the
		 * first is short again. */
		if (!look && qphs__now_ms() - t0 >= ACCEPT_QUIET_MS)
			nap_ms = ACCEPT_NAP_MIN_MS;
		atomic_fetch_add(&d->n_accept_wakeups, 1);
		if (atomic_load(&a->stop))
			break;
		if (qphs__now_ms() >= burst_until && !queue_high(d->lfd)) {
			/* The loop will catch up (the listener stays ready in
			 * its epoll set); look again after the nap. */
			nap(a, nap_ms);
			nap_ms = nap_ms * 2 > ACCEPT_NAP_MAX_MS ? ACCEPT_NAP_MAX_MS : nap_ms * 2;
			look = true;
			continue;
		}
		look = false;
		/* A burst: the loop is behind.  Take every connection until
		 * the listener has been quiet for a while. */
		burst_until = qphs__now_ms() + ACCEPT_QUIET_MS;
		while (rc == 1 && wait_room(a)) {
			struct accepted c;

			if ((rc = qphs__accept_one(d, &a->log, &c)) == 1) {
				atomic_fetch_add(&d->n_accept_took, 1);
				push(a, &c);
			}
		}
		if (rc < 0)
			nap(a, OUT_OF_FDS_PAUSE_MS);
	}
	return NULL;
}

int qphs__acceptor_init(struct acceptor *a)
{
	memset(a, 0, sizeof(*a));
	a->efd = a->epfd = a->stop_efd = a->reserve_fd = -1;
	if (pthread_mutex_init(&a->mu, NULL) != 0)
		return QPHS_ERR_MEMORY;
	if (pthread_cond_init(&a->room, NULL) != 0) {
		pthread_mutex_destroy(&a->mu);
		return QPHS_ERR_MEMORY;
	}
	return 0;
}

void qphs__acceptor_destroy(struct acceptor *a)
{
	pthread_cond_destroy(&a->room);
	pthread_mutex_destroy(&a->mu);
}

void qphs__acceptor_rearm(struct acceptor *a, int lfd)
{
	struct epoll_event le = {.events = EPOLLIN | EPOLLEXCLUSIVE};

	epoll_ctl(a->epfd, EPOLL_CTL_DEL, lfd, NULL);
	if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, lfd, &le) != 0)
		QPHS_ERR("[Handshake] the accept thread's listener: %s", strerror(errno));
}

int qphs__acceptor_open(struct acceptor *a, int lfd)
{
	struct epoll_event le = {.events = EPOLLIN | EPOLLEXCLUSIVE};
	struct epoll_event se = {.events = EPOLLIN};

	a->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	a->stop_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	a->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* optional */
	if (a->efd < 0 || a->stop_efd < 0 || a->epfd < 0)
		return -1;
	if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, lfd, &le) != 0 ||
	    epoll_ctl(a->epfd, EPOLL_CTL_ADD, a->stop_efd, &se) != 0)
		return -1;
	return 0;
}

void qphs__acceptor_close(struct acceptor *a)
{
	int *fds[] = {&a->efd, &a->stop_efd, &a->epfd, &a->reserve_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int qphs__acceptor_start(struct qphs_daemon *d)
{
	struct acceptor *a = &d->acc;
	int rc;

	atomic_store(&a->stop, false);
	a->n = 0;
	rc = qphs__thread_start(&a->thread, acceptor_main, d, "qphs-accept");
	a->running = rc == 0;
	return rc;
}

void qphs__acceptor_stop(struct qphs_daemon *d)
{
	static const uint64_t one = 1;
	struct acceptor *a = &d->acc;

	if (!a->running)
		return;
	atomic_store(&a->stop, true);
	if (write(a->stop_efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		QPHS_ERR("[Handshake] waking the accept thread: %s", strerror(errno));
	pthread_mutex_lock(&a->mu);
	pthread_cond_broadcast(&a->room);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	a->running = false;
	/* Connections the loop never took: closed, never answered. */
	for (int i = 0; i < a->n; i++)
		close(a->q[i].fd);
	a->n = 0;
}

void qphs__acceptor_drain(struct qphs_daemon *d)
{
	struct acceptor *a = &d->acc;
	uint64_t v;
	int n;

	if (read(a->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		QPHS_ERR("[Handshake] reading the accept thread's eventfd: %s", strerror(errno));
	pthread_mutex_lock(&a->mu);
	n = a->n;
	memcpy(a->taken, a->q, (size_t)n * sizeof(a->q[0]));
	a->n = 0;
	pthread_cond_signal(&a->room);
	pthread_mutex_unlock(&a->mu);
	for (int i = 0; i < n; i++)
		qphs__admit(d, &a->taken[i]);
}
