/*
 * libFuzzer: the scenario parser (comment stripping, strict json-c, the
 * line pre-scan, every section).  A scenario file is input from outside:
 * whatever the bytes, the parser returns a plan or errors, never crashes,
 * never leaks, and every error message carries the file name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qplab_plan *plan = NULL;
	struct qplab_errors errs = {0};
	int rc = qplab_scenario_parse("f.json", (const char *)data, size, &plan, &errs);

	if ((rc == 0) != (plan != NULL) || (rc == 0 && errs.n) || (rc != 0 && !errs.n))
		abort();
	for (size_t i = 0; i < errs.n; i++)
		if (strncmp(errs.msgs[i], "f.json", 6))
			abort();
	qplab_plan_free(plan);
	qplab_errors_free(&errs);
	return 0;
}
