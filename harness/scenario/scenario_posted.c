/* A datapath step's `on_posted`: what the runner does the moment the
 * agent says the step's first WR is posted, before its completion
 * (docs/scenarios.md, "datapath"): kill a host's agent (the peer dies
 * with a READ outstanding), remove a host's netem. */
#include <stdio.h>

#include "scenario_int.h"

void qplab__sc_on_posted(struct sc_ctx *ctx, json_object *o, const char *path,
			 struct qplab_step *st)
{
	static const char *const keys[] = {"kill_agent", "netem_off", NULL};
	json_object *v = qplab__sc_get(ctx, o, path, "on_posted", json_type_object, false);
	char sub[SC_PATH_MAX];

	st->posted_kill = st->posted_netem_off = -1;
	if (!v)
		return;
	qplab__sc_join(sub, sizeof(sub), path, "on_posted");
	/* {} (what an ablation of both leaves) does nothing, but still asks
	 * the agent for its posted line. */
	st->on_posted = true;
	qplab__sc_only_keys(ctx, v, sub, "on_posted", keys);
	st->posted_kill = qplab__sc_host_key(ctx, v, sub, "kill_agent", false);
	st->posted_netem_off = qplab__sc_host_key(ctx, v, sub, "netem_off", false);
	if (st->posted_kill >= 0 && st->posted_kill == st->from)
		qplab__sc_err(ctx, qplab__sc_line(ctx, sub),
			      "on_posted kills the host that waits for the completion (\"from\")");
}
