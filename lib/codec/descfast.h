/*
 * descfast.h — the common Connection body read without json-c.  Internal.
 *
 * What Mooncake (and qplab) send is a flat object of the known keys: plain
 * ASCII strings, small unsigned integers, an array of them, a bool.
 * qphs__hs_desc_fast reads exactly that subset in one pass and nothing
 * else: a key it does not know, a repeated key, an escape, a byte outside
 * printable ASCII in a string, a number with a sign, fraction, exponent or
 * leading zero, null, a value out of its key's range, or anything that is
 * not JSON makes it give up.  It never refuses a body: it returns 1 when it
 * read the body, with *out filled as qphs_hs_desc_parse's json-c path
 * (qphs__hs_desc_parse_json, the reference) fills it for the same bytes,
 * and 0 otherwise (or when memory ran out), *out untouched; the caller then
 * takes the reference, which alone words every refusal.
 * fuzz/fuzz_hs_desc_fast holds the two to the same result.
 *
 * *members: the body's keys plus its array elements, as qphs_json_shape
 * counts them (the daemon's max_body_keys).
 */
#ifndef QPHS__DESCFAST_H
#define QPHS__DESCFAST_H

#include <stddef.h>

struct qphs_hs_desc;

int qphs__hs_desc_fast(const char *json, size_t json_len, struct qphs_hs_desc *out,
		       size_t *members);

/* The same, but every string and qp_num of *out in one allocation,
 * *block: qphs__hs_desc_release(out, *block) releases them all, and *out
 * must never reach qphs_hs_desc_clear or qphs_desc_set_str.  For the
 * daemon, which owns its requests' descriptors and lends them out const,
 * and the connecting side's replies (hs/client_int.h). */
int qphs__hs_desc_fast_block(const char *json, size_t json_len, struct qphs_hs_desc *out,
			     size_t *members, void **block);

/* Frees a descriptor whose strings and qp_num are in block (one of
 * qphs__hs_desc_fast_block's, or setup's own request built so), or its
 * own when block is NULL (qphs_hs_desc_clear); then zeroes it. */
void qphs__hs_desc_release(struct qphs_hs_desc *d, void *block);

/* qphs_hs_desc_parse through json-c only: the reference. */
int qphs__hs_desc_parse_json(const char *json, size_t json_len, struct qphs_hs_desc *out,
			     char *err, size_t errlen);

#endif
