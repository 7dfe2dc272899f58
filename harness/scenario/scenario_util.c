/* Helpers of the scenario parser: messages with lines, paths, typed getters. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jread.h"
#include "scenario_int.h"

char *qplab__sc_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

void qplab_errors_free(struct qplab_errors *errs)
{
	if (!errs)
		return;
	for (size_t i = 0; i < errs->n; i++)
		free(errs->msgs[i]);
	free(errs->msgs);
	errs->msgs = NULL;
	errs->n = 0;
}

void qplab_errors_add(struct qplab_errors *errs, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	char **n;

	if (!errs)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = realloc(errs->msgs, (errs->n + 1) * sizeof(*n));
	if (!n)
		return;
	errs->msgs = n;
	n[errs->n] = qplab__sc_strdup(msg);
	if (n[errs->n])
		errs->n++;
}

void qplab__sc_err(struct sc_ctx *ctx, int line, const char *fmt, ...)
{
	char msg[768], full[1024];
	va_list ap;
	struct sc_msg *n;

	ctx->nerr++;
	if (!ctx->errs)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(full, sizeof(full), "%s:%d: %s", ctx->file, line, msg);
	else
		snprintf(full, sizeof(full), "%s: %s", ctx->file, msg);
	n = realloc(ctx->msgs, (ctx->nmsgs + 1) * sizeof(*n));
	if (!n)
		return;
	ctx->msgs = n;
	n[ctx->nmsgs].line = line;
	n[ctx->nmsgs].text = qplab__sc_strdup(full);
	if (n[ctx->nmsgs].text)
		ctx->nmsgs++;
}

void qplab__sc_flush(struct sc_ctx *ctx)
{
	char **n;

	/* Insertion sort keeps messages of one line in the order found. */
	for (size_t i = 1; i < ctx->nmsgs; i++) {
		struct sc_msg m = ctx->msgs[i];
		size_t j = i;
		for (; j > 0 && ctx->msgs[j - 1].line > m.line; j--)
			ctx->msgs[j] = ctx->msgs[j - 1];
		ctx->msgs[j] = m;
	}
	n = ctx->nmsgs ? realloc(ctx->errs->msgs, (ctx->errs->n + ctx->nmsgs) * sizeof(*n)) : NULL;
	for (size_t i = 0; i < ctx->nmsgs; i++) {
		if (n)
			n[ctx->errs->n++] = ctx->msgs[i].text;
		else
			free(ctx->msgs[i].text);
	}
	if (n)
		ctx->errs->msgs = n;
	free(ctx->msgs);
	ctx->msgs = NULL;
	ctx->nmsgs = 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct sc_line *)a)->path, ((const struct sc_line *)b)->path);
}

void qplab__sc_sort_lines(struct sc_ctx *ctx)
{
	if (ctx->nlines)
		qsort(ctx->lines, ctx->nlines, sizeof(*ctx->lines), by_path);
}

int qplab__sc_line(const struct sc_ctx *ctx, const char *path)
{
	char p[SC_PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (;;) {
		struct sc_line key = {.path = p}, *hit;
		hit = ctx->nlines ? bsearch(&key, ctx->lines, ctx->nlines, sizeof(key), by_path) : NULL;
		if (hit)
			return hit->line;
		char *slash = strrchr(p, '/');
		if (!slash)
			return 0;
		*slash = '\0';
	}
}

void qplab__sc_join(char *out, size_t outlen, const char *path, const char *key)
{
	size_t n = (size_t)snprintf(out, outlen, "%s/", path);

	/* JSON pointer escaping, so a key holding '/' cannot alias a path. */
	for (; *key && n + 3 < outlen; key++) {
		if (*key == '~' || *key == '/') {
			out[n++] = '~';
			out[n++] = *key == '~' ? '0' : '1';
		} else {
			out[n++] = *key;
		}
	}
	if (n < outlen)
		out[n] = '\0';
}

void qplab__sc_join_index(char *out, size_t outlen, const char *path, size_t i)
{
	snprintf(out, outlen, "%s/%zu", path, i);
}

static int key_line(struct sc_ctx *ctx, const char *path, const char *key)
{
	char p[SC_PATH_MAX];

	qplab__sc_join(p, sizeof(p), path, key);
	return qplab__sc_line(ctx, p);
}

/* The scenario's side of the harness's JSON reader (cli/jread.h): its
 * errors become FILE:LINE messages, at the key's line or, for a missing
 * key, at the line of the object that lacks it. */
struct sc_where {
	struct sc_ctx *ctx;
	const char *path;
	long elem;         /* an element of the array path/key, or -1 */
};

static void sc_report(void *user, const char *key, bool missing, const char *msg)
{
	struct sc_where *w = user;
	char arr[SC_PATH_MAX], el[SC_PATH_MAX + 24];
	int line;

	if (missing || !key) {
		line = qplab__sc_line(w->ctx, w->path);
	} else if (w->elem >= 0) {
		qplab__sc_join(arr, sizeof(arr), w->path, key);
		qplab__sc_join_index(el, sizeof(el), arr, (size_t)w->elem);
		line = qplab__sc_line(w->ctx, el);
	} else {
		line = key_line(w->ctx, w->path, key);
	}
	qplab__sc_err(w->ctx, line, "%s", msg);
}

/* In a file people write, null is a mistake, not an absent key. */
#define SC_READER(w) {.null_is_wrong = true, .report = sc_report, .user = (w)}

void qplab__sc_only_keys(struct sc_ctx *ctx, json_object *obj, const char *path,
			 const char *what, const char *const *allowed)
{
	struct sc_where w = {ctx, path, -1};
	struct jread r = SC_READER(&w);

	jread_only_keys(&r, obj, allowed, what);
}

json_object *qplab__sc_get(struct sc_ctx *ctx, json_object *obj, const char *path,
			   const char *key, json_type t, bool required)
{
	struct sc_where w = {ctx, path, -1};
	struct jread r = SC_READER(&w);
	json_object *v;
	int rc = jread_value(&r, obj, key, t, &v);

	if (rc == JREAD_ABSENT && required)
		jread_missing(&r, key);
	return rc == JREAD_OK ? v : NULL;
}

bool qplab__sc_str(struct sc_ctx *ctx, json_object *obj, const char *path,
		   const char *key, bool required, const char **out)
{
	json_object *v = qplab__sc_get(ctx, obj, path, key, json_type_string, required);

	if (!v)
		return false;
	*out = json_object_get_string(v);
	if (required && !**out) {
		qplab__sc_err(ctx, key_line(ctx, path, key), "\"%s\" must not be empty", key);
		return false;
	}
	return true;
}

bool qplab__sc_int(struct sc_ctx *ctx, json_object *obj, const char *path,
		   const char *key, long min, long max, long *out)
{
	struct sc_where w = {ctx, path, -1};
	struct jread r = SC_READER(&w);

	return jread_long(&r, obj, key, min, max, out) == JREAD_OK;
}

bool qplab__sc_elem_str(struct sc_ctx *ctx, json_object *arr, const char *path,
			const char *key, size_t i, const char **out)
{
	struct sc_where w = {ctx, path, (long)i};
	struct jread r = SC_READER(&w);

	return jread_elem_str(&r, arr, key, i, out) == JREAD_OK;
}

bool qplab__sc_bool(struct sc_ctx *ctx, json_object *obj, const char *path,
		    const char *key, bool *out)
{
	struct sc_where w = {ctx, path, -1};
	struct jread r = SC_READER(&w);

	return jread_bool(&r, obj, key, out) == JREAD_OK;
}

void qplab__sc_copy(struct sc_ctx *ctx, int line, char *dst, size_t dstlen,
		    const char *src, const char *what)
{
	if (strlen(src) >= dstlen) {
		qplab__sc_err(ctx, line, "%s \"%.40s...\" is longer than %zu characters", what,
			      src, dstlen - 1);
		dst[0] = '\0';
		return;
	}
	memcpy(dst, src, strlen(src) + 1);
}

int qplab__sc_host(struct sc_ctx *ctx, int line, const char *name)
{
	int h = qplab_plan_host(ctx->plan, name);

	if (h < 0)
		qplab__sc_err(ctx, line, "unknown host \"%s\"", name);
	return h;
}
