/* The acceptor: a thread that only takes connections off the listener and
 * queues them for the loop.
 *
 * Why a thread of its own.  The kernel holds at most listen_backlog + 1
 * finished connections (Mooncake's default is 128); the next SYN is
 * dropped and its client waits a whole second before sending it again.
 * When a burst of connects shares the CPUs with the loop, the loop runs
 * long turns and then waits behind the runnable threads, and the queue
 * fills meanwhile.  This thread does almost no work per wake-up, so the
 * scheduler gives it a CPU soon after a connection arrives and the
 * queue drains.  The loop then makes the connections its own
 * (qphs__acceptor_drain) as it did when it accepted them itself.
 *
 * The acceptor never blocks on the loop for long: when ACCEPT_QUEUE
 * connections wait for the loop, it stops accepting until the loop takes
 * them, and the kernel's queue holds the rest. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_int.h"
#include "base/log.h"
#include "base/thread.h"
#include "net.h"
#include "qphs/error.h"

#define LISTEN_PAUSE_MS 100 /* back-off when no descriptor is left */

/* Logs a refusal at most once a second.  The loop and the acceptor each
 * have their own rate limit (rl). */
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

/* Sleeps up to ms on the stop eventfd; returns whether stop was asked. */
static bool wait_stop(struct acceptor *a, int ms)
{
	struct pollfd pf = {.fd = a->stop_efd, .events = POLLIN};

	return poll(&pf, 1, ms) > 0 || atomic_load(&a->stop);
}

/* Out of descriptors: a pending connection would wake us forever.  Spend
 * the reserve descriptor to accept and close it; without a reserve, stop
 * listening for a moment.  Either way the thread never spins. */
static void out_of_fds(struct qphs_daemon *d, int err)
{
	struct acceptor *a = &d->acc;
	int fd = -1;

	if (a->reserve_fd >= 0) {
		close(a->reserve_fd);
		fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			atomic_fetch_add(&d->n_refused_nofd, 1);
			close(fd);
		}
		a->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	qphs__log_refusal(&a->log, strerror(err));
	if (fd < 0 || a->reserve_fd < 0)
		wait_stop(a, LISTEN_PAUSE_MS);
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
static void push(struct acceptor *a, int fd, const struct sockaddr_storage *ss, socklen_t sl)
{
	static const uint64_t one = 1;
	bool was_empty;
	ssize_t n;

	pthread_mutex_lock(&a->mu);
	was_empty = a->n == 0;
	a->q[a->n].fd = fd;
	memcpy(&a->q[a->n].addr, ss, sl < sizeof(a->q[0].addr) ? sl : sizeof(a->q[0].addr));
	a->n++;
	pthread_mutex_unlock(&a->mu);
	if (!was_empty)
		return;
	do
		n = write(a->efd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
	/* EAGAIN: the counter is non-zero already, the loop will wake. */
}

static void *acceptor_main(void *arg)
{
	struct qphs_daemon *d = arg;
	struct acceptor *a = &d->acc;
	struct pollfd pf[2] = {{.fd = d->lfd, .events = POLLIN},
			       {.fd = a->stop_efd, .events = POLLIN}};

	while (!atomic_load(&a->stop)) {
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		atomic_fetch_add(&d->n_accept_wakeups, 1);
		while (wait_room(a)) {
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);
			int fd = accept4(d->lfd, (struct sockaddr *)&ss, &sl,
					 SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd >= 0) {
				push(a, fd, &ss, sl);
				continue;
			}
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				out_of_fds(d, errno);
			else if (errno != EAGAIN && errno != EWOULDBLOCK)
				qphs__log_refusal(&a->log, strerror(errno));
			break;
		}
	}
	return NULL;
}

int qphs__acceptor_init(struct acceptor *a)
{
	memset(a, 0, sizeof(*a));
	a->efd = a->stop_efd = a->reserve_fd = -1;
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

int qphs__acceptor_open(struct acceptor *a)
{
	a->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	a->stop_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	a->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* optional */
	return a->efd < 0 || a->stop_efd < 0 ? -1 : 0;
}

void qphs__acceptor_close(struct acceptor *a)
{
	if (a->efd >= 0)
		close(a->efd);
	if (a->stop_efd >= 0)
		close(a->stop_efd);
	if (a->reserve_fd >= 0)
		close(a->reserve_fd);
	a->efd = a->stop_efd = a->reserve_fd = -1;
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
		QPHS_ERR("[Handshake] waking the acceptor: %s", strerror(errno));
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
		QPHS_ERR("[Handshake] reading the acceptor's eventfd: %s", strerror(errno));
	pthread_mutex_lock(&a->mu);
	n = a->n;
	memcpy(a->taken, a->q, (size_t)n * sizeof(a->q[0]));
	a->n = 0;
	pthread_cond_signal(&a->room);
	pthread_mutex_unlock(&a->mu);
	for (int i = 0; i < n; i++) {
		int rc, fd = a->taken[i].fd;

		if (d->open >= (uint64_t)d->cfg.max_connections) {
			atomic_fetch_add(&d->n_refused_cap, 1);
			close(fd);
			qphs__log_refusal(&d->cap_log, "the cap on open connections is reached");
			continue;
		}
		rc = qphs__conn_accept(d, fd, &a->taken[i].addr.sa);
		if (rc != 0) {
			close(fd);
			if (rc != QPHS_ERR_LIMIT_SOURCE) /* that one is logged */
				qphs__log_refusal(&d->cap_log, "out of memory");
		}
	}
}
