/* connect_both: every listed host connects to every other at one
 * CLOCK_REALTIME barrier, `rounds` times, so each pair is a simultaneous
 * open.
 *
 * An agent serves its requests one at a time (docs/agent-protocol.md), so
 * a host with several peers makes its connects one after the other.  Each
 * host takes its peers in a round-robin order (the circle method): in slot
 * k every host connects to its slot-k partner, and both ends of a pair make
 * that connect as their k-th.  The first slot meets at the barrier; the
 * later ones start as each host finishes the previous one, close together
 * but not to the microsecond.  With two hosts it is one pair at the
 * barrier. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "run.h"

/* Partner of listed host i in slot r of n hosts, by the circle method
 * over m = n rounded up to even: player m-1 meets r, and the others pair
 * around r ((r+k) with (r-k), mod m-1).  -1 = a bye (n odd: the partner is
 * the dummy player n). */
static int partner(int i, int r, int n)
{
	int last = n + (n & 1) - 1;
	int other = i == last ? r : i == r ? last : ((2 * r - i) % last + 2 * last) % last;

	return other >= n ? -1 : other;
}

int run_both_slots(int n)
{
	return n + (n & 1) - 1;
}

int run_both_partner(int i, int slot, int n)
{
	return partner(i, slot, n);
}

static int64_t barrier_ns(const struct qplab_step *st)
{
	struct timespec now;
	int lead = (int)qplab_scaled_ms((st->barrier_ms > 0 ? st->barrier_ms : 200), run_mult());

	clock_gettime(CLOCK_REALTIME, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + (int64_t)lead * 1000000;
}

/* The code and text of the first call that did not return OK. */
struct first_bad {
	char code[48];
	char *text;
};

static void note_reply(struct first_bad *fb, const struct qplab_agent_msg *m)
{
	if (fb->code[0] || !m->code || !strcmp(m->code, "OK"))
		return;
	snprintf(fb->code, sizeof(fb->code), "%s", m->code);
	fb->text = m->error ? strdup(m->error) : NULL;
}

/* One round: every request out (one barrier), then every reply. */
static int one_round(struct run_state *s, int si, const struct qplab_step *st, struct first_bad *fb,
		     char *err, size_t errlen)
{
	int n = (int)st->nhosts, slots = run_both_slots(n), dl = (int)qplab_scaled_ms(15000, run_mult());
	int ids[QPLAB_MAX_HOSTS][QPLAB_MAX_HOSTS];
	int64_t at = barrier_ns(st);

	if (st->deadline_ms > 0)
		dl = (int)qplab_scaled_ms(st->deadline_ms, run_mult());
	for (int i = 0; i < n; i++) {
		struct run_agent *ag = &s->ag[st->hosts[i]];

		for (int r = 0; r < slots; r++) {
			int j = partner(i, r, n);

			ids[i][r] = -1;
			if (j < 0)
				continue;
			ids[i][r] = ag->next_id++;
			if (run_agent_send(ag, qplab_agent_req_connect(ids[i][r], s->ag[st->hosts[j]].nic_path, at, dl))) {
				snprintf(err, errlen, "connect_both: cannot write to agent %s", ag->name);
				return -1;
			}
		}
	}
	for (int i = 0; i < n; i++) {
		int h = st->hosts[i];

		for (int r = 0; r < slots; r++) {
			struct qplab_agent_msg m;
			struct qplab_facts *f = qplab_facts_at(s->facts, si, h);

			if (ids[i][r] < 0)
				continue;
			/* Each later connect of a host waits for the ones before it. */
			if (run_agent_wait(&s->ag[h], ids[i][r], dl + 4000 + r * dl, &m, err, errlen))
				return -1;
			note_reply(&fb[i], &m);
			qplab_facts_free(f);
			if (qplab_facts_from_reply(&m, s->ag[st->hosts[partner(i, r, n)]].nic_path, f, err, errlen)) {
				qplab_agent_msg_free(&m);
				return -1;
			}
			qplab_agent_msg_free(&m);
		}
	}
	return 0;
}

/* The endpoint fact of listed host i: the status all its endpoints to the
 * other listed hosts share, else the first (in list order) that is not
 * CONNECTED. */
static void combined_endpoint(struct run_state *s, const struct qplab_step *st, int i,
			      const struct qplab_agent_msg *m, char *out, size_t outlen)
{
	char err[128];

	out[0] = '\0';
	for (size_t k = 0; k < st->nhosts; k++) {
		struct qplab_facts one;

		if ((int)k == i)
			continue;
		qplab_facts_init(&one);
		qplab_facts_from_reply(m, s->ag[st->hosts[k]].nic_path, &one, err, sizeof(err));
		if (!out[0] || (!strcmp(out, "CONNECTED") && strcmp(one.endpoint, "CONNECTED")))
			snprintf(out, outlen, "%s", one.endpoint);
		qplab_facts_free(&one);
	}
}

/* Every live agent's report after the rounds; listed hosts get the
 * combined endpoint and the first non-OK code of any round. */
static int after_rounds(struct run_state *s, int si, const struct qplab_step *st, struct first_bad *fb,
			char *err, size_t errlen)
{
	int ids[QPLAB_MAX_HOSTS], listed[QPLAB_MAX_HOSTS];

	for (size_t h = 0; h < s->p->nhosts; h++) {
		listed[h] = -1;
		ids[h] = s->ag[h].pid ? s->ag[h].next_id++ : -1;
		if (ids[h] >= 0 && run_agent_send(&s->ag[h], qplab_agent_req_report(ids[h]))) {
			snprintf(err, errlen, "agent %s: cannot write its request", s->ag[h].name);
			return -1;
		}
	}
	for (size_t i = 0; i < st->nhosts; i++)
		listed[st->hosts[i]] = (int)i;
	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct qplab_facts *f = qplab_facts_at(s->facts, si, (int)h);
		struct qplab_agent_msg m;
		char ep[32], code[48];
		int i = listed[h];

		if (ids[h] < 0)
			continue;
		if (run_agent_wait(&s->ag[h], ids[h], (int)qplab_scaled_ms(5000, run_mult()), &m, err, errlen))
			return -1;
		snprintf(code, sizeof(code), "%s", f->code);
		qplab_facts_from_reply(&m, i >= 0 ? s->ag[st->hosts[i ? 0 : 1]].nic_path : NULL, f, err, errlen);
		if (i >= 0) {
			combined_endpoint(s, st, i, &m, ep, sizeof(ep));
			snprintf(f->endpoint, sizeof(f->endpoint), "%s", ep);
			snprintf(f->code, sizeof(f->code), "%s", fb[i].code[0] ? fb[i].code : code);
			if (fb[i].code[0])
				qplab_facts_set(&f->error_text, fb[i].text);
		}
		qplab_agent_msg_free(&m);
	}
	return 0;
}

int run_connect_both(struct run_state *s, int si, const struct qplab_step *st, char *err, size_t errlen)
{
	struct first_bad fb[QPLAB_MAX_HOSTS];
	int rc = 0;

	memset(fb, 0, sizeof(fb));
	for (int r = 0; !rc && r < (st->rounds > 0 ? st->rounds : 1); r++)
		rc = one_round(s, si, st, fb, err, errlen);
	if (!rc)
		rc = after_rounds(s, si, st, fb, err, errlen);
	for (size_t i = 0; i < st->nhosts; i++)
		free(fb[i].text);
	return rc;
}
