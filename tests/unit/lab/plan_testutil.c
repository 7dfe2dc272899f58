/* Scenario plans from JSON text, for the harness suites. */
#include <stdio.h>
#include <string.h>

#include "plan_testutil.h"
#include "run/run_args.h"
#include "unit.h"

struct qplab_plan *plan_test_parse(const char *text)
{
	struct qplab_errors errs = {0};
	struct qplab_plan *p = NULL;

	ck_assert_msg(qplab_scenario_parse("t.json", text, strlen(text), &p, &errs) == 0, "%s",
		      errs.n ? errs.msgs[0] : "?");
	return p;
}

int plan_test_run_args(const char *line, struct qplab_run_opts *o, char *err, size_t errlen)
{
	static char buf[512];
	static char *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "run %s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return qplab_run_parse_args(argc, argv, o, err, errlen);
}
