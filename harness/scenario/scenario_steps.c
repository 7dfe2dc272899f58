/* The scenario's `steps` section: one object per step, its kind in `do`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "qphs/frame.h"
#include "qphs/rdma.h"
#include "cli/labwords.h"
#include "scenario_int.h"

/* Which keys each kind takes besides do, name and deadline_ms. */
static const struct {
	const char *word;
	const char *keys[8];
} kinds[QPLAB_STEP_KIND_COUNT] = {
	[QPLAB_STEP_CONNECT] = {"connect", {"from", "to", "to_address", "to_device", "peer_posts"}},
	[QPLAB_STEP_CONNECT_BOTH] = {"connect_both", {"hosts", "rounds", "barrier_ms"}},
	[QPLAB_STEP_DISCONNECT] = {"disconnect", {"from", "to"}},
	[QPLAB_STEP_LINK_DOWN] = {"link_down", {"host"}},
	[QPLAB_STEP_LINK_UP] = {"link_up", {"host"}},
	[QPLAB_STEP_NETEM_ON] = {"netem_on", {"host", "netem"}},
	[QPLAB_STEP_NETEM_OFF] = {"netem_off", {"host"}},
	[QPLAB_STEP_SET_MTU] = {"set_mtu", {"host", "mtu"}},
	[QPLAB_STEP_BLACKHOLE] = {"blackhole", {"host", "peer"}},
	[QPLAB_STEP_UNBLACKHOLE] = {"unblackhole", {"host", "peer"}},
	[QPLAB_STEP_DELETE_DEVICE] = {"delete_device", {"host"}},
	[QPLAB_STEP_KILL_AGENT] = {"kill_agent", {"host"}},
	[QPLAB_STEP_START_AGENT] = {"start_agent", {"host"}},
	[QPLAB_STEP_RESTART_AGENT] = {"restart_agent", {"host", "down_ms"}},
	[QPLAB_STEP_RAW_FRAME] = {"raw_frame", {"to", "hex", "kind", "from"}},
	[QPLAB_STEP_DATAPATH] = {"datapath", {"from", "to", "bytes", "read_only", "rkey", "verb", "on_posted", "count"}},
	[QPLAB_STEP_WAIT] = {"wait", {"host", "until"}},
	[QPLAB_STEP_SNAPSHOT] = {"snapshot", {NULL}},
	[QPLAB_STEP_REGION] = {"region", {"host", "access"}},
	[QPLAB_STEP_VERIFY] = {"verify", {"host", "of"}},
	[QPLAB_STEP_ADD_ADDRESS] = {"add_address", {"host"}},
	[QPLAB_STEP_REMOVE_ADDRESS] = {"remove_address", {"host"}},
	[QPLAB_STEP_RESTORE_ADDRESS] = {"restore_address", {"host"}},
	[QPLAB_STEP_DISABLE_IPV6] = {"disable_ipv6", {"host"}},
	[QPLAB_STEP_FIREWALL_DROP] = {"firewall_drop", {"host"}},
	[QPLAB_STEP_FIREWALL_REJECT] = {"firewall_reject", {"host"}},
	[QPLAB_STEP_FIREWALL_OFF] = {"firewall_off", {"host"}},
	[QPLAB_STEP_NOOP] = {"noop", {NULL}},
	[QPLAB_STEP_FAN_IN] = {"fan_in", {"from", "to", "count", "bytes"}},
};

const char *qplab_step_kind_name(enum qplab_step_kind kind)
{
	return kind < QPLAB_STEP_KIND_COUNT ? kinds[kind].word : "?";
}

int qplab__sc_host_key(struct sc_ctx *ctx, json_object *o, const char *path, const char *key,
		       bool required)
{
	const char *s;
	char sub[SC_PATH_MAX];

	if (!qplab__sc_str(ctx, o, path, key, required, &s))
		return -1;
	qplab__sc_join(sub, sizeof(sub), path, key);
	return qplab__sc_host(ctx, qplab__sc_line(ctx, sub), s);
}

static int host_key(struct sc_ctx *ctx, json_object *o, const char *path, const char *key)
{
	return qplab__sc_host_key(ctx, o, path, key, true);
}

/* Hex digits, spaces allowed between bytes ("08 00 00 00 ..."). */
static void parse_hex(struct sc_ctx *ctx, int line, const char *hex, struct qplab_step *st)
{
	size_t n = strlen(hex);

	st->frame = malloc(n / 2 + 1);
	if (!st->frame)
		return;
	if (qphs_hex_decode(hex, n, 0, st->frame, n / 2 + 1, &st->frame_len, NULL))
		qplab__sc_err(ctx, line, "\"hex\" holds pairs of hex digits, optionally separated by spaces");
	else if (st->frame_len == 0)
		qplab__sc_err(ctx, line, "\"hex\" is empty");
}

static void parse_raw_frame(struct sc_ctx *ctx, json_object *o, const char *path,
			    struct qplab_step *st)
{
	const char *hex = NULL, *kind = NULL;
	int code;

	st->to = host_key(ctx, o, path, "to");
	qplab__sc_str(ctx, o, path, "hex", false, &hex);
	qplab__sc_str(ctx, o, path, "kind", false, &kind);
	if (!hex == !kind) {
		qplab__sc_err(ctx, st->line, "raw_frame takes exactly one of \"hex\" and \"kind\"");
		return;
	}
	if (hex) {
		parse_hex(ctx, st->line, hex, st);
		return;
	}
	/* A named bad frame is a frame FAULT of the table (-1000..-1019). */
	if (!qphs_errcode_by_name(kind, &code) || strcmp(qphs_errfault(code), kind) ||
	    code > -1000 || code < -1019) {
		qplab__sc_err(ctx, st->line, "unknown bad-frame kind \"%s\" (a frame FAULT name of the error table)",
			      kind);
		return;
	}
	snprintf(st->frame_kind, sizeof(st->frame_kind), "%s", kind);
}

/* raw_frame: `from` sends a stale ready-ACK (kind "stale_ack") to `to`.
 * Bytes or a named bad frame go from `from`'s agent to `to`'s daemon over
 * the lab network when `from` is given, else from `to`'s own agent to its
 * daemon (over loopback: nothing crosses the lab wire). */
static void parse_raw_frame_from(struct sc_ctx *ctx, json_object *o, const char *path,
				 struct qplab_step *st)
{
	const char *kind = NULL;

	qplab__sc_str(ctx, o, path, "kind", false, &kind);
	if (kind && !strcmp(kind, "stale_ack")) {
		snprintf(st->frame_kind, sizeof(st->frame_kind), "%s", kind);
		st->to = host_key(ctx, o, path, "to");
		st->from = host_key(ctx, o, path, "from");
		if (json_object_object_get_ex(o, "hex", NULL))
			qplab__sc_err(ctx, st->line, "raw_frame takes exactly one of \"hex\" and \"kind\"");
		if (st->from >= 0 && st->from == st->to)
			qplab__sc_err(ctx, st->line, "a stale ACK goes to another host");
		return;
	}
	parse_raw_frame(ctx, o, path, st);
	if (!json_object_object_get_ex(o, "from", NULL))
		return;
	st->from = host_key(ctx, o, path, "from");
	if (st->from >= 0 && st->from == st->to)
		qplab__sc_err(ctx, st->line, "raw_frame: \"from\" is a host other than \"to\" (without "
			      "\"from\", \"to\"'s own agent sends the frame to its daemon)");
}

/* hosts[] from the array arr (its key in the step), each host named once
 * (what: the step's word, for the message). */
static void host_list(struct sc_ctx *ctx, json_object *arr, const char *path, const char *key,
		      const char *what, struct qplab_step *st)
{
	size_t n = json_object_array_length(arr);

	for (size_t i = 0; i < n; i++) {
		const char *name;

		st->hosts[i] = qplab__sc_elem_str(ctx, arr, path, key, i, &name)
				       ? qplab__sc_host(ctx, st->line, name) : -1;
		for (size_t k = 0; k < i; k++)
			if (st->hosts[i] >= 0 && st->hosts[i] == st->hosts[k])
				qplab__sc_err(ctx, st->line, "%s names host \"%s\" twice", what, name);
	}
	st->nhosts = n;
}

static void parse_connect_both(struct sc_ctx *ctx, json_object *o, const char *path,
			       struct qplab_step *st)
{
	json_object *hosts = qplab__sc_get(ctx, o, path, "hosts", json_type_array, true);
	size_t n = hosts ? json_object_array_length(hosts) : 0;
	long v;

	st->rounds = 1;
	st->barrier_ms = 200;
	if (hosts && (n < 2 || n > QPLAB_MAX_HOSTS)) {
		qplab__sc_err(ctx, st->line, "connect_both names 2 to %d hosts", QPLAB_MAX_HOSTS);
	} else if (hosts) {
		host_list(ctx, hosts, path, "hosts", "connect_both", st);
	}
	if (qplab__sc_int(ctx, o, path, "rounds", 1, 10000, &v))
		st->rounds = (int)v;
	if (qplab__sc_int(ctx, o, path, "barrier_ms", 1, 60000, &v))
		st->barrier_ms = (int)v;
}

static void parse_connect(struct sc_ctx *ctx, json_object *o, const char *path,
			  struct qplab_step *st)
{
	const char *addr;
	bool b;

	st->from = host_key(ctx, o, path, "from");
	if (qplab__sc_str(ctx, o, path, "to_address", false, &addr)) {
		if (json_object_object_get_ex(o, "to", NULL))
			qplab__sc_err(ctx, st->line, "connect takes \"to\" or \"to_address\", not both");
		if (json_object_object_get_ex(o, "to_device", NULL))
			qplab__sc_err(ctx, st->line, "to_device goes with \"to\", not \"to_address\"");
		if (json_object_object_get_ex(o, "peer_posts", NULL))
			qplab__sc_err(ctx, st->line, "peer_posts goes with \"to\", not \"to_address\"");
		if (strcmp(addr, "unowned") && strcmp(addr, "unroutable") && strcmp(addr, "closed_port") &&
		    strcmp(addr, "unresolvable"))
			qplab__sc_err(ctx, st->line,
				      "to_address is \"unowned\", \"unroutable\", \"closed_port\" or \"unresolvable\"");
		else
			snprintf(st->to_address, sizeof(st->to_address), "%s", addr);
		return;
	}
	st->to = host_key(ctx, o, path, "to");
	if (st->from >= 0 && st->from == st->to)
		qplab__sc_err(ctx, st->line, "a host does not connect to itself");
	if (qplab__sc_bool(ctx, o, path, "peer_posts", &b))
		st->peer_posts = b;
	if (qplab__sc_str(ctx, o, path, "to_device", false, &addr)) {
		if (!*addr || strlen(addr) >= sizeof(st->to_device) ||
		    strspn(addr, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
			    strlen(addr))
			qplab__sc_err(ctx, st->line, "to_device is a device name: 1-63 of a-z, A-Z, 0-9, _ . -");
		else
			snprintf(st->to_device, sizeof(st->to_device), "%s", addr);
	}
}

/* The keys some kinds add: netem, mtu, down_ms, until. */
static void parse_extras(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_step *st)
{
	json_object *v;
	char sub[SC_PATH_MAX];
	long n;

	if (st->kind == QPLAB_STEP_NETEM_ON &&
	    (v = qplab__sc_get(ctx, o, path, "netem", json_type_object, true))) {
		qplab__sc_join(sub, sizeof(sub), path, "netem");
		qplab__sc_netem(ctx, v, sub, &st->netem);
	}
	if (st->kind == QPLAB_STEP_SET_MTU && !qplab__sc_int(ctx, o, path, "mtu", 576, 65535, &n))
		qplab__sc_err(ctx, st->line, "set_mtu needs \"mtu\" (576..65535)");
	else if (st->kind == QPLAB_STEP_SET_MTU)
		st->mtu = (int)n;
	if (qplab__sc_int(ctx, o, path, "down_ms", 0, 600000, &n))
		st->down_ms = (int)n;
	if (st->kind == QPLAB_STEP_WAIT) {
		if (st->deadline_ms < 0)
			qplab__sc_err(ctx, st->line, "a wait needs \"deadline_ms\"");
		if ((v = qplab__sc_get(ctx, o, path, "until", json_type_object, true))) {
			qplab__sc_join(sub, sizeof(sub), path, "until");
			qplab__sc_assert(ctx, v, sub, &st->until, NULL);
			if (st->until.nfields == 0)
				qplab__sc_err(ctx, st->line, "\"until\" asserts nothing");
			if (st->until.nhwc)
				qplab__sc_err(ctx, st->line, "a wait's \"until\" cannot assert hw_counters "
					      "(the change over a step is known once the step is over)");
		}
	}
}

/* A word of words[] in key (absent: index 0); wrong words name the choices. */
static int word_key(struct sc_ctx *ctx, json_object *o, const char *path, const char *key,
		    const char *const *words, const char *choices)
{
	const char *w;
	int k;

	if (!qplab__sc_str(ctx, o, path, key, false, &w))
		return 0;
	if ((k = qplab_word_index(words, w)) < 0)
		qplab__sc_err(ctx, qplab__sc_line(ctx, path), "\"%s\" is one of %s, not \"%s\"",
			      key, choices, w);
	return k < 0 ? 0 : k;
}

/* A burst datapath's count: required with "verb": "burst", refused
 * without it (CQ overflow scenarios, docs/scenarios.md). */
static void parse_burst_count(struct sc_ctx *ctx, json_object *o, const char *path,
			      struct qplab_step *st)
{
	long n;
	int have = qplab__sc_int(ctx, o, path, "count", 1, QPHS_BURST_MAX, &n);

	if (have)
		st->count = (int)n;
	if (st->kind != QPLAB_STEP_DATAPATH)
		return;
	if (st->verb == QPHS_DATA_BURST && !have)
		qplab__sc_err(ctx, st->line, "a \"burst\" datapath needs \"count\" (1..%d)",
			      QPHS_BURST_MAX);
	else if (st->verb != QPHS_DATA_BURST && have)
		qplab__sc_err(ctx, st->line, "\"count\" belongs to a \"burst\" datapath only");
	if (st->verb == QPHS_DATA_BURST && (st->rkey_mode || st->read_only))
		qplab__sc_err(ctx, st->line, "a \"burst\" datapath takes no \"rkey\" or \"read_only\"");
}

/* fan_in's from: one host, or an array of 1..QPLAB_MAX_HOSTS - 1
 * different hosts (into hosts[]; from is the first). */
static void parse_fan_in_from(struct sc_ctx *ctx, json_object *o, const char *path,
			      struct qplab_step *st)
{
	json_object *v = NULL;
	size_t n;

	if (json_object_object_get_ex(o, "from", &v) && json_object_is_type(v, json_type_array)) {
		n = json_object_array_length(v);
		if (n < 1 || n > QPLAB_MAX_HOSTS - 1) {
			qplab__sc_err(ctx, st->line, "fan_in: \"from\" names 1 to %d hosts",
				      QPLAB_MAX_HOSTS - 1);
			return;
		}
		host_list(ctx, v, path, "from", "fan_in", st);
	} else {
		st->hosts[0] = host_key(ctx, o, path, "from");
		st->nhosts = 1;
	}
	st->from = st->hosts[0];
}

/* fan_in: from (hosts), to (another host) and a required count. */
static void parse_fan_in(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_step *st)
{
	long n;

	parse_fan_in_from(ctx, o, path, st);
	st->to = host_key(ctx, o, path, "to");
	if (qplab__sc_int(ctx, o, path, "count", 1, QPLAB_FAN_IN_MAX, &n))
		st->count = (int)n;
	else
		qplab__sc_err(ctx, st->line, "fan_in needs \"count\" (1..%d)", QPLAB_FAN_IN_MAX);
	if (qplab__sc_int(ctx, o, path, "bytes", 1, QPHS_CHECK_REGION_BYTES, &n))
		st->bytes = n;
	for (size_t i = 0; i < st->nhosts; i++)
		if (st->to >= 0 && st->hosts[i] == st->to)
			qplab__sc_err(ctx, st->line, "fan_in: \"to\" is one of \"from\"");
}

/* datapath's rkey (descriptor, bad, stale) and verb (check, write, send, burst). */
static void parse_datapath_words(struct sc_ctx *ctx, json_object *o, const char *path,
				 struct qplab_step *st)
{
	st->rkey_mode = word_key(ctx, o, path, "rkey", qplab_rkey_words, "descriptor, bad, stale");
	st->verb = word_key(ctx, o, path, "verb", qplab_verb_words, "check, write, send, burst");
	parse_burst_count(ctx, o, path, st);
	if (st->kind == QPLAB_STEP_DATAPATH && st->verb == QPHS_DATA_SEND &&
	    (st->rkey_mode || st->read_only))
		qplab__sc_err(ctx, st->line, "a \"send\" datapath takes no \"rkey\" or \"read_only\"");
	if (st->kind == QPLAB_STEP_DATAPATH && st->verb == QPHS_DATA_WRITE && st->read_only)
		qplab__sc_err(ctx, st->line, "a \"write\" datapath is not \"read_only\"");
}

/* region's access: an array of distinct access words (empty: no access). */
static void parse_access(struct sc_ctx *ctx, json_object *o, const char *path,
			 struct qplab_step *st)
{
	json_object *a = qplab__sc_get(ctx, o, path, "access", json_type_array, true);
	int line = qplab__sc_line(ctx, path);

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		int k = json_object_is_type(e, json_type_string)
				? qplab_word_index(qplab_access_words, json_object_get_string(e))
				: -1;

		if (k < 0)
			qplab__sc_err(ctx, line, "\"access\"[%zu] is one of \"local_write\", "
				      "\"remote_write\", \"remote_read\"", i);
		else if (st->access & (1 << k))
			qplab__sc_err(ctx, line, "\"access\" names \"%s\" twice",
				      qplab_access_words[k]);
		else
			st->access |= 1 << k;
	}
	if ((st->access & 2) && !(st->access & 1))
		qplab__sc_err(ctx, line, "\"remote_write\" needs \"local_write\" (ibv_reg_mr refuses it alone)");
}

/* verify's `of`: an earlier datapath "write" (or "burst": the same
 * pattern, written count times) step into this host. */
static void parse_verify_of(struct sc_ctx *ctx, json_object *o, const char *path,
			    struct qplab_step *st)
{
	const char *name;
	int k;

	st->of = -1;
	if (!qplab__sc_str(ctx, o, path, "of", true, &name))
		return;
	k = qplab_plan_step(ctx->plan, name);
	if (k < 0 || ctx->plan->steps[k].kind != QPLAB_STEP_DATAPATH ||
	    (ctx->plan->steps[k].verb != QPHS_DATA_WRITE &&
	     ctx->plan->steps[k].verb != QPHS_DATA_BURST))
		qplab__sc_err(ctx, st->line, "\"of\": \"%s\" is not an earlier datapath step with "
			      "\"verb\": \"write\" or \"burst\"", name);
	else if (st->host >= 0 && ctx->plan->steps[k].to != st->host)
		qplab__sc_err(ctx, st->line, "\"of\": step \"%s\" wrote to another host", name);
	else
		st->of = k;
}

/* Each kind's own keys. */
static void parse_kind(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_step *st)
{
	long n;
	bool b;

	switch (st->kind) {
	case QPLAB_STEP_CONNECT:
		parse_connect(ctx, o, path, st);
		break;
	case QPLAB_STEP_CONNECT_BOTH:
		parse_connect_both(ctx, o, path, st);
		break;
	case QPLAB_STEP_DISCONNECT:
	case QPLAB_STEP_DATAPATH:
		st->from = host_key(ctx, o, path, "from");
		st->to = host_key(ctx, o, path, "to");
		if (qplab__sc_int(ctx, o, path, "bytes", 1, 1L << 30, &n))
			st->bytes = n;
		if (qplab__sc_bool(ctx, o, path, "read_only", &b))
			st->read_only = b;
		parse_datapath_words(ctx, o, path, st);
		if (st->kind == QPLAB_STEP_DATAPATH)
			qplab__sc_on_posted(ctx, o, path, st);
		/* burst posts on its own, never through the on_posted hook. */
		if (st->verb == QPHS_DATA_BURST && st->on_posted)
			qplab__sc_err(ctx, st->line, "a \"burst\" datapath takes no \"on_posted\"");
		break;
	case QPLAB_STEP_FAN_IN:
		parse_fan_in(ctx, o, path, st);
		break;
	case QPLAB_STEP_REGION:
		st->host = host_key(ctx, o, path, "host");
		parse_access(ctx, o, path, st);
		break;
	case QPLAB_STEP_VERIFY:
		st->host = host_key(ctx, o, path, "host");
		parse_verify_of(ctx, o, path, st);
		break;
	case QPLAB_STEP_RAW_FRAME:
		parse_raw_frame_from(ctx, o, path, st);
		break;
	case QPLAB_STEP_BLACKHOLE:
	case QPLAB_STEP_UNBLACKHOLE:
		st->host = host_key(ctx, o, path, "host");
		st->peer = host_key(ctx, o, path, "peer");
		if (st->host >= 0 && st->host == st->peer)
			qplab__sc_err(ctx, st->line, "a host does not blackhole itself");
		break;
	case QPLAB_STEP_SNAPSHOT:
		if (!st->name[0])
			qplab__sc_err(ctx, st->line, "a snapshot needs a \"name\"");
		break;
	case QPLAB_STEP_NOOP: /* no host: it does nothing */
		break;
	default:
		st->host = host_key(ctx, o, path, "host");
	}
	parse_extras(ctx, o, path, st);
}

static void parse_step(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_step *st)
{
	const char *word, *allowed[12] = {"do", "name", "deadline_ms"};
	size_t k;
	long v;

	st->line = qplab__sc_line(ctx, path);
	st->host = st->from = st->to = st->peer = -1;
	st->posted_kill = st->posted_netem_off = -1;
	for (int i = 0; i < QPLAB_MAX_HOSTS; i++)
		st->hosts[i] = -1;
	st->deadline_ms = st->mtu = -1;
	st->bytes = 4096;
	qplab__sc_assert_init(&st->until);
	if (!qplab__sc_str(ctx, o, path, "do", true, &word))
		return;
	for (k = 0; k < QPLAB_STEP_KIND_COUNT; k++)
		if (!strcmp(kinds[k].word, word))
			break;
	if (k == QPLAB_STEP_KIND_COUNT) {
		qplab__sc_err(ctx, st->line, "unknown step \"%s\"", word);
		return;
	}
	st->kind = (enum qplab_step_kind)k;
	for (size_t i = 0; i < 8 && kinds[k].keys[i]; i++)
		allowed[3 + i] = kinds[k].keys[i];
	qplab__sc_only_keys(ctx, o, path, kinds[k].word, allowed);
	if (qplab__sc_str(ctx, o, path, "name", false, &word)) {
		if (!*word || strspn(word, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(word))
			qplab__sc_err(ctx, st->line, "step names are a-z, 0-9, _ and -");
		else if (qplab_plan_step(ctx->plan, word) >= 0)
			qplab__sc_err(ctx, st->line, "step name \"%s\" is used twice", word);
		else
			qplab__sc_copy(ctx, st->line, st->name, sizeof(st->name), word, "step name");
	}
	if (qplab__sc_int(ctx, o, path, "deadline_ms", 1, 3600000, &v))
		st->deadline_ms = (int)v;
	parse_kind(ctx, o, path, st);
}

void qplab__sc_steps(struct sc_ctx *ctx, json_object *root)
{
	json_object *steps = qplab__sc_get(ctx, root, "", "steps", json_type_array, true);
	struct qplab_plan *plan = ctx->plan;
	char path[SC_PATH_MAX];
	size_t n;

	if (!steps)
		return;
	n = json_object_array_length(steps);
	if (n == 0 || n > QPLAB_MAX_STEPS) {
		qplab__sc_err(ctx, qplab__sc_line(ctx, "/steps"), "a scenario has 1..%d steps",
			      QPLAB_MAX_STEPS);
		return;
	}
	plan->steps = calloc(n, sizeof(*plan->steps));
	if (!plan->steps)
		return;
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(steps, i);
		qplab__sc_join_index(path, sizeof(path), "/steps", i);
		if (!json_object_is_type(o, json_type_object)) {
			qplab__sc_err(ctx, qplab__sc_line(ctx, path), "a step is an object");
			continue;
		}
		/* Counted before parsing so that later steps see its name. */
		parse_step(ctx, o, path, &plan->steps[plan->nsteps++]);
	}
}
