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

/* QPLAB_RUN_TRACE=1: each phase's wall time on stderr. */
static void trace(const char *what, double *t)
{
	double now = run_now_ms();

	if (getenv("QPLAB_RUN_TRACE"))
		fprintf(stderr, "qplab run: %s %.0f ms\n", what, now - *t);
	*t = now;
}

static int start_agents(struct run_state *s, char *err, size_t errlen)
{
	double deadline = run_now_ms() + 10000 * run_mult();

	for (size_t h = 0; h < s->p->nhosts; h++) {
		s->hostmap[h] = -1;
		for (size_t k = 0; k < s->t->nhosts; k++)
			if (!strcmp(s->t->hosts[k].name, s->p->hosts[h].name))
				s->hostmap[h] = (int)k;
		if (s->hostmap[h] < 0) {
			snprintf(err, errlen, "topo up has no host %s", s->p->hosts[h].name);
			return -1;
		}
		if (run_agent_spawn(&s->ag[h], s->p, (int)h, &s->t->hosts[s->hostmap[h]], err, errlen))
			return -1;
	}
	/* All started at once: a cold start costs seconds under TCG. */
	for (size_t h = 0; h < s->p->nhosts; h++)
		if (run_agent_ready(&s->ag[h], deadline, err, errlen))
			return -1;
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

/* Agents out (all asked at once), QPs counted; the topology goes down
 * too unless it is kept for the next scenario. */
static void teardown(struct run_ctx *c, struct run_state *s, bool keep_topo)
{
	int qps[QPLAB_MAX_HOSTS], left = 0, agents = 0;
	double t0 = run_now_ms();

	for (size_t h = 0; h < s->p->nhosts; h++)
		run_agent_ask_exit(&s->ag[h]);
	for (size_t h = 0; h < s->p->nhosts; h++) {
		pid_t pid = s->ag[h].pid;

		run_agent_stop(&s->ag[h], (int)(3000 * run_mult()));
		agents += pid > 0 && kill(pid, 0) == 0;
		qps[h] = s->hostmap[h] >= 0 ? run_count_qps(s->t->hosts[s->hostmap[h]].rxe) : -1;
	}
	if (getenv("QPLAB_RUN_TRACE"))
		fprintf(stderr, "qplab run: agents stopped, QPs counted %.0f ms\n", run_now_ms() - t0);
	if (!keep_topo)
		left = run_ctx_finish(c);
	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct qplab_facts *f = qplab_facts_at(s->facts, -1, (int)h);

		f->leftover_qps = qps[h];
		f->leftover_objects = left + agents;
	}
}

int run_ctx_finish(struct run_ctx *c)
{
	int left = run_topo_down(&c->topo);

	run_topo_free(&c->topo);
	c->sig[0] = '\0';
	return left;
}

/* The topology for p: the kept one when p asks for the same, else anew. */
static int topology(struct run_ctx *c, const struct qplab_plan *p, char *err, size_t errlen)
{
	const char *words[QPLAB_TOPO_ARGV_MAX];
	char buf[1024], sig[1024] = "", id[16];
	int n = qplab_topo_up_args(p, "ID", c->mode, words, buf, sizeof(buf));

	for (int i = 0; i < n; i++)
		snprintf(sig + strlen(sig), sizeof(sig) - strlen(sig), "%s ", words[i]);
	if (c->topo.up && !strcmp(sig, c->sig))
		return 0;
	if (c->topo.up)
		run_ctx_finish(c);
	snprintf(id, sizeof(id), "r%d", c->seq++ % 1000);
	if (run_topo_up(p, id, c->mode, &c->topo, err, errlen))
		return -1;
	snprintf(c->sig, sizeof(c->sig), "%s", sig);
	return 0;
}

/* A link's netem, in force from the start: a netem_on step on both ends. */
static int link_netem(struct run_state *s, char *err, size_t errlen)
{
	for (size_t l = 0; l < s->p->nlinks; l++) {
		const struct qplab_link *ln = &s->p->links[l];
		struct qplab_step st = {.kind = QPLAB_STEP_NETEM_ON, .netem = ln->netem};

		for (int end = 0; ln->netem.set && end < 2; end++) {
			st.host = end ? ln->b : ln->a;
			if (run_topo_fault(s->t, s->p, &st, err, errlen))
				return -1;
		}
	}
	return 0;
}

static bool changes_topology(const struct qplab_plan *p)
{
	for (size_t l = 0; l < p->nlinks; l++)
		if (p->links[l].netem.set)
			return true;
	for (size_t i = 0; i < p->nsteps; i++)
		switch (p->steps[i].kind) {
		case QPLAB_STEP_CONNECT: case QPLAB_STEP_CONNECT_BOTH: case QPLAB_STEP_DISCONNECT:
		case QPLAB_STEP_DATAPATH: case QPLAB_STEP_WAIT: case QPLAB_STEP_SNAPSHOT:
		case QPLAB_STEP_KILL_AGENT: case QPLAB_STEP_START_AGENT: case QPLAB_STEP_RESTART_AGENT:
		case QPLAB_STEP_RAW_FRAME:
			break;
		default:
			return true;
		}
	return false;
}

void run_scenario(struct run_ctx *c, const struct qplab_plan *p, struct run_outcome *o)
{
	struct run_agent ag[QPLAB_MAX_HOSTS];
	struct run_state s = {.p = p, .t = &c->topo, .ag = ag, .facts = &o->facts, .log_dir = c->log_dir};
	double t0 = run_now_ms(), tt = t0;
	char err[600] = "";
	const char *skip;
	int rc;

	memset(ag, 0, sizeof(ag));
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
	rc = topology(c, p, err, sizeof(err));
	trace("topo up", &tt);
	snprintf(o->backend, sizeof(o->backend), "%s", c->topo.mode);
	snprintf(o->kernel, sizeof(o->kernel), "%s", c->topo.kernel);
	if (!rc)
		rc = link_netem(&s, err, sizeof(err));
	if (!rc)
		rc = start_agents(&s, err, sizeof(err));
	trace("agents ready", &tt);
	for (size_t i = 0; !rc && i < p->nsteps; i++) {
		if (run_now_ms() - t0 > p->timeout_ms * run_mult()) {
			snprintf(err, sizeof(err), "scenario timeout (%d ms) before step %zu", p->timeout_ms, i + 1);
			rc = -1;
			break;
		}
		if (run_step(&s, (int)i, err, sizeof(err))) {
			char msg[600];

			/* Precisions keep the message within msg whatever the parts. */
			snprintf(msg, sizeof(msg), "%.200s:%d: step %zu (%.40s): %.300s", p->file, p->steps[i].line, i + 1,
				 qplab_step_kind_name(p->steps[i].kind), err);
			snprintf(err, sizeof(err), "%s", msg);
			rc = -1;
		}
		trace(qplab_step_kind_name(p->steps[i].kind), &tt);
	}
	if (!rc)
		rc = final_facts(&s, err, sizeof(err));
	trace("final facts", &tt);
	if (rc) {
		o->status = QPLAB_ERROR;
		snprintf(o->reason, sizeof(o->reason), "%.500s", err);
	}
	if (rc && c->keep) {
		fprintf(stderr, "qplab run: --keep: topology %s left up (netns/topo down --name %s)\n",
			c->topo.id, c->topo.id);
		c->topo.up = false;
	} else {
		teardown(c, &s, !rc && !changes_topology(p) && !qplab_run_interrupted);
	}
	trace("teardown", &tt);
	o->elapsed_s = (run_now_ms() - t0) / 1000.0;
}
