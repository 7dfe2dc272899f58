/* Helpers shared by the unit and rdma test runners: deadlines scaled by
 * QPLAB_TIME_MULTIPLIER, and the record of named errors the tests produce. */
#include <stdio.h>
#include <stdlib.h>

#include "qphs.h"
#include "unit.h"

double unit_timeout(double seconds)
{
	const char *m = getenv("QPLAB_TIME_MULTIPLIER");
	double mult = m ? atof(m) : 1.0;

	return seconds * (mult > 0 ? mult : 1.0);
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
