/*
 * Scenario files -> plans.  Three passes: comments become spaces (so
 * offsets keep their lines), json-c parses strictly (syntax errors get the
 * line of json-c's byte offset), the pre-scan maps keys to lines and finds
 * duplicates, then the sections are read into the plan, every problem
 * reported with its line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "qphs/json.h"
#include "scenario_int.h"
#include "wire.h"

const char *const qplab_capabilities[] = {
	"rxe_netns", /* rxe keeps a UDP socket per namespace (probe: netns_rxe) */
	"netem",     /* tc qdisc netem can be attached to lab interfaces */
	"ipv6",      /* lab interfaces carry IPv6 addresses and GIDs */
	"kvm",       /* the vm backend runs with KVM, not TCG */
	"rdma_cgroup", /* the kernel has the rdma cgroup controller (/proc/cgroups) */
	"veth",      /* a two-host link is a veth pair on one kernel (the local
			topologies; never the hosts backend): a link taken down
			drops the peer end's carrier too */
	NULL,
};

static const char *const timing_names[] = {
#define QPLAB__T_NAME(id, name) name,
	QPLAB_TIMINGS(QPLAB__T_NAME)
#undef QPLAB__T_NAME
};

const char *qplab_timing_name(int t)
{
	return t >= 0 && t < QPLAB_TIME_COUNT ? timing_names[t] : NULL;
}

int qplab_plan_host(const struct qplab_plan *plan, const char *name)
{
	for (size_t i = 0; i < plan->nhosts; i++)
		if (!strcmp(plan->hosts[i].name, name))
			return (int)i;
	return -1;
}

int qplab_plan_step(const struct qplab_plan *plan, const char *name)
{
	for (size_t i = 0; i < plan->nsteps; i++)
		if (plan->steps[i].name[0] && !strcmp(plan->steps[i].name, name))
			return (int)i;
	return -1;
}

bool qplab_plan_has_tag(const struct qplab_plan *plan, const char *tag)
{
	for (size_t i = 0; i < plan->ntags; i++)
		if (!strcmp(plan->tags[i], tag))
			return true;
	return false;
}

/* "scenarios/mtu/peer-smaller.json" -> "mtu/peer-smaller". */
static void plan_id(struct qplab_plan *plan, const char *file)
{
	char buf[sizeof(plan->id)];
	char *base, *dot, *topic;

	snprintf(buf, sizeof(buf), "%s", file);
	dot = strrchr(buf, '.');
	if (dot && !strchr(dot, '/'))
		*dot = '\0';
	base = strrchr(buf, '/');
	if (!base) {
		snprintf(plan->id, sizeof(plan->id), "%s", buf);
		return;
	}
	*base++ = '\0';
	topic = strrchr(buf, '/');
	topic = topic ? topic + 1 : buf;
	snprintf(plan->id, sizeof(plan->id), "%.*s/%.*s", QPLAB_NAME_MAX + 16, topic,
		 QPLAB_NAME_MAX + 16, base);
}

/* A list of short names ([a-z0-9_-]) such as tags and requires. */
static size_t name_list(struct sc_ctx *ctx, json_object *root, const char *key,
			char (**out)[QPLAB_NAME_MAX], bool capabilities)
{
	json_object *arr = qplab__sc_get(ctx, root, "", key, json_type_array, false);
	char path[SC_PATH_MAX];
	size_t n;

	if (!arr)
		return 0;
	n = json_object_array_length(arr);
	*out = calloc(n ? n : 1, sizeof(**out));
	if (!*out)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *s;

		snprintf(path, sizeof(path), "/%s/%zu", key, i);
		int line = qplab__sc_line(ctx, path);
		if (!qplab__sc_elem_str(ctx, arr, "", key, i, &s))
			continue;
		if (!*s || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(s)) {
			qplab__sc_err(ctx, line, "%s entries are strings of a-z, 0-9, _ and -", key);
			continue;
		}
		size_t c;
		for (c = 0; capabilities && qplab_capabilities[c]; c++)
			if (!strcmp(qplab_capabilities[c], s))
				break;
		if (capabilities && !qplab_capabilities[c])
			qplab__sc_err(ctx, line, "unknown capability \"%s\"", s);
		qplab__sc_copy(ctx, line, (*out)[i], sizeof((*out)[i]), s, "name");
	}
	return n;
}

static void parse_root(struct sc_ctx *ctx, json_object *root)
{
	static const char *const keys[] = {"description", "source", "tags", "requires",
					   "timeout_ms", "hosts", "links", "steps",
					   "expect", "placements", "wire", "ablate", NULL};
	struct qplab_plan *plan = ctx->plan;
	const char *s;
	long v;

	if (!json_object_is_type(root, json_type_object)) {
		qplab__sc_err(ctx, 1, "a scenario is a JSON object");
		return;
	}
	qplab__sc_only_keys(ctx, root, "", "the scenario", keys);
	if (qplab__sc_str(ctx, root, "", "description", true, &s))
		plan->description = qplab__sc_strdup(s);
	if (qplab__sc_str(ctx, root, "", "source", true, &s))
		plan->source = qplab__sc_strdup(s);
	plan->ntags = name_list(ctx, root, "tags", &plan->tags, false);
	plan->nrequires = name_list(ctx, root, "requires", &plan->requires, true);
	plan->timeout_ms = 60000;
	if (qplab__sc_int(ctx, root, "", "timeout_ms", 1, 3600000, &v))
		plan->timeout_ms = (int)v;
	qplab__sc_hosts(ctx, root);
	qplab__sc_placements(ctx, root);
	qplab__sc_links(ctx, root);
	qplab__sc_steps(ctx, root);
	qplab__sc_expects(ctx, root);
	qplab__sc_wire(ctx, root);
	qplab__sc_ablate(ctx, root);
}

/* Comment stripping (when comments), then json-c (strict), then the
 * pre-scan.  The whole file must be UTF-8 first: its strings go into
 * results.json, which strict readers (ours among them) refuse otherwise. */
json_object *qplab__sc_parse_json(struct sc_ctx *ctx, char *text, size_t len, bool comments,
				   int *rc)
{
	struct json_tokener *tok;
	json_object *root;
	size_t good = qphs_utf8_valid_prefix(text, len);

	*rc = QPHS_ERR_MALFORMED_JSON;
	if (good < len) {
		size_t col = good;

		while (col && text[col - 1] != '\n')
			col--;
		qplab__sc_err(ctx, qplab__sc_offset_line(text, len, good),
			      "column %zu: byte 0x%02x is not UTF-8 (a %s file is UTF-8 text)",
			      good - col + 1, (unsigned char)text[good], comments ? "scenario" : "JSON");
		return NULL;
	}
	if (comments && qplab__sc_strip_comments(ctx, text, len) < 0)
		return NULL;
	tok = json_tokener_new();
	if (!tok) {
		*rc = QPHS_ERR_MEMORY;
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		size_t off = json_tokener_get_parse_end(tok);
		qplab__sc_err(ctx, qplab__sc_offset_line(text, len, off), "syntax error: %s",
			      e == json_tokener_continue ? "the file ends inside a value"
							 : json_tokener_error_desc(e));
		json_object_put(root);
		json_tokener_free(tok);
		return NULL;
	}
	json_tokener_free(tok);
	if (qplab__sc_scan(ctx, text, len) > 0) {
		json_object_put(root);
		return NULL;
	}
	qplab__sc_sort_lines(ctx);
	*rc = 0;
	return root;
}

int qplab_scenario_parse(const char *file, const char *text, size_t len,
			 struct qplab_plan **out, struct qplab_errors *errs)
{
	struct sc_ctx ctx = {.file = file, .errs = errs};
	char *copy = malloc(len + 1);
	json_object *root = NULL;
	int rc = QPHS_ERR_MEMORY;

	*out = NULL;
	ctx.plan = calloc(1, sizeof(*ctx.plan));
	if (!copy || !ctx.plan)
		goto out;
	if (len > QPLAB_SCENARIO_MAX_BYTES) {
		qplab__sc_err(&ctx, 0, "larger than %d bytes", QPLAB_SCENARIO_MAX_BYTES);
		rc = QPHS_ERR_INVALID_ARGUMENT;
		goto out;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	root = qplab__sc_parse_json(&ctx, copy, len, true, &rc);
	if (!root)
		goto out;
	ctx.plan->file = qplab__sc_strdup(file);
	plan_id(ctx.plan, file);
	parse_root(&ctx, root);
	rc = ctx.nerr ? QPHS_ERR_INVALID_ARGUMENT : 0;
out:
	if (rc == 0) {
		*out = ctx.plan;
		ctx.plan = NULL;
	}
	qplab__sc_flush(&ctx);
	qplab_plan_free(ctx.plan);
	json_object_put(root);
	for (size_t i = 0; i < ctx.nlines; i++)
		free(ctx.lines[i].path);
	free(ctx.lines);
	free(copy);
	return rc;
}

int qplab__sc_read_file(struct sc_ctx *ctx, const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;

	*text = NULL;
	*len = 0;
	if (!f) {
		qplab__sc_err(ctx, 0, "%s", strerror(errno));
		return -1;
	}
	for (;;) {
		if (*len == cap) {
			char *n = cap <= QPLAB_SCENARIO_MAX_BYTES ? realloc(buf, cap = cap ? 2 * cap : 4096) : NULL;
			if (!n) {
				qplab__sc_err(ctx, 0, "file too large or out of memory");
				free(buf);
				fclose(f);
				return -1;
			}
			buf = n;
		}
		size_t got = fread(buf + *len, 1, cap - *len, f);
		if (got == 0)
			break;
		*len += got;
	}
	fclose(f);
	*text = buf;
	return 0;
}

int qplab_scenario_load(const char *path, struct qplab_plan **out, struct qplab_errors *errs)
{
	struct sc_ctx ctx = {.file = path, .errs = errs};
	char *buf;
	size_t len;
	int rc;

	*out = NULL;
	if (qplab__sc_read_file(&ctx, path, &buf, &len)) {
		qplab__sc_flush(&ctx);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	rc = qplab_scenario_parse(path, buf, len, out, errs);
	free(buf);
	return rc;
}

static void free_agent(struct qplab_agent_opts *a)
{
	free(a->advertise_gid);
	free(a->advertise_address);
}

void qplab__sc_expectation_free(struct qplab_expectation *e)
{
	qplab__sc_assert_free(&e->a);
	for (size_t c = 0; c < e->ncases; c++) {
		free(e->cases[c].when_text);
		free(e->cases[c].terms);
		free(e->cases[c].why);
		qplab__sc_assert_free(&e->cases[c].a);
	}
	free(e->cases);
	free(e->label);
}

void qplab_plan_free(struct qplab_plan *plan)
{
	if (!plan)
		return;
	for (size_t h = 0; h < plan->nhosts; h++) {
		for (size_t i = 0; i < plan->hosts[h].nenv; i++) {
			free(plan->hosts[h].env[i].name);
			free(plan->hosts[h].env[i].value);
		}
		free(plan->hosts[h].env);
		free_agent(&plan->hosts[h].agent);
	}
	for (size_t i = 0; i < plan->nsteps; i++) {
		free(plan->steps[i].frame);
		qplab__sc_assert_free(&plan->steps[i].until);
	}
	for (size_t i = 0; i < plan->nexpect; i++)
		qplab__sc_expectation_free(&plan->expect[i]);
	qplab__sc_ablate_free(plan);
	qplab_plan_free(plan->twin);
	free(plan->expect);
	qplab_wire_free(plan->wire, plan->nwire);
	free(plan->steps);
	free(plan->links);
	free(plan->tags);
	free(plan->requires);
	free(plan->description);
	free(plan->source);
	free(plan->file);
	free(plan);
}
