/* hs_codec.h — what `qplab hs encode` and `qplab hs decode` share. */
#ifndef QPLAB_HS_CODEC_H
#define QPLAB_HS_CODEC_H

#include <stddef.h>

/* Reads all of stdin into a new malloc'd buffer (*buf transferred, one
 * spare byte holding a NUL).  Returns 0; QPHS_ERR_FRAME_TOO_LONG when more
 * than max bytes arrive; QPHS_ERR_SOCKET (read error, errno kept) or
 * QPHS_ERR_MEMORY. */
int hs_read_stdin(size_t max, char **buf, size_t *len);

/* Writes len bytes to stdout (fd 1), retrying short writes and EINTR.
 * Returns 0 or -1 with errno set. */
int hs_write_stdout(const void *buf, size_t len);

/* Matches argv[*i] against the option `name` ("--type") in either form,
 * "--type VALUE" or "--type=VALUE".  Returns 1 with *value set (and *i
 * moved onto the value when it was a separate word), 0 when argv[*i] is
 * something else, -1 when the value is missing. */
int hs_opt_value(int argc, char **argv, int *i, const char *name, const char **value);

/* Prints "qplab hs CMD: ERRNAME: text" plus ": detail" when detail is not
 * empty, to stderr. */
void hs_print_error(const char *cmd, int code, const char *detail);

#endif
