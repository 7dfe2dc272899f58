/* Mooncake's log lines, kept: fd 2 becomes a pipe, and one thread reads
 * it, writes every byte on to the real stderr (the runner's agent log),
 * and keeps the glog lines in a ring for `report` and for the reasons of
 * failures.  Mooncake logs through glog before InitGoogleLogging (the
 * adapter unsets MC_LOG_DIR, the only thing that calls it: loadGlobalConfig,
 * config.cpp), and glog then writes each line to stderr at once. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"

#define SYNC_TAG "\001qplab-sync "
#define PENDING_MAX 4096

static struct {
	int real;                  /* the real stderr */
	int rfd;                   /* the pipe's read end */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mca_ring ring;
	uint64_t synced;           /* the last sync marker read */
	uint64_t sent;             /* the last sync marker written */
	char pending[PENDING_MAX];
	size_t plen;
} tee = {.real = -1, .rfd = -1, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

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

	if (n >= strlen(SYNC_TAG) && !memcmp(s, SYNC_TAG, strlen(SYNC_TAG))) {
		pthread_mutex_lock(&tee.mu);
		tee.synced = strtoull(s + strlen(SYNC_TAG), NULL, 10);
		pthread_cond_broadcast(&tee.cv);
		pthread_mutex_unlock(&tee.mu);
		return;
	}
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
		ssize_t n = read(tee.rfd, buf, sizeof(buf));

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

void logtee_sync(int ms)
{
	struct timespec until;
	uint64_t want;
	char marker[64];

	if (tee.rfd < 0)
		return;
	pthread_mutex_lock(&tee.mu);
	want = ++tee.sent;
	pthread_mutex_unlock(&tee.mu);
	snprintf(marker, sizeof(marker), "%s%llu\n", SYNC_TAG, (unsigned long long)want);
	write_all(2, marker, strlen(marker));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&tee.mu);
	while (tee.synced < want && pthread_cond_timedwait(&tee.cv, &tee.mu, &until) == 0)
		;
	pthread_mutex_unlock(&tee.mu);
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
