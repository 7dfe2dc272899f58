/* golden.h — the golden frames of tests/golden/, for the unit suites. */
#ifndef QPLAB_GOLDEN_H
#define QPLAB_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

/* Reads tests/golden/NAME (hex text: two digits a byte, whitespace between
 * bytes ignored, '#' to the end of the line is a comment: qphs_hex_decode
 * with QPHS_HEX_COMMENTS) from $QPLAB_SRCDIR when set, else
 * from the current directory (`make unit` runs in the checkout root).
 * *buf: the decoded bytes, malloc'd and transferred to the caller (free()).
 * Returns 0, or -1 with a message on stderr (missing file, bad hex). */
int golden_load(const char *name, uint8_t **buf, size_t *len);

/* The path golden_load reads NAME from, into out (len bytes). */
void golden_path(const char *name, char *out, size_t len);

#endif
