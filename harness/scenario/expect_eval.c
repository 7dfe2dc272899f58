/* Facts containers, keyed-row choice and the evaluation of a whole plan. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "qphs/error.h"

void qplab_facts_init(struct qplab_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->endpoints = f->nqp = -1;
	f->wc_waited_ms = -1;
	for (int t = 0; t < QPLAB_TIME_COUNT; t++)
		f->time_ms[t] = -1;
	f->gid_index = f->path_mtu = f->peer_path_mtu = f->daemon_alive = -1;
	f->peer_ready_ack = -1;
	f->datapath_restored = f->datapath_peer_checksum = -1;
	f->dp_nqp = f->dp_failed_qp = -1;
	f->leftover_qps = f->leftover_objects = -1;
	f->nevents = -1;
	f->nhwc = -1;
}

long qplab_facts_hwc(const struct qplab_facts *f, const char *name)
{
	for (int i = 0; i < f->nhwc; i++)
		if (!strcmp(f->hwc[i].name, name))
			return f->hwc[i].delta;
	return LONG_MIN;
}

bool qplab_plan_uses_hwc(const struct qplab_plan *plan)
{
	for (size_t i = 0; i < plan->nexpect; i++) {
		const struct qplab_expectation *e = &plan->expect[i];

		if (e->a.nhwc)
			return true;
		for (size_t r = 0; r < e->ncases; r++)
			if (e->cases[r].a.nhwc)
				return true;
	}
	return false;
}

void qplab_facts_free(struct qplab_facts *f)
{
	free(f->reply_sent);
	free(f->reply_received);
	free(f->error_text);
	free(f->gid_reason);
	free(f->warning);
	free(f->log);
	qplab_facts_init(f);
}

int qplab_facts_set(char **dst, const char *s)
{
	char *copy = NULL;

	if (s) {
		copy = malloc(strlen(s) + 1);
		if (!copy)
			return QPHS_ERR_MEMORY;
		memcpy(copy, s, strlen(s) + 1);
	}
	free(*dst);
	*dst = copy;
	return 0;
}

int qplab_scenario_facts_init(struct qplab_scenario_facts *sf, size_t nhosts, size_t nsteps)
{
	memset(sf, 0, sizeof(*sf));
	sf->final = calloc(nhosts ? nhosts : 1, sizeof(*sf->final));
	sf->steps = calloc(nhosts * nsteps + 1, sizeof(*sf->steps));
	sf->step_started_ms = calloc(nsteps + 1, sizeof(*sf->step_started_ms));
	sf->step_ended_ms = calloc(nsteps + 1, sizeof(*sf->step_ended_ms));
	if (!sf->final || !sf->steps || !sf->step_started_ms || !sf->step_ended_ms) {
		free(sf->final);
		free(sf->steps);
		free(sf->step_started_ms);
		free(sf->step_ended_ms);
		memset(sf, 0, sizeof(*sf));
		return QPHS_ERR_MEMORY;
	}
	sf->nhosts = nhosts;
	sf->nsteps = nsteps;
	for (size_t i = 0; i < nhosts; i++)
		qplab_facts_init(&sf->final[i]);
	for (size_t i = 0; i < nhosts * nsteps; i++)
		qplab_facts_init(&sf->steps[i]);
	for (size_t i = 0; i < nsteps; i++)
		sf->step_started_ms[i] = sf->step_ended_ms[i] = -1;
	sf->steps_t0_ms = -1;
	return 0;
}

void qplab_scenario_facts_free(struct qplab_scenario_facts *sf)
{
	for (size_t i = 0; sf->final && i < sf->nhosts; i++)
		qplab_facts_free(&sf->final[i]);
	for (size_t i = 0; sf->steps && i < sf->nhosts * sf->nsteps; i++)
		qplab_facts_free(&sf->steps[i]);
	free(sf->final);
	free(sf->steps);
	free(sf->step_started_ms);
	free(sf->step_ended_ms);
	memset(sf, 0, sizeof(*sf));
}

struct qplab_facts *qplab_facts_at(const struct qplab_scenario_facts *sf, int step, int host)
{
	if (host < 0 || (size_t)host >= sf->nhosts || step < -1 || (step >= 0 && (size_t)step >= sf->nsteps))
		return NULL;
	return step < 0 ? &sf->final[host] : &sf->steps[(size_t)step * sf->nhosts + (size_t)host];
}

int qplab_kernel_cmp(const char *release, const int v[3])
{
	int r[3] = {0, 0, 0};

	if (!release || sscanf(release, "%d.%d.%d", &r[0], &r[1], &r[2]) < 2)
		return -2;
	for (int i = 0; i < 3; i++)
		if (r[i] != v[i])
			return r[i] < v[i] ? -1 : 1;
	return 0;
}

static bool has_cap(const struct qplab_runinfo *run, const char *name)
{
	for (size_t i = 0; run->caps && run->caps[i]; i++)
		if (!strcmp(run->caps[i], name))
			return true;
	return false;
}

static const char *host_kernel(const struct qplab_runinfo *run, int host)
{
	if (host >= 0 && host < QPLAB_MAX_HOSTS && run->host_kernel[host])
		return run->host_kernel[host];
	return run->kernel;
}

static bool term_holds(const struct qplab_when *w, const struct qplab_runinfo *run,
		       const struct qplab_plan *plan, int host, const char *quirk)
{
	int cmp;

	switch (w->kind) {
	case QPLAB_WHEN_CAP:
		return has_cap(run, w->name);
	case QPLAB_WHEN_NOT_CAP:
		return !has_cap(run, w->name);
	case QPLAB_WHEN_KERNEL:
		cmp = qplab_kernel_cmp(host_kernel(run, host), w->version);
		if (cmp == -2)
			return false;
		if (!strcmp(w->op, ">="))
			return cmp >= 0;
		if (!strcmp(w->op, ">"))
			return cmp > 0;
		if (!strcmp(w->op, "<="))
			return cmp <= 0;
		return cmp < 0;
	case QPLAB_WHEN_QUIRK:
		/* "quirk=none" is the real driver, no profile. */
		return !strcmp(w->name, quirk[0] ? quirk : "none");
	case QPLAB_WHEN_DRIVER:
		return run->driver && !strcmp(run->driver, w->name);
	case QPLAB_WHEN_IMPL:
		host = w->host >= 0 ? w->host : host;
		return host >= 0 && (size_t)host < plan->nhosts &&
		       !strcmp(plan->hosts[host].impl[0] ? plan->hosts[host].impl : "qplab", w->name);
	case QPLAB_WHEN_OTHERWISE:
		return true;
	}
	return false;
}

const struct qplab_case *qplab_expect_row(const struct qplab_expectation *e,
					  const struct qplab_runinfo *run,
					  const struct qplab_plan *plan, int host)
{
	const char *host_quirk = plan->hosts[host].agent.quirk;
	const char *quirk = run->quirk && run->quirk[0] ? run->quirk : host_quirk;

	for (size_t i = 0; i < e->ncases; i++) {
		bool all = true;
		for (size_t t = 0; all && t < e->cases[i].nterms; t++)
			all = term_holds(&e->cases[i].terms[t], run, plan, host, quirk);
		if (all && e->cases[i].nterms > 0)
			return &e->cases[i];
	}
	return NULL;
}

static int eval_host(const struct qplab_plan *plan, const struct qplab_expectation *e, int host,
		     const struct qplab_runinfo *run, const struct qplab_scenario_facts *facts,
		     struct qplab_host_verdict *hv)
{
	const struct qplab_assert *a = &e->a;
	const struct qplab_facts *f = facts ? qplab_facts_at(facts, e->step, host) : NULL;
	struct qplab_facts none;

	hv->host = host;
	hv->keyed = e->ncases > 0;
	if (hv->keyed) {
		hv->row = qplab_expect_row(e, run, plan, host);
		if (!hv->row) {
			hv->checks = calloc(1, sizeof(*hv->checks));
			if (!hv->checks)
				return QPHS_ERR_MEMORY;
			hv->nchecks = 1;
			snprintf(hv->checks[0].what, sizeof(hv->checks[0].what), "row");
			snprintf(hv->checks[0].expected, sizeof(hv->checks[0].expected),
				 "a row for this run");
			snprintf(hv->checks[0].observed, sizeof(hv->checks[0].observed),
				 "none applies (kernel %s, driver %s)",
				 host_kernel(run, host) ? host_kernel(run, host) : "?",
				 run->driver ? run->driver : "?");
			hv->ok = false;
			return 0;
		}
		a = &hv->row->a;
	}
	if (!f) {
		qplab_facts_init(&none);
		f = &none;
	}
	hv->ok = qplab_assert_eval(a, f, run->time_multiplier, &hv->checks, &hv->nchecks);
	return 0;
}

int qplab_expect_eval(const struct qplab_plan *plan, const struct qplab_runinfo *run,
		      const struct qplab_scenario_facts *facts, struct qplab_verdict **out)
{
	struct qplab_verdict *v = calloc(plan->nexpect ? plan->nexpect : 1, sizeof(*v));
	int failed = 0;

	*out = NULL;
	if (!v)
		return QPHS_ERR_MEMORY;
	for (size_t i = 0; i < plan->nexpect; i++) {
		const struct qplab_expectation *e = &plan->expect[i];
		v[i].exp = e;
		v[i].ok = true;
		for (size_t h = 0; h < e->nhosts; h++) {
			struct qplab_host_verdict *hv = &v[i].hosts[v[i].nhosts++];
			if (eval_host(plan, e, e->hosts[h], run, facts, hv) < 0) {
				qplab_verdicts_free(v, plan->nexpect);
				return QPHS_ERR_MEMORY;
			}
			v[i].ok &= hv->ok;
		}
		failed += !v[i].ok;
	}
	*out = v;
	return failed;
}

void qplab_verdicts_free(struct qplab_verdict *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		for (size_t h = 0; h < v[i].nhosts; h++)
			free(v[i].hosts[h].checks);
	free(v);
}
