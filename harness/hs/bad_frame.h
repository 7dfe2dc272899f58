/*
 * bad_frame.h — the bytes of a named bad frame, for the `raw_frame` step.
 *
 * The names are the FAULT names of the error table's frame rows
 * (-1000..-1019): each frame provokes that row's error in a daemon that
 * decodes it (zero-length, oversize, truncate, garbage, empty-body,
 * not-json, trailing).  The frame layout is qphs/frame.h's; this file encodes it
 * by hand so the runner does not depend on the library's encoder being
 * right — the daemon's decoder is what is under test.
 */
#ifndef QPLAB_BAD_FRAME_H
#define QPLAB_BAD_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define QPLAB_BAD_FRAME_MAX 64

/* Writes the frame for kind into buf (QPLAB_BAD_FRAME_MAX bytes) and its
 * length into *len.  Returns 0, or QPHS_ERR_INVALID_ARGUMENT for a name
 * that is not a frame fault. */
int qplab_bad_frame(const char *kind, uint8_t buf[QPLAB_BAD_FRAME_MAX], size_t *len);

#endif
