/*
 * qphs/json.h — the library's strict JSON reader, the one every message
 * body goes through.  Pure; any thread.
 */
#ifndef QPHS_JSON_H
#define QPHS_JSON_H

#include <stddef.h>

#include "qphs/export.h"

struct json_object;

#define QPHS_MAX_STRING 4096 /* bytes, any string or key of a body */
#define QPHS_MAX_DEPTH 32    /* JSON nesting of a body */

/* Parses json (json_len bytes; need not be NUL-terminated) into a new
 * json-c object (*out transferred: release it with json_object_put; the
 * JSON value null gives *out NULL and 0).  Errors:
 * QPHS_ERR_FRAME_EMPTY_BODY (no value, only whitespace),
 * QPHS_ERR_FRAME_NOT_JSON (also: comments, trailing commas, single quotes,
 * NaN/Infinity, numbers that overflow a double, strings that are not
 * well-formed UTF-8 — jsoncpp takes some of these, Mooncake never writes
 * them), QPHS_ERR_FRAME_TRAILING (anything but whitespace after the value),
 * QPHS_ERR_BODY_TOO_DEEP (more than QPHS_MAX_DEPTH levels, detected before
 * parsing completes), QPHS_ERR_FRAME_TOO_LONG (over INT_MAX bytes),
 * QPHS_ERR_MEMORY.  err (errlen bytes, may be NULL) gets the message. */
QPHS_EXPORT int qphs_json_parse(const char *json, size_t json_len, struct json_object **out,
				char *err, size_t errlen);

/* How many of s's n bytes, from the start, are well-formed UTF-8 (RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF): n when all of
 * them are.  The test qphs_json_parse applies to every string and key. */
QPHS_EXPORT size_t qphs_utf8_valid_prefix(const char *s, size_t n);

#endif
