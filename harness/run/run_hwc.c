/* Hardware counters around a step (run.h): every live agent is asked for
 * its device port's counters before the step and after its reports; the
 * step's facts get the change.  Only for a plan that asserts hw_counters
 * (qplab_plan_uses_hwc): other runs send no extra request. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/jread.h"
#include "run.h"

enum { DL_COUNTERS = 5000 };

/* One agent's "hw_counters" object into c; 0, or -1 with the reason. */
static int decode(const struct qplab_agent_msg *m, struct qplab_hwc *c, char *err, size_t errlen)
{
	struct jread r = {.what = "agent reply", .err = err, .errlen = errlen};
	json_object *o;
	int64_t v;

	c->n = 0;
	if (!m->ok || strcmp(m->code, "OK")) {
		snprintf(err, errlen, "%s", m->error[0] ? m->error : m->code);
		return -1;
	}
	if (jread_object(&r, m->body, "hw_counters", &o) != JREAD_OK) {
		if (!r.errors)
			snprintf(err, errlen, "the agent sent no hw_counters");
		return -1;
	}
	json_object_object_foreach(o, name, val) {
		(void)val;
		if (c->n == QPLAB_HWC_MAX)
			break;
		if (jread_int64(&r, o, name, 0, INT64_MAX, &v) != JREAD_OK)
			return -1;
		snprintf(c->c[c->n].name, sizeof(c->c[c->n].name), "%s", name);
		c->c[c->n++].value = (uint64_t)v;
	}
	return 0;
}

void run_hwc_read(struct run_state *s, struct run_hwc_reading *rd)
{
	int ids[QPLAB_MAX_HOSTS];

	for (size_t h = 0; h < s->p->nhosts; h++) {
		rd->ok[h] = 0;
		ids[h] = -1;
		snprintf(rd->error[h], sizeof(rd->error[h]), "agent %s is not running", s->ag[h].name);
		if (!s->ag[h].pid)
			continue;
		ids[h] = s->ag[h].next_id++;
		if (run_agent_send(&s->ag[h], qplab_agent_req_counters(ids[h]))) {
			snprintf(rd->error[h], sizeof(rd->error[h]), "agent %s: cannot write its request",
				 s->ag[h].name);
			ids[h] = -1;
		}
	}
	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct qplab_agent_msg m;

		if (ids[h] < 0)
			continue;
		if (run_agent_wait(&s->ag[h], ids[h], (int)qplab_scaled_ms(DL_COUNTERS, run_mult()), &m,
				   rd->error[h], sizeof(rd->error[h])))
			continue;
		rd->ok[h] = decode(&m, &rd->c[h], rd->error[h], sizeof(rd->error[h])) == 0;
		qplab_agent_msg_free(&m);
	}
}

void run_hwc_delta(struct run_state *s, int si, const struct run_hwc_reading *before)
{
	struct run_hwc_reading after;

	run_hwc_read(s, &after);
	for (size_t h = 0; h < s->p->nhosts; h++) {
		struct qplab_facts *f = qplab_facts_at(s->facts, si, (int)h);
		const char *why = !before->ok[h] ? before->error[h] : !after.ok[h] ? after.error[h] : NULL;

		if (!f)
			continue;
		if (why) {
			f->nhwc = -1;
			snprintf(f->hwc_error, sizeof(f->hwc_error), "%s", why);
			continue;
		}
		f->nhwc = 0;
		for (int i = 0; i < after.c[h].n && f->nhwc < QPLAB_FACT_MAX_HWC; i++) {
			int64_t was = qplab_hwc_get(&before->c[h], after.c[h].c[i].name);

			/* A counter only after (a device added): no change known. */
			if (was < 0)
				continue;
			snprintf(f->hwc[f->nhwc].name, sizeof(f->hwc[f->nhwc].name), "%s",
				 after.c[h].c[i].name);
			f->hwc[f->nhwc++].delta = (long)((int64_t)after.c[h].c[i].value - was);
		}
	}
}
