/* A scenario's steps: agent requests, topology faults, agent lifecycle.
 * Steps that produce a result record facts for that step: the acting
 * agent's reply, then every live agent's report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qphs/error.h"
#include "qphs/rdma.h"
#include "cli/cli.h"
#include "cli/jread.h"
#include "run.h"

/* Default deadlines (ms) before QPLAB_TIME_MULTIPLIER. */
enum { DL_CONNECT = 15000, DL_DATAPATH = 10000, DL_REPORT = 5000, DL_READY = 10000, DL_WAIT = 10000,
       DL_FAN_IN = 300000 };

static int scaled(int step_ms, int dflt)
{
	return (int)qplab_scaled_ms((step_ms > 0 ? step_ms : dflt), run_mult());
}

static const char *path_of(struct run_state *s, int h)
{
	return h >= 0 && (size_t)h < s->p->nhosts ? s->ag[h].nic_path : NULL;
}

/* A report's events onto the steps' time base (ms since the first step
 * began, the runner's clock) and the host at the other end: the peer the
 * facts are for, else the only other host. */
static void rebase_events(struct run_state *s, int h, const char *peer, struct qplab_facts *f)
{
	const struct run_agent *ag = &s->ag[h];
	int other = -1;

	if (f->nevents <= 0)
		return;
	if (!ag->clock_known || s->facts->steps_t0_ms < 0) {
		f->nevents = -1;
		return;
	}
	for (int i = 0; i < f->nevents; i++) {
		f->events[i].start_ms += ag->clock_offset_ms - s->facts->steps_t0_ms;
		f->events[i].end_ms += ag->clock_offset_ms - s->facts->steps_t0_ms;
	}
	for (size_t i = 0; i < s->p->nhosts; i++)
		if ((peer && !strcmp(s->ag[i].nic_path, peer)) || (!peer && s->p->nhosts == 2 && (int)i != h))
			other = (int)i;
	snprintf(f->events_peer, sizeof(f->events_peer), "%s", other >= 0 ? s->p->hosts[other].name : "");
}

static int into_facts(struct run_state *s, int h, int step, const char *peer,
		      struct qplab_agent_msg *m, char *err, size_t errlen)
{
	struct qplab_facts *f = qplab_facts_at(s->facts, step, h);
	int rc = qplab_facts_from_reply(m, peer, f, err, errlen);

	qplab_agent_msg_free(m);
	if (!rc)
		rebase_events(s, h, peer, f);
	return rc ? -1 : 0;
}

/* Every request goes out before the first reply is read: the agents
 * answer at once, so a collection costs one round trip, not one per host. */
int run_collect(struct run_state *s, int step, int peer_of[QPLAB_MAX_HOSTS], char *err,
		size_t errlen)
{
	int ids[QPLAB_MAX_HOSTS];

	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct run_agent *ag = &s->ag[h];

		ids[h] = -1;
		if (!ag->pid)
			continue;
		ids[h] = ag->next_id++;
		if (run_agent_send(ag, qplab_agent_req_report(ids[h]))) {
			snprintf(err, errlen, "agent %s: cannot write its request", ag->name);
			return -1;
		}
	}
	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct qplab_agent_msg m;

		if (ids[h] < 0)
			continue;
		if (run_agent_wait(&s->ag[h], ids[h], scaled(-1, DL_REPORT), &m, err, errlen) ||
		    into_facts(s, (int)h, step, path_of(s, peer_of[h]), &m, err, errlen))
			return -1;
	}
	return 0;
}

static void pair(int peer_of[QPLAB_MAX_HOSTS], int a, int b)
{
	for (int i = 0; i < QPLAB_MAX_HOSTS; i++)
		peer_of[i] = -1;
	if (a >= 0 && b >= 0) {
		peer_of[a] = b;
		peer_of[b] = a;
	}
}

/* One request to host h, its reply as step facts of h. */
/* wait: how long the reply may take (the request's deadline and the
 * round trip). */
static long reply_wait(int deadline_ms)
{
	return (long)deadline_ms + RUN_REPLY_SLACK_MS;
}

static int act(struct run_state *s, int h, int id, char *line, long wait, int step,
	       const char *peer, char *err, size_t errlen)
{
	struct qplab_agent_msg m;
	struct jread r = {.what = "agent reply", .err = err, .errlen = errlen};
	const char *u;

	if (run_agent_call(&s->ag[h], id, line, (int)wait, &m, err, errlen))
		return -1;
	/* What the host cannot do at all (a Mooncake host's C API has no call
	 * for it): the scenario does not apply to this placement. */
	if (jread_str(&r, m.body, "unsupported", &u) == JREAD_OK) {
		snprintf(s->skip, sizeof(s->skip), "host %s cannot: %s", s->ag[h].name, u);
		snprintf(err, errlen, "%s", s->skip);
		qplab_agent_msg_free(&m);
		return -1;
	}
	if (r.errors) {
		qplab_agent_msg_free(&m);
		return -1;
	}
	return into_facts(s, h, step, peer, &m, err, errlen);
}

/* `to` waits up to dl for its endpoint (overlapping the connect), then
 * checks with deadline dl per completion. */
static int peer_posts_wait(int dl, int nqp)
{
	long long w = (long long)dl + run_datapath_wait_ms(dl, nqp, QPHS_DATA_CHECK, false);

	return w >= QPLAB_MAX_DEADLINE_MS ? (int)QPLAB_MAX_DEADLINE_MS : (int)w;
}

/* peer_posts: `to` is told first to post towards `from` as soon as its
 * endpoint to it is CONNECTED (an application that sends when
 * readyToSend() says so), then `from` connects; `to`'s facts for the step
 * are that check's, read once the connect has returned. */
static int connect_peer_posts(struct run_state *s, int si, const struct qplab_step *st,
			      const char *peer, int id, int dl, char *err, size_t errlen)
{
	struct run_agent *to = &s->ag[st->to];
	struct qplab_agent_msg m;
	int tid = to->next_id++;

	if (!to->pid) {
		snprintf(err, errlen, "agent %s is not running", to->name);
		return -1;
	}
	if (run_agent_send(to, qplab_agent_req_datapath_when_connected(tid, path_of(s, st->from), dl))) {
		snprintf(err, errlen, "agent %s: cannot write its request", to->name);
		return -1;
	}
	if (act(s, st->from, id, qplab_agent_req_connect(id, peer, -1, dl), reply_wait(dl), si, peer, err,
		errlen) ||
	    run_agent_wait(to, tid, peer_posts_wait(dl, to->qp_per_ep), &m, err, errlen))
		return -1;
	return into_facts(s, st->to, si, path_of(s, st->from), &m, err, errlen);
}

static int connect_step(struct run_state *s, int si, const struct qplab_step *st, char *err,
			size_t errlen)
{
	struct run_agent *ag = &s->ag[st->from];
	char peer[400];
	int id = ag->next_id++, dl = scaled(st->deadline_ms, DL_CONNECT);

	if (st->to >= 0) {
		const char *p = path_of(s, st->to), *at = strrchr(p, '@');
		int n = at && st->to_device[0] ? (int)(at - p) : (int)strlen(p);

		/* to_device: the peer's server with another device name. */
		snprintf(peer, sizeof(peer), "%.*s%s%s", n, p, st->to_device[0] ? "@" : "", st->to_device);
	} else {
		const struct run_host *h = &s->t->hosts[s->hostmap[st->from]];
		/* unresolvable: a name in .invalid, which never resolves (RFC 6761). */
		const char *addr = !strcmp(st->to_address, "unowned")	     ? s->t->unowned4
				   : !strcmp(st->to_address, "unroutable")   ? s->t->unroutable4
				   : !strcmp(st->to_address, "unresolvable") ? RUN_UNRESOLVABLE_NAME
									     : h->addr4;
		/* closed_port: a lab address whose port 1 nothing listens on. */
		snprintf(peer, sizeof(peer), "%s:%d@%s", addr,
			 !strcmp(st->to_address, "closed_port") ? 1 : RUN_AGENT_PORT, h->rxe);
	}
	if (st->peer_posts)
		return connect_peer_posts(s, si, st, peer, id, dl, err, errlen);
	return act(s, st->from, id, qplab_agent_req_connect(id, peer, -1, dl), reply_wait(dl), si, peer, err,
		   errlen);
}

/* Polls host's report until `until` holds or the deadline passes (not an
 * error: the step's facts say what was seen last). */
/* The waited host's daemon_alive: a Probe (a report does not say). */
static int probe_into(struct run_state *s, int h, struct qplab_facts *f, char *err, size_t errlen)
{
	struct run_agent *ag = &s->ag[h];
	struct qplab_agent_msg m;
	int id = ag->next_id++;

	f->daemon_alive = 0;
	if (!ag->pid)
		return 0;
	if (run_agent_call(ag, id, qplab_agent_req_probe(id, NULL, (int)qplab_scaled_ms(1000, run_mult())),
			   scaled(-1, DL_REPORT), &m, err, errlen))
		return -1;
	qplab_facts_from_reply(&m, NULL, f, err, errlen);
	qplab_agent_msg_free(&m);
	return 0;
}

/* Polls host's report (and a Probe) until `until` holds or the deadline
 * passes (not an error: the step's facts say what was seen last). */
static int wait_step(struct run_state *s, int si, const struct qplab_step *st, char *err,
		     size_t errlen)
{
	double deadline = run_now_ms() + scaled(st->deadline_ms, DL_WAIT);
	int peer_of[QPLAB_MAX_HOSTS];

	pair(peer_of, -1, -1);
	if (s->p->nhosts == 2)
		pair(peer_of, 0, 1);
	for (;;) {
		struct qplab_facts *f = qplab_facts_at(s->facts, si, st->host);
		struct timespec ts = {0, 50 * 1000 * 1000};

		qplab_facts_free(f);
		if (run_collect(s, si, peer_of, err, errlen) || probe_into(s, st->host, f, err, errlen))
			return -1;
		if (qplab_assert_eval(&st->until, f, run_mult(), NULL, NULL) || run_now_ms() > deadline)
			return 0;
		if (qplab_run_interrupted) {
			snprintf(err, errlen, "interrupted");
			return -1;
		}
		nanosleep(&ts, NULL);
	}
}

/* kill_agent, start_agent, restart_agent.  A started agent must come back
 * on the address and port it had (Mooncake peers remember nic paths). */
static int agent_step(struct run_state *s, int si, const struct qplab_step *st, char *err, size_t errlen)
{
	struct run_agent *ag = &s->ag[st->host];
	char was[sizeof(ag->listen)];

	snprintf(was, sizeof(was), "%s", ag->listen);
	if (st->kind != QPLAB_STEP_START_AGENT)
		run_agent_kill(ag);
	if (st->kind == QPLAB_STEP_KILL_AGENT)
		return 0;
	if (st->kind == QPLAB_STEP_START_AGENT && ag->pid) {
		snprintf(err, errlen, "start_agent: agent %s is running (kill_agent first)", ag->name);
		return -1;
	}
	if (st->kind == QPLAB_STEP_RESTART_AGENT && st->down_ms > 0) {
		struct timespec ts = {st->down_ms / 1000, (st->down_ms % 1000) * 1000000L};

		nanosleep(&ts, NULL);
	}
	if (run_agent_start(ag, s->p, st->host, &s->t->hosts[s->hostmap[st->host]],
			    scaled(-1, DL_READY), err, errlen)) {
		struct qplab_facts *f = qplab_facts_at(s->facts, si, st->host);

		if (!ag->fatal_code[0])
			return -1;
		/* It said why it could not start (a `fatal` line): a fact of the
		 * step, not the lab's failure.  The host stays down. */
		run_agent_kill(ag);
		snprintf(f->code, sizeof(f->code), "%s", ag->fatal_code);
		qplab_facts_set(&f->error_text, ag->fatal_text);
		fprintf(stderr, "qplab run: %s\n", err);
		return 0;
	}
	if (was[0] && strcmp(was, ag->listen)) {
		snprintf(err, errlen, "agent %s came back on %s, not on %s", ag->name, ag->listen, was);
		return -1;
	}
	snprintf(qplab_facts_at(s->facts, si, st->host)->code, sizeof(qplab_facts_at(s->facts, si, st->host)->code), "OK");
	return 0;
}

/* The refusal reason of `to`'s daemon for a frame `from` sent it: `to`'s
 * agent marks its daemon's refusal count before the frame (mark), and
 * takes the refusal logged since as its last outcome after it, which
 * become `to`'s code and error_text for the step.  A Mooncake host's
 * adapter has no such request: its facts stay its report's. */
static int remote_refusal(struct run_state *s, int si, const struct qplab_step *st, bool mark,
			  char *err, size_t errlen)
{
	struct run_agent *to = &s->ag[st->to];
	struct qplab_agent_msg m;
	int id;

	if (!to->pid || !strcmp(to->impl, "mooncake"))
		return 0;
	id = to->next_id++;
	if (!mark)
		return act(s, st->to, id, qplab_agent_req_daemon_refusal(id, false, scaled(-1, 200)),
			   reply_wait(scaled(-1, 200)), si, path_of(s, st->from), err, errlen);
	if (run_agent_call(to, id, qplab_agent_req_daemon_refusal(id, true, -1),
			   (int)reply_wait(scaled(-1, DL_REPORT)), &m, err, errlen))
		return -1;
	qplab_agent_msg_free(&m);
	return 0;
}

/* Bytes or a named bad frame: `from`'s agent sends them to `to`'s daemon
 * over the lab network (and `to`'s agent reports the reason its daemon
 * logged), or without `from`, `to`'s own agent to its daemon (and reports
 * the reason).  A stale ACK: `from`'s agent sends its previous ready-ACK
 * to `to`. */
static int raw_frame_step(struct run_state *s, int si, const struct qplab_step *st, char *err,
			  size_t errlen)
{
	bool stale = !strcmp(st->frame_kind, "stale_ack"), remote = st->from >= 0 && !stale;
	int h = st->from >= 0 ? st->from : st->to, dl = scaled(st->deadline_ms, 2000);
	const char *addr = remote ? s->ag[st->to].listen : NULL;
	int id;
	char *line;

	if (remote && remote_refusal(s, si, st, true, err, errlen))
		return -1;
	id = s->ag[h].next_id++;
	line = st->frame ? qplab_agent_req_raw_frame(id, addr, st->frame, st->frame_len, dl)
			 : qplab_agent_req_raw_frame_kind(id, addr, st->frame_kind,
							  stale ? path_of(s, st->to) : NULL, dl);
	if (act(s, h, id, line, reply_wait(dl), si, path_of(s, st->to), err, errlen))
		return -1;
	return remote ? remote_refusal(s, si, st, false, err, errlen) : 0;
}

/* The pattern seed of datapath step si: this run's seed and the step,
 * so a verify step finds it again and no two runs write the same bytes. */
static uint64_t step_seed(const struct run_state *s, int si)
{
	return s->seed ^ ((uint64_t)(si + 1) * 0x9e3779b97f4a7c15ull);
}

/* fan_in: every `from` host's servers connect to `to` at one barrier
 * time (agent_fanin.c), and are kept; then the hosts check their servers'
 * data paths one host after another, since every check writes the same
 * buffer of `to` (its check region) and two hosts' checks at once would
 * overwrite each other's pattern.  The deadline bounds each phase of a
 * host (default 300 s: the 96 s of Mooncake issue 2793's 240 handshakes,
 * with room for TCG). */
static int fan_in_step(struct run_state *s, int si, const struct qplab_step *st, char *err,
		       size_t errlen)
{
	int dl = scaled(st->deadline_ms, DL_FAN_IN), ids[QPLAB_MAX_HOSTS];
	struct timespec now;
	int64_t at;

	clock_gettime(CLOCK_REALTIME, &now);
	at = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + (int64_t)scaled(-1, 200) * 1000000;
	for (size_t i = 0; i < st->nhosts; i++) {
		struct run_agent *ag = &s->ag[st->hosts[i]];

		ids[i] = ag->next_id++;
		if (!ag->pid ||
		    run_agent_send(ag, qplab_agent_req_fan_in(ids[i], path_of(s, st->to), st->count, at))) {
			snprintf(err, errlen, "agent %s: cannot write its request", ag->name);
			return -1;
		}
	}
	for (size_t i = 0; i < st->nhosts; i++) {
		struct qplab_agent_msg m;

		if (run_agent_wait(&s->ag[st->hosts[i]], ids[i], dl + 2000, &m, err, errlen))
			return -1;
		qplab_agent_msg_free(&m);
	}
	for (size_t i = 0; i < st->nhosts; i++) {
		int id = s->ag[st->hosts[i]].next_id++;

		if (act(s, st->hosts[i], id,
			qplab_agent_req_fan_in_check(id, st->bytes > 0 ? st->bytes : 4096,
						     scaled(-1, DL_DATAPATH)),
			dl, si, path_of(s, st->to), err, errlen))
			return -1;
	}
	return 0;
}

static int do_step(struct run_state *s, int si, const struct qplab_step *st, char *err, size_t errlen)
{
	int id;

	switch (st->kind) {
	case QPLAB_STEP_CONNECT:
		return connect_step(s, si, st, err, errlen);
	case QPLAB_STEP_CONNECT_BOTH:
		return run_connect_both(s, si, st, err, errlen);
	case QPLAB_STEP_DISCONNECT:
		id = s->ag[st->from].next_id++;
		return act(s, st->from, id, qplab_agent_req_disconnect(id, path_of(s, st->to)),
			   reply_wait(scaled(-1, DL_REPORT)), si, path_of(s, st->to), err, errlen);
	case QPLAB_STEP_DATAPATH: {
		int dl = scaled(st->deadline_ms, DL_DATAPATH), wait;
		struct qplab_agent_msg m;
		char *line;

		id = s->ag[st->from].next_id++;
		if (st->verb == QPHS_DATA_BURST)
			return act(s, st->from, id,
				   qplab_agent_req_burst(id, path_of(s, st->to),
							 st->bytes > 0 ? st->bytes : 4096, dl,
							 st->count, step_seed(s, si)),
				   dl + QPHS_BURST_HOLD_MS + 2000, si, path_of(s, st->to), err,
				   errlen);
		line = qplab_agent_req_datapath(id, path_of(s, st->to), st->bytes > 0 ? st->bytes : 4096, dl,
						st->read_only, st->rkey_mode, st->verb, step_seed(s, si));
		wait = run_datapath_wait_ms(dl, s->ag[st->from].qp_per_ep, st->verb, st->read_only);
		if (!st->on_posted)
			return act(s, st->from, id, line, wait, si, path_of(s, st->to), err, errlen);
		if (run_datapath_posted(s, st, id, line, wait, &m, err, errlen))
			return -1;
		return into_facts(s, st->from, si, path_of(s, st->to), &m, err, errlen);
	}
	case QPLAB_STEP_WAIT:
		return wait_step(s, si, st, err, errlen);
	case QPLAB_STEP_SNAPSHOT:
	case QPLAB_STEP_NOOP:
		return 0;
	case QPLAB_STEP_VERIFY: {
		const struct qplab_step *w = &s->p->steps[st->of];

		id = s->ag[st->host].next_id++;
		return act(s, st->host, id,
			   qplab_agent_req_verify(id, w->bytes > 0 ? w->bytes : 4096, step_seed(s, st->of)),
			   reply_wait(scaled(-1, DL_REPORT)), si, NULL, err, errlen);
	}
	case QPLAB_STEP_REGION:
		id = s->ag[st->host].next_id++;
		return act(s, st->host, id, qplab_agent_req_region(id, st->access),
			   reply_wait(scaled(-1, DL_REPORT)), si, NULL, err, errlen);
	case QPLAB_STEP_KILL_AGENT:
	case QPLAB_STEP_START_AGENT:
	case QPLAB_STEP_RESTART_AGENT:
		return agent_step(s, si, st, err, errlen);
	case QPLAB_STEP_RAW_FRAME:
		return raw_frame_step(s, si, st, err, errlen);
	case QPLAB_STEP_FAN_IN:
		return fan_in_step(s, si, st, err, errlen);
	default:
		return run_topo_fault(s->t, s->p, st, err, errlen);
	}
}

static bool produces_result(enum qplab_step_kind k)
{
	/* connect_both collects its own (run_both.c). */
	return k == QPLAB_STEP_CONNECT || k == QPLAB_STEP_DISCONNECT ||
	       k == QPLAB_STEP_DATAPATH || k == QPLAB_STEP_RAW_FRAME || k == QPLAB_STEP_SNAPSHOT ||
	       k == QPLAB_STEP_REGION || k == QPLAB_STEP_VERIFY || k == QPLAB_STEP_FAN_IN;
}

/* delete_device: whether `rdma link del` waits for the agent that holds
 * the device differs by kernel; the step's facts say what happened. */
static int delete_device(struct run_state *s, int si, const struct qplab_step *st, char *err,
			 size_t errlen)
{
	double blocked;
	int rc = run_topo_del_device(s->t, s->p, st, scaled(st->deadline_ms, DL_WAIT), &s->ag[st->host],
				     &blocked, err, errlen);
	char note[160];

	if (blocked > 0) {
		snprintf(note, sizeof(note), "rdma link del blocked %.0f ms, until the agent holding the device was killed",
			 blocked);
		qplab_facts_set(&qplab_facts_at(s->facts, si, st->host)->error_text, note);
		fprintf(stderr, "qplab run: %s\n", note);
	}
	return rc;
}

/* When step si began and ended (the reports it collects included), in ms
 * since the scenario's first step began: the timeline's time base. */
static void step_times(struct qplab_scenario_facts *sf, int si, double t0)
{
	if (si < 0 || (size_t)si >= sf->nsteps || !sf->step_started_ms)
		return;
	if (sf->steps_t0_ms < 0)
		sf->steps_t0_ms = t0;
	sf->step_started_ms[si] = (long)(t0 - sf->steps_t0_ms + 0.5);
	sf->step_ended_ms[si] = (long)(run_now_ms() - sf->steps_t0_ms + 0.5);
}

int run_step(struct run_state *s, int si, char *err, size_t errlen)
{
	const struct qplab_step *st = &s->p->steps[si];
	bool hwc = qplab_plan_uses_hwc(s->p);
	struct run_hwc_reading *before = hwc ? calloc(1, sizeof(*before)) : NULL;
	int peer_of[QPLAB_MAX_HOSTS];

	/* Read before the step's clock starts: time_ms.step stays the step's. */
	if (before)
		run_hwc_read(s, before);
	double t0 = run_now_ms();

	/* Set before the step: the reports it collects are placed on it. */
	if (s->facts->steps_t0_ms < 0)
		s->facts->steps_t0_ms = t0;
	int rc = st->kind == QPLAB_STEP_DELETE_DEVICE ? delete_device(s, si, st, err, errlen)
						      : do_step(s, si, st, err, errlen);
	long took = (long)(run_now_ms() - t0 + 0.5);

	if (rc == 0 && produces_result(st->kind)) {
		pair(peer_of, st->from, st->to);
		if ((st->kind == QPLAB_STEP_SNAPSHOT || st->kind == QPLAB_STEP_REGION ||
		     st->kind == QPLAB_STEP_VERIFY) &&
		    s->p->nhosts == 2)
			pair(peer_of, 0, 1);
		rc = run_collect(s, si, peer_of, err, errlen);
	}
	if (before && rc == 0)
		run_hwc_delta(s, si, before);
	free(before);
	for (size_t h = 0; h < s->p->nhosts; h++)
		qplab_facts_at(s->facts, si, (int)h)->time_ms[QPLAB_TIME_STEP] = took;
	step_times(s->facts, si, t0);
	return rc;
}
