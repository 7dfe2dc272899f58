/* Strict JSON parsing and key readers shared by the message bodies. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "desc.h"
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

/* NaN and Infinity are not JSON (jsoncpp rejects them), but json-c reads
 * them even in strict mode; so does an exponent that overflows to inf, which
 * we refuse too rather than write back as 1e+9999. */
static int has_non_finite(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_double:
		return !isfinite(json_object_get_double(v));
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(v); i++)
			if (has_non_finite(json_object_array_get_idx(v, i)))
				return 1;
		return 0;
	case json_type_object: {
		json_object_object_foreach(v, k, e) {
			(void)k;
			if (has_non_finite(e))
				return 1;
		}
		return 0;
	}
	default:
		return 0;
	}
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

int qphs__json_parse(const char *json, size_t json_len, struct json_object **out,
		     char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *obj;
	size_t end;

	*out = NULL;
	if (only_space(json, json_len))
		return qphs__jr_fail(err, errlen, QPHS_ERR_FRAME_EMPTY_BODY,
				     "body is empty (%zu bytes of whitespace)", json_len);
	tok = json_tokener_new_ex(QPHS_MAX_DEPTH);
	if (!tok)
		return QPHS_ERR_MEMORY;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, json, (int)json_len);
	end = json_tokener_get_parse_end(tok);
	if (!obj && json_tokener_get_error(tok) == json_tokener_continue) {
		/* A bare number needs to see the end: give it a terminator. */
		obj = json_tokener_parse_ex(tok, "", 1);
		end = json_len;
	}
	if (!obj) {
		int rc = parse_error(tok, end, err, errlen);
		json_tokener_free(tok);
		return rc;
	}
	json_tokener_free(tok);
	if (!only_space(json + end, json_len - end)) {
		json_object_put(obj);
		return qphs__jr_fail(err, errlen, QPHS_ERR_FRAME_TRAILING,
				     "%zu bytes after the JSON value (at byte %zu)",
				     json_len - end, end);
	}
	if (has_non_finite(obj)) {
		json_object_put(obj);
		return qphs__jr_fail(err, errlen, QPHS_ERR_FRAME_NOT_JSON,
				     "not JSON: NaN, Infinity or a number too large for a double");
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
	if (ty != json_type_int && ty != json_type_double)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
				     "%s: %s is not %s (a number 0..%" PRIu64 ")", what,
				     ty == json_type_string ? json_object_get_string(v) : type_word(v),
				     kind, max);
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

		snprintf(name, sizeof(name), "%s[%zu]", what, i);
		rc = qphs__jr_uint(json_object_array_get_idx(v, i), name, kind,
				   UINT32_MAX, &u, err, errlen);
		if (rc) {
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

int qphs__jr_check_strings(struct json_object *v, char *err, size_t errlen)
{
	char path[512] = "";

	return check_walk(v, path, sizeof(path), err, errlen);
}
