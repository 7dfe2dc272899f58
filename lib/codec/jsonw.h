/*
 * jsonw.h — the JSON writer of Mooncake's dialect (jsoncpp 1.9.5 FastWriter)
 * and the number/string conversions the body readers share.  Internal.
 *
 * Rules (checked against jsoncpp by tests/compat): no whitespace; object
 * keys in byte order (shorter key first on a common prefix); '"', '\\',
 * \b \f \n \r \t in short form; '/' and DEL as they are; every other
 * control character and every non-ASCII character as \uXXXX with lowercase
 * hex, UTF-16 surrogate pairs above U+FFFF, U+FFFD for bytes that do not
 * decode; integers in decimal; doubles as "%.17g" with ".0" added when the
 * result has neither '.' nor 'e'.
 */
#ifndef QPHS__JSONW_H
#define QPHS__JSONW_H

#include <stddef.h>
#include <stdint.h>

struct json_object;

/* A writer for a body whose keys the caller already writes in the order
 * above: start from {0}, then qphs__jw_finish adds the '\n' and hands the
 * text over (0), or frees it (QPHS_ERR_MEMORY).  Strings are written with
 * the escapes above (NULL as ""). */
struct qphs__jw {
	char *p;
	size_t len, cap;
	int err;
};
/* Non-zero: a byte written as it is, ASCII from 0x20 (DEL too) but '"'
 * and '\\'; bytes from 0x80 up are 0.  A string of only these is written
 * verbatim between quotes.  Bit QPHS__JW_PLAIN: the same less DEL, what
 * the fast reader (descfast.c) takes as it is; one load a byte for both. */
#define QPHS__JW_PLAIN 2
extern const unsigned char qphs__jw_as_is[256];

/* The length of s when every byte of it is written as it is, else
 * SIZE_MAX: one scan finds both (the NUL is not as is). */
static inline size_t qphs__jw_plain_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0;

	while (qphs__jw_as_is[u[n]])
		n++;
	return u[n] ? SIZE_MAX : n;
}

/* Writes v in decimal at p (no NUL; up to 20 bytes); returns the end.
 * The one decimal writer of the codec, the reply writers and the
 * daemon's peer text (printf costs a handshake more than the rest). */
static inline char *qphs__put_u64(char *p, uint64_t v)
{
	char t[20];
	size_t n = 0;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}

void qphs__jw_raw(struct qphs__jw *b, const char *s, size_t n);
void qphs__jw_string(struct qphs__jw *b, const char *s);
void qphs__jw_int(struct qphs__jw *b, int64_t v);
int qphs__jw_finish(struct qphs__jw *b, char **out, size_t *out_len);

/* qphs_hs_desc_encode by way of a json-c tree and qphs__jsonw_write: what
 * the direct writer must equal byte for byte (lib/codec/desc.c). */
struct qphs_hs_desc;
int qphs__hs_desc_encode_tree(const struct qphs_hs_desc *d, char **out, size_t *out_len);

/* qphs_hs_desc_encode without its shortcut for plain strings
 * (descwrite.c): the writer above key by key, or the tree. */
int qphs__hs_desc_encode_general(const struct qphs_hs_desc *d, char **out, size_t *out_len);

/* The shortcut: 1 and *out (as qphs_hs_desc_encode) when every string of
 * d is written verbatim and d carries no other transports' keys, the
 * whole body then sized before a byte is written; 0, nothing allocated,
 * otherwise (or when memory ran out). */
int qphs__hs_desc_encode_plain(const struct qphs_hs_desc *d, char **out, size_t *out_len);

/* Writes obj (NULL writes "null") followed by '\n' into a new malloc'd
 * NUL-terminated string (*out transferred; *out_len excludes the NUL).
 * Returns 0 or QPHS_ERR_MEMORY. */
int qphs__jsonw_write(struct json_object *obj, char **out, size_t *out_len);

/* The text jsoncpp's Value::asString() gives a scalar: numbers as the
 * writer writes them, "true"/"false", "" for null.  buf holds >= 64 bytes.
 * Returns -1 for strings, arrays and objects (no text written). */
int qphs__json_scalar_text(struct json_object *obj, char *buf, size_t len);

#endif
