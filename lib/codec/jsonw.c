/* JSON writer in the dialect of Mooncake's jsoncpp FastWriter (see jsonw.h). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jsonw.h"
#include "qphs/error.h"

static void put(struct qphs__jw *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (b->len + n + 1 > cap)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->err = QPHS_ERR_MEMORY;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct qphs__jw *b, const char *s)
{
	put(b, s, strlen(s));
}

/* jsoncpp's utf8ToCodepoint, bug for bug: continuation bytes are not
 * checked, a stray continuation byte starts a two-byte sequence, a sequence
 * cut short by the end yields U+FFFD and consumes one byte only. */
static unsigned decode_utf8(const unsigned char *s, size_t left, size_t *used)
{
	const unsigned bad = 0xFFFD;
	unsigned c = s[0], cp;

	*used = 1;
	if (c < 0x80)
		return c;
	if (c < 0xE0) {
		if (left < 2)
			return bad;
		cp = ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu);
		*used = 2;
		return cp < 0x80 ? bad : cp;
	}
	if (c < 0xF0) {
		if (left < 3)
			return bad;
		cp = ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
		*used = 3;
		if (cp >= 0xD800 && cp <= 0xDFFF)
			return bad;
		return cp < 0x800 ? bad : cp;
	}
	if (c < 0xF8) {
		if (left < 4)
			return bad;
		cp = ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) |
		     (s[3] & 0x3Fu);
		*used = 4;
		return cp < 0x10000 ? bad : cp;
	}
	return bad;
}

static void put_u16(struct qphs__jw *b, unsigned v)
{
	static const char hex[] = "0123456789abcdef";
	char t[6] = {'\\', 'u', hex[(v >> 12) & 15], hex[(v >> 8) & 15], hex[(v >> 4) & 15],
		     hex[v & 15]};

	put(b, t, sizeof(t));
}

static const char *short_escape(unsigned char c)
{
	switch (c) {
	case '"': return "\\\"";
	case '\\': return "\\\\";
	case '\b': return "\\b";
	case '\f': return "\\f";
	case '\n': return "\\n";
	case '\r': return "\\r";
	case '\t': return "\\t";
	default: return NULL;
	}
}

/* jsonw.h: one load per byte where four comparisons were; 3 but DEL,
 * which is 1 (written as it is, not plain for descfast). */
const unsigned char qphs__jw_as_is[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	3, 3, 0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1,
};

static void put_string(struct qphs__jw *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	put(b, "\"", 1);
	for (size_t i = 0; i < n;) {
		const char *esc;
		size_t used, run = i;
		unsigned cp;

		/* A run of printable ASCII that needs no escape goes out whole. */
		while (run < n && qphs__jw_as_is[u[run]])
			run++;
		if (run > i) {
			put(b, s + i, run - i);
			i = run;
			continue;
		}
		esc = short_escape(u[i]);
		if (esc) {
			puts_(b, esc);
			i++;
			continue;
		}
		cp = decode_utf8(u + i, n - i, &used);
		i += used;
		if (cp >= 0x20 && cp <= 0x7F) {
			char ch = (char)cp;
			put(b, &ch, 1);
		} else if (cp < 0x10000) {
			put_u16(b, cp);
		} else {
			/* jsoncpp keeps 10 bits for the high half too, which
			 * matters only for the invalid cp > U+10FFFF. */
			cp -= 0x10000;
			put_u16(b, ((cp >> 10) & 0x3FF) + 0xD800);
			put_u16(b, (cp & 0x3FF) + 0xDC00);
		}
	}
	put(b, "\"", 1);
}

static void double_text(double v, char *t, size_t len)
{
	if (isnan(v)) {
		snprintf(t, len, "null");
		return;
	}
	if (isinf(v)) {
		snprintf(t, len, v < 0 ? "-1e+9999" : "1e+9999");
		return;
	}
	snprintf(t, len, "%.17g", v);
	if (!strchr(t, '.') && !strchr(t, 'e'))
		strncat(t, ".0", len - strlen(t) - 1);
}

/* "%" PRIu64 (with a '-' when neg), without printf's cost: a handshake
 * body carries several numbers.  Cut to len like snprintf. */
static void decimal_text(int neg, uint64_t v, char *t, size_t len)
{
	char d[24], *p = d;
	size_t n;

	if (neg)
		*p++ = '-';
	p = qphs__put_u64(p, v);
	if (!len)
		return;
	n = (size_t)(p - d);
	if (n > len - 1)
		n = len - 1;
	memcpy(t, d, n);
	t[n] = '\0';
}

int qphs__json_scalar_text(struct json_object *obj, char *t, size_t len)
{
	switch (json_object_get_type(obj)) {
	case json_type_null:
		snprintf(t, len, "%s", "");
		return 0;
	case json_type_boolean:
		snprintf(t, len, "%s", json_object_get_boolean(obj) ? "true" : "false");
		return 0;
	case json_type_int: {
		int64_t i = json_object_get_int64(obj);
		uint64_t mag = i < 0 ? (uint64_t)0 - (uint64_t)i : json_object_get_uint64(obj);

		decimal_text(i < 0, mag, t, len);
		return 0;
	}
	case json_type_double:
		double_text(json_object_get_double(obj), t, len);
		return 0;
	default:
		return -1;
	}
}

static int key_cmp(const void *a, const void *b)
{
	/* Byte order; keys have no NUL inside (json-c keys are C strings). */
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void put_value(struct qphs__jw *b, struct json_object *obj);

static void put_object(struct qphs__jw *b, struct json_object *obj)
{
	size_t n = (size_t)json_object_object_length(obj), i = 0;
	const char **keys = calloc(n ? n : 1, sizeof(*keys));

	if (!keys) {
		b->err = QPHS_ERR_MEMORY;
		return;
	}
	json_object_object_foreach(obj, k, v) {
		(void)v;
		keys[i++] = k;
	}
	qsort(keys, n, sizeof(*keys), key_cmp);
	put(b, "{", 1);
	for (i = 0; i < n; i++) {
		struct json_object *val = NULL;

		if (i)
			put(b, ",", 1);
		put_string(b, keys[i], strlen(keys[i]));
		put(b, ":", 1);
		json_object_object_get_ex(obj, keys[i], &val);
		put_value(b, val);
	}
	put(b, "}", 1);
	free(keys);
}

static void put_value(struct qphs__jw *b, struct json_object *obj)
{
	char t[64];

	switch (json_object_get_type(obj)) {
	case json_type_object:
		put_object(b, obj);
		return;
	case json_type_array:
		put(b, "[", 1);
		for (size_t i = 0; i < json_object_array_length(obj); i++) {
			if (i)
				put(b, ",", 1);
			put_value(b, json_object_array_get_idx(obj, i));
		}
		put(b, "]", 1);
		return;
	case json_type_string:
		put_string(b, json_object_get_string(obj),
			   (size_t)json_object_get_string_len(obj));
		return;
	case json_type_null:
		puts_(b, "null");
		return;
	default:
		qphs__json_scalar_text(obj, t, sizeof(t));
		puts_(b, t);
	}
}

void qphs__jw_raw(struct qphs__jw *b, const char *s, size_t n)
{
	put(b, s, n);
}

void qphs__jw_string(struct qphs__jw *b, const char *s)
{
	size_t n;

	if (!s)
		s = "";
	/* The common string needs no escape: its length falls out of the
	 * scan, with no strlen before it. */
	if ((n = qphs__jw_plain_len(s)) == SIZE_MAX) {
		put_string(b, s, strlen(s));
		return;
	}
	put(b, "\"", 1);
	put(b, s, n);
	put(b, "\"", 1);
}

void qphs__jw_int(struct qphs__jw *b, int64_t v)
{
	char t[24];

	decimal_text(v < 0, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, t, sizeof(t));
	puts_(b, t);
}

int qphs__jw_finish(struct qphs__jw *b, char **out, size_t *out_len)
{
	put(b, "\n", 1);
	if (b->err) {
		free(b->p);
		b->p = NULL;
		return b->err;
	}
	*out = b->p;
	*out_len = b->len;
	return 0;
}

int qphs__jsonw_write(struct json_object *obj, char **out, size_t *out_len)
{
	struct qphs__jw b = {0};

	put_value(&b, obj);
	return qphs__jw_finish(&b, out, out_len);
}
