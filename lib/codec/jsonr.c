/* Strict JSON parsing and key readers shared by the message bodies. */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "qphs/json.h"
#include "jsonr.h"
#include "jsonw.h"
#include "qphs/error.h"

int qphs__jr_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int only_space(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return 0;
	return 1;
}

/* Well-formed UTF-8 (RFC 3629); json-c's own check looks at the structure
 * only. */
size_t qphs_utf8_valid_prefix(const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;

	for (size_t i = 0; i < n;) {
		unsigned c = s[i], need, cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		need = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
		if (c < 0xC2 || c > 0xF4 || n - i <= need)
			return i;
		cp = c & (0x3Fu >> need);
		for (unsigned k = 1; k <= need; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3Fu);
		}
		if ((need == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
		    (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
			return i;
		i += need + 1;
	}
	return n;
}

static int utf8_ok(const char *s, size_t n)
{
	return qphs_utf8_valid_prefix(s, n) == n;
}

/* What json-c's strict mode lets through but JSON (and jsoncpp) does not:
 * NaN, Infinity and exponents that overflow to inf; and, beyond jsoncpp,
 * strings that are not well-formed UTF-8 (Mooncake writes non-ASCII only as
 * \u escapes, so it never sends them).  Returns a message or NULL. */
static const char *bad_value(struct json_object *v)
{
	const char *why = NULL;

	switch (json_object_get_type(v)) {
	case json_type_double:
		return isfinite(json_object_get_double(v))
			       ? NULL
			       : "NaN, Infinity or a number too large for a double";
	case json_type_string:
		return utf8_ok(json_object_get_string(v),
			       (size_t)json_object_get_string_len(v))
			       ? NULL
			       : "a string is not well-formed UTF-8";
	case json_type_array:
		for (size_t i = 0; !why && i < json_object_array_length(v); i++)
			why = bad_value(json_object_array_get_idx(v, i));
		return why;
	case json_type_object: {
		json_object_object_foreach(v, k, e) {
			if (!utf8_ok(k, strlen(k)))
				return "a key is not well-formed UTF-8";
			if ((why = bad_value(e)))
				return why;
		}
		return NULL;
	}
	default:
		return NULL;
	}
}

/* A number token of the text: 1 when it is an integer beyond 64 bits
 * (jsoncpp reads those as doubles; json-c would saturate them). */
static int big_integer(const char *s, size_t n)
{
	int neg = s[0] == '-';
	const char *d = s + neg;
	size_t digits = n - (size_t)neg;
	const char *limit = neg ? "9223372036854775808" : "18446744073709551615";

	if (digits != strlen(limit))
		return digits > strlen(limit);
	return memcmp(d, limit, digits) > 0;
}

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex4(const char *s, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i], l = (char)(c | 0x20);
		int d = digit(c) ? c - '0' : l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;

		if (d < 0)
			return 0;
		*v = *v * 16 + (unsigned)d;
	}
	return 1;
}

/* "\uD8xx\uDCxx" at s: the code point of the pair, or 0. */
static unsigned surrogate_pair(const char *s, size_t n)
{
	unsigned hi, lo;

	if (n < 12 || s[0] != '\\' || s[1] != 'u' || s[6] != '\\' || s[7] != 'u' ||
	    !hex4(s + 2, &hi) || !hex4(s + 8, &lo) || hi < 0xD800 || hi > 0xDBFF ||
	    lo < 0xDC00 || lo > 0xDFFF)
		return 0;
	return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
}

struct sink {
	char *out; /* NULL: only count */
	size_t len;
};

static void emit(struct sink *k, const char *p, size_t n)
{
	if (k->out)
		memcpy(k->out + k->len, p, n);
	k->len += n;
}

/* A string token starting at s[0] == '"'; returns its length in the text.
 * Escaped surrogate pairs are written as the UTF-8 bytes they stand for:
 * json-c 0.16 turns some valid pairs (\ud876\udc00, \ud836\udc00, ...)
 * into U+FFFD, and Mooncake writes every character above U+FFFF as a pair. */
static size_t string_token(const char *s, size_t n, struct sink *k, size_t *changes)
{
	size_t j = 1;

	emit(k, s, 1);
	while (j < n && s[j] != '"') {
		unsigned cp = s[j] == '\\' ? surrogate_pair(s + j, n - j) : 0;
		size_t step = s[j] == '\\' && j + 1 < n ? 2 : 1;

		if (cp) {
			char u[4] = {(char)(0xF0 | (cp >> 18)), (char)(0x80 | ((cp >> 12) & 0x3F)),
				     (char)(0x80 | ((cp >> 6) & 0x3F)), (char)(0x80 | (cp & 0x3F))};
			emit(k, u, 4);
			j += 12;
			(*changes)++;
			continue;
		}
		emit(k, s + j, step);
		j += step;
	}
	if (j < n)
		emit(k, s + j++, 1);
	return j;
}

/* One pass over the text for what json-c's strict mode lets through but
 * JSON does not (a single quote outside strings: *quote is its offset, else
 * SIZE_MAX); for integers beyond 64 bits, which jsoncpp reads as doubles
 * and json-c would saturate (".0" is added so json-c reads the same
 * double); and for escaped surrogate pairs (see string_token).  Writes the
 * rewritten text into out when not NULL (a first pass with NULL sizes it)
 * and returns its length; *changes counts the rewrites. */
static size_t rewrite_text(const char *s, size_t n, char *out, size_t *quote,
			   size_t *changes)
{
	struct sink k = {out, 0};

	*quote = SIZE_MAX;
	*changes = 0;
	for (size_t i = 0, j; i < n; i = j) {
		j = i + 1;
		if (s[i] == '"') {
			j = i + string_token(s + i, n - i, &k, changes);
			continue;
		}
		if (s[i] == '-' || digit(s[i])) {
			while (j < n && digit(s[j]))
				j++;
			if (j < n && (s[j] == '.' || s[j] == 'e' || s[j] == 'E')) {
				while (j < n && (digit(s[j]) || strchr(".eE+-", s[j])))
					j++;
			} else if (big_integer(s + i, j - i)) {
				emit(&k, s + i, j - i);
				emit(&k, ".0", 2);
				(*changes)++;
				continue;
			}
		} else if (s[i] == '\'' && *quote == SIZE_MAX) {
			*quote = i;
		}
		emit(&k, s + i, j - i);
	}
	return k.len;
}

static int parse_error(struct json_tokener *tok, size_t at, char *err, size_t errlen)
{
	enum json_tokener_error e = json_tokener_get_error(tok);

	if (e == json_tokener_error_depth)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_TOO_DEEP,
				     "JSON nesting deeper than %d levels at byte %zu",
				     QPHS_MAX_DEPTH, at);
	return qphs__jr_fail(err, errlen, QPHS_ERR_FRAME_NOT_JSON, "not JSON: %s at byte %zu",
			     json_tokener_error_desc(e), at);
}

static int parse_text(const char *json, size_t json_len, struct json_object **out,
		      char *err, size_t errlen);

int qphs_json_parse(const char *json, size_t json_len, struct json_object **out,
		     char *err, size_t errlen)
{
	size_t quote, wide_len, changes;
	char *wide;
	int rc;

	*out = NULL;
	if (only_space(json, json_len))
		return qphs__jr_fail(err, errlen, QPHS_ERR_FRAME_EMPTY_BODY,
				     "body is empty (%zu bytes of whitespace)", json_len);
	wide_len = rewrite_text(json, json_len, NULL, &quote, &changes);
	if (quote != SIZE_MAX)
		return qphs__jr_fail(err, errlen, QPHS_ERR_FRAME_NOT_JSON,
				     "not JSON: single quote at byte %zu", quote);
	if (!changes)
		return parse_text(json, json_len, out, err, errlen);
	wide = malloc(wide_len + 1);
	if (!wide)
		return QPHS_ERR_MEMORY;
	rewrite_text(json, json_len, wide, &quote, &changes);
	wide[wide_len] = '\0';
	rc = parse_text(wide, wide_len, out, err, errlen);
	free(wide);
	return rc;
}

static int parse_text(const char *json, size_t json_len, struct json_object **out,
		      char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *obj;
	const char *why;
	size_t end;

	if (json_len > INT_MAX) /* json-c counts in int; frames stop at 128 MiB */
		return qphs__jr_fail(err, errlen, QPHS_ERR_FRAME_TOO_LONG,
				     "body of %zu bytes is too long to parse", json_len);
	tok = json_tokener_new_ex(QPHS_MAX_DEPTH);
	if (!tok)
		return QPHS_ERR_MEMORY;
	/* Strict mode would fold trailing bytes into "not JSON"; we report them
	 * as such (QPHS_ERR_FRAME_TRAILING) from the parse end instead. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
					    JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, json, (int)json_len);
	end = json_tokener_get_parse_end(tok);
	if (!obj && json_tokener_get_error(tok) == json_tokener_continue) {
		/* A bare number needs to see the end: give it a terminator. */
		obj = json_tokener_parse_ex(tok, "", 1);
		end = json_len;
	}
	if (json_tokener_get_error(tok) != json_tokener_success) {
		int rc = parse_error(tok, end, err, errlen);
		json_tokener_free(tok);
		return rc;
	}
	json_tokener_free(tok);
	while (end < json_len && only_space(json + end, 1))
		end++;
	if (end < json_len) {
		json_object_put(obj);
		return qphs__jr_fail(err, errlen, QPHS_ERR_FRAME_TRAILING,
				     "bytes after the JSON value, at byte %zu (%zu of them)", end,
				     json_len - end);
	}
	if ((why = bad_value(obj))) {
		json_object_put(obj);
		return qphs__jr_fail(err, errlen, QPHS_ERR_FRAME_NOT_JSON, "not JSON: %s", why);
	}
	*out = obj;
	return 0;
}

struct json_object *qphs__jr_get(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(obj, key, &v))
		return NULL;
	return json_object_get_type(v) == json_type_null ? NULL : v;
}

static const char *type_word(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_array: return "an array";
	case json_type_object: return "an object";
	case json_type_string: return "a string";
	case json_type_boolean: return "a bool";
	case json_type_null: return "null";
	default: return "a number";
	}
}

int qphs__jr_string(struct json_object *v, const char *what, char **out, char *err,
		    size_t errlen)
{
	char t[64];
	const char *s = "";
	size_t n = 0;
	char *copy;

	if (json_object_get_type(v) == json_type_string) {
		s = json_object_get_string(v);
		n = (size_t)json_object_get_string_len(v);
		if (n > QPHS_MAX_STRING)
			return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_STRING_TOO_LONG,
					     "%s: string of %zu bytes (at most %d)", what, n,
					     QPHS_MAX_STRING);
		if (memchr(s, '\0', n))
			return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
					     "%s: string contains a NUL character", what);
	} else if (v && qphs__json_scalar_text(v, t, sizeof(t)) == 0) {
		s = t;
		n = strlen(t);
	} else if (v) {
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
				     "%s: %s where a string belongs", what, type_word(v));
	}
	copy = malloc(n + 1);
	if (!copy)
		return QPHS_ERR_MEMORY;
	memcpy(copy, s, n);
	copy[n] = '\0';
	free(*out);
	*out = copy;
	return 0;
}

int qphs__jr_uint(struct json_object *v, const char *what, const char *kind,
		  uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	char t[64];
	enum json_type ty = json_object_get_type(v);

	if (ty == json_type_int && json_object_get_int64(v) >= 0 &&
	    json_object_get_uint64(v) <= max) {
		*out = json_object_get_uint64(v);
		return 0;
	}
	if (ty == json_type_double) {
		double d = json_object_get_double(v);
		/* (double)max rounds up for 2^64-1; '<' keeps 2^64 out. */
		if (d >= 0 && d == floor(d) && (max == UINT64_MAX ? d < 18446744073709551616.0
								  : d <= (double)max)) {
			*out = (uint64_t)d;
			return 0;
		}
	}
	if (ty == json_type_string)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
				     "%s: \"%.40s\" is a string, not %s (a number 0..%" PRIu64 ")",
				     what, json_object_get_string(v), kind, max);
	if (ty != json_type_int && ty != json_type_double)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
				     "%s: %s is not %s (a number 0..%" PRIu64 ")", what,
				     type_word(v), kind, max);
	qphs__json_scalar_text(v, t, sizeof(t));
	return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_OUT_OF_RANGE,
			     "%s: %s is not %s (0..%" PRIu64 ")", what, t, kind, max);
}

int qphs__jr_u32_array(struct json_object *v, const char *what, const char *kind, size_t max,
		       int too_many,
		       uint32_t **out, size_t *count, char *err, size_t errlen)
{
	size_t n;
	uint32_t *a;

	*out = NULL;
	*count = 0;
	if (!v)
		return 0;
	if (json_object_get_type(v) != json_type_array)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
				     "%s: %s where an array of numbers belongs", what,
				     type_word(v));
	n = json_object_array_length(v);
	if (n > max)
		return qphs__jr_fail(err, errlen, too_many, "%s: %zu elements (at most %zu)",
				     what, n, max);
	if (!n)
		return 0;
	a = calloc(n, sizeof(*a));
	if (!a)
		return QPHS_ERR_MEMORY;
	for (size_t i = 0; i < n; i++) {
		char name[96];
		uint64_t u;
		int rc;

		/* The element's name is formatted only for the error text:
		 * a first read without it, again with it when it fails. */
		rc = qphs__jr_uint(json_object_array_get_idx(v, i), what, kind,
				   UINT32_MAX, &u, NULL, 0);
		if (rc) {
			snprintf(name, sizeof(name), "%s[%zu]", what, i);
			rc = qphs__jr_uint(json_object_array_get_idx(v, i), name, kind,
					   UINT32_MAX, &u, err, errlen);
			free(a);
			return rc;
		}
		a[i] = (uint32_t)u;
	}
	*out = a;
	*count = n;
	return 0;
}

static int check_walk(struct json_object *v, char *path, size_t plen, char *err, size_t errlen)
{
	size_t used = strlen(path);
	int rc = 0;

	switch (json_object_get_type(v)) {
	case json_type_string:
		if (json_object_get_string_len(v) > QPHS_MAX_STRING)
			return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_STRING_TOO_LONG,
					     "%s: string of %d bytes (at most %d)",
					     *path ? path : "body", json_object_get_string_len(v),
					     QPHS_MAX_STRING);
		return 0;
	case json_type_array:
		for (size_t i = 0; !rc && i < json_object_array_length(v); i++) {
			snprintf(path + used, plen - used, "[%zu]", i);
			rc = check_walk(json_object_array_get_idx(v, i), path, plen, err, errlen);
		}
		break;
	case json_type_object: {
		json_object_object_foreach(v, k, e) {
			if (strlen(k) > QPHS_MAX_STRING)
				return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_STRING_TOO_LONG,
						     "%s: key of %zu bytes (at most %d)",
						     *path ? path : "body", strlen(k),
						     QPHS_MAX_STRING);
			snprintf(path + used, plen - used, "%s%.40s", used ? "." : "", k);
			rc = check_walk(e, path, plen, err, errlen);
			if (rc)
				break;
		}
		break;
	}
	default:
		break;
	}
	path[used] = '\0';
	return rc;
}

/* The same walk without the path, for the common case of a body that
 * passes: check_walk's path text is built only to name a failure. */
static int strings_ok(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_string:
		return json_object_get_string_len(v) <= QPHS_MAX_STRING;
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (!strings_ok(json_object_array_get_idx(v, i)))
				return 0;
		return 1;
	case json_type_object: {
		json_object_object_foreach(v, k, e) {
			if (strlen(k) > QPHS_MAX_STRING || !strings_ok(e))
				return 0;
		}
		return 1;
	}
	default:
		return 1;
	}
}

int qphs__jr_check_strings(struct json_object *v, char *err, size_t errlen)
{
	char path[512] = "";

	if (strings_ok(v))
		return 0;
	return check_walk(v, path, sizeof(path), err, errlen);
}
