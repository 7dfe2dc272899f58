/*
 * raw_frame.h — exact bytes to a handshake daemon on a fresh TCP
 * connection, and what the daemon did with them: the byte side of the
 * agents' `raw_frame` request (docs/agent-protocol.md), shared by `qplab
 * agent` and the Mooncake adapter (mooncake/), which differ only in how
 * they learn the daemon's reason.
 */
#ifndef QPLAB_RAW_FRAME_H
#define QPLAB_RAW_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define QPLAB_RAW_HEX_MAX 512 /* bytes of the daemon's answer kept as hex */

struct qplab_raw_outcome {
	const char *word;         /* "closed", "replied", "silent" (static) */
	char hex[2 * QPLAB_RAW_HEX_MAX + 1];
	double waited_ms;         /* from the write to the outcome */
};

/* The request's bytes: its "hex" (pairs of hex digits, qphs_hex_decode's
 * spacing) when not NULL, else its "kind" (a frame FAULT name,
 * hs/bad_frame.h).  Returns the length with *bytes malloc'd (caller frees;
 * also on error), or -1 with the reason in err. */
long qplab_raw_request_bytes(const char *hex, const char *kind, uint8_t **bytes, char *err,
			     size_t errlen);

/* A blocking TCP connection to addr ("host:port", bracketed IPv6) within
 * ms.  Returns the fd, or -1 with the reason in err. */
int qplab_raw_dial(const char *addr, int ms, char *err, size_t errlen);

/* Writes the bytes, half-closes (a partial frame then ends at EOF, as
 * when a peer dies mid-frame) and reads until the daemon closes or ms
 * pass.  Fills *o; the caller closes fd. */
void qplab_raw_exchange(int fd, const uint8_t *b, size_t len, int ms, struct qplab_raw_outcome *o);

/* A Probe to addr within ms (cfg's other settings borrowed): 1 when a
 * correct reply came back, else 0. */
struct qphs_config;
int qplab_raw_probe(const struct qphs_config *cfg, const char *addr, int ms);

#endif
