/* plan_testutil.h — scenario plans from JSON text, for the harness suites. */
#ifndef QPLAB_PLAN_TESTUTIL_H
#define QPLAB_PLAN_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario/scenario.h"

/* The plan of text (parsed as file "t.json"); fails the test with the
 * parser's first message.  The caller frees it (qplab_plan_free). */
struct qplab_plan *plan_test_parse(const char *text);

/* tmpl with each of its three placeholders ph[i] replaced by val[i]
 * (NULL: nothing), in a static buffer (the next call overwrites it). */
char *plan_test_fill(const char *tmpl, const char *const ph[3], const char *const val[3]);

/* `qplab run LINE`'s options: LINE split at spaces (at most 30 words, 511
 * bytes) and given to qplab_run_parse_args. */
struct qplab_run_opts;
int plan_test_run_args(const char *line, struct qplab_run_opts *o, char *err, size_t errlen);

/* Evaluates the first wire expectation of the scenario text over the n
 * packets and asserts its verdict (ok) and its observed text; expected
 * receives the expectation as the evaluator wrote it. */
struct qplab_wire_pkt;
struct qplab_wire_hosts;
void plan_test_wire_eval(const char *text, const struct qplab_wire_pkt *pk, size_t n,
			 const struct qplab_wire_hosts *hosts, bool ok, const char *observed,
			 char *expected, size_t explen);

#endif
