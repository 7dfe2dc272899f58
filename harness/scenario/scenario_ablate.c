/*
 * The scenario's `ablate` key (docs/scenarios.md): RFC 6901 pointers to
 * what injects its fault, each resolved against the parsed document; the
 * empty list, a declaration of no fault, refused when the file has one;
 * and the ablated twin: the document with the pointers applied, parsed
 * again, that `qplab run --ablate` runs to see the scenario fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/config.h"
#include "qphs/error.h"
#include "qphs/rdma.h"
#include "scenario_int.h"

/* One reference token of a pointer ("~1" -> "/", "~0" -> "~") into tok;
 * *p moves past it.  -1 on a bad escape or a token too long. */
static int next_token(const char **p, char *tok, size_t len)
{
	size_t n = 0;

	for ((*p)++; **p && **p != '/'; (*p)++) {
		char c = **p;

		if (c == '~') {
			(*p)++;
			if (**p != '0' && **p != '1')
				return -1;
			c = **p == '0' ? '~' : '/';
		}
		if (n + 1 >= len)
			return -1;
		tok[n++] = c;
	}
	tok[n] = '\0';
	return 0;
}

/* An array index token: decimal, no leading zero, below n. */
static int array_index(const char *tok, size_t n)
{
	char *end;
	long v;

	if (!*tok || strspn(tok, "0123456789") != strlen(tok) || (tok[0] == '0' && tok[1]))
		return -1;
	v = strtol(tok, &end, 10);
	return v >= 0 && (size_t)v < n ? (int)v : -1;
}

/* The value at ptr in root, its container (*parent) and the last token
 * (last).  NULL when ptr does not resolve; *parent is then still set when
 * only the last token is missing from an object (a `set` may add it). */
static json_object *resolve(json_object *root, const char *ptr, json_object **parent, char *last,
			    size_t lastlen)
{
	json_object *cur = root;
	const char *p = ptr;

	*parent = NULL;
	if (*p != '/')
		return NULL;
	while (*p == '/') {
		json_object *next = NULL;
		int i;

		*parent = NULL;
		if (!cur || next_token(&p, last, lastlen))
			return NULL;
		if (json_object_is_type(cur, json_type_object)) {
			*parent = cur;
			if (!json_object_object_get_ex(cur, last, &next))
				next = NULL;
		} else if (json_object_is_type(cur, json_type_array)) {
			i = array_index(last, json_object_array_length(cur));
			if (i < 0)
				return NULL;
			*parent = cur;
			next = json_object_array_get_idx(cur, (size_t)i);
			if (!next) /* a null element: present */
				return NULL;
		} else {
			return NULL;
		}
		if (!next && *p) {
			*parent = NULL;
			return NULL;
		}
		cur = next;
	}
	return cur;
}

/* "/steps/N": the step that stays in place as a noop. */
static int step_pointer(const char *ptr, size_t nsteps)
{
	if (strncmp(ptr, "/steps/", 7) || strchr(ptr + 7, '/'))
		return -1;
	return array_index(ptr + 7, nsteps);
}

/* An env variable that moves the library's configuration off its default
 * (MC_NUM_QP_PER_EP=2 does not; an invalid value does). */
static const char *one_var(const char *name, void *user)
{
	const struct qplab_env *e = user;

	return !strcmp(name, e->name) ? e->value : NULL;
}

static bool env_changes_config(const struct qplab_env *e)
{
	struct qphs_config a, b;

	memset(&a, 0, sizeof(a));
	qphs_config_init(&a);
	memcpy(&b, &a, sizeof(a));
	if (qphs_config_from_env(&b, one_var, (void *)e, NULL, 0))
		return true;
	return memcmp(&a, &b, sizeof(a)) != 0;
}

/* The first agent option set to something other than the library's
 * default (qphs_config_init) or a lab hook in use; NULL: none. */
static const char *agent_option(const struct qplab_agent_opts *a)
{
	struct qphs_config d;

	qphs_config_init(&d);
#define OFF(v, dflt) ((v) >= 0 && (v) != (dflt))
	if (a->quirk[0])
		return "quirk";
	if (OFF(a->mtu_negotiation, d.mtu_negotiation))
		return "mtu_negotiation";
	if (OFF(a->ready_ack, d.ready_ack))
		return "ready_ack";
	if (a->reset_policy[0] && strcmp(a->reset_policy, "reconstruct"))
		return "reset_policy";
	if (OFF(a->strict_reset, d.strict_reset))
		return "strict_reset";
	if (OFF(a->qp_timeout, d.qp_timeout))
		return "qp_timeout";
	if (OFF(a->qp_retry_cnt, d.qp_retry_cnt))
		return "qp_retry_cnt";
	if (OFF(a->qp_rnr_retry, d.qp_rnr_retry))
		return "qp_rnr_retry";
	if (OFF(a->reply_timeout_ms, d.reply_timeout_ms))
		return "reply_timeout_ms";
	if (OFF(a->old_protocol, d.old_protocol))
		return "old_protocol";
	if (OFF(a->rd_atomic_clamp, d.rd_atomic_clamp))
		return "rd_atomic_clamp";
	if (OFF(a->mtu_reread, d.mtu_reread))
		return "mtu_reread";
#undef OFF
	if (a->advertise_gid)
		return "advertise_gid";
	if (a->advertise_qpn >= 0)
		return "advertise_qpn";
	if (a->advertise_qp_count >= 0)
		return "advertise_qp_count";
	if (a->advertise_address)
		return "advertise_address";
	if (a->delay_passive_rtr_ms > 0)
		return "delay_passive_rtr_ms";
	if (a->sq_psn > 0 || a->rq_psn > 0)
		return a->sq_psn > 0 ? "sq_psn" : "rq_psn";
	if (a->no_rdma_transport > 0)
		return "no_rdma_transport";
	if (a->rdma_max)
		return "rdma_max";
	return NULL;
}

static bool fault_step(enum qplab_step_kind k)
{
	switch (k) {
	case QPLAB_STEP_LINK_DOWN:
	case QPLAB_STEP_NETEM_ON:
	case QPLAB_STEP_SET_MTU:
	case QPLAB_STEP_BLACKHOLE:
	case QPLAB_STEP_DELETE_DEVICE:
	case QPLAB_STEP_KILL_AGENT:
	case QPLAB_STEP_RESTART_AGENT:
	case QPLAB_STEP_RAW_FRAME:
	case QPLAB_STEP_REMOVE_ADDRESS:
	case QPLAB_STEP_DISABLE_IPV6:
	case QPLAB_STEP_FIREWALL_DROP:
	case QPLAB_STEP_FIREWALL_REJECT:
		return true;
	default:
		return false;
	}
}

static int step_fault(const struct qplab_step *st, size_t i, char *why, size_t len)
{
	const int all = QPHS_ACCESS_LOCAL_WRITE | QPHS_ACCESS_REMOTE_WRITE | QPHS_ACCESS_REMOTE_READ;

	if (fault_step(st->kind))
		snprintf(why, len, "step %zu is a %s", i + 1, qplab_step_kind_name(st->kind));
	else if (st->kind == QPLAB_STEP_CONNECT && st->to_address[0])
		snprintf(why, len, "step %zu connects to_address \"%s\"", i + 1, st->to_address);
	else if (st->kind == QPLAB_STEP_CONNECT && st->to_device[0])
		snprintf(why, len, "step %zu asks for to_device \"%s\"", i + 1, st->to_device);
	else if (st->kind == QPLAB_STEP_DATAPATH && (st->rkey_mode || st->verb))
		snprintf(why, len, "step %zu is a datapath with a non-default %s", i + 1,
			 st->rkey_mode ? "rkey" : "verb");
	else if (st->kind == QPLAB_STEP_DATAPATH && st->posted_kill >= 0)
		snprintf(why, len, "step %zu kills a host's agent on_posted", i + 1);
	else if (st->kind == QPLAB_STEP_REGION && (st->access & all) != all)
		snprintf(why, len, "step %zu registers a region with reduced access", i + 1);
	else
		return 0;
	return st->line ? st->line : 1;
}

/* The first fault of a plan that declares it has none into why; returns
 * its line (0: none). */
static int plan_fault(const struct qplab_plan *p, char *why, size_t len)
{
	for (size_t h = 0; h < p->nhosts; h++) {
		const struct qplab_host *hs = &p->hosts[h];
		const char *opt = agent_option(&hs->agent);

		if (hs->fault.set) {
			snprintf(why, len, "host %s has the agent fault \"%s\"", hs->name, hs->fault.name);
			return hs->line;
		}
		for (size_t e = 0; e < hs->nenv; e++)
			if (env_changes_config(&hs->env[e])) {
				snprintf(why, len, "host %s sets %s=%s (not the default)", hs->name,
					 hs->env[e].name, hs->env[e].value);
				return hs->line;
			}
		if (opt) {
			snprintf(why, len, "host %s sets agent option %s", hs->name, opt);
			return hs->line;
		}
		if (!strcmp(hs->addresses, "none")) {
			snprintf(why, len, "host %s has no address", hs->name);
			return hs->line;
		}
		if (hs->second_device) {
			snprintf(why, len, "host %s opens its second device", hs->name);
			return hs->line;
		}
	}
	for (size_t l = 0; l < p->nlinks; l++)
		if (p->links[l].netem.set) {
			snprintf(why, len, "link %zu has netem", l + 1);
			return p->links[l].line;
		}
	for (size_t i = 0; i < p->nsteps; i++) {
		int line = step_fault(&p->steps[i], i, why, len);

		if (line)
			return line;
	}
	return 0;
}

/* One entry: a pointer, or {"set": pointer, "to": value}; stored in
 * plan->ablate[plan->nablate] when it resolves. */
static void parse_entry(struct sc_ctx *ctx, json_object *root, json_object *e, size_t i)
{
	static const char *const keys[] = {"set", "to", NULL};
	struct qplab_plan *plan = ctx->plan;
	struct qplab_ablate *a = &plan->ablate[plan->nablate];
	char path[SC_PATH_MAX], last[256];
	json_object *to = NULL, *parent, *target;
	const char *ptr;
	bool set = false;
	int line;

	qplab__sc_join_index(path, sizeof(path), "/ablate", i);
	line = qplab__sc_line(ctx, path);
	if (json_object_is_type(e, json_type_string)) {
		ptr = json_object_get_string(e);
	} else if (json_object_is_type(e, json_type_object)) {
		qplab__sc_only_keys(ctx, e, path, "an ablate entry", keys);
		if (!qplab__sc_str(ctx, e, path, "set", true, &ptr))
			return;
		if (!json_object_object_get_ex(e, "to", &to)) { /* "to": null is a value */
			qplab__sc_err(ctx, line, "a \"set\" needs \"to\": the value in place of the fault");
			return;
		}
		set = true;
	} else {
		qplab__sc_err(ctx, line, "an ablate entry is a JSON pointer (a string) or "
			      "{\"set\": POINTER, \"to\": VALUE}");
		return;
	}
	if (*ptr != '/') {
		qplab__sc_err(ctx, line, "\"%s\" is not a JSON pointer to a member (RFC 6901: it starts with \"/\")",
			      ptr);
		return;
	}
	if (!strncmp(ptr, "/ablate", 7) && (!ptr[7] || ptr[7] == '/')) {
		qplab__sc_err(ctx, line, "\"%s\": ablate does not point into itself", ptr);
		return;
	}
	for (size_t k = 0; k < plan->nablate; k++)
		if (!strcmp(plan->ablate[k].pointer, ptr)) {
			qplab__sc_err(ctx, line, "\"%s\" is listed twice", ptr);
			return;
		}
	target = resolve(root, ptr, &parent, last, sizeof(last));
	if (!target && !set) {
		qplab__sc_err(ctx, line, "\"%s\" does not resolve in this file", ptr);
		return;
	}
	if (!target && !(parent && json_object_is_type(parent, json_type_object))) {
		qplab__sc_err(ctx, line, "\"%s\" does not resolve in this file, nor does an object to add it to",
			      ptr);
		return;
	}
	a->pointer = qplab__sc_strdup(ptr);
	a->to = set ? qplab__sc_strdup(json_object_to_json_string_ext(to, JSON_C_TO_STRING_PLAIN)) : NULL;
	a->line = line;
	a->step = set ? -1 : step_pointer(ptr, plan->nsteps);
	plan->nablate++;
}

void qplab__sc_ablate(struct sc_ctx *ctx, json_object *root)
{
	struct qplab_plan *plan = ctx->plan;
	json_object *arr;
	char why[200];
	size_t n;
	int line, fl;

	plan->ablate_mode = QPLAB_ABLATE_UNMARKED;
	if (!json_object_object_get_ex(root, "ablate", NULL))
		return;
	arr = qplab__sc_get(ctx, root, "", "ablate", json_type_array, true);
	if (!arr)
		return;
	line = qplab__sc_line(ctx, "/ablate");
	n = json_object_array_length(arr);
	if (n == 0) {
		plan->ablate_mode = QPLAB_ABLATE_NONE;
		if ((fl = plan_fault(plan, why, sizeof(why))))
			qplab__sc_err(ctx, line, "\"ablate\": [] declares that the scenario has no fault, but %s "
				      "(line %d): list the pointers to what injects it", why, fl);
		return;
	}
	plan->ablate_mode = QPLAB_ABLATE_LIST;
	plan->ablate = calloc(n, sizeof(*plan->ablate));
	if (!plan->ablate)
		return;
	for (size_t i = 0; i < n; i++)
		parse_entry(ctx, root, json_object_array_get_idx(arr, i), i);
	if (plan->nablate)
		plan->doc = json_object_get(root);
}

void qplab__sc_ablate_free(struct qplab_plan *plan)
{
	for (size_t i = 0; i < plan->nablate; i++) {
		free(plan->ablate[i].pointer);
		free(plan->ablate[i].to);
	}
	free(plan->ablate);
	json_object_put(plan->doc);
}

/* What one entry does to the document, resolved before anything
 * changes (so removals from one array do not shift each other). */
struct abl_op {
	const struct qplab_ablate *a;
	json_object *parent;       /* held: a referenced container outlives the edits */
	char key[256];
	int idx;                   /* the element, when parent is an array */
};

static int by_idx_desc(const void *x, const void *y)
{
	return ((const struct abl_op *)y)->idx - ((const struct abl_op *)x)->idx;
}

/* A step in place as a noop under its name. */
static json_object *noop_step(json_object *old)
{
	json_object *n = json_object_new_object(), *name;

	json_object_object_add(n, "do", json_object_new_string("noop"));
	if (json_object_object_get_ex(old, "name", &name))
		json_object_object_add(n, "name", json_object_get(name));
	return n;
}

/* Applies the first k entries of p's list to doc; ablated[i]: step i
 * became a noop.  -1 with err when one no longer resolves. */
static int apply(json_object *doc, const struct qplab_plan *p, size_t k, bool *ablated, char *err,
		 size_t errlen)
{
	struct abl_op ops[k ? k : 1];
	int rc = 0;

	for (size_t i = 0; i < k; i++) {
		json_object *t = resolve(doc, p->ablate[i].pointer, &ops[i].parent, ops[i].key,
					 sizeof(ops[i].key));

		ops[i].a = &p->ablate[i];
		ops[i].idx = -1;
		if (!ops[i].parent || (!t && !p->ablate[i].to)) {
			snprintf(err, errlen, "\"%s\" does not resolve", p->ablate[i].pointer);
			for (size_t j = 0; j < i; j++)
				json_object_put(ops[j].parent);
			return -1;
		}
		if (json_object_is_type(ops[i].parent, json_type_array))
			ops[i].idx = array_index(ops[i].key, json_object_array_length(ops[i].parent));
		json_object_get(ops[i].parent);
	}
	/* Replacements first: they shift nothing. */
	for (size_t i = 0; i < k; i++) {
		struct abl_op *o = &ops[i];

		if (o->a->to) {
			json_object *v = json_tokener_parse(o->a->to);

			if (o->idx >= 0)
				json_object_array_put_idx(o->parent, (size_t)o->idx, v);
			else
				json_object_object_add(o->parent, o->key, v);
		} else if (o->a->step >= 0) {
			json_object *old = json_object_array_get_idx(o->parent, (size_t)o->idx);

			json_object_array_put_idx(o->parent, (size_t)o->idx, noop_step(old));
			ablated[o->a->step] = true;
		} else if (o->idx < 0) {
			json_object_object_del(o->parent, o->key);
		}
	}
	qsort(ops, k, sizeof(ops[0]), by_idx_desc);
	for (size_t i = 0; i < k; i++) {
		if (ops[i].idx >= 0 && !ops[i].a->to && ops[i].a->step < 0 &&
		    json_object_array_del_idx(ops[i].parent, (size_t)ops[i].idx, 1))
			rc = -1;
		json_object_put(ops[i].parent);
	}
	if (rc)
		snprintf(err, errlen, "an array element could not be removed");
	return rc;
}

/* "FILE:LINE: text" -> "text": the twin's lines are not the file's. */
static const char *strip_where(const char *msg, const char *file)
{
	size_t n = strlen(file);

	if (!strncmp(msg, file, n) && msg[n] == ':') {
		msg += n + 1;
		msg += strspn(msg, "0123456789");
		if (*msg == ':')
			msg++;
		msg += strspn(msg, " ");
	}
	return msg;
}

/* The twin of p with its first k entries applied; NULL with why. */
static struct qplab_plan *build(const struct qplab_plan *p, size_t k, char *why, size_t len)
{
	struct qplab_errors errs = {0};
	struct qplab_plan *twin = NULL;
	bool ablated[QPLAB_MAX_STEPS] = {false};
	json_object *doc = NULL;
	const char *text;

	if (json_object_deep_copy(p->doc, &doc, NULL) || !doc) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	json_object_object_del(doc, "ablate");
	if (apply(doc, p, k, ablated, why, len)) {
		json_object_put(doc);
		return NULL;
	}
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY);
	if (qplab_scenario_parse(p->file, text, strlen(text), &twin, &errs))
		snprintf(why, len, "%s", errs.n ? strip_where(errs.msgs[0], p->file) : "it does not parse");
	json_object_put(doc);
	qplab_errors_free(&errs);
	if (!twin)
		return NULL;
	memcpy(twin->step_ablated, ablated, sizeof(ablated));
	return twin;
}

/* Expectations after an ablated step say what the fault did there: the
 * twin does not evaluate them. */
static void drop_ablated_expectations(struct qplab_plan *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nexpect; i++) {
		struct qplab_expectation *e = &t->expect[i];

		if (e->step >= 0 && t->step_ablated[e->step]) {
			qplab__sc_expectation_free(e);
			t->nexpect_ablated++;
			continue;
		}
		t->expect[n++] = *e;
	}
	t->nexpect = n;
}

int qplab_plan_ablate(const struct qplab_plan *p, struct qplab_plan **out, struct qplab_errors *errs)
{
	struct qplab_plan *t;
	char why[400];

	*out = NULL;
	if (p->ablate_mode != QPLAB_ABLATE_LIST || !p->nablate || !p->doc)
		return QPHS_ERR_INVALID_ARGUMENT;
	t = build(p, p->nablate, why, sizeof(why));
	if (!t) {
		/* Name the first entry whose application breaks the file. */
		size_t k = 1;
		char one[400];

		for (; k < p->nablate; k++) {
			struct qplab_plan *part = build(p, k, one, sizeof(one));

			if (!part)
				break;
			qplab_plan_free(part);
		}
		if (k < p->nablate)
			snprintf(why, sizeof(why), "%s", one);
		qplab_errors_add(errs, "%s:%d: ablate \"%s\": the scenario without it does not parse: %s",
				 p->file, p->ablate[k - 1].line, p->ablate[k - 1].pointer, why);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	/* What qplab run changed after parsing (--impl, --placements). */
	snprintf(t->id, sizeof(t->id), "%s", p->id);
	for (size_t h = 0; h < p->nhosts && h < t->nhosts; h++)
		if (!strcmp(p->hosts[h].impl_from, "run")) {
			snprintf(t->hosts[h].impl, sizeof(t->hosts[h].impl), "%s", p->hosts[h].impl);
			snprintf(t->hosts[h].impl_from, sizeof(t->hosts[h].impl_from), "%s", p->hosts[h].impl_from);
		}
	t->is_twin = true;
	drop_ablated_expectations(t);
	*out = t;
	return 0;
}
