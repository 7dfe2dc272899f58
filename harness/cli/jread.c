/* The harness's strict JSON reader (jread.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jread.h"
#include "qphs/error.h"
#include "qphs/json.h"

/* Records one error: to the report callback, or as the first error. */
static int emit(struct jread *r, const char *key, bool missing, const char *msg)
{
	if (r->report)
		r->report(r->user, key, missing, msg);
	else if (!r->errors && r->err && r->errlen)
		snprintf(r->err, r->errlen, "%s%s%s", r->what ? r->what : "", r->what ? ": " : "",
			 msg);
	r->errors++;
	return JREAD_ERROR;
}

int jread_fail(struct jread *r, const char *key, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return emit(r, key, false, msg);
}

int jread_missing(struct jread *r, const char *key)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "missing required key \"%s\"", key);
	return emit(r, key, true, msg);
}

const char *jread_type_word(json_type t)
{
	switch (t) {
	case json_type_string:
		return "a string";
	case json_type_int:
		return "an integer";
	case json_type_boolean:
		return "true or false";
	case json_type_array:
		return "an array";
	case json_type_object:
		return "an object";
	case json_type_double:
		return "a number";
	default:
		return "null";
	}
}

int jread_parse(struct jread *r, const char *text, size_t len, json_object **out)
{
	char err[256];
	int rc = qphs_json_parse(text, len, out, err, sizeof(err));

	/* The library's messages mostly say "not JSON" already. */
	if (rc)
		return jread_fail(r, NULL, strncmp(err, "not JSON", 8) ? "not JSON: %s" : "%s", err);
	return JREAD_OK;
}

int jread_parse_object(struct jread *r, const char *text, size_t len, json_object **out)
{
	if (jread_parse(r, text, len, out) != JREAD_OK)
		return JREAD_ERROR;
	if (!json_object_is_type(*out, json_type_object)) {
		json_object_put(*out);
		*out = NULL;
		return jread_fail(r, NULL, "not a JSON object");
	}
	return JREAD_OK;
}

int jread_parse_file(struct jread *r, const char *path, json_object **out)
{
	FILE *f = fopen(path, "r");
	long size = -1;
	char *text = NULL;
	int rc;

	*out = NULL;
	if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (text = malloc((size_t)size + 1)) && fread(text, 1, (size_t)size, f) != (size_t)size)
		size = -1;
	if (f)
		fclose(f);
	if (!f || size < 0 || !text) {
		free(text);
		return jread_fail(r, NULL, "cannot read %s: %s", path,
				  strerror(errno ? errno : EIO));
	}
	text[size] = '\0';
	rc = jread_parse(r, text, (size_t)size, out);
	free(text);
	return rc;
}

/* v, found under name, checked against t. */
static int check(struct jread *r, json_object *v, const char *name, const char *key,
		 json_type t)
{
	json_type got = json_object_get_type(v);

	if (got == json_type_null && !r->null_is_wrong)
		return JREAD_ABSENT;
	if (got == t || (t == json_type_double && got == json_type_int))
		return JREAD_OK;
	return jread_fail(r, key, "\"%s\" must be %s, not %s", name, jread_type_word(t),
			  jread_type_word(got));
}

int jread_value(struct jread *r, json_object *o, const char *key, json_type t,
		json_object **out)
{
	json_object *v;
	int rc;

	*out = NULL;
	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		rc = JREAD_ABSENT;
	else if ((rc = check(r, v, key, key, t)) == JREAD_OK)
		*out = v;
	if (rc == JREAD_ABSENT && r->all_required)
		return jread_missing(r, key);
	return rc;
}

int jread_object(struct jread *r, json_object *o, const char *key, json_object **out)
{
	return jread_value(r, o, key, json_type_object, out);
}

int jread_array(struct jread *r, json_object *o, const char *key, json_object **out)
{
	return jread_value(r, o, key, json_type_array, out);
}

int jread_str(struct jread *r, json_object *o, const char *key, const char **out)
{
	json_object *v;
	int rc = jread_value(r, o, key, json_type_string, &v);

	if (rc == JREAD_OK)
		*out = json_object_get_string(v);
	return rc;
}

int jread_str_copy(struct jread *r, json_object *o, const char *key, char *dst, size_t len)
{
	json_object *v;
	int rc = jread_value(r, o, key, json_type_string, &v);
	size_t n;

	if (rc != JREAD_OK)
		return rc;
	n = (size_t)json_object_get_string_len(v);
	if (n >= len)
		return jread_fail(r, key, "\"%s\" is longer than %zu bytes", key, len - 1);
	memcpy(dst, json_object_get_string(v), n + 1);
	return JREAD_OK;
}

int jread_strdup(struct jread *r, json_object *o, const char *key, char **out)
{
	const char *s;
	int rc = jread_str(r, o, key, &s);
	char *copy;

	if (rc != JREAD_OK)
		return rc;
	if (!(copy = strdup(s)))
		return jread_fail(r, key, "\"%s\": out of memory", key);
	*out = copy;
	return JREAD_OK;
}

static int int_of(struct jread *r, json_object *v, const char *name, const char *key,
		  int64_t min, int64_t max, int64_t *out)
{
	int64_t x;

	/* json-c keeps integers above INT64_MAX as uint64; get_int64 would
	 * clamp them into range. */
	if (json_object_get_int64(v) == INT64_MAX && json_object_get_uint64(v) > INT64_MAX)
		return jread_fail(r, key, "\"%s\" must be in %lld..%lld", name, (long long)min,
				  (long long)max);
	x = json_object_get_int64(v);
	if (x < min || x > max)
		return jread_fail(r, key, "\"%s\" must be in %lld..%lld", name, (long long)min,
				  (long long)max);
	*out = x;
	return JREAD_OK;
}

int jread_int64(struct jread *r, json_object *o, const char *key, int64_t min, int64_t max,
		int64_t *out)
{
	json_object *v;
	int rc = jread_value(r, o, key, json_type_int, &v);

	return rc == JREAD_OK ? int_of(r, v, key, key, min, max, out) : rc;
}

int jread_int(struct jread *r, json_object *o, const char *key, int min, int max, int *out)
{
	int64_t x;
	int rc = jread_int64(r, o, key, min, max, &x);

	if (rc == JREAD_OK)
		*out = (int)x;
	return rc;
}

int jread_long(struct jread *r, json_object *o, const char *key, long min, long max,
	       long *out)
{
	int64_t x;
	int rc = jread_int64(r, o, key, min, max, &x);

	if (rc == JREAD_OK)
		*out = (long)x;
	return rc;
}

int jread_bool(struct jread *r, json_object *o, const char *key, bool *out)
{
	json_object *v;
	int rc = jread_value(r, o, key, json_type_boolean, &v);

	if (rc == JREAD_OK)
		*out = json_object_get_boolean(v);
	return rc;
}

int jread_double(struct jread *r, json_object *o, const char *key, double *out)
{
	json_object *v;
	int rc = jread_value(r, o, key, json_type_double, &v);

	if (rc == JREAD_OK)
		*out = json_object_get_double(v);
	return rc;
}

int jread_elem(struct jread *r, json_object *arr, const char *key, size_t i, json_type t,
	       json_object **out)
{
	char name[96];
	json_object *v;
	int rc;

	*out = NULL;
	if (!arr || !json_object_is_type(arr, json_type_array) ||
	    i >= json_object_array_length(arr))
		return JREAD_ABSENT;
	v = json_object_array_get_idx(arr, i);
	snprintf(name, sizeof(name), "%s[%zu]", key, i);
	/* An element is there even when null: null is of the wrong type. */
	if (!v)
		return jread_fail(r, key, "\"%s\" must be %s, not null", name, jread_type_word(t));
	if ((rc = check(r, v, name, key, t)) == JREAD_OK)
		*out = v;
	return rc;
}

int jread_elem_str(struct jread *r, json_object *arr, const char *key, size_t i,
		   const char **out)
{
	json_object *v;
	int rc = jread_elem(r, arr, key, i, json_type_string, &v);

	if (rc == JREAD_OK)
		*out = json_object_get_string(v);
	return rc;
}

void jread_only_keys(struct jread *r, json_object *o, const char *const *keys, const char *in)
{
	if (!o || !json_object_is_type(o, json_type_object))
		return;
	json_object_object_foreach(o, key, val) {
		size_t i = 0;

		(void)val;
		while (keys[i] && strcmp(keys[i], key))
			i++;
		if (!keys[i])
			jread_fail(r, key, "unknown key \"%s\"%s%s", key, in ? " in " : "",
				   in ? in : "");
	}
}

const char *jread_str_or(json_object *o, const char *key, const char *dflt)
{
	struct jread r = {0};
	const char *s = dflt;

	jread_str(&r, o, key, &s);
	return s;
}

int64_t jread_int_or(json_object *o, const char *key, int64_t dflt)
{
	struct jread r = {0};
	int64_t v = dflt;

	jread_int64(&r, o, key, INT64_MIN, INT64_MAX, &v);
	return v;
}

bool jread_bool_or(json_object *o, const char *key, bool dflt)
{
	struct jread r = {0};
	bool v = dflt;

	jread_bool(&r, o, key, &v);
	return v;
}

json_object *jread_array_or_null(json_object *o, const char *key)
{
	struct jread r = {0};
	json_object *v;

	jread_array(&r, o, key, &v);
	return v;
}

json_object *jread_object_or_null(json_object *o, const char *key)
{
	struct jread r = {0};
	json_object *v;

	jread_object(&r, o, key, &v);
	return v;
}

json_object *jread_object_at(json_object *arr, size_t i)
{
	struct jread r = {0};
	json_object *v;

	jread_elem(&r, arr, "", i, json_type_object, &v);
	return v;
}
