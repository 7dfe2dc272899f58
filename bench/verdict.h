/* verdict.h — how `make bench` judges a target on repeated runs, shared by
 * bench/judge.h (the daemon against the ceiling server: bench/hs_remote and
 * bench/hs_load) and bench/paired (ours against rdma_cm, for
 * bench/rdma-vm.sh).
 *
 * The input is n paired ratios, sorted: one per repetition, both sides
 * measured in it.  The verdict takes their median and a distribution-free
 * interval for it, the order statistics v[k-1] .. v[n-k] with k the
 * largest whose coverage, 1 - 2 P(B <= k-1) for B ~ Binomial(n, 1/2), is
 * at least 95 % (k = 1, the whole range, for n = 6 to 8).  MET when the
 * interval lies wholly on the target's side of the bound, MISSED when it
 * lies wholly on the other, UNSETTLED when it holds the bound or when n
 * is too small (below 6) for any interval of 95 %. */
#ifndef QPLAB_BENCH_VERDICT_H
#define QPLAB_BENCH_VERDICT_H

#include <math.h>
#include <stdbool.h>

#define VERDICT_MAX 160 /* ratios in one verdict, at most */

static inline double verdict_median(const double *v, int n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The interval's ends into *lo and *hi; returns its coverage.  1 <= n <=
 * VERDICT_MAX. */
static inline double verdict_interval(const double *v, int n, double *lo, double *hi)
{
	double below[VERDICT_MAX + 1] = {0}, c = 1, sum = 0; /* below[j] = P(B <= j) */
	int k = 1;

	for (int i = 0; i <= n; i++) {
		sum += c;
		below[i] = sum / pow(2, n);
		c = c * (n - i) / (i + 1);
	}
	while (k + 1 <= (n + 1) / 2 && 2 * below[k] <= 0.05)
		k++;
	*lo = v[k - 1];
	*hi = v[n - k];
	return 1 - 2 * below[k - 1];
}

enum verdict {
	VERDICT_MET,
	VERDICT_MISSED,
	VERDICT_UNSETTLED, /* the interval holds the bound */
	VERDICT_TOO_FEW,   /* no interval of 95 %: UNSETTLED too */
};

/* The word printed after "target". */
static inline const char *verdict_word(enum verdict v)
{
	return v == VERDICT_MET ? "MET" : v == VERDICT_MISSED ? "MISSED" : "UNSETTLED";
}

/* The verdict for n sorted ratios against bound (the target is at most
 * bound when at_most, else at least); the interval and its coverage into
 * *lo, *hi and *cov. */
static inline enum verdict verdict_judge(const double *v, int n, double bound, bool at_most,
					 double *lo, double *hi, double *cov)
{
	*cov = verdict_interval(v, n, lo, hi);
	if (*cov < 0.95)
		return VERDICT_TOO_FEW;
	if (at_most ? *hi <= bound : *lo >= bound)
		return VERDICT_MET;
	if (at_most ? *lo > bound : *hi < bound)
		return VERDICT_MISSED;
	return VERDICT_UNSETTLED;
}

#endif
