/* Scenario plans from JSON text, for the harness suites. */
#include <string.h>

#include "plan_testutil.h"
#include "unit.h"

struct qplab_plan *plan_test_parse(const char *text)
{
	struct qplab_errors errs = {0};
	struct qplab_plan *p = NULL;

	ck_assert_msg(qplab_scenario_parse("t.json", text, strlen(text), &p, &errs) == 0, "%s",
		      errs.n ? errs.msgs[0] : "?");
	return p;
}
