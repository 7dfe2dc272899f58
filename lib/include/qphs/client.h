/*
 * qphs/client.h — the active side: one request, one reply, bounded in time.
 *
 * Blocks the calling thread (never a daemon's loop thread) for at most
 * cfg->connect_timeout_s per address tried plus cfg->reply_timeout_ms.
 * Moves to the next resolved address only when connecting failed; a request
 * that was sent is never sent again.
 */
#ifndef QPHS_CLIENT_H
#define QPHS_CLIENT_H

#include <stddef.h>

#include "qphs/config.h"
#include "qphs/export.h"

struct qphs_client_result {
	char *reply;         /* reply JSON, NUL-terminated, malloc'd: the caller
			      * frees it (also set on ERR_REJECT_HANDSHAKE) */
	size_t reply_len;
	int reply_type;      /* enum qphs_hs_type of the reply frame */
	char peer[80];       /* "ADDR:PORT" actually connected to, or "" */
	char errstr[512];    /* the failure, in words; for a rejection this is
			      * the peer's reply_msg */
	double connect_ms;   /* time to connect */
	double total_ms;     /* time to the whole reply */
};

/* Sends one request of type (enum qphs_hs_type; QPHS_HS_OLD_PROTOCOL sends
 * an untyped frame) with body json (borrowed) to server ("host:port",
 * bracketed IPv6; a missing port means cfg->handshake_port) and reads the
 * reply.  Returns 0, or one of: QPHS_ERR_DNS, QPHS_ERR_CONNECT_REFUSED,
 * QPHS_ERR_CONNECT_TIMEOUT, QPHS_ERR_UNREACHABLE, QPHS_ERR_SOCKET,
 * QPHS_ERR_REPLY_TIMEOUT, QPHS_ERR_PEER_CLOSED, a QPHS_ERR_FRAME_* code
 * for a bad reply frame, QPHS_ERR_REPLY_WRONG_TYPE,
 * QPHS_ERR_REPLY_OLD_PROTOCOL, QPHS_ERR_MALFORMED_JSON,
 * QPHS_ERR_PEER_NO_TRANSPORT (a Connection or Metadata reply whose body is
 * null: the peer has no handler for that type), and for Connection
 * requests QPHS_ERR_REJECT_HANDSHAKE (non-empty reply_msg).  res: caller's,
 * filled in every case; free res->reply with free(). */
QPHS_EXPORT int qphs_client_request(const struct qphs_config *cfg,
				    const char *server, int type,
				    const char *json, size_t json_len,
				    struct qphs_client_result *res);

#endif
