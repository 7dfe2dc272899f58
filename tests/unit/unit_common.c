/* Helpers shared by the unit and rdma test runners: deadlines scaled by
 * QPLAB_TIME_MULTIPLIER, and the record of named errors the tests produce. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "qphs.h"
#include "unit.h"

/* A multiplier the lab would refuse stops the tests too, rather than
 * turning silently into 1. */
double unit_timeout(double seconds)
{
	const char *m = getenv("QPLAB_TIME_MULTIPLIER");
	char *end = NULL;
	double mult = 1.0;

	if (m) {
		mult = strtod(m, &end);
		if (!*m || *end || isnan(mult) || mult < 1 || mult > 100) {
			fprintf(stderr, "QPLAB_TIME_MULTIPLIER=%.40s is not a number from 1 to 100\n", m);
			exit(2);
		}
	}
	return seconds * mult;
}

void unit_hit(int code)
{
	const char *path = getenv("QPLAB_UNIT_HITS");
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "%s\n", qphs_errname(code));
	fclose(f);
}
