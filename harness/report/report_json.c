/*
 * The result model (json-c objects) and results.json: building it from the
 * runner's structs, loading, merging runs of several kernels, saving.
 * docs/results.md is the schema; keep the two in step.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/jread.h"
#include "qphs/error.h"
#include "report.h"

const char *qplab_status_name(enum qplab_status s)
{
	static const char *const names[] = {"pass", "fail", "skip", "error"};

	return (unsigned)s < 4 ? names[s] : "error";
}

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *word_or_null(const char *s)
{
	return s[0] ? json_object_new_string(s) : NULL;
}

static json_object *num_or_null(long v)
{
	return v >= 0 ? json_object_new_int64(v) : NULL;
}

static bool facts_empty(const struct qplab_facts *f)
{
	struct qplab_facts blank;

	qplab_facts_init(&blank);
	return !memcmp(f, &blank, sizeof(blank));
}

/* Every fact of one host; a fact not collected is null. */
/* ms to 0.01 ms, as the agent dates them. */
static json_object *fine_ms(double ms)
{
	char s[40];

	snprintf(s, sizeof(s), "%.2f", ms);
	return json_object_new_double_s(ms, s);
}

/* The last setup's phases in the steps' time base; null: not collected. */
static json_object *events_json(const struct qplab_facts *f)
{
	json_object *evs;

	if (f->nevents < 0)
		return NULL;
	evs = json_object_new_array();
	for (int i = 0; i < f->nevents && i < QPLAB_FACT_MAX_EVENTS; i++) {
		json_object *ev = json_object_new_object();
		bool own = !strcmp(f->events[i].what, "reset") || !strcmp(f->events[i].what, "init") ||
			   !strcmp(f->events[i].what, "rtr") || !strcmp(f->events[i].what, "rts");

		json_object_object_add(ev, "what", json_object_new_string(f->events[i].what));
		json_object_object_add(ev, "start_ms", fine_ms(f->events[i].start_ms));
		json_object_object_add(ev, "end_ms", fine_ms(f->events[i].end_ms));
		/* A transition is the host's own; the rest go to the peer. */
		json_object_object_add(ev, "peer", own || !f->events_peer[0]
							   ? NULL : json_object_new_string(f->events_peer));
		json_object_array_add(evs, ev);
	}
	return evs;
}

/* The datapath's per-QP results, null when not collected. */
static json_object *dp_qps_json(const struct qplab_facts *f)
{
	json_object *arr;

	if (f->dp_nqp < 0)
		return NULL;
	arr = json_object_new_array();
	for (int i = 0; i < f->dp_nqp; i++) {
		const struct qplab_dp_qp *q = &f->dp_qps[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "index", json_object_new_int(i));
		json_object_object_add(o, "qpn", num_or_null(q->qpn));
		json_object_object_add(o, "peer_qpn", num_or_null(q->peer_qpn));
		json_object_object_add(o, "datapath", word_or_null(q->result));
		json_object_object_add(o, "write_wc", word_or_null(q->write_wc));
		json_object_object_add(o, "read_wc", word_or_null(q->read_wc));
		json_object_object_add(o, "ms", num_or_null(q->ms));
		json_object_array_add(arr, o);
	}
	return arr;
}

static json_object *facts_json(const struct qplab_facts *f)
{
	json_object *o = json_object_new_object(), *qps = NULL, *times = json_object_new_object();

	if (f->nqp >= 0) {
		qps = json_object_new_array();
		for (int i = 0; i < f->nqp && i < QPLAB_FACT_MAX_QPS; i++)
			json_object_array_add(qps, json_object_new_string(f->qp_states[i]));
	}
	for (int t = 0; t < QPLAB_TIME_COUNT; t++)
		json_object_object_add(times, qplab_timing_name(t), num_or_null(f->time_ms[t]));
	json_object_object_add(o, "endpoint", word_or_null(f->endpoint));
	json_object_object_add(o, "endpoints", num_or_null(f->endpoints));
	json_object_object_add(o, "qp_count", num_or_null(f->nqp));
	json_object_object_add(o, "qp_states", qps);
	json_object_object_add(o, "code", word_or_null(f->code));
	json_object_object_add(o, "reply_msg_sent", str_or_null(f->reply_sent));
	json_object_object_add(o, "reply_msg_received", str_or_null(f->reply_received));
	json_object_object_add(o, "error_text", str_or_null(f->error_text));
	json_object_object_add(o, "datapath", word_or_null(f->datapath));
	json_object_object_add(o, "wc_status", word_or_null(f->wc_status));
	json_object_object_add(o, "wc_waited_ms", num_or_null(f->wc_waited_ms));
	json_object_object_add(o, "datapath_qps", dp_qps_json(f));
	json_object_object_add(o, "datapath_failed_qp",
			       f->dp_failed_qp == -1 ? NULL
			       : f->dp_failed_qp == QPLAB_NO_FAILED_QP ? json_object_new_string("none")
			       : json_object_new_int(f->dp_failed_qp));
	json_object_object_add(o, "time_ms", times);
	json_object_object_add(o, "gid_index", num_or_null(f->gid_index));
	json_object_object_add(o, "gid_reason", str_or_null(f->gid_reason));
	json_object_object_add(o, "path_mtu", num_or_null(f->path_mtu));
	json_object_object_add(o, "peer_path_mtu", num_or_null(f->peer_path_mtu));
	json_object_object_add(o, "peer_ready_ack", f->peer_ready_ack < 0 ? NULL :
			       json_object_new_boolean(f->peer_ready_ack));
	json_object_object_add(o, "warning", str_or_null(f->warning));
	json_object_object_add(o, "log", str_or_null(f->log));
	json_object_object_add(o, "datapath_restored", f->datapath_restored < 0 ? NULL :
			       json_object_new_boolean(f->datapath_restored));
	json_object_object_add(o, "datapath_peer_checksum", f->datapath_peer_checksum < 0 ? NULL :
			       json_object_new_boolean(f->datapath_peer_checksum));
	json_object_object_add(o, "daemon_alive",
			       f->daemon_alive < 0 ? NULL : json_object_new_boolean(f->daemon_alive));
	json_object_object_add(o, "leftover_qps", num_or_null(f->leftover_qps));
	json_object_object_add(o, "leftover_objects", num_or_null(f->leftover_objects));
	json_object_object_add(o, "frame_outcome", word_or_null(f->frame_outcome));
	json_object_object_add(o, "events", events_json(f));
	if (f->nhwc >= 0) {
		json_object *c = json_object_new_object();

		for (int i = 0; i < f->nhwc && i < QPLAB_FACT_MAX_HWC; i++)
			json_object_object_add(c, f->hwc[i].name, json_object_new_int64(f->hwc[i].delta));
		json_object_object_add(o, "hw_counters", c);
	} else {
		json_object_object_add(o, "hw_counters", NULL);
	}
	return o;
}

/* The hosts a step acts on, the one it hits first: a fault's host (then
 * the peer it blackholes), a connect's from then to, every host of a
 * connect_both. */
static json_object *acts_on(const struct qplab_plan *plan, const struct qplab_step *st)
{
	json_object *arr = json_object_new_array();
	int who[4 + QPLAB_MAX_HOSTS] = {st->host, st->from, st->to, st->peer};
	size_t n = 4;

	for (size_t k = 0; k < st->nhosts && k < QPLAB_MAX_HOSTS; k++)
		who[n++] = st->hosts[k];
	for (size_t i = 0; i < n; i++) {
		bool dup = who[i] < 0 || (size_t)who[i] >= plan->nhosts;

		for (size_t j = 0; j < i && !dup; j++)
			dup = who[j] == who[i];
		if (!dup)
			json_object_array_add(arr, json_object_new_string(plan->hosts[who[i]].name));
	}
	return arr;
}

static json_object *step_time(const struct qplab_scenario_facts *sf, const long *t, size_t s)
{
	return sf && t && s < sf->nsteps ? num_or_null(t[s]) : NULL;
}

static json_object *steps_json(const struct qplab_plan *plan, const struct qplab_scenario_facts *sf)
{
	json_object *arr = json_object_new_array();

	for (size_t s = 0; s < plan->nsteps; s++) {
		const struct qplab_step *st = &plan->steps[s];
		json_object *o = json_object_new_object(), *hosts = json_object_new_object();
		for (size_t h = 0; sf && h < plan->nhosts; h++) {
			const struct qplab_facts *f = qplab_facts_at(sf, (int)s, (int)h);
			if (f && !facts_empty(f))
				json_object_object_add(hosts, plan->hosts[h].name, facts_json(f));
		}
		json_object_object_add(o, "index", json_object_new_int((int)s));
		json_object_object_add(o, "name", word_or_null(st->name));
		json_object_object_add(o, "do", json_object_new_string(qplab_step_kind_name(st->kind)));
		json_object_object_add(o, "line", json_object_new_int(st->line));
		json_object_object_add(o, "on", acts_on(plan, st));
		json_object_object_add(o, "started_ms", step_time(sf, sf ? sf->step_started_ms : NULL, s));
		json_object_object_add(o, "ended_ms", step_time(sf, sf ? sf->step_ended_ms : NULL, s));
		json_object_object_add(o, "hosts", hosts);
		json_object_array_add(arr, o);
	}
	return arr;
}

static json_object *host_verdict_json(const struct qplab_plan *plan, const struct qplab_host_verdict *hv)
{
	json_object *o = json_object_new_object(), *checks = json_object_new_array();

	for (size_t c = 0; c < hv->nchecks; c++) {
		json_object *k = json_object_new_object();
		json_object_object_add(k, "what", json_object_new_string(hv->checks[c].what));
		json_object_object_add(k, "expected", json_object_new_string(hv->checks[c].expected));
		json_object_object_add(k, "observed", json_object_new_string(hv->checks[c].observed));
		json_object_object_add(k, "ok", json_object_new_boolean(hv->checks[c].ok));
		json_object_array_add(checks, k);
	}
	json_object_object_add(o, "host", json_object_new_string(plan->hosts[hv->host].name));
	json_object_object_add(o, "ok", json_object_new_boolean(hv->ok));
	json_object_object_add(o, "keyed", json_object_new_boolean(hv->keyed));
	json_object_object_add(o, "key", hv->row ? str_or_null(hv->row->when_text) : NULL);
	json_object_object_add(o, "why", hv->row ? str_or_null(hv->row->why) : NULL);
	json_object_object_add(o, "key_line", hv->row ? json_object_new_int(hv->row->line) : NULL);
	json_object_object_add(o, "checks", checks);
	return o;
}

static json_object *verdicts_json(const struct qplab_plan *plan, const struct qplab_verdict *v)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; v && i < plan->nexpect; i++) {
		const struct qplab_expectation *e = v[i].exp;
		json_object *o = json_object_new_object(), *hosts = json_object_new_array();
		for (size_t h = 0; h < v[i].nhosts; h++)
			json_object_array_add(hosts, host_verdict_json(plan, &v[i].hosts[h]));
		json_object_object_add(o, "line", json_object_new_int(e->line));
		json_object_object_add(o, "label", str_or_null(e->label));
		json_object_object_add(o, "step",
				       e->step >= 0 ? word_or_null(plan->steps[e->step].name) : NULL);
		json_object_object_add(o, "ok", json_object_new_boolean(v[i].ok));
		json_object_object_add(o, "hosts", hosts);
		json_object_array_add(arr, o);
	}
	return arr;
}

static json_object *name_array(char (*names)[QPLAB_NAME_MAX], size_t n)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, json_object_new_string(names[i]));
	return arr;
}

json_object *qplab_result_json(const struct qplab_scenario_result *r)
{
	const struct qplab_plan *p = r->plan;
	json_object *o = json_object_new_object(), *hosts = json_object_new_object();
	char name[sizeof(p->id) + 32];

	if (!o || !hosts) {
		json_object_put(o);
		json_object_put(hosts);
		return NULL;
	}
	snprintf(name, sizeof(name), "%s%s", p->id, r->kernel_tag ? r->kernel_tag : "");
	for (size_t h = 0; h < p->nhosts; h++)
		json_object_object_add(hosts, p->hosts[h].name,
				       r->facts ? facts_json(&r->facts->final[h]) : NULL);
	json_object_object_add(o, "id", json_object_new_string(p->id));
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "file", str_or_null(p->file));
	json_object_object_add(o, "description", str_or_null(p->description));
	json_object_object_add(o, "source", str_or_null(p->source));
	json_object_object_add(o, "tags", name_array(p->tags, p->ntags));
	json_object_object_add(o, "status", json_object_new_string(qplab_status_name(r->status)));
	json_object_object_add(o, "reason", str_or_null(r->reason));
	json_object_object_add(o, "elapsed_ms", json_object_new_int64((int64_t)(r->elapsed_s * 1000.0)));
	json_object_object_add(o, "hosts", hosts);
	json_object_object_add(o, "steps", steps_json(p, r->facts));
	json_object_object_add(o, "expectations", verdicts_json(p, r->verdicts));
	return o;
}

static void now_iso(char *out, size_t outlen)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, outlen, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

json_object *qplab_results_run(const struct qplab_runinfo *info, const char *started)
{
	json_object *o = json_object_new_object(), *caps = json_object_new_array();
	json_object *summary = json_object_new_object();
	char now[32];

	if (!started) {
		now_iso(now, sizeof(now));
		started = now;
	}
	for (size_t i = 0; info->caps && info->caps[i]; i++)
		json_object_array_add(caps, json_object_new_string(info->caps[i]));
	for (int s = 0; s < 4; s++)
		json_object_object_add(summary, qplab_status_name((enum qplab_status)s),
				       json_object_new_int(0));
	json_object_object_add(summary, "total", json_object_new_int(0));
	json_object_object_add(o, "started", json_object_new_string(started));
	json_object_object_add(o, "backend", str_or_null(info->backend));
	json_object_object_add(o, "kernel", str_or_null(info->kernel));
	json_object_object_add(o, "driver", str_or_null(info->driver));
	json_object_object_add(o, "capabilities", caps);
	json_object_object_add(o, "quirk", info->quirk && info->quirk[0] ? json_object_new_string(info->quirk) : NULL);
	json_object_object_add(o, "time_multiplier",
			       json_object_new_double(info->time_multiplier > 0 ? info->time_multiplier : 1.0));
	json_object_object_add(o, "elapsed_ms", json_object_new_int64(0));
	json_object_object_add(o, "summary", summary);
	json_object_object_add(o, "scenarios", json_object_new_array());
	return o;
}

static void bump(json_object *summary, const char *key)
{
	struct jread r = {0};
	json_object *v;
	int64_t n;

	if (jread_value(&r, summary, key, json_type_int, &v) == JREAD_OK &&
	    jread_int64(&r, summary, key, 0, INT64_MAX - 1, &n) == JREAD_OK)
		json_object_set_int64(v, n + 1);
}

int qplab_results_run_add(json_object *run, json_object *scenario)
{
	json_object *arr = jread_array_or_null(run, "scenarios");
	json_object *summary = jread_object_or_null(run, "summary");
	const char *status = jread_str_or(scenario, "status", NULL);

	if (!arr || !summary || !status)
		return QPHS_ERR_INVALID_ARGUMENT;
	if (json_object_array_add(arr, json_object_get(scenario)) < 0) {
		json_object_put(scenario);
		return QPHS_ERR_MEMORY;
	}
	bump(summary, status);
	bump(summary, "total");
	return 0;
}

static int by_id(const void *a, const void *b)
{
	json_object *const *x = a, *const *y = b;

	return strcmp(jread_str_or(*x, "id", ""), jread_str_or(*y, "id", ""));
}

/* Scenarios in catalogue order (sorted by id), whatever order they ran or
 * finished in (run_order.c groups them by topology, --jobs interleaves). */
void qplab_results_run_finish(json_object *run, double elapsed_s)
{
	json_object *arr = jread_array_or_null(run, "scenarios");

	if (arr)
		json_object_array_sort(arr, by_id);
	json_object_object_add(run, "elapsed_ms", json_object_new_int64((int64_t)(elapsed_s * 1000.0)));
}

json_object *qplab_results_doc(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "schema_version", json_object_new_int(QPLAB_RESULTS_SCHEMA_VERSION));
	json_object_object_add(o, "runs", json_object_new_array());
	return o;
}

int qplab_results_add_run(json_object *doc, json_object *run)
{
	json_object *runs = jread_array_or_null(doc, "runs");

	if (!runs)
		return QPHS_ERR_INVALID_ARGUMENT;
	if (json_object_array_add(runs, json_object_get(run)) < 0) {
		json_object_put(run);
		return QPHS_ERR_MEMORY;
	}
	return 0;
}

int qplab_results_load(const char *path, json_object **doc, char *err, size_t errlen)
{
	struct jread r = {.what = path, .err = err, .errlen = errlen};
	json_object *o, *runs;
	int version = 0;

	*doc = NULL;
	if (jread_parse_file(&r, path, &o) != JREAD_OK)
		return QPHS_ERR_MALFORMED_JSON;
	if (jread_int(&r, o, "schema_version", INT_MIN, INT_MAX, &version) != JREAD_OK ||
	    version != QPLAB_RESULTS_SCHEMA_VERSION || jread_array(&r, o, "runs", &runs) != JREAD_OK) {
		snprintf(err, errlen, "%s: not a qplab results file of schema_version %d", path,
			 QPLAB_RESULTS_SCHEMA_VERSION);
		json_object_put(o);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	*doc = o;
	return 0;
}

int qplab_results_merge(json_object *dst, json_object *src)
{
	json_object *runs = jread_array_or_null(src, "runs"), *run;

	if (!runs)
		return QPHS_ERR_INVALID_ARGUMENT;
	for (size_t i = 0; i < json_object_array_length(runs); i++) {
		int rc = (run = jread_object_at(runs, i)) ? qplab_results_add_run(dst, run)
							  : QPHS_ERR_INVALID_ARGUMENT;
		if (rc < 0)
			return rc;
	}
	return 0;
}

int qplab_results_save(const char *path, json_object *doc)
{
	char tmp[4096];
	const char *text;
	FILE *f;
	int ok;

	if (qplab_json_utf8_repair(doc) < 0) {
		errno = ENOMEM;
		return QPHS_ERR_MEMORY;
	}
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							   JSON_C_TO_STRING_NOSLASHESCAPE);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return QPHS_ERR_INVALID_ARGUMENT;
	ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path) != 0) {
		int saved = errno;
		unlink(tmp);
		errno = saved;
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	return 0;
}

int qplab_report_mkdir(const char *dir)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return QPHS_ERR_INVALID_ARGUMENT;
		*s = '/';
	}
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		return QPHS_ERR_INVALID_ARGUMENT;
	return 0;
}
