/* One scenario: topology up, agents started, steps, final facts, teardown
 * (always: on success, failure, timeout and interrupt), leftovers counted. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "realise.h"
#include "report.h"
#include "run.h"

static int start_agents(struct run_state *s, char *err, size_t errlen)
{
	for (size_t h = 0; h < s->p->nhosts; h++) {
		s->hostmap[h] = -1;
		for (size_t k = 0; k < s->t->nhosts; k++)
			if (!strcmp(s->t->hosts[k].name, s->p->hosts[h].name))
				s->hostmap[h] = (int)k;
		if (s->hostmap[h] < 0) {
			snprintf(err, errlen, "topo up has no host %s", s->p->hosts[h].name);
			return -1;
		}
		if (run_agent_start(&s->ag[h], s->p, (int)h, &s->t->hosts[s->hostmap[h]],
				    (int)(10000 * run_mult()), err, errlen))
			return -1;
	}
	return 0;
}

static int final_facts(struct run_state *s, char *err, size_t errlen)
{
	int peer_of[QPLAB_MAX_HOSTS];

	for (int i = 0; i < QPLAB_MAX_HOSTS; i++)
		peer_of[i] = -1;
	if (s->p->nhosts == 2)
		peer_of[0] = 1, peer_of[1] = 0;
	if (run_collect(s, -1, peer_of, err, errlen))
		return -1;
	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct run_agent *ag = &s->ag[h];
		struct qplab_agent_msg m;
		int id = ag->next_id++;

		qplab_facts_at(s->facts, -1, (int)h)->daemon_alive = 0;
		if (!ag->pid)
			continue;
		if (run_agent_call(ag, id, qplab_agent_req_probe(id, NULL, (int)(2000 * run_mult())),
				   (int)(4000 * run_mult()), &m, err, errlen))
			return -1;
		qplab_facts_from_reply(&m, NULL, qplab_facts_at(s->facts, -1, (int)h), err, errlen);
		qplab_agent_msg_free(&m);
	}
	return 0;
}

/* Agents out, QPs counted, topology down, what is left counted. */
static void teardown(struct run_state *s, bool have_facts)
{
	int qps[QPLAB_MAX_HOSTS], left, agents = 0;

	for (size_t h = 0; h < s->p->nhosts; h++) {
		pid_t pid = s->ag[h].pid;

		run_agent_stop(&s->ag[h], (int)(3000 * run_mult()));
		agents += pid > 0 && kill(pid, 0) == 0;
		qps[h] = s->hostmap[h] >= 0 ? run_count_qps(s->t->hosts[s->hostmap[h]].rxe) : -1;
	}
	left = run_topo_down(s->t) + agents;
	for (size_t h = 0; have_facts && h < s->p->nhosts; h++) {
		struct qplab_facts *f = qplab_facts_at(s->facts, -1, (int)h);

		f->leftover_qps = qps[h];
		f->leftover_objects = left;
	}
}

void run_scenario(struct run_ctx *c, const struct qplab_plan *p, struct run_outcome *o)
{
	struct run_topo t;
	struct run_agent ag[QPLAB_MAX_HOSTS];
	struct run_state s = {.p = p, .t = &t, .ag = ag, .facts = &o->facts, .log_dir = c->log_dir};
	double t0 = run_now_ms();
	char id[16], err[600] = "";
	const char *skip;
	int rc;

	memset(ag, 0, sizeof(ag));
	memset(&t, 0, sizeof(t));
	for (int i = 0; i < QPLAB_MAX_HOSTS; i++)
		s.hostmap[i] = -1;
	o->status = QPLAB_PASS;
	skip = qplab_plan_skip_reason(p, c->caps, o->reason, sizeof(o->reason));
	if (skip) {
		o->status = QPLAB_SKIP;
		return;
	}
	qplab_scenario_facts_init(&o->facts, p->nhosts, p->nsteps);
	o->have_facts = true;
	snprintf(id, sizeof(id), "r%d", c->seq++ % 1000);
	rc = run_topo_up(p, id, c->mode, &t, err, sizeof(err));
	snprintf(o->backend, sizeof(o->backend), "%s", t.mode);
	snprintf(o->kernel, sizeof(o->kernel), "%s", t.kernel);
	if (!rc)
		rc = start_agents(&s, err, sizeof(err));
	for (size_t i = 0; !rc && i < p->nsteps; i++) {
		if (run_now_ms() - t0 > p->timeout_ms * run_mult()) {
			snprintf(err, sizeof(err), "scenario timeout (%d ms) before step %zu", p->timeout_ms, i + 1);
			rc = -1;
			break;
		}
		if (run_step(&s, (int)i, err, sizeof(err))) {
			char msg[600];

			snprintf(msg, sizeof(msg), "%s:%d: step %zu (%s): %s", p->file, p->steps[i].line, i + 1,
				 qplab_step_kind_name(p->steps[i].kind), err);
			snprintf(err, sizeof(err), "%s", msg);
			rc = -1;
		}
	}
	if (!rc)
		rc = final_facts(&s, err, sizeof(err));
	if (rc) {
		o->status = QPLAB_ERROR;
		snprintf(o->reason, sizeof(o->reason), "%s", err);
	}
	if (!(rc && c->keep))
		teardown(&s, true);
	run_topo_free(&t);
	o->elapsed_s = (run_now_ms() - t0) / 1000.0;
}
