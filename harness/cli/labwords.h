/* labwords.h — the words of the lab's data-path options, shared by the
 * scenario parser, the runner and the agent (pure). */
#ifndef QPLAB_LABWORDS_H
#define QPLAB_LABWORDS_H

#include <stddef.h>

/* Indexed by enum qphs_rkey_mode: "descriptor", "bad", "stale". */
extern const char *const qplab_rkey_words[];
/* Indexed by enum qphs_data_verb: "check", "write", "send". */
extern const char *const qplab_verb_words[];
/* Word i is the access bit 1 << i (QPHS_ACCESS_*): "local_write",
 * "remote_write", "remote_read". */
extern const char *const qplab_access_words[];

/* The index of w in the NULL-terminated words, or -1. */
int qplab_word_index(const char *const *words, const char *w);
/* "local_write,remote_read" for bits (QPHS_ACCESS_*) into buf; "none"
 * for 0.  Returns buf. */
const char *qplab_access_text(int bits, char *buf, size_t len);

#endif
