/* The daemon's limits, so that one peer cannot deny service to the others
 * or exhaust memory (docs/hs.md "Limits"): connections and requests in
 * flight per source (a peer address, whatever its port), the refusals
 * those limits make, and returning freed memory to the system once large
 * bodies are gone.  Loop thread only. */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_int.h"
#include "base/log.h"
#include "net.h"
#include "qphs/error.h"

#define TRIM_FLOOR (256u << 10) /* freed bytes worth a malloc_trim */
#define TRIM_IDLE_MS 200         /* quiet time before it runs */
/* qphs_daemon_tune_malloc's mmap threshold: above a body of the default
 * MC_HANDSHAKE_MAX_LENGTH (1 MiB) and the parse's tables for a body at
 * max_body_keys (about 3 MB), so those come from the heap. */
#define MMAP_THRESHOLD (4 << 20)

/* The address part of "ADDR:PORT" / "[V6]:PORT" into out. */
static void source_addr(const char *peer, char *out, size_t outlen)
{
	const char *colon = strrchr(peer, ':');
	size_t n = colon ? (size_t)(colon - peer) : strlen(peer);

	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, peer, n);
	out[n] = '\0';
}

static unsigned bucket(const char *addr)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *addr; addr++)
		h = (h ^ (uint8_t)*addr) * 16777619u;
	return h % SRC_BUCKETS;
}

static struct source *find(struct qphs_daemon *d, const char *addr)
{
	for (struct source *s = d->srcs[bucket(addr)]; s; s = s->next)
		if (!strcmp(s->addr, addr))
			return s;
	return NULL;
}

bool qphs__source_may_connect(struct qphs_daemon *d, const char *peer, char *addr,
			      size_t addrlen)
{
	struct source *s;

	source_addr(peer, addr, addrlen);
	s = find(d, addr);
	return !s || s->conns < d->cfg.max_conns_per_source;
}

struct source *qphs__source_get(struct qphs_daemon *d, const char *addr)
{
	struct source *s = find(d, addr);
	unsigned b;
	size_t n;

	if (!s) {
		s = d->spare_src;
		d->spare_src = NULL;
		if (s)
			memset(s, 0, sizeof(*s));
		else if (!(s = calloc(1, sizeof(*s))))
			return NULL;
		n = strnlen(addr, sizeof(s->addr) - 1);
		memcpy(s->addr, addr, n);
		s->addr[n] = '\0';
		b = bucket(s->addr);
		s->next = d->srcs[b];
		d->srcs[b] = s;
		qphs__live_add(d, (int64_t)sizeof(*s));
	}
	s->conns++;
	return s;
}

void qphs__source_put(struct qphs_daemon *d, struct source *src)
{
	struct source **p;

	if (!src || --src->conns > 0)
		return;
	for (p = &d->srcs[bucket(src->addr)]; *p; p = &(*p)->next) {
		if (*p == src) {
			*p = src->next;
			break;
		}
	}
	qphs__live_add(d, -(int64_t)sizeof(*src));
	if (!d->spare_src)
		d->spare_src = src;
	else
		free(src);
}

void qphs__limit_refusal(struct qphs_daemon *d, int code, const char *source,
			 const char *fmt, ...)
{
	bool budget = code == QPHS_ERR_LIMIT_MEMORY;
	atomic_uint_fast64_t *counter = budget ? &d->n_refused_budget : &d->n_refused_source;
	char text[QPHS_DAEMON_REFUSAL_TEXT];
	int64_t now = qphs__now_ms();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	atomic_fetch_add(counter, 1);
	pthread_mutex_lock(&d->door->mu);
	d->n_refusals++;
	d->refusal_code = code;
	memcpy(d->refusal_text, text, sizeof(text));
	snprintf(d->limited_source, sizeof(d->limited_source), "%s", source);
	pthread_mutex_unlock(&d->door->mu);
	/* A flood of refusals must not become a flood of log lines. */
	if (now < d->lim_log[budget].at) {
		d->lim_log[budget].skipped++;
		return;
	}
	if (d->lim_log[budget].skipped)
		QPHS_WARN("%s (%llu more refusals by this limit since the last line)", text,
			  (unsigned long long)d->lim_log[budget].skipped);
	else
		QPHS_WARN("%s", text);
	d->lim_log[budget].skipped = 0;
	d->lim_log[budget].at = now + 1000;
}

void qphs__trim_note(struct qphs_daemon *d, size_t bytes)
{
	if (bytes >= TRIM_FLOOR)
		d->trim_at = qphs__now_ms() + TRIM_IDLE_MS;
}

/* glibc keeps freed heap pages (and each thread's arena) mapped; after an
 * attack of large bodies the RSS would stay high.  malloc_trim returns
 * them (every arena).  It runs once the large buffers have been freed and
 * TRIM_IDLE_MS passed with no new one: a quiet moment, not a busy one. */
int64_t qphs__trim_run(struct qphs_daemon *d, int64_t now)
{
	if (!d->trim_at)
		return INT64_MAX;
	if (now < d->trim_at)
		return d->trim_at;
	d->trim_at = 0;
	malloc_trim(0);
	atomic_fetch_add(&d->n_trims, 1);
	return INT64_MAX;
}

int qphs_daemon_tune_malloc(void)
{
#ifdef M_MMAP_THRESHOLD
	if (mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) != 1 || mallopt(M_ARENA_MAX, 1) != 1)
		return QPHS_ERR_NOT_IMPLEMENTED;
	return 0;
#else
	return QPHS_ERR_NOT_IMPLEMENTED;
#endif
}
