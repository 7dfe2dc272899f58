/*
 * jread.h — the harness's one strict JSON reader.  Every JSON the harness
 * takes in goes through it: scenario files (their parser adds FILE:LINE),
 * an agent's --config and request lines, agent replies, what netns/topo
 * and netns/probe print, quirk results, results.json.
 *
 * The rules (STYLE 3):
 *   - a getter reads one key of an object.  Absent is JREAD_ABSENT and the
 *     destination keeps its value; so is null, unless the reading says
 *     null_is_wrong (files people write, where null is a mistake);
 *   - a value of another JSON type is an error, never converted: json-c's
 *     own getters turn "12", 1.5 and null into plausible integers;
 *   - an integer must lie in the range asked for, a string must fit the
 *     buffer it is copied into, a string copied to the heap is a checked
 *     strdup, an array element is checked like a key;
 *   - an error names the key.  The first one is kept in err, prefixed with
 *     `what` ("--config: \"mtu\" must be an integer, not a string"); the
 *     later ones are only counted.
 * Getters return JREAD_OK (stored), JREAD_ABSENT or JREAD_ERROR.
 */
#ifndef QPLAB_JREAD_H
#define QPLAB_JREAD_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { JREAD_ERROR = -1, JREAD_ABSENT = 0, JREAD_OK = 1 };

struct jread {
	const char *what;    /* prefix of err's message ("agent reply") */
	char *err;           /* the first error (caller's buffer, may be NULL) */
	size_t errlen;
	int errors;          /* errors so far */
	bool null_is_wrong;  /* null is a value of the wrong type, not absent */
	bool all_required;   /* every key read is required: absent is an error */
	/* When set, every error goes here instead of err: key is what it is
	 * about (for an element, the array's key), missing is true for a
	 * required key that is absent, msg has no prefix. */
	void (*report)(void *user, const char *key, bool missing, const char *msg);
	void *user;
};

/* Parses text (len bytes) strictly: one JSON value, nothing but
 * whitespace after it, nesting and string limits of qphs_json_parse.
 * Returns JREAD_OK with *out (json_object_put it), or JREAD_ERROR. */
int jread_parse(struct jread *r, const char *text, size_t len, json_object **out);
/* The same, and the value must be an object. */
int jread_parse_object(struct jread *r, const char *text, size_t len, json_object **out);

/* jread_parse over the whole file at path (a file that cannot be read is
 * an error naming its errno). */
int jread_parse_file(struct jread *r, const char *path, json_object **out);

/* o[key] of JSON type t (borrowed).  o NULL: absent. */
int jread_value(struct jread *r, json_object *o, const char *key, json_type t,
		json_object **out);
int jread_object(struct jread *r, json_object *o, const char *key, json_object **out);
int jread_array(struct jread *r, json_object *o, const char *key, json_object **out);

/* Strings: borrowed (valid while o lives), copied into dst (len bytes; a
 * longer string is an error and dst is left alone), or strdup'd into *out
 * (the caller frees it; out of memory is an error). */
int jread_str(struct jread *r, json_object *o, const char *key, const char **out);
int jread_str_copy(struct jread *r, json_object *o, const char *key, char *dst, size_t len);
int jread_strdup(struct jread *r, json_object *o, const char *key, char **out);

/* Integers in min..max (JSON integers only: 1.0 and "1" are errors). */
int jread_int64(struct jread *r, json_object *o, const char *key, int64_t min, int64_t max,
		int64_t *out);
int jread_int(struct jread *r, json_object *o, const char *key, int min, int max, int *out);
int jread_long(struct jread *r, json_object *o, const char *key, long min, long max,
	       long *out);
int jread_bool(struct jread *r, json_object *o, const char *key, bool *out);
/* A number: a JSON integer or double. */
int jread_double(struct jread *r, json_object *o, const char *key, double *out);

/* Element i of the array arr (named key in messages, "types[2]"), of type
 * t, and the same for a string element. */
int jread_elem(struct jread *r, json_object *arr, const char *key, size_t i, json_type t,
	       json_object **out);
int jread_elem_str(struct jread *r, json_object *arr, const char *key, size_t i,
		   const char **out);

/* A required key that is absent: an error "missing required key". */
int jread_missing(struct jread *r, const char *key);
/* Every key of o that is not in keys (NULL-ended) is an error "unknown key
 * \"K\" in <in>" ("in" may be NULL). */
void jread_only_keys(struct jread *r, json_object *o, const char *const *keys, const char *in);
/* An error about key that the caller found itself (a value out of its own
 * set, ...): recorded like the reader's own.  Returns JREAD_ERROR. */
int jread_fail(struct jread *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* For JSON the harness made itself (the results it builds, a results file
 * already checked on load): the value, or dflt (NULL) when the key is
 * absent, null or of another type; never converted, never an error. */
const char *jread_str_or(json_object *o, const char *key, const char *dflt);
int64_t jread_int_or(json_object *o, const char *key, int64_t dflt);
bool jread_bool_or(json_object *o, const char *key, bool dflt);
json_object *jread_array_or_null(json_object *o, const char *key);
json_object *jread_object_or_null(json_object *o, const char *key);
/* Element i of arr when it is an object, else NULL. */
json_object *jread_object_at(json_object *arr, size_t i);

/* "a string", "an integer", "true or false", "an array", "an object", "a
 * number", "null": the words of the messages. */
const char *jread_type_word(json_type t);

#endif
