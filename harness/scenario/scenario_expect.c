/* The scenario's `expect` section: targets, steps, keyed rows (`cases`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_int.h"

/* One term: "rxe_netns", "!rxe_netns", "kernel >= 7.1", "quirk=e810", "driver=rxe",
 * "impl=mooncake-compat", "impl:b=qplab". */
/* "impl=NAME": the row's own host runs NAME; "impl:HOST=NAME": HOST does. */
static bool parse_impl(struct sc_ctx *ctx, int line, const char *s, struct qplab_when *w)
{
	const char *eq = strchr(s, '=');
	char host[QPLAB_NAME_MAX] = "";

	w->kind = QPLAB_WHEN_IMPL;
	if (s[4] == ':') {
		size_t n = eq ? (size_t)(eq - s - 5) : 0;

		if (!eq || !n || n >= sizeof(host)) {
			qplab__sc_err(ctx, line, "\"%s\": want impl:HOST=NAME", s);
			return false;
		}
		memcpy(host, s + 5, n);
		for (size_t h = 0; h < ctx->plan->nhosts; h++)
			if (!strcmp(ctx->plan->hosts[h].name, host))
				w->host = (int)h;
		if (w->host < 0) {
			qplab__sc_err(ctx, line, "\"%s\": no host \"%s\"", s, host);
			return false;
		}
	}
	if (!qplab__sc_in_list(qplab_impls, eq + 1)) {
		qplab__sc_err(ctx, line, "\"%s\": the implementations are qplab, "
			      "mooncake-compat and mooncake", s);
		return false;
	}
	snprintf(w->name, sizeof(w->name), "%s", eq + 1);
	return true;
}

static bool parse_term(struct sc_ctx *ctx, int line, const char *s, struct qplab_when *w)
{
	memset(w, 0, sizeof(*w));
	w->host = -1;
	if (!strncmp(s, "impl=", 5) || !strncmp(s, "impl:", 5))
		return parse_impl(ctx, line, s, w);
	if (!strcmp(s, "otherwise")) {
		w->kind = QPLAB_WHEN_OTHERWISE;
		return true;
	}
	if (!strncmp(s, "kernel", 6)) {
		char op[4] = "";
		int n = -1;
		w->kind = QPLAB_WHEN_KERNEL;
		/* "kernel OP X.Y" or "kernel OP X.Y.Z", nothing after it. */
		if (sscanf(s + 6, " %3[<>=!] %d.%d.%d%n", op, &w->version[0], &w->version[1],
			   &w->version[2], &n) < 4) {
			w->version[2] = 0;
			n = -1;
			sscanf(s + 6, " %3[<>=!] %d.%d%n", op, &w->version[0], &w->version[1], &n);
		}
		if (n < 0 || s[6 + n] || (strcmp(op, ">=") && strcmp(op, ">") && strcmp(op, "<=") &&
					  strcmp(op, "<"))) {
			qplab__sc_err(ctx, line, "\"%s\": a kernel key is \"kernel OP X.Y\" with OP one of >=, >, <=, < "
						 "(a range, never an exact release)", s);
			return false;
		}
		memcpy(w->op, op, sizeof(w->op));
		return true;
	}
	if (!strncmp(s, "quirk=", 6) || !strncmp(s, "driver=", 7)) {
		w->kind = s[0] == 'q' ? QPLAB_WHEN_QUIRK : QPLAB_WHEN_DRIVER;
		qplab__sc_copy(ctx, line, w->name, sizeof(w->name), strchr(s, '=') + 1, "key name");
		return w->name[0] != '\0';
	}
	w->kind = s[0] == '!' ? QPLAB_WHEN_NOT_CAP : QPLAB_WHEN_CAP;
	s += s[0] == '!';
	if (!qplab__sc_in_list(qplab_capabilities, s)) {
		qplab__sc_err(ctx, line, "unknown key \"%s\": a capability (rxe_netns, netem, ipv6, kvm, veth), "
					 "!capability, kernel OP X.Y, quirk=NAME, driver=NAME, impl=NAME, "
					 "impl:HOST=NAME or otherwise", s);
		return false;
	}
	snprintf(w->name, sizeof(w->name), "%s", s);
	return true;
}

static void parse_when(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_case *c)
{
	json_object *v, *list;
	char text[256] = "";

	if (!json_object_object_get_ex(o, "when", &v)) {
		qplab__sc_err(ctx, c->line, "a keyed row needs \"when\"");
		return;
	}
	if (json_object_is_type(v, json_type_string)) {
		list = json_object_new_array();
		json_object_array_add(list, json_object_get(v));
	} else if (json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0) {
		list = json_object_get(v);
	} else {
		qplab__sc_err(ctx, c->line, "\"when\" is a key or a non-empty array of keys (all must hold)");
		return;
	}
	size_t n = json_object_array_length(list);
	c->terms = calloc(n, sizeof(*c->terms));
	for (size_t i = 0; c->terms && i < n; i++) {
		const char *s;

		if (!qplab__sc_elem_str(ctx, list, path, "when", i, &s))
			continue;
		if (parse_term(ctx, c->line, s, &c->terms[c->nterms]))
			c->nterms++;
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s", i ? " && " : "", s);
	}
	c->when_text = qplab__sc_strdup(text);
	json_object_put(list);
}

static void parse_cases(struct sc_ctx *ctx, json_object *arr, const char *path,
			struct qplab_expectation *e)
{
	static const char *const case_keys[] = {"when", "why", NULL};
	size_t n = json_object_array_length(arr);
	char sub[SC_PATH_MAX];
	const char *why;

	if (n == 0)
		qplab__sc_err(ctx, qplab__sc_line(ctx, path), "\"cases\" is empty");
	e->cases = calloc(n ? n : 1, sizeof(*e->cases));
	for (size_t i = 0; e->cases && i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		struct qplab_case *c = &e->cases[e->ncases];
		qplab__sc_join_index(sub, sizeof(sub), path, i);
		c->line = qplab__sc_line(ctx, sub);
		if (!json_object_is_type(o, json_type_object)) {
			qplab__sc_err(ctx, c->line, "a keyed row is an object");
			continue;
		}
		e->ncases++;
		qplab__sc_assert(ctx, o, sub, &c->a, case_keys);
		parse_when(ctx, o, sub, c);
		if (!json_object_object_get_ex(o, "why", NULL))
			qplab__sc_err(ctx, c->line, "keyed row \"%s\" has no \"why\" (every keyed expectation cites why)",
				      c->when_text ? c->when_text : "?");
		else if (qplab__sc_str(ctx, o, sub, "why", true, &why))
			c->why = qplab__sc_strdup(why);
		for (size_t t = 0; t < c->nterms; t++)
			if (c->terms[t].kind == QPLAB_WHEN_OTHERWISE && (c->nterms > 1 || i + 1 < n))
				qplab__sc_err(ctx, c->line, "\"otherwise\" stands alone, in the last row");
		if (c->a.nfields == 0)
			qplab__sc_err(ctx, c->line, "keyed row asserts nothing");
	}
}

/* "host": "a", or "hosts": ["a", "b"] or "all". */
static void parse_targets(struct sc_ctx *ctx, json_object *o, const char *path,
			  struct qplab_expectation *e)
{
	json_object *h1 = NULL, *hs = NULL;
	bool has1 = json_object_object_get_ex(o, "host", &h1);
	bool hasn = json_object_object_get_ex(o, "hosts", &hs);

	if (has1 == hasn) {
		qplab__sc_err(ctx, e->line, "an expectation names \"host\" or \"hosts\" (exactly one)");
		return;
	}
	if (has1 && json_object_is_type(h1, json_type_string)) {
		int h = qplab__sc_host(ctx, e->line, json_object_get_string(h1));
		if (h >= 0)
			e->hosts[e->nhosts++] = h;
	} else if (hasn && json_object_is_type(hs, json_type_string) &&
		   !strcmp(json_object_get_string(hs), "all")) {
		for (size_t h = 0; h < ctx->plan->nhosts; h++)
			e->hosts[e->nhosts++] = (int)h;
	} else if (hasn && json_object_is_type(hs, json_type_array) && json_object_array_length(hs) &&
		   json_object_array_length(hs) <= QPLAB_MAX_HOSTS) {
		for (size_t i = 0; i < json_object_array_length(hs); i++) {
			const char *name;
			int h = qplab__sc_elem_str(ctx, hs, path, "hosts", i, &name)
					? qplab__sc_host(ctx, e->line, name) : -1;

			if (h >= 0)
				e->hosts[e->nhosts++] = h;
		}
	} else {
		qplab__sc_err(ctx, e->line, "\"host\" is a host name; \"hosts\" is \"all\" or a list of host names");
	}
}

static void parse_expectation(struct sc_ctx *ctx, json_object *o, const char *path,
			      struct qplab_expectation *e)
{
	static const char *const extra[] = {"label", "host", "hosts", "step", "cases", NULL};
	json_object *cases;
	const char *s;

	int nerr = ctx->nerr;

	e->line = qplab__sc_line(ctx, path);
	e->step = -1;
	parse_targets(ctx, o, path, e);
	if (qplab__sc_str(ctx, o, path, "label", false, &s))
		e->label = qplab__sc_strdup(s);
	if (qplab__sc_str(ctx, o, path, "step", false, &s)) {
		e->step = qplab_plan_step(ctx->plan, s);
		if (e->step < 0)
			qplab__sc_err(ctx, e->line, "unknown step \"%s\" (steps are referred to by their \"name\")", s);
	}
	qplab__sc_assert(ctx, o, path, &e->a, extra);
	cases = qplab__sc_get(ctx, o, path, "cases", json_type_array, false);
	if (cases) {
		char sub[SC_PATH_MAX];
		if (e->a.nfields)
			qplab__sc_err(ctx, e->line, "an expectation has either assertions or \"cases\", not both");
		qplab__sc_join(sub, sizeof(sub), path, "cases");
		parse_cases(ctx, cases, sub, e);
	} else if (e->a.nfields == 0 && !json_object_object_get_ex(o, "cases", NULL) &&
		   ctx->nerr == nerr) {
		qplab__sc_err(ctx, e->line, "expectation asserts nothing");
	}
	/* Counters are read around a step; the final facts have none. */
	bool hwc = e->a.nhwc > 0;
	for (size_t r = 0; r < e->ncases; r++)
		hwc |= e->cases[r].a.nhwc > 0;
	if (hwc && e->step < 0)
		qplab__sc_err(ctx, e->line, "hw_counters is the change over a step: it needs \"step\"");
}

void qplab__sc_expects(struct sc_ctx *ctx, json_object *root)
{
	json_object *arr = qplab__sc_get(ctx, root, "", "expect", json_type_array, true);
	struct qplab_plan *plan = ctx->plan;
	char path[SC_PATH_MAX];
	size_t n;

	if (!arr)
		return;
	n = json_object_array_length(arr);
	if (n == 0 || n > QPLAB_MAX_EXPECT) {
		qplab__sc_err(ctx, qplab__sc_line(ctx, "/expect"), "a scenario has 1..%d expectations",
			      QPLAB_MAX_EXPECT);
		return;
	}
	plan->expect = calloc(n, sizeof(*plan->expect));
	for (size_t i = 0; plan->expect && i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		qplab__sc_join_index(path, sizeof(path), "/expect", i);
		if (!json_object_is_type(o, json_type_object)) {
			qplab__sc_err(ctx, qplab__sc_line(ctx, path), "an expectation is an object");
			continue;
		}
		parse_expectation(ctx, o, path, &plan->expect[plan->nexpect++]);
	}
}
