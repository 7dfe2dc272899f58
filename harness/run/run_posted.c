/* A datapath step with `on_posted` (docs/scenarios.md "datapath"): the
 * agent is asked for a `posted` line (docs/agent-protocol.md), and the
 * moment it comes the runner kills the named agent and removes the named
 * netem, while the step's first WR is outstanding; then it waits for the
 * completion as for any datapath step. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "run.h"

/* 1 when the posted line for id came (m untouched), 0 when the reply came
 * first (nothing was posted: m holds it), -1 with the reason. */
static int wait_posted(struct run_agent *ag, int id, int deadline_ms, struct qplab_agent_msg *m,
		       char *err, size_t errlen)
{
	double deadline = run_now_ms() + deadline_ms;

	for (;;) {
		int left = (int)(deadline - run_now_ms());

		if (left <= 0 || run_agent_wait_any(ag, left, m, err, errlen))
			return -1;
		if (m->id == id && m->type == QPLAB_AGENT_POSTED) {
			qplab_agent_msg_free(m);
			return 1;
		}
		if (m->id == id && m->type == QPLAB_AGENT_REPLY)
			return 0;
		qplab_agent_msg_free(m);
	}
}

static int on_posted(struct run_state *s, const struct qplab_step *st, char *err, size_t errlen)
{
	if (st->posted_kill >= 0)
		run_agent_kill(&s->ag[st->posted_kill]);
	if (st->posted_netem_off >= 0) {
		struct qplab_step off = {.kind = QPLAB_STEP_NETEM_OFF, .host = st->posted_netem_off,
					 .from = -1, .to = -1, .peer = -1, .line = st->line};

		return run_topo_fault(s->t, s->p, &off, err, errlen);
	}
	return 0;
}

int run_datapath_posted(struct run_state *s, const struct qplab_step *st, int id, char *line,
			int wait_ms, struct qplab_agent_msg *m, char *err, size_t errlen)
{
	struct run_agent *ag = &s->ag[st->from];
	int rc;

	line = qplab_agent_req_notify_posted(line);
	if (!ag->pid || !line || run_agent_send(ag, line)) {
		snprintf(err, errlen, "agent %s: cannot write its request", ag->name);
		return -1;
	}
	/* The Metadata request comes before the post: the whole wait
	 * (run_datapath_wait_ms: the check's worst case, 2 s of slack). */
	rc = wait_posted(ag, id, wait_ms, m, err, errlen);
	if (rc < 0)
		return -1;
	/* Nothing was posted (the reply came first): the actions still run,
	 * so the topology and the hosts end as the scenario says. */
	if (on_posted(s, st, err, errlen)) {
		if (rc == 0)
			qplab_agent_msg_free(m);
		return -1;
	}
	return rc == 0 ? 0 : run_agent_wait(ag, id, wait_ms, m, err, errlen);
}
