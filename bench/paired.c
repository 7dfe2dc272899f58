/* paired — one concurrent comparison of bench/rdma-vm.sh, ours against
 * rdma_cm, judged on its repeated runs (verdict.h; target: ratio <= 1).
 *
 *   paired [--word target|floor|none] PAIRS LABEL N CONFIG [WHAT]
 *
 * PAIRS holds one line per run, "ROUND N CONFIG OURS_MS RDMA_CM_MS"; a
 * figure that is missing is "-" or "n/a", and that run is left out.  WHAT
 * names the ratio's two figures ("ours / rdma_cm" by default).
 * Prints the comparison's ratio_LABEL line: the median of the paired
 * ratios, each ratio, the interval and the verdict, whose first word is
 * --word's: "target" (the default; a ratio with no run counts as MISSED),
 * "floor" (the measured floor set against rdma_cm: no verdict without a
 * run), or none at all (a ratio shown, not judged). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sortd.h"
#include "verdict.h"

/* A positive number, or 0 for anything else ("-", "n/a", garbage). */
static double figure(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return end != s && !*end && v > 0 && isfinite(v) ? v : 0;
}

int main(int argc, char **argv)
{
	double rs[VERDICT_MAX], lo, hi, cov;
	char line[256], round[32], n[32], cfg[32], ours[64], cm[64];
	const char *why = "", *what, *word = "target";
	enum verdict j;
	int m = 0, rows = 0;
	FILE *f;

	if (argc > 2 && !strcmp(argv[1], "--word")) {
		word = argv[2];
		argv += 2;
		argc -= 2;
	}
	if ((argc != 5 && argc != 6) ||
	    (strcmp(word, "target") && strcmp(word, "floor") && strcmp(word, "none"))) {
		fprintf(stderr, "usage: paired [--word target|floor|none] PAIRS LABEL N CONFIG "
				"[WHAT]\n");
		return 2;
	}
	what = argc == 6 ? argv[5] : "ours / rdma_cm";
	if (!(f = fopen(argv[1], "r"))) {
		perror(argv[1]);
		return 1;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %31s %31s %63s %63s", round, n, cfg, ours, cm) == 5 &&
		    !strcmp(n, argv[3]) && !strcmp(cfg, argv[4])) {
			double o = figure(ours), c = figure(cm);

			rows++;
			if (o > 0 && c > 0 && m < VERDICT_MAX)
				rs[m++] = o / c;
		}
	fclose(f);
	if (!m) {
		printf("ratio_%s n/a (none of its %d runs has both figures)%s\n", argv[2], rows,
		       strcmp(word, "target") ? "" : " target MISSED");
		return 0;
	}
	sortd(rs, (size_t)m);
	j = verdict_judge(rs, m, 1.0, true, &lo, &hi, &cov);
	if (j == VERDICT_TOO_FEW)
		why = " (too few pairs for a 95 % interval: 6 are needed)";
	else if (j == VERDICT_UNSETTLED)
		why = " (the interval holds 1)";
	printf("ratio_%s %.2f (median of %d paired runs", argv[2], verdict_median(rs, m), m);
	if (m != rows)
		printf(" of %d", rows);
	printf(", %s each:", what);
	for (int i = 0; i < m; i++)
		printf(" %.2f", rs[i]);
	printf("; %.1f %% interval %.3f-%.3f)", 100 * cov, lo, hi);
	if (strcmp(word, "none"))
		printf(" %s %s%s", word, verdict_word(j), why);
	printf("\n");
	return 0;
}
