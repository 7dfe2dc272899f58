/*
 * Expectations over facts.  Each assertion of a block becomes one check
 * with its expected and observed value in words, so a failure's diagnostic
 * says exactly what differed on which host.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "qphs/error.h"

struct checks {
	struct qplab_check *v;
	size_t n, cap;
	bool ok;
	bool keep; /* false: only the verdict is wanted */
	struct qplab_check scratch; /* written to when !keep or out of memory */
};

static struct qplab_check *add(struct checks *c, const char *what, bool ok)
{
	c->ok &= ok;
	if (!c->keep)
		return &c->scratch;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct qplab_check *n = realloc(c->v, cap * sizeof(*n));
		if (!n)
			return &c->scratch;
		c->v = n;
		c->cap = cap;
	}
	struct qplab_check *k = &c->v[c->n++];
	memset(k, 0, sizeof(*k));
	snprintf(k->what, sizeof(k->what), "%s", what);
	k->ok = ok;
	return k;
}

/* Quotes s for a diagnostic: "text", with control characters escaped and
 * long texts cut (the JSON results keep the whole of it). */
static void quote(char *out, size_t outlen, const char *s)
{
	size_t n = 0;

	if (!s) {
		snprintf(out, outlen, "(not collected)");
		return;
	}
	out[n++] = '"';
	for (; *s && n + 8 < outlen; s++) {
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\')
			n += (size_t)snprintf(out + n, outlen - n, "\\x%02x", (unsigned char)*s);
		else
			out[n++] = *s;
	}
	if (*s)
		n += (size_t)snprintf(out + n, outlen - n, "...");
	snprintf(out + n, outlen - n, "\"");
}

static void word_check(struct checks *c, const char *what, const char *want, const char *got)
{
	if (!want[0])
		return;
	struct qplab_check *k = add(c, what, got[0] && !strcmp(want, got));
	snprintf(k->expected, sizeof(k->expected), "%s", want);
	snprintf(k->observed, sizeof(k->observed), "%s", got[0] ? got : "(not collected)");
}

static void int_check(struct checks *c, const char *what, int want, int got)
{
	if (want < 0)
		return;
	struct qplab_check *k = add(c, what, got == want);
	snprintf(k->expected, sizeof(k->expected), "%d", want);
	if (got < 0)
		snprintf(k->observed, sizeof(k->observed), "(not collected)");
	else
		snprintf(k->observed, sizeof(k->observed), "%d", got);
}

static void qp_list(char *out, size_t outlen, const struct qplab_facts *f)
{
	size_t n = 0;

	if (f->nqp < 0) {
		snprintf(out, outlen, "(not collected)");
		return;
	}
	if (f->nqp == 0) {
		snprintf(out, outlen, "no QPs");
		return;
	}
	out[0] = '\0';
	for (int i = 0; i < f->nqp && i < QPLAB_FACT_MAX_QPS && n + 12 < outlen; i++)
		n += (size_t)snprintf(out + n, outlen - n, "%s%s", i ? "," : "", f->qp_states[i]);
	if (f->nqp > QPLAB_FACT_MAX_QPS || n + 12 >= outlen)
		snprintf(out + n, outlen - n, ",... (%d QPs)", f->nqp);
}

static void qp_checks(struct checks *c, const struct qplab_assert *a, const struct qplab_facts *f)
{
	bool ok = f->nqp > 0;

	if (a->qp_all[0]) {
		for (int i = 0; ok && i < f->nqp && i < QPLAB_FACT_MAX_QPS; i++)
			ok = !strcmp(f->qp_states[i], a->qp_all);
		struct qplab_check *k = add(c, "qp_states", ok);
		snprintf(k->expected, sizeof(k->expected), "all %s", a->qp_all);
		qp_list(k->observed, sizeof(k->observed), f);
	}
	if (a->nqp_each >= 0) {
		ok = f->nqp == a->nqp_each;
		for (int i = 0; ok && i < f->nqp && i < QPLAB_FACT_MAX_QPS; i++)
			ok = !strcmp(f->qp_states[i], a->qp_each[i]);
		struct qplab_check *k = add(c, "qp_states", ok);
		size_t n = 0;
		k->expected[0] = '\0';
		for (int i = 0; i < a->nqp_each && n + 12 < sizeof(k->expected); i++)
			n += (size_t)snprintf(k->expected + n, sizeof(k->expected) - n, "%s%s",
					      i ? "," : "", a->qp_each[i]);
		if (a->nqp_each == 0)
			snprintf(k->expected, sizeof(k->expected), "no QPs");
		qp_list(k->observed, sizeof(k->observed), f);
	}
	if (a->qp_count >= 0)
		int_check(c, "qp_count", a->qp_count, f->nqp);
	if (a->qp_count_min >= 0 && a->qp_count_max >= 0) {
		struct qplab_check *k = add(c, "qp_count", f->nqp >= a->qp_count_min && f->nqp <= a->qp_count_max);

		snprintf(k->expected, sizeof(k->expected), "%d..%d", a->qp_count_min, a->qp_count_max);
		if (f->nqp < 0)
			snprintf(k->observed, sizeof(k->observed), "(not collected)");
		else
			snprintf(k->observed, sizeof(k->observed), "%d", f->nqp);
	}
}

static void dp_list(char *out, size_t outlen, const struct qplab_facts *f)
{
	size_t n = 0;

	if (f->dp_nqp < 0) {
		snprintf(out, outlen, "(not collected)");
		return;
	}
	if (f->dp_nqp == 0) {
		snprintf(out, outlen, "no QPs");
		return;
	}
	out[0] = '\0';
	for (int i = 0; i < f->dp_nqp && n + 24 < outlen; i++)
		n += (size_t)snprintf(out + n, outlen - n, "%s%s", i ? "," : "", f->dp_qps[i].result);
	if (n + 24 >= outlen)
		snprintf(out + n, outlen - n, ",... (%d QPs)", f->dp_nqp);
}

/* The datapath's per-QP results: all one word, or exactly a list; their
 * count; the first that failed. */
static void dp_checks(struct checks *c, const struct qplab_assert *a, const struct qplab_facts *f)
{
	struct qplab_check *k;
	bool ok;

	if (a->dp_all[0]) {
		ok = f->dp_nqp > 0;
		for (int i = 0; ok && i < f->dp_nqp; i++)
			ok = !strcmp(f->dp_qps[i].result, a->dp_all);
		k = add(c, "datapath_qps", ok);
		snprintf(k->expected, sizeof(k->expected), "all %s", a->dp_all);
		dp_list(k->observed, sizeof(k->observed), f);
	}
	if (a->ndp_each >= 0) {
		size_t n = 0;

		ok = f->dp_nqp == a->ndp_each;
		for (int i = 0; ok && i < f->dp_nqp; i++)
			ok = !strcmp(f->dp_qps[i].result, a->dp_each[i]);
		k = add(c, "datapath_qps", ok);
		k->expected[0] = '\0';
		for (int i = 0; i < a->ndp_each && n + 24 < sizeof(k->expected); i++)
			n += (size_t)snprintf(k->expected + n, sizeof(k->expected) - n, "%s%s",
					      i ? "," : "", a->dp_each[i]);
		if (a->ndp_each == 0)
			snprintf(k->expected, sizeof(k->expected), "no QPs");
		dp_list(k->observed, sizeof(k->observed), f);
	}
	int_check(c, "datapath_qp_count", a->dp_qp_count, f->dp_nqp);
	if (a->dp_failed_qp == -1)
		return;
	k = add(c, "datapath_failed_qp", f->dp_failed_qp == a->dp_failed_qp);
	if (a->dp_failed_qp == QPLAB_NO_FAILED_QP)
		snprintf(k->expected, sizeof(k->expected), "none");
	else
		snprintf(k->expected, sizeof(k->expected), "QP %d", a->dp_failed_qp);
	if (f->dp_failed_qp == -1)
		snprintf(k->observed, sizeof(k->observed), "(not collected)");
	else if (f->dp_failed_qp == QPLAB_NO_FAILED_QP)
		snprintf(k->observed, sizeof(k->observed), "none");
	else
		snprintf(k->observed, sizeof(k->observed), "QP %d (qp_num %ld): write %s, read %s",
			 f->dp_failed_qp, f->dp_failed_qp < f->dp_nqp ? f->dp_qps[f->dp_failed_qp].qpn : -1,
			 f->dp_failed_qp < f->dp_nqp ? f->dp_qps[f->dp_failed_qp].write_wc : "?",
			 f->dp_failed_qp < f->dp_nqp ? f->dp_qps[f->dp_failed_qp].read_wc : "?");
}

static void text_check(struct checks *c, const char *what, const struct qplab_text_match *m,
		       const char *got)
{
	char want[256] = "";
	size_t n = 0;
	bool ok = got != NULL;

	if (!m->set)
		return;
	if (m->exact) {
		ok = ok && !strcmp(got, m->exact);
		n += (size_t)snprintf(want + n, sizeof(want) - n, "exactly \"%.80s\"", m->exact);
	}
	if (m->prefix && n < sizeof(want)) {
		ok = ok && !strncmp(got, m->prefix, strlen(m->prefix));
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%sprefix \"%.80s\"", n ? " and " : "",
				      m->prefix);
	}
	if (m->contains && n < sizeof(want)) {
		ok = ok && strstr(got, m->contains);
		n += (size_t)snprintf(want + n, sizeof(want) - n, "%scontains \"%.80s\"",
				      n ? " and " : "", m->contains);
	}
	if (m->regex && n < sizeof(want)) {
		ok = ok && regexec(&m->re, got, 0, NULL, 0) == 0;
		snprintf(want + n, sizeof(want) - n, "%smatches /%.80s/", n ? " and " : "", m->regex);
	}
	struct qplab_check *k = add(c, what, ok);
	snprintf(k->expected, sizeof(k->expected), "%s", want);
	quote(k->observed, sizeof(k->observed), got);
}

static void wc_check(struct checks *c, const struct qplab_assert *a, const struct qplab_facts *f)
{
	bool ok = false;
	size_t n = 0;

	if (a->nwc == 0 && a->wc_none_within_ms < 0)
		return;
	for (int i = 0; i < a->nwc; i++)
		ok |= !strcmp(f->wc_status, a->wc_any[i]);
	if (a->wc_none_within_ms >= 0 && !strcmp(f->wc_status, "none"))
		ok |= f->wc_waited_ms >= a->wc_none_within_ms;
	struct qplab_check *k = add(c, "wc_status", ok);
	for (int i = 0; i < a->nwc && n + 40 < sizeof(k->expected); i++)
		n += (size_t)snprintf(k->expected + n, sizeof(k->expected) - n, "%s%s",
				      i ? " or " : "", a->wc_any[i]);
	if (a->wc_none_within_ms >= 0)
		snprintf(k->expected + n, sizeof(k->expected) - n, "%snone within %ld ms",
			 n ? " or " : "", a->wc_none_within_ms);
	if (!f->wc_status[0])
		snprintf(k->observed, sizeof(k->observed), "(not collected)");
	else if (!strcmp(f->wc_status, "none"))
		snprintf(k->observed, sizeof(k->observed), "none within %ld ms", f->wc_waited_ms);
	else
		snprintf(k->observed, sizeof(k->observed), "%s", f->wc_status);
}

static void time_checks(struct checks *c, const struct qplab_assert *a,
			const struct qplab_facts *f, double mult)
{
	char what[32];

	for (int t = 0; t < QPLAB_TIME_COUNT; t++) {
		long min = a->time[t].min, max = a->time[t].max, got = f->time_ms[t];
		if (min < 0 && max < 0)
			continue;
		/* Upper bounds are correctness bounds and stretch with slow
		 * emulation; lower bounds are timers of the kernel and do not. */
		if (max >= 0)
			max = (long)((double)max * (mult > 0 ? mult : 1.0));
		snprintf(what, sizeof(what), "time_ms.%s", qplab_timing_name(t));
		struct qplab_check *k = add(c, what, got >= 0 && (min < 0 || got >= min) &&
							     (max < 0 || got <= max));
		if (min >= 0 && max >= 0)
			snprintf(k->expected, sizeof(k->expected), "%ld..%ld ms", min, max);
		else if (min >= 0)
			snprintf(k->expected, sizeof(k->expected), ">= %ld ms", min);
		else
			snprintf(k->expected, sizeof(k->expected), "<= %ld ms", max);
		if (got < 0)
			snprintf(k->observed, sizeof(k->observed), "(not collected)");
		else
			snprintf(k->observed, sizeof(k->observed), "%ld ms", got);
	}
}

static void hwc_checks(struct checks *c, const struct qplab_assert *a, const struct qplab_facts *f)
{
	char what[32];

	for (int i = 0; i < a->nhwc; i++) {
		const struct qplab_hwc_bound *b = &a->hwc[i];
		long got = qplab_facts_hwc(f, b->name);

		snprintf(what, sizeof(what), "hw_counters.%.19s", b->name);
		struct qplab_check *k = add(c, what, got != LONG_MIN && (b->min < 0 || got >= b->min) &&
							     (b->max < 0 || got <= b->max));
		if (b->min == b->max)
			snprintf(k->expected, sizeof(k->expected), "+%ld", b->min);
		else if (b->min >= 0 && b->max >= 0)
			snprintf(k->expected, sizeof(k->expected), "+%ld..%ld", b->min, b->max);
		else if (b->min >= 0)
			snprintf(k->expected, sizeof(k->expected), ">= +%ld", b->min);
		else
			snprintf(k->expected, sizeof(k->expected), "<= +%ld", b->max);
		if (got != LONG_MIN)
			snprintf(k->observed, sizeof(k->observed), "%+ld", got);
		else if (f->nhwc < 0)
			snprintf(k->observed, sizeof(k->observed), "(not collected%s%.200s)",
				 f->hwc_error[0] ? ": " : "", f->hwc_error);
		else
			snprintf(k->observed, sizeof(k->observed), "(the device has no such counter)");
	}
}

static void bool_check(struct checks *c, const char *what, int want, int got)
{
	if (want < 0)
		return;
	struct qplab_check *k = add(c, what, got == want);
	snprintf(k->expected, sizeof(k->expected), "%s", want ? "true" : "false");
	snprintf(k->observed, sizeof(k->observed), "%s",
		 got < 0 ? "(not collected)" : got ? "true" : "false");
}

bool qplab_assert_eval(const struct qplab_assert *a, const struct qplab_facts *f,
		       double time_multiplier, struct qplab_check **out, size_t *n)
{
	struct checks c = {.ok = true, .keep = out != NULL};

	qp_checks(&c, a, f);
	word_check(&c, "endpoint", a->endpoint, f->endpoint);
	int_check(&c, "endpoints", a->endpoints, f->endpoints);
	word_check(&c, "code", a->code, f->code);
	text_check(&c, "reply_msg_sent", &a->reply_sent, f->reply_sent);
	text_check(&c, "reply_msg_received", &a->reply_received, f->reply_received);
	text_check(&c, "error_text", &a->error_text, f->error_text);
	word_check(&c, "datapath", a->datapath, f->datapath);
	dp_checks(&c, a, f);
	wc_check(&c, a, f);
	time_checks(&c, a, f, time_multiplier);
	int_check(&c, "gid_index", a->gid_index, f->gid_index);
	text_check(&c, "gid_reason", &a->gid_reason, f->gid_reason);
	int_check(&c, "path_mtu", a->path_mtu, f->path_mtu);
	int_check(&c, "peer_path_mtu", a->peer_path_mtu, f->peer_path_mtu);
	bool_check(&c, "peer_ready_ack", a->peer_ready_ack, f->peer_ready_ack);
	text_check(&c, "warning", &a->warning, f->warning);
	text_check(&c, "log", &a->log, f->log);
	bool_check(&c, "datapath_restored", a->datapath_restored, f->datapath_restored);
	bool_check(&c, "datapath_peer_checksum", a->datapath_peer_checksum,
		   f->datapath_peer_checksum);
	bool_check(&c, "daemon_alive", a->daemon_alive, f->daemon_alive);
	int_check(&c, "leftover_qps", a->leftover_qps, f->leftover_qps);
	int_check(&c, "leftover_objects", a->leftover_objects, f->leftover_objects);
	word_check(&c, "frame_outcome", a->frame_outcome, f->frame_outcome);
	hwc_checks(&c, a, f);
	if (out) {
		*out = c.v;
		*n = c.n;
	}
	return c.ok;
}
