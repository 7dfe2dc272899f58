/* The pure pieces of `--jobs`: the worker->runner frame codec, the worker
 * count, topology names per worker and the catalogue-order assembly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "realise.h"
#include "run_jobs.h"

int run_job_encode(const struct run_job_msg *m, const char *json, char **frame, size_t *framelen)
{
	size_t n = json ? strlen(json) : 0;
	struct run_job_msg h = *m;
	char *f;

	if (n > RUN_JOB_MAX_JSON)
		return -1;
	h.len = (uint32_t)n;
	f = malloc(sizeof(h) + n);
	if (!f)
		return -1;
	memcpy(f, &h, sizeof(h));
	if (n)
		memcpy(f + sizeof(h), json, n);
	*frame = f;
	*framelen = sizeof(h) + n;
	return 0;
}

int run_job_feed(struct run_job_reader *r, const void *data, size_t n)
{
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *b;

		while (cap < r->len + n)
			cap *= 2;
		b = realloc(r->buf, cap);
		if (!b)
			return -1;
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return 0;
}

int run_job_take(struct run_job_reader *r, struct run_job_msg *m, char **json)
{
	size_t whole;

	*json = NULL;
	if (r->len < sizeof(*m))
		return 0;
	memcpy(m, r->buf, sizeof(*m));
	/* Checked before anything is allocated for the frame. */
	if (m->kind < RUN_JOB_START || m->kind > RUN_JOB_DONE || m->len > RUN_JOB_MAX_JSON ||
	    (m->kind != RUN_JOB_RESULT && m->len))
		return -1;
	whole = sizeof(*m) + m->len;
	if (r->len < whole)
		return 0;
	if (m->len) {
		*json = malloc(m->len + 1);
		if (!*json)
			return -1;
		memcpy(*json, r->buf + sizeof(*m), m->len);
		(*json)[m->len] = '\0';
	}
	/* Pointers in the copied outcome belong to the worker's memory. */
	memset(&m->out.facts, 0, sizeof(m->out.facts));
	m->out.have_facts = false;
	memmove(r->buf, r->buf + whole, r->len - whole);
	r->len -= whole;
	return 1;
}

void run_job_reader_free(struct run_job_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

int run_jobs_workers(int jobs, size_t n)
{
	if (jobs < 1 || n == 0)
		return 1;
	return (size_t)jobs < n ? jobs : (int)n;
}

size_t run_jobs_assemble(json_object *run, json_object *const *res, size_t n)
{
	size_t added = 0;

	for (size_t i = 0; i < n; i++)
		if (res[i] && qplab_results_run_add(run, res[i]) == 0)
			added++;
	return added;
}

/* Topology IDs (netns/topo up --name: 1-7 of [a-z0-9]).  topo names the
 * topology ID plus a suffix unique on the machine and derives every
 * object's name from that (namespaces and rxe devices qlNAME-HOST, veths
 * qlNAME-N, the bridge qlNAME-br): "r7" in a serial run, "j1r7" for
 * worker 1 of a parallel one ("j63r999" at most: 7 characters). */
void run_topo_name(const struct run_ctx *c, int seq, char *id, size_t len)
{
	if (c->jobs > 1)
		snprintf(id, len, "j%dr%d", c->job % 64, seq % 1000);
	else
		snprintf(id, len, "r%d", seq % 1000);
}

