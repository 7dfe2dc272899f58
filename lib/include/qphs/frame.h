/*
 * qphs/frame.h — the handshake frame codec.  Pure: no sockets, no I/O; a
 * decoder belongs to one thread at a time.
 *
 *   [ length : u64 little-endian ][ type : u8 ][ JSON ]   typed frame
 *   [ length : u64 little-endian ][ JSON ]                old protocol
 *
 * length counts the type byte plus the JSON (old protocol: the JSON only).
 * A first payload byte 0..3 is a type; 0x04..0x7f starts an old-protocol
 * frame; 0x80..0xff is rejected (QPHS_ERR_FRAME_BAD_TYPE).
 *
 * Decoding is incremental: feed any split of the bytes, take whole frames
 * out.  Nothing is allocated before the length has been checked against the
 * decoder's limit.
 */
#ifndef QPHS_FRAME_H
#define QPHS_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "qphs/export.h"

/* The type byte.  The old protocol has none: QPHS_HS_OLD_PROTOCOL is never
 * on the wire. */
enum qphs_hs_type {
	QPHS_HS_CONNECTION = 0,
	QPHS_HS_METADATA = 1,
	QPHS_HS_NOTIFY = 2,
	QPHS_HS_PROBE = 3,
	QPHS_HS_OLD_PROTOCOL = 0xff,
};

#define QPHS_FRAME_LEN_BYTES 8
#define QPHS_MAX_LENGTH_MIN ((uint64_t)1 << 20)   /* default and minimum */
#define QPHS_MAX_LENGTH_MAX ((uint64_t)128 << 20) /* maximum */

/* "connection", "metadata", "notify", "probe", "old-protocol", or NULL. */
QPHS_EXPORT const char *qphs_msg_type_name(int type);
/* Inverse of qphs_msg_type_name; returns -1 for an unknown name. */
QPHS_EXPORT int qphs_msg_type_from_name(const char *name);

/* Writes the frame header for a body of json_len bytes into hdr (8 bytes for
 * the old protocol, 9 otherwise) and returns its length; returns 0 (nothing
 * written) for a type that is neither 0..3 nor QPHS_MSG_OLD_PROTOCOL. */
QPHS_EXPORT size_t qphs_frame_header(int type, size_t json_len, uint8_t hdr[9]);

/* Encodes one whole frame into a new malloc'd buffer; *out is transferred to
 * the caller (free()).  Returns 0, QPHS_ERR_INVALID_ARGUMENT (bad type,
 * empty json, or an old-protocol json whose first byte is not 0x04..0x7f and
 * so would not read back as old protocol) or QPHS_ERR_MEMORY. */
QPHS_EXPORT int qphs_frame_encode(int type, const char *json, size_t json_len,
		       uint8_t **out, size_t *out_len);

struct qphs_frame {
	int type;         /* enum qphs_hs_type */
	const char *json; /* borrowed from the decoder, NUL-terminated */
	size_t json_len;  /* bytes of JSON (the terminator not counted) */
};

struct qphs_decoder;

/* max_length: the MC_HANDSHAKE_MAX_LENGTH limit in bytes (0 = default
 * 1 MiB; otherwise clamped to [1 MiB, 128 MiB]).  Returns NULL on ENOMEM. */
QPHS_EXPORT struct qphs_decoder *qphs_decoder_new(uint64_t max_length);
QPHS_EXPORT void qphs_decoder_free(struct qphs_decoder *d);
/* Forgets any partial or finished frame; ready for the next one. */
QPHS_EXPORT void qphs_decoder_reset(struct qphs_decoder *d);

/* Consumes bytes of buf, stopping right after the end of one frame (the
 * rest is left to the caller for the next frame).  Returns the number of
 * bytes consumed (>= 0), or a negative error as soon as the bytes seen prove
 * the frame bad: QPHS_ERR_FRAME_ZERO_LENGTH, _TOO_LONG, _BAD_TYPE,
 * _EMPTY_BODY (a typed frame of length 1), QPHS_ERR_MEMORY.  After an error
 * the decoder must be reset: until then every feed returns the same error.
 * Feeding after a whole frame was ready drops that frame and starts the next.
 * The payload is allocated once, when its first byte arrives: length + 1
 * bytes (NUL terminator), never before the length was checked. */
QPHS_EXPORT ssize_t qphs_decoder_feed(struct qphs_decoder *d, const void *buf, size_t len);

/* Returns 1 and fills *f when a whole frame is ready, 0 otherwise.  The
 * frame's memory stays valid until the next feed, reset or free. */
QPHS_EXPORT int qphs_decoder_frame(struct qphs_decoder *d, struct qphs_frame *f);

/* The peer's side ended (EOF).  Returns 0 when no partial frame is
 * buffered, QPHS_ERR_FRAME_TRUNCATED otherwise (and the feed's error when
 * the decoder has failed and was not reset). */
QPHS_EXPORT int qphs_decoder_eof(const struct qphs_decoder *d);

/* Bytes already buffered for the current frame (0 between frames). */
QPHS_EXPORT size_t qphs_decoder_buffered(const struct qphs_decoder *d);

/* Frames written by hand as hex text (the .hex files of tests/golden, a
 * scenario's raw_frame "hex", the agent's raw_frame request) back to
 * bytes: pairs of hex digits, either case, with spaces, tabs and line ends
 * allowed between pairs (not inside one); with QPHS_HEX_COMMENTS in flags, '#' starts a
 * comment that runs to the end of its line.  Writes at most cap bytes to
 * out and their count to *out_len (may be NULL; set on errors too).
 * Returns 0; QPHS_ERR_INVALID_ARGUMENT at a character that is none of
 * those or a pair cut short; QPHS_ERR_FRAME_TOO_LONG when the bytes do not
 * fit in cap.  *bad_at (may be NULL) gets the error's offset in text.  An
 * empty text is 0 bytes and no error: the caller decides whether that is
 * a frame. */
#define QPHS_HEX_COMMENTS 1u
QPHS_EXPORT int qphs_hex_decode(const char *text, size_t len, unsigned flags, uint8_t *out,
				size_t cap, size_t *out_len, size_t *bad_at);

#endif
