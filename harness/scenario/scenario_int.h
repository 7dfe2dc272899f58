/* scenario_int.h — shared by the scenario parser's files; not an API. */
#ifndef QPLAB_SCENARIO_INT_H
#define QPLAB_SCENARIO_INT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "scenario.h"

#define SC_PATH_MAX 512

/* Where each key (and each array element) of the file starts: JSON-pointer
 * paths ("/hosts/a/mtu", "/steps/3") mapped to 1-based lines. */
struct sc_line {
	char *path;
	int line;
};

struct sc_msg {
	int line;
	char *text;
};

struct sc_ctx {
	const char *file;
	struct qplab_errors *errs;
	int nerr;
	struct sc_msg *msgs;   /* collected, then sorted by line into errs */
	size_t nmsgs;
	struct sc_line *lines;
	size_t nlines, caplines;
	struct qplab_plan *plan;
};

/* Records "FILE:LINE: message" (line 0 prints "FILE: message"). */
void qplab__sc_err(struct sc_ctx *ctx, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Moves the collected messages into ctx->errs in line order. */
void qplab__sc_flush(struct sc_ctx *ctx);

/* Sorts ctx->lines for qplab__sc_line's binary search (after the scan). */
void qplab__sc_sort_lines(struct sc_ctx *ctx);

/* The line of path, or of its nearest ancestor that has one. */
int qplab__sc_line(const struct sc_ctx *ctx, const char *path);

/* Overwrites every comment in text (len bytes) with spaces, keeping
 * newlines, so byte offsets and lines stay those of the original.  An
 * unterminated block comment is an error at its opening line. */
int qplab__sc_strip_comments(struct sc_ctx *ctx, char *text, size_t len);

/* Walks the (comment-free, syntactically valid) text, fills ctx->lines
 * and reports duplicate keys per object, single-quoted strings and
 * literals JSON does not have (NaN, True, ...).  Returns the number of
 * syntax problems (duplicates are reported but not counted: the parse
 * goes on to find the file's other errors). */
int qplab__sc_scan(struct sc_ctx *ctx, const char *text, size_t len);

/* Comment stripping (when comments), then json-c (strict), then the
 * pre-scan, which fills ctx->lines.  text is modified (comments become
 * spaces).  Returns the root, or NULL with *rc set and errors recorded. */
json_object *qplab__sc_parse_json(struct sc_ctx *ctx, char *text, size_t len, bool comments,
				   int *rc);

/* Reads the file at path (at most QPLAB_SCENARIO_MAX_BYTES and a bit) into
 * *text (malloc'd, not NUL-ended) and *len; a failure is recorded as
 * "FILE: reason" and returns -1. */
int qplab__sc_read_file(struct sc_ctx *ctx, const char *path, char **text, size_t *len);

/* 1-based line of byte offset off in text. */
int qplab__sc_offset_line(const char *text, size_t len, size_t off);

/* path + "/" + key (with JSON-pointer escaping) into out. */
void qplab__sc_join(char *out, size_t outlen, const char *path, const char *key);
void qplab__sc_join_index(char *out, size_t outlen, const char *path, size_t i);

/* Reports each key of obj that is not in allowed (NULL-ended). */
void qplab__sc_only_keys(struct sc_ctx *ctx, json_object *obj, const char *path,
			 const char *what, const char *const *allowed);

/* Typed getters (the harness's JSON reader, cli/jread.h, with the file's
 * lines): return true when the key is present and well-typed (the value is
 * stored); report a wrong type (null included) or range at the key's line.
 * Absent: return false, and report when `required`. */
bool qplab__sc_str(struct sc_ctx *ctx, json_object *obj, const char *path,
		   const char *key, bool required, const char **out);
bool qplab__sc_int(struct sc_ctx *ctx, json_object *obj, const char *path,
		   const char *key, long min, long max, long *out);
bool qplab__sc_bool(struct sc_ctx *ctx, json_object *obj, const char *path,
		    const char *key, bool *out);
/* Element i of the array path/key as a string; reports anything else
 * (null included) at the element's line. */
bool qplab__sc_elem_str(struct sc_ctx *ctx, json_object *arr, const char *path,
			const char *key, size_t i, const char **out);
/* obj[key] when it is of type t; reports a wrong type; NULL if absent. */
json_object *qplab__sc_get(struct sc_ctx *ctx, json_object *obj, const char *path,
			   const char *key, json_type t, bool required);

/* Copies src into a fixed buffer, reporting when it does not fit. */
void qplab__sc_copy(struct sc_ctx *ctx, int line, char *dst, size_t dstlen,
		    const char *src, const char *what);

/* Host index for name, reporting "unknown host" at line when absent. */
int qplab__sc_host(struct sc_ctx *ctx, int line, const char *name);
/* The host named by o[key] (its index), -1 when absent (reported when
 * required) or unknown (reported at the key's line). */
int qplab__sc_host_key(struct sc_ctx *ctx, json_object *o, const char *path, const char *key,
		       bool required);
/* A datapath's "on_posted" (scenario_posted.c). */
void qplab__sc_on_posted(struct sc_ctx *ctx, json_object *o, const char *path,
			 struct qplab_step *st);
/* "placements" (scenario_hosts.c), after the hosts. */
void qplab__sc_placements(struct sc_ctx *ctx, json_object *root);

char *qplab__sc_strdup(const char *s);

/* True when s is one of list's words (NULL-ended). */
bool qplab__sc_in_list(const char *const *list, const char *s);

/* The sections (scenario_hosts.c, scenario_steps.c, scenario_expect.c). */
void qplab__sc_hosts(struct sc_ctx *ctx, json_object *root);
void qplab__sc_links(struct sc_ctx *ctx, json_object *root);
void qplab__sc_netem(struct sc_ctx *ctx, json_object *obj, const char *path,
		     struct qplab_netem *out);
void qplab__sc_steps(struct sc_ctx *ctx, json_object *root);
void qplab__sc_expects(struct sc_ctx *ctx, json_object *root);
void qplab__sc_wire(struct sc_ctx *ctx, json_object *root); /* scenario_wire.c */
/* The `ablate` key (scenario_ablate.c), after every other section. */
void qplab__sc_ablate(struct sc_ctx *ctx, json_object *root);
void qplab__sc_ablate_free(struct qplab_plan *plan);
/* Frees what one expectation owns (not the struct). */
void qplab__sc_expectation_free(struct qplab_expectation *e);
/* Parses one assertion block; `extra` are keys the caller handles. */
void qplab__sc_assert(struct sc_ctx *ctx, json_object *obj, const char *path,
		      struct qplab_assert *a, const char *const *extra);
void qplab__sc_assert_init(struct qplab_assert *a);
void qplab__sc_assert_free(struct qplab_assert *a);

#endif
