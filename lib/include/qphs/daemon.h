/*
 * qphs/daemon.h — the passive side of the handshake: a listener and an
 * epoll event loop on one thread of its own.
 *
 * Threads.  The daemon owns one loop thread.  Handlers run on it and must
 * not block: a handler either answers at once (qphs_request_reply) or keeps
 * the request and answers later from any thread — qphs_request_reply and
 * qphs_request_close are the only calls that may be made from other threads
 * (they go through the loop's eventfd).  Every request is completed exactly
 * once, by reply or close; a request not completed by the time the daemon
 * stops is closed by the daemon, and the handler's owner learns of it
 * through qphs_request_reply returning QPHS_ERR_STOPPED.
 *
 * Stop and free.  qphs_daemon_stop returns promptly with connections in
 * flight: it closes every connection and joins the thread.  Requests handed
 * to handlers and not yet completed stay valid until completed (the call
 * then only frees them).  qphs_daemon_free stops first if needed.
 */
#ifndef QPHS_DAEMON_H
#define QPHS_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "qphs/config.h"
#include "qphs/export.h"

struct qphs_daemon;
struct qphs_request;

/* Message types on the wire (SPEC §1). */
enum qphs_hs_type {
	QPHS_HS_CONNECTION = 0,
	QPHS_HS_METADATA = 1,
	QPHS_HS_NOTIFY = 2,
	QPHS_HS_PROBE = 3,
	QPHS_HS_OLD_PROTOCOL = 0xff, /* an untyped (old protocol) frame */
};

/* Called on the loop thread with a complete, well-formed JSON request.
 * req is transferred to the handler: it must be completed exactly once. */
typedef void (*qphs_handler_fn)(struct qphs_request *req, void *user);

/* cfg: copied.  *out: transferred (qphs_daemon_free). */
QPHS_EXPORT int qphs_daemon_new(const struct qphs_config *cfg,
				struct qphs_daemon **out);

/* Registers fn for requests of type (QPHS_HS_CONNECTION..QPHS_HS_PROBE).
 * Old-protocol requests go to the Connection handler.  Without a Probe
 * handler the daemon answers {"status":"success"} itself.  Call before
 * qphs_daemon_start. */
QPHS_EXPORT int qphs_daemon_set_handler(struct qphs_daemon *d, int type,
					qphs_handler_fn fn, void *user);

/* Binds host (NULL = any address of cfg's family; an IPv6 literal selects
 * IPv6) and port.  port 0 = a random free port in [min_rpc_port,
 * max_rpc_port], up to 500 tries (QPHS_ERR_NO_PORT).  Listens with
 * cfg->listen_backlog. */
QPHS_EXPORT int qphs_daemon_listen(struct qphs_daemon *d, const char *host,
				   uint16_t port);

/* The bound address as "ADDR:PORT" ("[v6]:PORT"), and the port.  Borrowed. */
QPHS_EXPORT const char *qphs_daemon_address(const struct qphs_daemon *d);
QPHS_EXPORT uint16_t qphs_daemon_port(const struct qphs_daemon *d);

QPHS_EXPORT int qphs_daemon_start(struct qphs_daemon *d);
QPHS_EXPORT int qphs_daemon_stop(struct qphs_daemon *d);
QPHS_EXPORT void qphs_daemon_free(struct qphs_daemon *d);

/* Last error text of the daemon (borrowed, valid until the next call). */
QPHS_EXPORT const char *qphs_daemon_errstr(const struct qphs_daemon *d);

/* The request's type (enum qphs_hs_type), JSON body (borrowed, valid until
 * the request is completed; NUL-terminated) and peer "ADDR:PORT". */
QPHS_EXPORT int qphs_request_type(const struct qphs_request *req);
QPHS_EXPORT const char *qphs_request_json(const struct qphs_request *req,
					  size_t *len);
QPHS_EXPORT const char *qphs_request_peer(const struct qphs_request *req);

/* Completes req with a reply body (copied; the frame type follows the
 * request's, untyped for old-protocol requests).  Any thread.  req is freed:
 * do not use it afterwards.  Returns 0, or QPHS_ERR_STOPPED when the daemon
 * already stopped (req is freed all the same). */
QPHS_EXPORT int qphs_request_reply(struct qphs_request *req, const char *json,
				   size_t len);

/* Completes req by closing the connection without a reply.  Any thread. */
QPHS_EXPORT void qphs_request_close(struct qphs_request *req);

struct qphs_daemon_stats {
	uint64_t accepted;
	uint64_t replied;
	uint64_t timed_out;        /* request or write deadline passed */
	uint64_t refused_at_cap;   /* closed at once: max_connections reached */
	uint64_t rejected_frame[8];/* by wire error: index -(code) - 1000 */
	uint64_t rejected_body;    /* well-formed JSON of the wrong shape */
	uint64_t open_connections;
	uint64_t live_bytes;       /* bytes allocated for connections now */
};

/* Any thread. */
QPHS_EXPORT void qphs_daemon_stats(const struct qphs_daemon *d,
				   struct qphs_daemon_stats *out);

#endif
