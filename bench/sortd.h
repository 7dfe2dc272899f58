/* sortd.h — doubles sorted ascending, for the bench programs' medians,
 * percentiles and intervals.  NaN is not expected: every figure sorted
 * here is a measured time, rate or ratio. */
#ifndef QPLAB_BENCH_SORTD_H
#define QPLAB_BENCH_SORTD_H

#include <stdlib.h>

static inline int sortd_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline void sortd(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), sortd_cmp);
}

#endif
