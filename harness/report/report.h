/*
 * report.h — the lab's outputs: TAP on stdout, results.json, junit.xml.
 *
 * One result model feeds all three: each finished scenario is turned once
 * into a json-c object (qplab_result_json); the TAP writer prints from it as
 * scenarios complete, the run object collects it for results.json, and
 * junit.xml is generated from the results document — also from a merged one
 * that holds several runs (kernels).  docs/results.md is the schema.
 *
 * TAP (version 13): the plan `1..N` comes first (N = scenarios x kernels,
 * known before anything runs); test numbers follow completion order; every
 * scenario prints exactly one `ok`/`not ok` line, then `# ` lines (its
 * diagnostic when it failed, then a progress line with a counter and the
 * elapsed time).  A skipped scenario is `ok N - id # SKIP reason`.  An
 * aborted setup prints `Bail out! reason`.  The summary table at the end is
 * `# ` lines.  An interrupted run prints fewer lines than planned, which
 * TAP consumers report as a failure — as they should.
 */
#ifndef QPLAB_REPORT_H
#define QPLAB_REPORT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#include "scenario/expect.h"
#include "scenario/scenario.h"

#define QPLAB_RESULTS_SCHEMA_VERSION 1

enum qplab_status {
	QPLAB_PASS,  /* every expectation held */
	QPLAB_FAIL,  /* an expectation did not hold */
	QPLAB_SKIP,  /* the backend cannot realise the scenario (reason says why) */
	QPLAB_ERROR, /* the scenario could not run to its end (setup, timeout) */
};

/* "pass", "fail", "skip", "error". */
const char *qplab_status_name(enum qplab_status s);

/* One finished scenario, as the runner hands it over.  All borrowed. */
struct qplab_scenario_result {
	const struct qplab_plan *plan;
	enum qplab_status status;
	const char *reason;                        /* SKIP / ERROR text, else NULL */
	double elapsed_s;
	const struct qplab_scenario_facts *facts;  /* NULL when nothing ran */
	const struct qplab_verdict *verdicts;      /* plan->nexpect of them, or NULL */
	const char *kernel_tag;                    /* " [6.12]" suffix when several kernels run; NULL */
};

/* The scenario's entry of the result model (a new reference: the caller
 * puts it).  NULL when out of memory. */
json_object *qplab_result_json(const struct qplab_scenario_result *r);

/* A run: what it ran on, and its scenarios.  `started` is ISO-8601 UTC;
 * NULL means now. */
json_object *qplab_results_run(const struct qplab_runinfo *info, const char *started);
/* Appends scenario (borrowed: a reference is taken) and updates the run's
 * summary counts. */
int qplab_results_run_add(json_object *run, json_object *scenario);
void qplab_results_run_finish(json_object *run, double elapsed_s);

/* {"schema_version": 1, "runs": []}: a new reference. */
json_object *qplab_results_doc(void);
/* Appends run (borrowed: a reference is taken) to doc's runs. */
int qplab_results_add_run(json_object *doc, json_object *run);
/* Reads a results file; refuses other schema versions.  Returns 0 and a new
 * reference in *doc, or QPHS_ERR_MALFORMED_JSON / QPHS_ERR_INVALID_ARGUMENT
 * with a message in err. */
int qplab_results_load(const char *path, json_object **doc, char *err, size_t errlen);
/* Appends every run of src to dst (both borrowed). */
int qplab_results_merge(json_object *dst, json_object *src);
/* s (n bytes) with each byte that breaks UTF-8 replaced by U+FFFD: returns 0
 * and *repaired NULL when s is well-formed already, 1 and a new string in
 * *repaired (free it), or QPHS_ERR_MEMORY. */
int qplab_utf8_repair(const char *s, size_t n, char **repaired);
/* Repairs, in place, every string value under o (borrowed) that is not
 * well-formed UTF-8; returns how many, or QPHS_ERR_MEMORY.  Keys are the
 * harness's own names and are left alone. */
int qplab_json_utf8_repair(json_object *o);
/* Writes doc (borrowed; its strings UTF-8-repaired in place first) to path
 * through a temporary file and rename(), so a reader never sees half a file.  Returns 0 or QPHS_ERR_SOCKET-free codes:
 * QPHS_ERR_INVALID_ARGUMENT with errno kept. */
int qplab_results_save(const char *path, json_object *doc);

/* Writes JUnit XML for every run of doc (borrowed): one <testsuite> per
 * run, one <testcase> per scenario, the diagnostic in <failure>. */
int qplab_junit_save(const char *path, json_object *doc);
/* The same, into an open stream. */
int qplab_junit_write(FILE *out, json_object *doc);

/* report.html for every run of doc (borrowed): one self-contained page
 * (inline CSS and script, nothing fetched), failures first, the summary by
 * topic, per scenario one verdict column per run (kernel), expected
 * against observed per host, the timeline as an SVG sequence diagram,
 * links to logs and captures.  Every string from doc is HTML-escaped.
 * Returns 0, QPHS_ERR_MEMORY, or QPHS_ERR_INVALID_ARGUMENT when writing
 * failed. */
int qplab_html_write(FILE *out, json_object *doc);
/* The same into path, through a temporary file and rename(). */
int qplab_html_save(const char *path, json_object *doc);

/* Runs write(f, doc) into path.tmp and renames it to path, so a reader
 * never sees half a file.  Returns write's code, or
 * QPHS_ERR_INVALID_ARGUMENT (errno kept) when the file could not be
 * written. */
int qplab_report_save_with(const char *path, json_object *doc, int (*write)(FILE *, json_object *));

/* Writes DIR/results.json, DIR/junit.xml and DIR/report.html from doc
 * (borrowed), creating DIR first.  Returns 0, or QPHS_ERR_INVALID_ARGUMENT with the failing
 * path in err. */
int qplab_report_write_outputs(const char *dir, json_object *doc, char *err, size_t errlen);

/* Creates dir and its parents (mkdir -p).  Returns 0 or
 * QPHS_ERR_INVALID_ARGUMENT with errno kept. */
int qplab_report_mkdir(const char *dir);

/* Diagnostic lines of a scenario entry (what TAP prints after `not ok` and
 * JUnit puts in <failure>), each without "# " and newline, into a new
 * string joined by '\n' (caller frees).  NULL when out of memory. */
char *qplab_result_diagnostic(json_object *scenario);

/* `qplab run --ablate`'s verdict per scenario (report_ablation.c). */
enum qplab_ablation {
	QPLAB_ABL_SENSITIVE,   /* an expectation evaluated in the twin failed */
	QPLAB_ABL_INSENSITIVE, /* the twin passed: the scenario does not depend on its fault */
	QPLAB_ABL_ERROR,       /* the twin errored (or was skipped) */
	QPLAB_ABL_NO_FAULT,    /* "ablate": [] */
	QPLAB_ABL_UNMARKED,    /* no ablate key */
	QPLAB_ABL_NOT_RUN,     /* the scenario itself did not pass */
	QPLAB_ABL_COUNT
};
/* "sensitive", "insensitive", "error", "no fault", "unmarked", "not run";
 * NULL out of range. */
const char *qplab_ablation_name(int v);
/* The verdict for a name, or -1. */
int qplab_ablation_by_name(const char *s);
/* mode: the plan's enum qplab_ablate_mode; status: the scenario's (enum
 * qplab_status, expectations evaluated); twin_status: its twin's, -1 when
 * no twin ran. */
enum qplab_ablation qplab_ablation_verdict(int mode, int status, int twin_status);
/* The scenario entry's "ablation" object: verdict, removed (the entries of
 * p's list), and from twin (its result entry, borrowed; NULL: none ran)
 * failed (the expectations that failed in it, per host, and why),
 * reason, twin_status, twin_ms.  A new reference. */
json_object *qplab_ablation_json(const struct qplab_plan *p, enum qplab_ablation v, json_object *twin);

/* The TAP writer.  Caller-owned struct; all state lives in it. */
struct qplab_tap_row;
struct qplab_tap {
	FILE *out;
	int planned, done;
	int counts[4];               /* by enum qplab_status */
	bool ablate;                 /* --ablate: verdicts on the lines, their summary */
	int ablation[QPLAB_ABL_COUNT];
	double t0;                   /* monotonic seconds at begin */
	struct qplab_tap_row *rows;  /* for the summary */
	size_t nrows;
};

/* Prints "TAP version 13" and the plan "1..planned". */
void qplab_tap_begin(struct qplab_tap *t, FILE *out, int planned);
/* Prints the scenario's line, its diagnostic when it failed, and a
 * progress line.  scenario: borrowed. */
void qplab_tap_result(struct qplab_tap *t, json_object *scenario);
/* Prints "Bail out! reason". */
void qplab_tap_bail(struct qplab_tap *t, const char *reason);
/* Prints the summary table; frees the writer's memory.  Returns the exit
 * code the run should end with: 0 when nothing failed or errored, else 1. */
int qplab_tap_end(struct qplab_tap *t);

#endif
