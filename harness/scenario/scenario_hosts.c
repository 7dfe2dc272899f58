/* The scenario's `hosts` and `links` sections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "scenario_int.h"

static const char HOST_CHARS[] = "abcdefghijklmnopqrstuvwxyz0123456789";

void qplab__sc_netem(struct sc_ctx *ctx, json_object *obj, const char *path,
		     struct qplab_netem *out)
{
	static const char *const keys[] = {"loss_pct", "delay_ms", "jitter_ms", "traffic", NULL};
	const char *s;
	long v;

	memset(out, 0, sizeof(*out));
	out->set = true;
	snprintf(out->traffic, sizeof(out->traffic), "all");
	qplab__sc_only_keys(ctx, obj, path, "netem", keys);
	if (qplab__sc_int(ctx, obj, path, "loss_pct", 0, 100, &v))
		out->loss_pct = (int)v;
	if (qplab__sc_int(ctx, obj, path, "delay_ms", 0, 60000, &v))
		out->delay_ms = (int)v;
	if (qplab__sc_int(ctx, obj, path, "jitter_ms", 0, 60000, &v))
		out->jitter_ms = (int)v;
	if (qplab__sc_str(ctx, obj, path, "traffic", false, &s)) {
		if (strcmp(s, "all") && strcmp(s, "roce") && strcmp(s, "handshake"))
			qplab__sc_err(ctx, qplab__sc_line(ctx, path),
				      "netem traffic is \"all\", \"roce\" or \"handshake\", not \"%s\"", s);
		else
			snprintf(out->traffic, sizeof(out->traffic), "%s", s);
	}
}

/* "types": the request types a fault applies to (bit 1 << type, bit 4 for
 * the old protocol, as struct qphs_fault). */
static void fault_types(struct sc_ctx *ctx, json_object *obj, const char *path, struct qplab_fault *f)
{
	static const char *const names[] = {"connection", "metadata", "notify", "probe", "old-protocol"};
	json_object *arr = qplab__sc_get(ctx, obj, path, "types", json_type_array, false);
	int line = qplab__sc_line(ctx, path);

	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		const char *s;
		unsigned bit = 0;

		if (!qplab__sc_elem_str(ctx, arr, path, "types", i, &s))
			continue;
		for (unsigned t = 0; t < 5; t++)
			if (!strcmp(s, names[t]))
				bit = 1u << t;
		if (!bit)
			qplab__sc_err(ctx, line, "fault types are connection, metadata, notify, probe, old-protocol");
		f->types |= bit;
	}
}

/* A FAULT name of the error table (the column, not the NAME), or "delay". */
static void parse_fault(struct sc_ctx *ctx, json_object *obj, const char *path,
			struct qplab_fault *f)
{
	static const char *const keys[] = {"name", "ms", "text", "seed", "types", NULL};
	const char *name, *text;
	long v;
	int code;

	f->set = true;
	f->ms = -1;
	f->seed = -1;
	qplab__sc_only_keys(ctx, obj, path, "fault", keys);
	if (!qplab__sc_str(ctx, obj, path, "name", true, &name))
		return;
	int line = qplab__sc_line(ctx, path);
	if (!strcmp(name, "delay")) {
		f->code = 0;
		if (!qplab__sc_int(ctx, obj, path, "ms", 1, 600000, &v))
			qplab__sc_err(ctx, line, "fault \"delay\" needs \"ms\" (1..600000)");
		else
			f->ms = (int)v;
	} else if (!qphs_errcode_by_name(name, &code) || strcmp(qphs_errfault(code), name)) {
		qplab__sc_err(ctx, line, "unknown fault \"%s\" (a FAULT name of the error table, or \"delay\")",
			      name);
		return;
	} else {
		f->code = code;
		if (json_object_object_get_ex(obj, "ms", NULL))
			qplab__sc_err(ctx, line, "\"ms\" belongs to fault \"delay\" only");
	}
	if (qplab__sc_str(ctx, obj, path, "text", false, &text)) {
		if (strcmp(name, "reject"))
			qplab__sc_err(ctx, line, "\"text\" belongs to fault \"reject\" only");
		qplab__sc_copy(ctx, line, f->text, sizeof(f->text), text, "reject text");
	}
	if (qplab__sc_int(ctx, obj, path, "seed", 0, 0x7fffffffL, &v)) {
		if (strcmp(name, "garbage"))
			qplab__sc_err(ctx, line, "\"seed\" belongs to fault \"garbage\" only");
		f->seed = v;
	}
	fault_types(ctx, obj, path, f);
	qplab__sc_copy(ctx, line, f->name, sizeof(f->name), name, "fault name");
}

const char *const qplab_impls[] = {"qplab", "mooncake-compat", "mooncake", NULL};

bool qplab_impl_known(const char *name)
{
	return qplab__sc_in_list(qplab_impls, name);
}

static int tristate(struct sc_ctx *ctx, json_object *o, const char *path, const char *key)
{
	bool b;

	return qplab__sc_bool(ctx, o, path, key, &b) ? b : -1;
}

static int int_or_unset(struct sc_ctx *ctx, json_object *o, const char *path,
			const char *key, long min, long max)
{
	long v;

	return qplab__sc_int(ctx, o, path, key, min, max, &v) ? (int)v : -1;
}

static void parse_advertise(struct sc_ctx *ctx, json_object *o, const char *path,
			    struct qplab_agent_opts *a)
{
	static const char *const keys[] = {"gid", "qpn", "qp_count", "address", NULL};
	const char *s;
	long v;

	qplab__sc_only_keys(ctx, o, path, "advertise", keys);
	if (qplab__sc_str(ctx, o, path, "gid", false, &s))
		a->advertise_gid = qplab__sc_strdup(s);
	if (qplab__sc_int(ctx, o, path, "qpn", 0, 0xffffffffL, &v))
		a->advertise_qpn = v;
	a->advertise_qp_count = int_or_unset(ctx, o, path, "qp_count", 0, 1000);
	if (qplab__sc_str(ctx, o, path, "address", false, &s))
		a->advertise_address = qplab__sc_strdup(s);
}

/* rdma_max: {"hca_handle": N, "hca_object": N}, each optional (max). */
static void parse_rdma_max(struct sc_ctx *ctx, json_object *o, const char *path,
			   struct qplab_agent_opts *a)
{
	static const char *const keys[] = {"hca_handle", "hca_object", NULL};

	qplab__sc_only_keys(ctx, o, path, "rdma_max", keys);
	a->rdma_max = true;
	a->rdma_max_handle = int_or_unset(ctx, o, path, "hca_handle", 0, 1000000);
	a->rdma_max_object = int_or_unset(ctx, o, path, "hca_object", 0, 1000000);
}

static void parse_agent(struct sc_ctx *ctx, json_object *o, const char *path,
			struct qplab_agent_opts *a)
{
	static const char *const keys[] = {"quirk", "mtu_negotiation", "ready_ack", "reset_policy",
					   "strict_reset", "qp_timeout", "qp_retry_cnt",
					   "qp_rnr_retry", "reply_timeout_ms", "old_protocol",
					   "advertise", "delay_passive_rtr_ms", "delay_active_rtr_ms",
					   "mtu_reread",
					   "rd_atomic_clamp", "no_rdma_transport", "sq_psn",
					   "rq_psn", "rdma_max", NULL};
	char sub[SC_PATH_MAX];
	const char *s;
	json_object *adv;
	int line = qplab__sc_line(ctx, path);

	qplab__sc_only_keys(ctx, o, path, "agent", keys);
	if (qplab__sc_str(ctx, o, path, "quirk", false, &s)) {
		if (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(s))
			qplab__sc_err(ctx, line, "quirk profile names are a-z, 0-9, _ and -");
		else
			qplab__sc_copy(ctx, line, a->quirk, sizeof(a->quirk), s, "quirk");
	}
	a->mtu_negotiation = tristate(ctx, o, path, "mtu_negotiation");
	a->ready_ack = tristate(ctx, o, path, "ready_ack");
	a->mtu_reread = tristate(ctx, o, path, "mtu_reread");
	if (qplab__sc_str(ctx, o, path, "reset_policy", false, &s)) {
		if (strcmp(s, "reuse") && strcmp(s, "reconstruct"))
			qplab__sc_err(ctx, line, "reset_policy is \"reuse\" or \"reconstruct\"");
		else
			snprintf(a->reset_policy, sizeof(a->reset_policy), "%s", s);
	}
	a->strict_reset = tristate(ctx, o, path, "strict_reset");
	a->qp_timeout = int_or_unset(ctx, o, path, "qp_timeout", 0, 31);
	a->qp_retry_cnt = int_or_unset(ctx, o, path, "qp_retry_cnt", 0, 7);
	a->qp_rnr_retry = int_or_unset(ctx, o, path, "qp_rnr_retry", 0, 7);
	a->reply_timeout_ms = int_or_unset(ctx, o, path, "reply_timeout_ms", 1, 600000);
	a->old_protocol = tristate(ctx, o, path, "old_protocol");
	a->rd_atomic_clamp = tristate(ctx, o, path, "rd_atomic_clamp");
	a->delay_passive_rtr_ms = int_or_unset(ctx, o, path, "delay_passive_rtr_ms", 0, 600000);
	a->delay_active_rtr_ms = int_or_unset(ctx, o, path, "delay_active_rtr_ms", 0, 600000);
	a->no_rdma_transport = tristate(ctx, o, path, "no_rdma_transport");
	a->sq_psn = int_or_unset(ctx, o, path, "sq_psn", 0, 0xffffff);
	a->rq_psn = int_or_unset(ctx, o, path, "rq_psn", 0, 0xffffff);
	adv = qplab__sc_get(ctx, o, path, "advertise", json_type_object, false);
	if (adv) {
		qplab__sc_join(sub, sizeof(sub), path, "advertise");
		parse_advertise(ctx, adv, sub, a);
	}
	if ((adv = qplab__sc_get(ctx, o, path, "rdma_max", json_type_object, false))) {
		qplab__sc_join(sub, sizeof(sub), path, "rdma_max");
		parse_rdma_max(ctx, adv, sub, a);
	}
}

static void parse_env(struct sc_ctx *ctx, json_object *o, const char *path,
		      struct qplab_host *h)
{
	char sub[SC_PATH_MAX];
	size_t n = (size_t)json_object_object_length(o);

	h->env = calloc(n ? n : 1, sizeof(*h->env));
	if (!h->env)
		return;
	json_object_object_foreach(o, key, val) {
		qplab__sc_join(sub, sizeof(sub), path, key);
		int line = qplab__sc_line(ctx, sub);
		bool ok_name = (!strncmp(key, "MC_", 3) && key[3] &&
				strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(key)) ||
			       !strcmp(key, "NCCL_IB_GID_INDEX");
		if (!ok_name) {
			qplab__sc_err(ctx, line, "env holds MC_* variables (and NCCL_IB_GID_INDEX), not \"%s\"", key);
			continue;
		}
		if (!json_object_is_type(val, json_type_string) && !json_object_is_type(val, json_type_int)) {
			qplab__sc_err(ctx, line, "env value of %s must be a string or an integer", key);
			continue;
		}
		h->env[h->nenv].name = qplab__sc_strdup(key);
		h->env[h->nenv].value = qplab__sc_strdup(json_object_get_string(val));
		h->nenv++;
	}
}

static void parse_host(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_host *h)
{
	static const char *const keys[] = {"mtu", "ipv6", "addresses", "impl", "env", "agent",
					   "fault", "device", NULL};
	char sub[SC_PATH_MAX];
	const char *s;
	json_object *v;
	bool b;

	h->agent.advertise_qpn = -1;
	qplab__sc_only_keys(ctx, o, path, "a host", keys);
	h->mtu = int_or_unset(ctx, o, path, "mtu", 576, 65535);
	if (qplab__sc_bool(ctx, o, path, "ipv6", &b))
		h->ipv6 = b;
	if (qplab__sc_str(ctx, o, path, "addresses", false, &s)) {
		if (strcmp(s, "default") && strcmp(s, "ipv6_only") && strcmp(s, "none"))
			qplab__sc_err(ctx, h->line, "addresses is \"default\", \"ipv6_only\" or \"none\"");
		else if (strcmp(s, "default"))
			snprintf(h->addresses, sizeof(h->addresses), "%s", s);
	}
	if (qplab__sc_str(ctx, o, path, "device", false, &s)) {
		if (strcmp(s, "first") && strcmp(s, "second"))
			qplab__sc_err(ctx, h->line, "device is \"first\" or \"second\"");
		h->second_device = !strcmp(s, "second");
	}
	snprintf(h->impl, sizeof(h->impl), "qplab");
	if (qplab__sc_str(ctx, o, path, "impl", false, &s)) {
		if (!qplab__sc_in_list(qplab_impls, s))
			qplab__sc_err(ctx, h->line, "impl \"%s\": one of qplab, mooncake-compat, mooncake", s);
		else
			snprintf(h->impl, sizeof(h->impl), "%s", s);
	}
	if ((v = qplab__sc_get(ctx, o, path, "env", json_type_object, false))) {
		qplab__sc_join(sub, sizeof(sub), path, "env");
		parse_env(ctx, v, sub, h);
	}
	/* Defaults ("unset") first: parse_agent overwrites what the file sets. */
	h->agent.mtu_negotiation = h->agent.ready_ack = h->agent.strict_reset = -1;
	h->agent.qp_timeout = h->agent.qp_retry_cnt = h->agent.qp_rnr_retry = -1;
	h->agent.reply_timeout_ms = h->agent.old_protocol = -1;
	h->agent.delay_passive_rtr_ms = h->agent.rd_atomic_clamp = -1;
	h->agent.delay_active_rtr_ms = -1;
	h->agent.sq_psn = h->agent.rq_psn = -1;
	h->agent.mtu_reread = h->agent.no_rdma_transport = -1;
	h->agent.advertise_qp_count = -1;
	if ((v = qplab__sc_get(ctx, o, path, "agent", json_type_object, false))) {
		qplab__sc_join(sub, sizeof(sub), path, "agent");
		parse_agent(ctx, v, sub, &h->agent);
	}
	if ((v = qplab__sc_get(ctx, o, path, "fault", json_type_object, false))) {
		qplab__sc_join(sub, sizeof(sub), path, "fault");
		parse_fault(ctx, v, sub, &h->fault);
	}
}

void qplab__sc_hosts(struct sc_ctx *ctx, json_object *root)
{
	json_object *hosts = qplab__sc_get(ctx, root, "", "hosts", json_type_object, true);
	struct qplab_plan *plan = ctx->plan;
	char path[SC_PATH_MAX];

	if (!hosts)
		return;
	if (json_object_object_length(hosts) == 0)
		qplab__sc_err(ctx, qplab__sc_line(ctx, "/hosts"), "a scenario needs at least one host");
	json_object_object_foreach(hosts, name, val) {
		qplab__sc_join(path, sizeof(path), "/hosts", name);
		int line = qplab__sc_line(ctx, path);
		if (plan->nhosts == QPLAB_MAX_HOSTS) {
			qplab__sc_err(ctx, line, "more than %d hosts", QPLAB_MAX_HOSTS);
			break;
		}
		if (!*name || strlen(name) > 8 || !strchr("abcdefghijklmnopqrstuvwxyz", name[0]) ||
		    strspn(name, HOST_CHARS) != strlen(name)) {
			qplab__sc_err(ctx, line, "host name \"%s\": 1-8 characters a-z, 0-9, starting with a letter",
				      name);
			continue;
		}
		if (!json_object_is_type(val, json_type_object)) {
			qplab__sc_err(ctx, line, "host \"%s\" must be an object", name);
			continue;
		}
		struct qplab_host *h = &plan->hosts[plan->nhosts++];
		snprintf(h->name, sizeof(h->name), "%s", name);
		h->line = line;
		parse_host(ctx, val, path, h);
	}
}

static void parse_link(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_link *l)
{
	static const char *const keys[] = {"between", "mtu", "netem", NULL};
	json_object *between = qplab__sc_get(ctx, o, path, "between", json_type_array, true);
	json_object *netem;
	char sub[SC_PATH_MAX];
	long v;

	l->line = qplab__sc_line(ctx, path);
	l->a = l->b = -1;
	l->mtu = -1;
	qplab__sc_only_keys(ctx, o, path, "a link", keys);
	if (between) {
		if (json_object_array_length(between) != 2) {
			qplab__sc_err(ctx, l->line, "\"between\" names exactly two hosts");
		} else {
			const char *ha, *hb;

			if (qplab__sc_elem_str(ctx, between, path, "between", 0, &ha))
				l->a = qplab__sc_host(ctx, l->line, ha);
			if (qplab__sc_elem_str(ctx, between, path, "between", 1, &hb))
				l->b = qplab__sc_host(ctx, l->line, hb);
			if (l->a >= 0 && l->a == l->b)
				qplab__sc_err(ctx, l->line, "a link joins two different hosts");
		}
	}
	if (qplab__sc_int(ctx, o, path, "mtu", 576, 65535, &v))
		l->mtu = (int)v;
	if ((netem = qplab__sc_get(ctx, o, path, "netem", json_type_object, false))) {
		qplab__sc_join(sub, sizeof(sub), path, "netem");
		qplab__sc_netem(ctx, netem, sub, &l->netem);
	}
}

void qplab__sc_links(struct sc_ctx *ctx, json_object *root)
{
	json_object *links = qplab__sc_get(ctx, root, "", "links", json_type_array, false);
	struct qplab_plan *plan = ctx->plan;
	char path[SC_PATH_MAX];
	size_t n;

	if (!links)
		return;
	n = json_object_array_length(links);
	plan->links = calloc(n ? n : 1, sizeof(*plan->links));
	if (!plan->links)
		return;
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(links, i);
		qplab__sc_join_index(path, sizeof(path), "/links", i);
		if (!json_object_is_type(o, json_type_object)) {
			qplab__sc_err(ctx, qplab__sc_line(ctx, path), "a link is an object");
			continue;
		}
		parse_link(ctx, o, path, &plan->links[plan->nlinks++]);
	}
}

/* "placements": [["b"], ["a"], ["a", "b"]] -- which hosts run Mooncake,
 * one set per placement; each set non-empty, no set twice. */
void qplab__sc_placements(struct sc_ctx *ctx, json_object *root)
{
	json_object *arr = qplab__sc_get(ctx, root, "", "placements", json_type_array, false);
	struct qplab_plan *plan = ctx->plan;
	char path[SC_PATH_MAX];

	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *set = json_object_array_get_idx(arr, i);
		unsigned bits = 0;
		int line;

		qplab__sc_join_index(path, sizeof(path), "/placements", i);
		line = qplab__sc_line(ctx, path);
		if (plan->nplacements == QPLAB_MAX_PLACEMENTS) {
			qplab__sc_err(ctx, line, "more than %d placements", QPLAB_MAX_PLACEMENTS);
			return;
		}
		if (!json_object_is_type(set, json_type_array) || !json_object_array_length(set)) {
			qplab__sc_err(ctx, line, "a placement is a non-empty array of host names (the hosts that run Mooncake)");
			continue;
		}
		for (size_t k = 0; k < json_object_array_length(set); k++) {
			json_object *v = json_object_array_get_idx(set, k);
			int h = json_object_is_type(v, json_type_string)
					? qplab__sc_host(ctx, line, json_object_get_string(v))
					: (qplab__sc_err(ctx, line, "a placement lists host names"), -1);

			if (h >= 0 && (bits & (1u << h)))
				qplab__sc_err(ctx, line, "host \"%s\" twice in one placement", plan->hosts[h].name);
			if (h >= 0)
				bits |= 1u << h;
		}
		for (size_t k = 0; k < plan->nplacements; k++)
			if (plan->placements[k] == bits)
				qplab__sc_err(ctx, line, "the same placement twice");
		plan->placements[plan->nplacements++] = bits;
	}
}
