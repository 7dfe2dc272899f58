/*
 * run_jobs.h — `qplab run --jobs N` in the netns mode: N scenarios at once.
 *
 * After the catalogue is loaded the runner forks N worker processes (at
 * most one per scenario).  Each takes scenario indices from a counter in
 * shared memory, runs them with a run_ctx of its own (its own topology
 * reuse, topology names of its own: run_topo_name) and sends each
 * finished scenario to the runner over its own pipe.  The runner prints
 * TAP as results arrive (completion order), keeps results.json in
 * catalogue order, forwards SIGINT/SIGTERM to the workers (which tear
 * down as in a serial run), and reports the scenario a worker was running
 * when it died as an error instead of waiting for it.
 *
 * The pipe carries frames (run_job_msg, then `len` bytes of the
 * scenario's result JSON); the codec below works on bytes only, so it is
 * unit-tested without processes.
 */
#ifndef QPLAB_RUN_JOBS_H
#define QPLAB_RUN_JOBS_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "report/report.h"
#include "run.h"
#include "run_args.h"

/* A result's JSON larger than this is refused by the reader (a corrupt
 * frame must not make the runner allocate gigabytes). */
#define RUN_JOB_MAX_JSON (16u << 20)

enum run_job_kind {
	RUN_JOB_START = 1, /* index: the worker took this scenario */
	RUN_JOB_RESULT,    /* index, out, then len bytes of result JSON */
	RUN_JOB_DONE,      /* built, left: the worker tore down and exits */
};

struct run_job_msg {
	int32_t kind;
	int32_t index;
	int32_t built;              /* DONE: topologies this worker built */
	int32_t left;               /* DONE: lab objects left after its last topo down */
	struct run_outcome out;     /* RESULT: timings and status; facts are not
				       carried (have_facts is false on arrival) */
	uint32_t len;               /* RESULT: JSON bytes after the header */
};

/* Encodes m and json (NULL: none; m->len is set here) into a new buffer
 * (*frame, caller frees) of *framelen bytes.  Returns 0 or -1 (no memory,
 * or json over RUN_JOB_MAX_JSON). */
int run_job_encode(const struct run_job_msg *m, const char *json, char **frame, size_t *framelen);

/* The reading side: bytes in as they arrive, whole frames out. */
struct run_job_reader {
	char *buf;                  /* owned */
	size_t len, cap;
};
/* Appends n bytes.  Returns 0, or -1 when out of memory. */
int run_job_feed(struct run_job_reader *r, const void *data, size_t n);
/* Takes the next whole frame: 1 with *m filled and *json a new
 * NUL-terminated string (caller frees; NULL when the frame has none), 0
 * when more bytes are needed, -1 when the bytes are not a frame (unknown
 * kind, JSON length over the cap): the stream is unusable. */
int run_job_take(struct run_job_reader *r, struct run_job_msg *m, char **json);
void run_job_reader_free(struct run_job_reader *r);

/* How many workers for jobs and n scenarios: min(jobs, n), at least 1. */
int run_jobs_workers(int jobs, size_t n);


/* Results in catalogue order: appends res[i] for every i < n that is not
 * NULL (borrowed) to run.  Returns how many were appended. */
size_t run_jobs_assemble(json_object *run, json_object *const *res, size_t n);

/* What the runner gathers from a run, serial or parallel. */
struct run_totals {
	struct run_outcome *over;   /* non-skipped outcomes, for `# overhead` (caller-owned,
				       room for every scenario; may be NULL) */
	int nover;
	int built;                  /* topologies built */
	int left;                   /* lab objects left after the last teardowns */
};

/* The scenario's result entry (run.c): verdicts evaluated, overhead added.
 * A new reference. */
json_object *run_scenario_json(const struct qplab_plan *p, struct run_outcome *o,
			       const struct qplab_runinfo *ri);

/* Runs cat's scenarios on `jobs` workers, each with a copy of proto
 * (mode, caps, keep) and its agents' logs in logdir/job-W.  TAP goes to
 * tap as results arrive; run gets the scenarios in catalogue order.
 * Returns 0, or -1 when the workers could not be started (nothing ran). */
int run_jobs(const struct run_ctx *proto, const struct qplab_catalogue *cat,
	     const struct qplab_runinfo *ri, int jobs, const char *logdir, struct qplab_tap *tap,
	     json_object *run, struct run_totals *tot);

#endif
