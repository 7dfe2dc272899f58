/* Mooncake's log lines, kept: fd 2 becomes a pipe, and one thread reads
 * it, writes every byte on to the real stderr (the runner's agent log),
 * and keeps the glog lines in a ring for `report` and for the reasons of
 * failures.  Mooncake logs through glog before InitGoogleLogging (the
 * adapter unsets MC_LOG_DIR, the only thing that calls it: loadGlobalConfig,
 * config.cpp), and glog then writes each line to stderr at once. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"

#define PENDING_MAX 4096

static struct {
	int real;                  /* the real stderr */
	int rfd;                   /* the pipe's read end */
	pthread_t th;
	pthread_mutex_t mu;
	struct mca_ring ring;
	atomic_int idle;           /* the reader waits in read(), all it read handled */
	atomic_uint gen;           /* chunks the reader has handled */
	char pending[PENDING_MAX];
	size_t plen;
} tee = {.real = -1, .rfd = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

static void write_all(int fd, const char *b, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, b, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		b += k;
		n -= (size_t)k;
	}
}

/* One whole line (no newline). */
static void line(const char *s, size_t n)
{
	char level;
	const char *msg;

	write_all(tee.real, s, n);
	write_all(tee.real, "\n", 1);
	/* The ring keeps Mooncake's lines; the adapter's own are not. */
	char copy[MCA_RING_LINE_BYTES];
	size_t k = n < sizeof(copy) - 1 ? n : sizeof(copy) - 1;

	memcpy(copy, s, k);
	copy[k] = '\0';
	if (!mca_glog_parse(copy, &level, &msg))
		return;
	pthread_mutex_lock(&tee.mu);
	mca_ring_push(&tee.ring, s, n);
	pthread_mutex_unlock(&tee.mu);
}

static void *reader(void *arg)
{
	char buf[4096];

	(void)arg;
	for (;;) {
		ssize_t n;

		atomic_store(&tee.idle, 1);
		n = read(tee.rfd, buf, sizeof(buf));
		atomic_store(&tee.idle, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n' || tee.plen == PENDING_MAX) {
				line(tee.pending, tee.plen);
				tee.plen = 0;
				if (buf[i] == '\n')
					continue;
			}
			tee.pending[tee.plen++] = buf[i];
		}
		atomic_fetch_add(&tee.gen, 1);
	}
	if (tee.plen)
		line(tee.pending, tee.plen);
	return NULL;
}

int logtee_start(void)
{
	int p[2];

	if (pipe(p))
		return -1;
	tee.real = dup(2);
	if (tee.real < 0 || dup2(p[1], 2) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	tee.rfd = p[0];
	setvbuf(stderr, NULL, _IONBF, 0);
	if (pthread_create(&tee.th, NULL, reader, NULL)) {
		dup2(tee.real, 2);
		return -1;
	}
	pthread_detach(tee.th);
	return 0;
}

uint64_t logtee_mark(void)
{
	uint64_t m;

	pthread_mutex_lock(&tee.mu);
	m = tee.ring.pushed;
	pthread_mutex_unlock(&tee.mu);
	return m;
}

/* Nothing of fd 2 is left unread and the reader has handled all it read:
 * then every line written before the call is in the ring.  No write of
 * ours goes into the pipe for it, so a reader slowed by a slow real
 * stderr never blocks the caller. */
void logtee_sync(int ms)
{
	struct timespec ts = {0, 2 * 1000 * 1000};
	double end;
	int unread;

	if (tee.rfd < 0)
		return;
	end = mc_now_ms() + ms;
	/* Quiet twice, 2 ms apart, with no chunk handled in between: the
	 * reader was not between a read that returned and its idle flag. */
	while (mc_now_ms() < end) {
		unsigned g = atomic_load(&tee.gen);

		if (ioctl(tee.rfd, FIONREAD, &unread) == 0 && unread == 0 && atomic_load(&tee.idle)) {
			nanosleep(&ts, NULL);
			if (ioctl(tee.rfd, FIONREAD, &unread) == 0 && unread == 0 && atomic_load(&tee.idle) &&
			    atomic_load(&tee.gen) == g)
				return;
		}
		nanosleep(&ts, NULL);
	}
}

json_object *logtee_since(uint64_t mark, uint64_t *lost)
{
	json_object *a;

	pthread_mutex_lock(&tee.mu);
	a = mca_ring_since(&tee.ring, mark, lost);
	pthread_mutex_unlock(&tee.mu);
	return a;
}

int logtee_first_failure(uint64_t mark, enum mca_side side, char *text, size_t textlen, char *wc,
			 size_t wclen, const char **where)
{
	int rc;

	pthread_mutex_lock(&tee.mu);
	rc = mca_first_failure(&tee.ring, mark, side, text, textlen, wc, wclen, where);
	pthread_mutex_unlock(&tee.mu);
	return rc;
}
