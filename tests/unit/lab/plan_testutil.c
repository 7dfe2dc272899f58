/* Scenario plans from JSON text, for the harness suites. */
#include <stdio.h>
#include <string.h>

#include "plan_testutil.h"
#include "run/run_args.h"
#include "scenario/wire.h"
#include "unit.h"

struct qplab_plan *plan_test_parse(const char *text)
{
	struct qplab_errors errs = {0};
	struct qplab_plan *p = NULL;

	ck_assert_msg(qplab_scenario_parse("t.json", text, strlen(text), &p, &errs) == 0, "%s",
		      errs.n ? errs.msgs[0] : "?");
	return p;
}

char *plan_test_fill(const char *tmpl, const char *const ph[3], const char *const val[3])
{
	static char out[8192];
	char tmp[8192];

	snprintf(out, sizeof(out), "%s", tmpl);
	for (int i = 0; i < 3; i++) {
		char *at = strstr(out, ph[i]);

		ck_assert_msg(at != NULL, "no placeholder %s", ph[i]);
		*at = '\0';
		snprintf(tmp, sizeof(tmp), "%s%s%s", out, val[i] ? val[i] : "", at + strlen(ph[i]));
		snprintf(out, sizeof(out), "%s", tmp);
	}
	return out;
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

void plan_test_wire_eval(const char *text, const struct qplab_wire_pkt *pk, size_t n,
			 const struct qplab_wire_hosts *hosts, bool ok, const char *observed,
			 char *expected, size_t explen)
{
	struct qplab_plan *p = plan_test_parse(text);
	char got[256];

	ck_assert_msg(qplab_wire_eval(&p->wire[0], pk, n, hosts, expected, explen, got, sizeof(got)) == ok,
		      "%s: expected %s, observed %s", text, expected, got);
	ck_assert_str_eq(got, observed);
	qplab_plan_free(p);
}
