/*
 * jsonr.h — strict readers for keys of a parsed JSON body.  Internal.
 *
 * Each reader looks one key up with json_object_object_get_ex and checks
 * the JSON type before any getter (json-c's getters coerce).  A missing
 * key or a null value gives the default; anything else of the wrong shape
 * returns a QPHS_ERR_BODY_* code with a message naming `what` (the key, or a
 * path such as "buffers[2].addr") written into err.
 */
#ifndef QPHS__JSONR_H
#define QPHS__JSONR_H

#include <stddef.h>
#include <stdint.h>

struct json_object;

/* printf into err (may be NULL); returns code. */
int qphs__jr_fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A string key: strings are copied, numbers and bools stringified as
 * jsoncpp's asString does; arrays and objects are QPHS_ERR_BODY_WRONG_TYPE;
 * an embedded NUL is QPHS_ERR_BODY_WRONG_TYPE.  *out: malloc'd, replaces
 * (and frees) the previous value. */
int qphs__jr_string(struct json_object *v, const char *what, char **out, char *err,
		    size_t errlen);

/* An unsigned integer no greater than max: an int, or a double with an
 * integral value (jsoncpp's isUInt/isUInt64).  Non-numbers are
 * QPHS_ERR_BODY_WRONG_TYPE, other numbers QPHS_ERR_BODY_OUT_OF_RANGE; `kind`
 * names what the number is for in the message ("a QP number"). */
int qphs__jr_uint(struct json_object *v, const char *what, const char *kind,
		  uint64_t max, uint64_t *out, char *err, size_t errlen);

/* An array of u32 (at most max elements, else too_many) into a new
 * malloc'd array (*out, NULL when empty).  null or missing: empty. */
int qphs__jr_u32_array(struct json_object *v, const char *what, const char *kind, size_t max,
		       int too_many, uint32_t **out, size_t *count, char *err, size_t errlen);

/* Walks the whole value: every string and key at most QPHS_MAX_STRING
 * bytes, else QPHS_ERR_BODY_STRING_TOO_LONG naming the path. */
int qphs__jr_check_strings(struct json_object *v, char *err, size_t errlen);

/* The value of key in obj, or NULL when missing or null. */
struct json_object *qphs__jr_get(struct json_object *obj, const char *key);

#endif
