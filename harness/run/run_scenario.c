/* One scenario: topology up, agents started, steps, final facts, teardown
 * (always: on success, failure, timeout and interrupt), leftovers counted. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "impl.h"
#include "realise.h"
#include "report/report.h"
#include "cli/cli.h"
#include "run.h"

/* QPLAB_RUN_TRACE=1: each phase's wall time on stderr. */
/* A seed per scenario run: the clock and the process, never the same twice. */
static uint64_t run_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
	       ((uint64_t)getpid() << 40);
}

static void trace(const char *what, double *t)
{
	double now = run_now_ms();

	if (getenv("QPLAB_RUN_TRACE"))
		fprintf(stderr, "qplab run: %s %.0f ms\n", what, now - *t);
	*t = now;
}

static int start_agents(struct run_state *s, char *err, size_t errlen)
{
	/* A machine over ssh: a session to open and every provider of its
	 * libibverbs to load (the lab's agents load rxe's alone). */
	double deadline = run_now_ms() + (s->t->inv ? 60000 : 10000) * run_mult();

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

/* Each host's implementation, as its agent said (results.json
 * "implementations"). */
static void note_impls(const struct run_state *s, struct run_outcome *o)
{
	for (size_t h = 0; h < s->p->nhosts; h++) {
		const struct run_agent *ag = &s->ag[h];

		snprintf(o->impl[h].impl, sizeof(o->impl[h].impl), "%s", ag->impl[0] ? ag->impl : s->p->hosts[h].impl);
		snprintf(o->impl[h].commit, sizeof(o->impl[h].commit), "%s", ag->mc_commit);
		snprintf(o->impl[h].build, sizeof(o->impl[h].build), "%s", ag->mc_build);
	}
}

static bool has_mooncake(const struct qplab_plan *p)
{
	for (size_t h = 0; h < p->nhosts; h++)
		if (qplab_host_is_mooncake(p, (int)h))
			return true;
	return false;
}

/* Why the plan's Mooncake hosts cannot run here: the adapter is missing,
 * or the plan asks them for what they cannot do (impl.c). */
static const char *impl_skip(const struct qplab_plan *p, char *buf, size_t len)
{
	if (!has_mooncake(p))
		return NULL;
	if (access(run_mooncake_agent(), X_OK)) {
		snprintf(buf, len, "no Mooncake build (make lab MOONCAKE_BUILD=DIR): no adapter at %s",
			 run_mooncake_agent());
		return buf;
	}
	return qplab_impl_skip_reason(p, buf, len);
}

/* The final report and a Probe of every live agent: all requests out
 * before the first reply is read, each agent's replies read in the order
 * it was asked (a wait drops the replies it is not waiting for). */
static int final_facts(struct run_state *s, char *err, size_t errlen)
{
	int rep[QPLAB_MAX_HOSTS], probe[QPLAB_MAX_HOSTS];

	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct run_agent *ag = &s->ag[h];

		rep[h] = probe[h] = -1;
		qplab_facts_at(s->facts, -1, (int)h)->daemon_alive = 0;
		if (!ag->pid)
			continue;
		rep[h] = ag->next_id++;
		probe[h] = ag->next_id++;
		run_agent_send(ag, qplab_agent_req_report(rep[h]));
		run_agent_send(ag, qplab_agent_req_probe(probe[h], NULL, (int)qplab_scaled_ms(2000, run_mult())));
	}
	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct qplab_facts *f = qplab_facts_at(s->facts, -1, (int)h);
		int peer = s->p->nhosts == 2 ? 1 - (int)h : -1;
		struct qplab_agent_msg m;

		if (rep[h] < 0)
			continue;
		if (run_agent_wait(&s->ag[h], rep[h], (int)qplab_scaled_ms(5000, run_mult()), &m, err, errlen))
			return -1;
		qplab_facts_from_reply(&m, peer >= 0 ? s->ag[peer].nic_path : NULL, f, err, errlen);
		qplab_agent_msg_free(&m);
		if (run_agent_wait(&s->ag[h], probe[h], (int)qplab_scaled_ms(4000, run_mult()), &m, err, errlen))
			return -1;
		qplab_facts_from_reply(&m, NULL, f, err, errlen);
		qplab_agent_msg_free(&m);
	}
	return 0;
}

/* The scenario's window of the topology's capture, with the hosts'
 * addresses for the wire expectations' from and to. */
static void take_capture(struct run_ctx *c, struct run_state *s, struct run_outcome *o)
{
	char dst[4400], name[sizeof(s->p->id)];
	struct run_cap_result *r = &o->cap;

	snprintf(name, sizeof(name), "%s", s->p->id);
	for (char *q = name; *q; q++)
		*q = *q == '/' ? '-' : *q;
	/* The ablated twin's capture beside the scenario's, not over it. */
	snprintf(dst, sizeof(dst), "%s/%s%s.pcap", c->pcap_dir ? c->pcap_dir : ".", name,
		 s->p->is_twin ? "-ablated" : "");
	r->nhosts = s->p->nhosts;
	for (size_t h = 0; h < s->p->nhosts; h++)
		if (s->hostmap[h] >= 0) {
			snprintf(r->addr[h][0], sizeof(r->addr[h][0]), "%s", s->t->hosts[s->hostmap[h]].addr4);
			snprintf(r->addr[h][1], sizeof(r->addr[h][1]), "%s", s->t->hosts[s->hostmap[h]].addr6);
		}
	run_cap_take(&c->cap, c->cap.t0, dst, r);
}

/* Captured: --capture, or wire expectations.  One tcpdump per topology
 * build: started here when the topology has none running (a new one, or
 * its tcpdump ended with a link that went down). */
static void start_capture(struct run_ctx *c, const struct qplab_plan *p, struct run_outcome *o)
{
	c->cap.want = false;
	if (!(c->capture || p->nwire) || !c->topo.up)
		return;
	if (!run_cap_alive(&c->cap)) {
		run_cap_stop(&c->cap);
		if (run_cap_start(&c->cap, &c->topo, c->pcap_dir ? c->pcap_dir : ".", o->cap.error,
				  sizeof(o->cap.error)))
			return;
	}
	c->cap.want = true;
	c->cap.t0 = run_wall_s();
}

/* Agents out (all asked at once), their QPs counted (one `rdma` for all
 * hosts).  The topology stays for the next scenario when it can be reset
 * (keep_topo), stays for inspection (--keep: counted as kept, not as
 * left over), or goes, and what is left of it is counted. */
static void teardown(struct run_ctx *c, struct run_state *s, bool keep_topo, bool kept,
		     struct run_outcome *o)
{
	int qps[QPLAB_MAX_HOSTS], left = 0, agents = 0;
	const char *rxe[QPLAB_MAX_HOSTS];
	long pids[QPLAB_MAX_HOSTS];
	double t0 = run_now_ms();

	for (size_t h = 0; h < s->p->nhosts; h++)
		run_agent_ask_exit(&s->ag[h]);
	for (size_t h = 0; h < s->p->nhosts; h++) {
		pid_t pid = s->ag[h].pid;

		run_agent_stop(&s->ag[h], (int)qplab_scaled_ms(3000, run_mult()));
		agents += pid > 0 && kill(pid, 0) == 0;
		rxe[h] = "";
		/* The device the host's agent opened ("device": "second"). */
		if (s->hostmap[h] >= 0)
			rxe[h] = s->p->hosts[h].second_device ? s->t->hosts[s->hostmap[h]].rxe2
							      : s->t->hosts[s->hostmap[h]].rxe;
		pids[h] = s->ag[h].remote_pid;
	}
	/* On real machines other users' QPs are no leftovers: only the
	 * agents' own are counted. */
	if (c->inv)
		run_hosts_count_qps(s->t, s->hostmap, pids, s->p->nhosts, qps);
	else
		run_count_qps(rxe, s->p->nhosts, qps);
	if (c->cap.want)
		take_capture(c, s, o);
	if (getenv("QPLAB_RUN_TRACE"))
		fprintf(stderr, "qplab run: agents stopped, QPs counted %.0f ms\n", run_now_ms() - t0);
	if (kept) {
		run_cap_stop(&c->cap);
		snprintf(o->kept, sizeof(o->kept), "%s", c->topo.id);
		fprintf(stderr, "qplab run: --keep: topology %s left up (netns/topo down --name %s)\n",
			c->topo.id, c->topo.id);
		run_topo_free(&c->topo);
		memset(&c->topo, 0, sizeof(c->topo));
		c->sig[0] = '\0';
	} else if (!keep_topo || run_topo_reset(&c->topo, s->p)) {
		double t1 = run_now_ms();

		left = run_ctx_finish(c);
		o->phase_ms[RUN_PHASE_TOPO_DOWN] = run_now_ms() - t1;
	}
	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct qplab_facts *f = qplab_facts_at(s->facts, -1, (int)h);

		f->leftover_qps = qps[h];
		f->leftover_objects = left + agents;
	}
}

int run_ctx_finish(struct run_ctx *c)
{
	run_cap_stop(&c->cap);
	int left = run_topo_down(&c->topo);

	run_topo_free(&c->topo);
	c->sig[0] = '\0';
	return left;
}

/* The topology for p: the kept one when p's can be made from it (same
 * hosts and addresses: the MTUs are set in place), else anew. */
static int topology(struct run_ctx *c, const struct qplab_plan *p, char *err, size_t errlen)
{
	char sig[1024], id[16];

	/* A Mooncake host gets namespaces nobody used: Mooncake's daemon
	 * binds its port without SO_REUSEADDR (findAvailableTcpPort,
	 * transfer_metadata_plugin.cpp), so the TIME_WAIT connections of an
	 * earlier scenario on that port make it fail to start ("P2P: No
	 * valid port found for local TCP service", TransferEngineImpl::init),
	 * and the ones its own daemon leaves behind (it closes first:
	 * shutdown(SHUT_WR) in SocketHandShakePlugin::startDaemon) refuse the
	 * port to the next agent for TIME_WAIT's 60 s. */
	if (c->inv) /* the same machines for every scenario */
		snprintf(sig, sizeof(sig), "hosts");
	else
		run_topo_sig(p, c->mode, sig, sizeof(sig));
	if (!c->inv && has_mooncake(p))
		sig[0] = '\0';
	if (c->inv && !c->topo.up) {
		if (run_hosts_topo(c->inv, &c->topo, err, errlen))
			return -1;
		snprintf(c->sig, sizeof(c->sig), "%s", sig);
	} else if (!(c->topo.up && sig[0] && !strcmp(sig, c->sig))) {
		if (c->topo.up)
			run_ctx_finish(c);
		run_topo_name(c, c->seq++, id, sizeof(id));
		c->built++;
		if (run_topo_up(p, id, c->mode, &c->topo, err, errlen))
			return -1;
		snprintf(c->sig, sizeof(c->sig), "%s", sig);
	}
	if (run_topo_mtus(&c->topo, p, err, errlen))
		return -1;
	return run_topo_links(&c->topo, p, err, errlen);
}

static void trace_ms(const char *what, double *t, double *acc)
{
	double now = run_now_ms();

	if (acc)
		*acc += now - *t;
	trace(what, t);
	*t = now;
}

static int run_steps(struct run_state *s, double t0, double *tt, struct run_outcome *o, char *err,
		     size_t errlen)
{
	const struct qplab_plan *p = s->p;

	for (size_t i = 0; i < p->nsteps; i++) {
		if (run_now_ms() - t0 > p->timeout_ms * run_mult()) {
			snprintf(err, errlen, "scenario timeout (%d ms) before step %zu", p->timeout_ms, i + 1);
			return -1;
		}
		if (run_step(s, (int)i, err, errlen)) {
			char msg[600];

			/* Precisions keep the message within msg whatever the parts. */
			snprintf(msg, sizeof(msg), "%.200s:%d: step %zu (%.40s): %.300s", p->file, p->steps[i].line, i + 1,
				 qplab_step_kind_name(p->steps[i].kind), err);
			snprintf(err, errlen, "%s", msg);
			trace_ms(qplab_step_kind_name(p->steps[i].kind), tt, &o->steps_ms);
			return -1;
		}
		trace_ms(qplab_step_kind_name(p->steps[i].kind), tt, &o->steps_ms);
	}
	return 0;
}

void run_scenario(struct run_ctx *c, const struct qplab_plan *p, struct run_outcome *o)
{
	struct run_agent ag[QPLAB_MAX_HOSTS];
	struct run_state s = {.p = p, .t = &c->topo, .ag = ag, .facts = &o->facts, .log_dir = c->log_dir,
			      .seed = run_seed()};
	double t0 = run_now_ms(), tt = t0;
	char err[600] = "";
	const char *skip;
	bool kept;
	int rc;

	memset(ag, 0, sizeof(ag));
	for (int i = 0; i < QPLAB_MAX_HOSTS; i++)
		s.hostmap[i] = -1;
	o->status = QPLAB_PASS;
	skip = qplab_plan_skip_reason(p, c->caps, o->reason, sizeof(o->reason));
	if (!skip)
		skip = impl_skip(p, o->reason, sizeof(o->reason));
	if (!skip && c->inv && !qplab_inventory_fits(c->inv, p, o->reason, sizeof(o->reason)))
		skip = o->reason;
	for (size_t h = 0; h < p->nhosts; h++)
		snprintf(o->impl[h].impl, sizeof(o->impl[h].impl), "%s", p->hosts[h].impl);
	if (skip) {
		o->status = QPLAB_SKIP;
		return;
	}
	qplab_scenario_facts_init(&o->facts, p->nhosts, p->nsteps);
	o->have_facts = true;
	rc = topology(c, p, err, sizeof(err));
	trace_ms("topo up", &tt, &o->phase_ms[RUN_PHASE_TOPO]);
	snprintf(o->backend, sizeof(o->backend), "%s", c->topo.mode);
	snprintf(o->kernel, sizeof(o->kernel), "%s", c->topo.kernel);
	for (size_t h = 0; c->inv && !rc && h < p->nhosts; h++)
		for (size_t i = 0; i < c->topo.nhosts; i++)
			if (!strcmp(c->topo.hosts[i].name, p->hosts[h].name))
				snprintf(o->host_kernel[h], sizeof(o->host_kernel[h]), "%s", c->topo.hosts[i].kernel);
	if (!rc)
		start_capture(c, p, o);
	trace_ms("capture", &tt, &o->phase_ms[RUN_PHASE_TOPO]);
	if (!rc)
		rc = start_agents(&s, err, sizeof(err));
	trace_ms("agents ready", &tt, &o->phase_ms[RUN_PHASE_AGENTS]);
	if (!rc)
		note_impls(&s, o);
	if (!rc)
		rc = run_steps(&s, t0, &tt, o, err, sizeof(err));
	if (!rc)
		rc = final_facts(&s, err, sizeof(err));
	trace_ms("final facts", &tt, &o->phase_ms[RUN_PHASE_FACTS]);
	if (rc && s.skip[0]) {
		/* Not an error: this placement asks a host for what it cannot do. */
		o->status = QPLAB_SKIP;
		snprintf(o->reason, sizeof(o->reason), "%.500s", s.skip);
		rc = 0;
	} else if (rc) {
		o->status = QPLAB_ERROR;
		snprintf(o->reason, sizeof(o->reason), "%.500s", err);
	}
	/* --keep: an errored scenario's topology, and the run's last one. */
	kept = c->keep && !c->inv && c->topo.up && (rc || c->last); /* machines are put back */
	teardown(c, &s, !rc && !qplab_run_interrupted && !c->last && !has_mooncake(p), kept, o);
	trace_ms("teardown", &tt, &o->phase_ms[RUN_PHASE_TEARDOWN]);
	if (p->nwire && o->cap.captured)
		run_tshark_decode(&c->tshark, &o->cap);
	trace_ms("tshark", &tt, &o->phase_ms[RUN_PHASE_FACTS]);
	o->phase_ms[RUN_PHASE_TEARDOWN] -= o->phase_ms[RUN_PHASE_TOPO_DOWN];
	if (o->status == QPLAB_SKIP) {
		qplab_scenario_facts_free(&o->facts);
		o->have_facts = false;
	}
	o->elapsed_s = (run_now_ms() - t0) / 1000.0;
}
