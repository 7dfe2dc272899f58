/* judge.h — a daemon target judged on two servers' runs paired by
 * repetition, as bench/hs_remote (out of process) and bench/hs_load (in
 * process) print it: the ratios of one server's figure to the other's, one
 * per repetition, judged by verdict.h, one line each, and a tally of the
 * verdicts for the summary line.  A single program includes this once. */
#ifndef QPLAB_BENCH_JUDGE_H
#define QPLAB_BENCH_JUDGE_H

#include <math.h>

#include "load.h"
#include "verdict.h"

struct judge_tally {
	int verdicts, met, unsettled;
};

/* Which figure of a run a ratio takes. */
enum judge_field { JUDGE_RATE, JUDGE_CPU, JUDGE_P99 };

static double judge_field(const struct figures *f, enum judge_field which)
{
	return which == JUDGE_RATE ? f->rate : which == JUDGE_CPU ? f->cpu_us : f->p99;
}

/* The ratios a[r] / b[r] of one figure (which) over reps repetitions,
 * sorted into v, their count into *n.  Returns how many repetitions gave
 * no ratio (a server that completed nothing or used no CPU); those are
 * left out. */
static int judge_paired(const struct figures *a, const struct figures *b, int reps,
			enum judge_field which, double *v, int *n)
{
	*n = 0;
	for (int r = 0; r < reps; r++) {
		double x = judge_field(&a[r], which), y = judge_field(&b[r], which);

		if (x > 0 && y > 0 && isfinite(x / y))
			v[(*n)++] = x / y;
	}
	sortd(v, (size_t)*n);
	return reps - *n;
}

/* n sorted values (n >= 1) as a verdict line shows them: the median, the
 * interval lo-hi of coverage cov (verdict.h) and the whole range; runs
 * names what the values are. */
static void judge_spread(const double *v, int n, const char *runs, double lo, double hi,
			 double cov)
{
	printf("%5.2f (median of %d %s; %.1f %% interval %.3f-%.3f; runs %.2f-%.2f)",
	       verdict_median(v, n), n, runs, 100 * cov, lo, hi, v[0], v[n - 1]);
}

/* One verdict on n sorted values against bound (at most it when at_most,
 * else at least), printed and counted; a repetition without a value
 * (failed) makes it MISSED.  runs names what the values are ("paired
 * runs" for ratios). */
static void judge_print_of(struct judge_tally *t, const char *what, const double *v, int n,
			   int failed, double bound, bool at_most, const char *runs)
{
	double lo, hi, cov;
	enum verdict j;

	t->verdicts++;
	if (failed || n < 1) {
		printf("# %-44s n/a (%d of %d runs gave no figure) target MISSED\n", what, failed,
		       n + failed);
		return;
	}
	j = verdict_judge(v, n, bound, at_most, &lo, &hi, &cov);
	t->met += j == VERDICT_MET;
	t->unsettled += j == VERDICT_UNSETTLED || j == VERDICT_TOO_FEW;
	printf("# %-44s ", what);
	judge_spread(v, n, runs, lo, hi, cov);
	printf(" target %s\n", verdict_word(j));
}

/* judge_print_of on n sorted paired ratios. */
static void judge_print(struct judge_tally *t, const char *what, const double *v, int n,
			int failed, double bound, bool at_most)
{
	judge_print_of(t, what, v, n, failed, bound, at_most, "paired runs");
}

/* The daemon's two targets at one point, on q's and the ceiling c's reps
 * paired runs: at least 0.9x the ceiling's handshakes/s, at most 1.3x its
 * CPU per handshake.  reps <= VERDICT_MAX. */
static void judge_targets(struct judge_tally *t, int clients, int stalled,
			  const struct figures *q, const struct figures *c, int reps)
{
	double v[VERDICT_MAX];
	char what[96];
	int n, failed;

	failed = judge_paired(q, c, reps, JUDGE_RATE, v, &n);
	snprintf(what, sizeof(what), "%d clients, %d stalled: hs/s of ceiling", clients, stalled);
	judge_print(t, what, v, n, failed, 0.9, false);
	failed = judge_paired(q, c, reps, JUDGE_CPU, v, &n);
	snprintf(what, sizeof(what), "%d clients, %d stalled: CPU/hs x ceiling", clients, stalled);
	judge_print(t, what, v, n, failed, 1.3, true);
}

/* The summary line: "# WHO targets: met in M of N (unsettled U, missed X)". */
static void judge_summary(const struct judge_tally *t, const char *who)
{
	printf("# %s targets: met in %d of %d (unsettled %d, missed %d)\n", who, t->met,
	       t->verdicts, t->unsettled, t->verdicts - t->met - t->unsettled);
}

#endif
