/* unit.h — shared by the Check unit suites. */
#ifndef QPLAB_UNIT_H
#define QPLAB_UNIT_H

#include <check.h>

/* Each suite file tests/unit/test_NAME.c defines this; the Makefile lists
 * the files, so adding a suite needs no other edit. */
#define SUITE(name) Suite *suite_##name(void);
#include "unit_suites.h"
#undef SUITE

/* A correctness bound in seconds, scaled by QPLAB_TIME_MULTIPLIER (set under
 * sanitizers, valgrind and TCG).  Use for tcase_set_timeout and for any
 * deadline a test waits on. */
double unit_timeout(double seconds);

/* Adds a test case named `name` with timeout unit_timeout(seconds). */
TCase *unit_tcase(Suite *s, const char *name, double seconds);

/* Records that a named error of the table was produced by a test; the
 * runner prints the list at the end ("# hit ERR_FRAME_ZERO_LENGTH ..."),
 * so the output shows which named errors the suites reach.  Works across
 * forked tests (appends to a file named by $QPLAB_UNIT_HITS). */
void unit_hit(int code);

#endif
