/* `qplab run --ablate`: a passing scenario's ablated twin runs right after
 * it, in the same run_ctx (so the same topology and worker), and its
 * result becomes the scenario's "ablation" object (report_ablation.c). */
#include <string.h>

#include "cli/jread.h"
#include "report/report.h"
#include "run.h"
#include "run_jobs.h"

static int status_named(const char *s)
{
	for (int i = QPLAB_PASS; i <= QPLAB_ERROR; i++)
		if (s && !strcmp(s, qplab_status_name((enum qplab_status)i)))
			return i;
	return QPLAB_ERROR;
}

bool run_ablate_wants_twin(const struct run_ctx *c, const struct qplab_plan *p)
{
	return c->ablate && p->twin;
}

void run_ablate(struct run_ctx *c, const struct qplab_plan *p, bool last, json_object *j,
		const struct qplab_runinfo *ri)
{
	int status = status_named(jread_str_or(j, "status", NULL)), twin_status = -1;
	json_object *tj = NULL;
	enum qplab_ablation v;

	if (!c->ablate || !j)
		return;
	c->last = last;
	if (p->twin && status == QPLAB_PASS && !qplab_run_interrupted) {
		struct run_outcome out;

		memset(&out, 0, sizeof(out));
		run_scenario(c, p->twin, &out);
		tj = run_scenario_json(p->twin, &out, ri);
		twin_status = tj ? status_named(jread_str_or(tj, "status", NULL)) : QPLAB_ERROR;
		if (out.have_facts)
			qplab_scenario_facts_free(&out.facts);
	} else if (p->twin && status == QPLAB_PASS) {
		c->last = true; /* interrupted: the scenario's topology is not reused */
	}
	v = qplab_ablation_verdict(p->ablate_mode, status, twin_status);
	json_object_object_add(j, "ablation", qplab_ablation_json(p, v, tj));
	json_object_put(tj);
}
