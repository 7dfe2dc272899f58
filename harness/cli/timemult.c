/* QPLAB_TIME_MULTIPLIER, read once and checked like an MC_* variable. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int qplab_time_multiplier_parse(const char *s, double *out, char *err, size_t errlen)
{
	char *end = NULL;
	double v;

	*out = 1;
	if (!s)
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (!*s || end == s || *end || isnan(v)) {
		snprintf(err, errlen, "QPLAB_TIME_MULTIPLIER=%.40s is not a number (accepted: %d to %d)",
			 s, QPLAB_TIME_MULT_MIN, QPLAB_TIME_MULT_MAX);
		return -1;
	}
	if (errno == ERANGE || v < QPLAB_TIME_MULT_MIN || v > QPLAB_TIME_MULT_MAX) {
		snprintf(err, errlen, "QPLAB_TIME_MULTIPLIER=%.40s is out of range (accepted: %d to %d)",
			 s, QPLAB_TIME_MULT_MIN, QPLAB_TIME_MULT_MAX);
		return -1;
	}
	*out = v;
	return 0;
}

int qplab_time_multiplier(double *out, char *err, size_t errlen)
{
	return qplab_time_multiplier_parse(getenv("QPLAB_TIME_MULTIPLIER"), out, err, errlen);
}

long qplab_scaled_ms(long ms, double mult)
{
	double v = (double)ms * mult;

	/* ms is a bounded deadline and mult at most QPLAB_TIME_MULT_MAX, but a
	 * caller's value is still clamped: a deadline never wraps. */
	return v >= (double)QPLAB_MAX_DEADLINE_MS ? QPLAB_MAX_DEADLINE_MS : v <= 0 ? 0 : (long)v;
}
