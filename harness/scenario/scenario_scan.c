/*
 * The scenario pre-scan: json-c reports byte offsets only and silently keeps
 * the last of two duplicate keys, so this small walker over the text maps
 * every key and array element to its line and finds duplicates itself.  It
 * runs after json-c has accepted the (comment-stripped) text, so it may
 * assume balanced structure; it still refuses the things json-c's tokener
 * lets through even in strict mode (single quotes, NaN and friends).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario_int.h"

struct scan {
	struct sc_ctx *ctx;
	const char *s;
	size_t len, pos;
	int problems;
	size_t counted; /* lines are counted up to here, never twice */
	int line;
};

/* No scenario object needs more; the duplicate check is quadratic in it. */
#define SCAN_MAX_KEYS 1024

int qplab__sc_offset_line(const char *text, size_t len, size_t off)
{
	int line = 1;

	for (size_t i = 0; i < off && i < len; i++)
		line += text[i] == '\n';
	return line;
}

int qplab__sc_strip_comments(struct sc_ctx *ctx, char *t, size_t len)
{
	size_t i = 0;

	while (i < len) {
		if (t[i] == '"') { /* skip a string, honouring escapes */
			for (i++; i < len && t[i] != '"' && t[i] != '\n'; i++)
				if (t[i] == '\\')
					i++;
			i++;
		} else if (t[i] == '/' && i + 1 < len && t[i + 1] == '/') {
			while (i < len && t[i] != '\n')
				t[i++] = ' ';
		} else if (t[i] == '/' && i + 1 < len && t[i + 1] == '*') {
			size_t start = i;
			t[i++] = ' ';
			t[i++] = ' ';
			while (i < len && !(t[i] == '*' && i + 1 < len && t[i + 1] == '/')) {
				if (t[i] != '\n')
					t[i] = ' ';
				i++;
			}
			if (i >= len) {
				qplab__sc_err(ctx, qplab__sc_offset_line(t, len, start),
					      "unterminated /* comment");
				return -1;
			}
			t[i++] = ' ';
			t[i++] = ' ';
		} else {
			i++;
		}
	}
	return 0;
}

/* The scan only moves forward, so counting from the last position keeps
 * the whole file's line bookkeeping linear. */
static int line_here(struct scan *sc)
{
	for (; sc->counted < sc->pos && sc->counted < sc->len; sc->counted++)
		sc->line += sc->s[sc->counted] == '\n';
	return sc->line;
}

static void skip_ws(struct scan *sc)
{
	while (sc->pos < sc->len && strchr(" \t\r\n", sc->s[sc->pos]) && sc->s[sc->pos])
		sc->pos++;
}

static void add_line(struct scan *sc, const char *path, int line)
{
	struct sc_ctx *ctx = sc->ctx;

	if (ctx->nlines == ctx->caplines) {
		size_t cap = ctx->caplines ? 2 * ctx->caplines : 64;
		struct sc_line *n = realloc(ctx->lines, cap * sizeof(*n));
		if (!n)
			return;
		ctx->lines = n;
		ctx->caplines = cap;
	}
	ctx->lines[ctx->nlines].path = qplab__sc_strdup(path);
	ctx->lines[ctx->nlines].line = line;
	if (ctx->lines[ctx->nlines].path)
		ctx->nlines++;
}

/* Appends the UTF-8 form of code point cp. */
static size_t put_utf8(char *out, unsigned cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	out[0] = (char)(0xe0 | (cp >> 12));
	out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[2] = (char)(0x80 | (cp & 0x3f));
	return 3;
}

/* Reads a double-quoted string at pos, decoding escapes the way json-c
 * does for the keys a scenario uses.  out holds at least outlen bytes. */
static void read_string(struct scan *sc, char *out, size_t outlen)
{
	size_t n = 0;
	static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";

	for (sc->pos++; sc->pos < sc->len && sc->s[sc->pos] != '"'; sc->pos++) {
		char c = sc->s[sc->pos];
		char buf[4];
		size_t k = 1;

		buf[0] = c;
		if (c == '\\' && sc->pos + 1 < sc->len) {
			const char *e = strchr(esc_in, sc->s[++sc->pos]);
			if (e) {
				buf[0] = esc_out[e - esc_in];
			} else if (sc->s[sc->pos] == 'u' && sc->pos + 4 < sc->len) {
				char hex[5] = {0};
				memcpy(hex, sc->s + sc->pos + 1, 4);
				k = put_utf8(buf, (unsigned)strtoul(hex, NULL, 16));
				sc->pos += 4;
			}
		}
		if (n + k < outlen) {
			memcpy(out + n, buf, k);
			n += k;
		}
	}
	sc->pos++;
	out[n] = '\0';
}

static void scan_value(struct scan *sc, const char *path, int depth);

static void scan_scalar(struct scan *sc)
{
	size_t start = sc->pos;
	char tok[16];
	size_t n;

	while (sc->pos < sc->len && strchr("+-.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
					   sc->s[sc->pos]) && sc->s[sc->pos])
		sc->pos++;
	n = sc->pos - start;
	snprintf(tok, sizeof(tok), "%.*s", (int)(n < 15 ? n : 15), sc->s + start);
	if (n == 0 || (strcmp(tok, "true") && strcmp(tok, "false") && strcmp(tok, "null") &&
		       !strchr("-0123456789", tok[0]))) {
		sc->pos = start;
		qplab__sc_err(sc->ctx, line_here(sc), n ? "'%s' is not a JSON value" : "unexpected character%s",
			      tok);
		sc->pos = start + n;
		sc->problems++;
		if (n == 0)
			sc->pos = sc->len; /* cannot resynchronise; stop */
	}
}

struct seen_key {
	char *key;
	int line;
};

/* Returns the line where key was first seen in this object, or 0. */
static int seen_before(struct seen_key *seen, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(seen[i].key, key))
			return seen[i].line;
	return 0;
}

/* Remembers key for this object; on a duplicate, reports it and returns
 * the line of the first one (its value is then scanned but not mapped). */
static int record_key(struct scan *sc, struct seen_key **seen, size_t *nseen, const char *key,
		      int line)
{
	int first = seen_before(*seen, *nseen, key);
	struct seen_key *n;

	if (!first && *nseen >= SCAN_MAX_KEYS) {
		qplab__sc_err(sc->ctx, line, "more than %d keys in one object", SCAN_MAX_KEYS);
		sc->problems++;
		sc->pos = sc->len;
		return 0;
	}
	if (first) {
		/* Not a syntax problem: parsing goes on, so the file's other
		 * errors are reported too. */
		qplab__sc_err(sc->ctx, line, "duplicate key \"%s\" (first at line %d)", key, first);
		return first;
	}
	n = realloc(*seen, (*nseen + 1) * sizeof(*n));
	if (!n)
		return 0;
	*seen = n;
	n[*nseen].key = qplab__sc_strdup(key);
	n[*nseen].line = line;
	if (n[*nseen].key)
		(*nseen)++;
	return 0;
}

static void scan_object(struct scan *sc, const char *path, int depth)
{
	struct seen_key *seen = NULL;
	size_t nseen = 0;
	char key[256], child[SC_PATH_MAX];

	sc->pos++;
	for (;;) {
		skip_ws(sc);
		if (sc->pos >= sc->len || sc->s[sc->pos] == '}')
			break;
		if (sc->s[sc->pos] == ',') {
			sc->pos++;
			continue;
		}
		int line = line_here(sc);
		if (sc->s[sc->pos] != '"') {
			qplab__sc_err(sc->ctx, line, "keys are written in double quotes");
			sc->problems++;
			sc->pos = sc->len;
			break;
		}
		read_string(sc, key, sizeof(key));
		int first = record_key(sc, &seen, &nseen, key, line);
		qplab__sc_join(child, sizeof(child), path, key);
		if (!first)
			add_line(sc, child, line);
		skip_ws(sc);
		if (sc->pos < sc->len && sc->s[sc->pos] == ':')
			sc->pos++;
		scan_value(sc, first ? "/\x01dup" : child, depth + 1);
	}
	sc->pos++;
	for (size_t i = 0; i < nseen; i++)
		free(seen[i].key);
	free(seen);
}

static void scan_array(struct scan *sc, const char *path, int depth)
{
	char child[SC_PATH_MAX];
	size_t idx = 0;

	sc->pos++;
	for (;;) {
		skip_ws(sc);
		if (sc->pos >= sc->len || sc->s[sc->pos] == ']')
			break;
		if (sc->s[sc->pos] == ',') {
			sc->pos++;
			continue;
		}
		qplab__sc_join_index(child, sizeof(child), path, idx++);
		add_line(sc, child, line_here(sc));
		scan_value(sc, child, depth + 1);
	}
	sc->pos++;
}

static void scan_value(struct scan *sc, const char *path, int depth)
{
	char junk[8];

	skip_ws(sc);
	if (sc->pos >= sc->len || depth > 64)
		return;
	switch (sc->s[sc->pos]) {
	case '{':
		scan_object(sc, path, depth);
		break;
	case '[':
		scan_array(sc, path, depth);
		break;
	case '"':
		read_string(sc, junk, sizeof(junk));
		break;
	case '\'':
		qplab__sc_err(sc->ctx, line_here(sc), "strings are written in double quotes");
		sc->problems++;
		sc->pos = sc->len;
		break;
	default:
		scan_scalar(sc);
	}
}

int qplab__sc_scan(struct sc_ctx *ctx, const char *text, size_t len)
{
	struct scan sc = {.ctx = ctx, .s = text, .len = len, .line = 1};

	skip_ws(&sc);
	add_line(&sc, "", line_here(&sc));
	scan_value(&sc, "", 0);
	return sc.problems;
}
