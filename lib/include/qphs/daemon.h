/*
 * qphs/daemon.h — the passive side of the handshake: a listener and an
 * epoll event loop on one thread of its own.
 *
 * Threads.  The daemon owns one loop thread, an accept thread that takes
 * connections off the listener for the loop only while the loop is busy
 * and the kernel's accept queue half full (so the queue keeps draining
 * during a burst; it asks for nice accept_thread_nice), and a parse
 * thread for large bodies.  Handlers run on the loop thread and must
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
 *
 * What reaches a handler.  Bad frames and bodies that are not JSON are
 * closed without a reply before any handler runs (one "[Handshake]" log line
 * and a counter each).  Bodies are shape-checked for their type:
 * a Connection body of the wrong shape is answered by the daemon itself with
 * a reply whose reply_msg names the key and the problem; a Probe, Notify or
 * Metadata body of the wrong shape is closed without a reply.  So a handler
 * only ever sees a body that parses for its type.
 *
 * Without a handler, as Mooncake's daemon: Probe -> {"status":"success"},
 * Notify -> {"name":"","notify_msg":"success"}, Metadata and Connection ->
 * the body null (what a Mooncake node whose RDMA transport did not install
 * answers; a qplab client reports QPHS_ERR_PEER_NO_TRANSPORT).
 *
 * Deadlines (from the config): the whole request within request_timeout_ms,
 * the reply written within write_timeout_ms, a handler's answer within
 * reply_timeout_ms; past any of them the connection is closed and counted in
 * timed_out (a late completion then only frees the request).  The daemon
 * closes each connection first, right after the whole reply is written.
 */
#ifndef QPHS_DAEMON_H
#define QPHS_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "qphs/config.h"
#include "qphs/export.h"
#include "qphs/frame.h" /* enum qphs_hs_type */

struct qphs_daemon;
struct qphs_request;

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

/* Raises this process's soft RLIMIT_NOFILE to cfg->max_connections + 256
 * descriptors (the connections, and room for everything else the process
 * opens), or to the hard limit when that is lower; never lowers it.  The
 * limit is the whole process's, so the library never changes it on its
 * own: a server that expects up to max_connections clients calls this
 * before qphs_daemon_start (qplab agent and qplab hs serve do).  Without
 * it the daemon still works, and running out of descriptors costs refused
 * connections (refused_no_fd), never a busy loop.  cfg NULL: the defaults.
 * *soft (may be NULL): the soft limit afterwards.  Returns 0, or
 * QPHS_ERR_INVALID_ARGUMENT when the limit cannot be read or set (err,
 * caller's, may be NULL, names the errno). */
QPHS_EXPORT int qphs_daemon_raise_nofile(const struct qphs_config *cfg, uint64_t *soft,
					 char *err, size_t errlen);

/* Process-wide, like raise_nofile, so only on the caller's request: fixes
 * glibc's mmap threshold at 4 MiB (mallopt M_MMAP_THRESHOLD), so that a
 * body of the default maximum size and the parse's tables for a body at
 * max_body_keys come from the heap, whose pages the next body reuses
 * (mapping each large body on its own had it faulted in page by page and
 * unmapped again, the loop's main cost under a flood of large bodies), and
 * keeps one malloc arena (M_ARENA_MAX 1) for the threads started
 * afterwards, so the daemon's malloc_trim, run once the large bodies stop,
 * hands those pages back.  Without it glibc raises the threshold to the
 * largest block freed so far (the parse of a body of 60k keys frees a 6 MB
 * hash table), and the loop and parse threads each get an arena of their
 * own: after an attack several MB stay resident.  Call it before
 * qphs_daemon_start; qplab hs serve and qplab agent do.  Returns 0, or
 * QPHS_ERR_NOT_IMPLEMENTED when the C library has no such setting. */
QPHS_EXPORT int qphs_daemon_tune_malloc(void);

/* Starts the loop thread.  Returns 0; QPHS_ERR_SOCKET when the epoll set or
 * the eventfd cannot be made, QPHS_ERR_THREAD when the thread cannot start
 * (qphs_daemon_errstr names the errno).  A failed start leaves nothing
 * open, and may be tried again. */
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

/* The Connection (or old-protocol) body as the daemon already parsed and
 * checked it, so a handler need not parse it again; NULL for other types.
 * Borrowed: valid until the request is completed.  Any thread that holds
 * the request. */
struct qphs_hs_desc;
QPHS_EXPORT const struct qphs_hs_desc *qphs_request_desc(const struct qphs_request *req);

/* Completes req with a reply body (copied; the frame type follows the
 * request's, untyped for old-protocol requests).  Any thread.  req is freed:
 * do not use it afterwards.  Returns 0, or QPHS_ERR_STOPPED when the daemon
 * already stopped (req is freed all the same). */
QPHS_EXPORT int qphs_request_reply(struct qphs_request *req, const char *json,
				   size_t len);

/* Completes req by closing the connection without a reply.  Any thread. */
QPHS_EXPORT void qphs_request_close(struct qphs_request *req);

/* Completes req as failed.  A Connection or old-protocol request
 * gets a reply whose reply_msg is text (copied; NULL or "" gives
 * "Handshake callback failed: <code>", Mooncake's text) and whose nic paths
 * are the request's, swapped; any other request has no body to carry an
 * error and is closed without a reply.  Any thread; req is freed.  Returns
 * as qphs_request_reply. */
QPHS_EXPORT int qphs_request_fail(struct qphs_request *req, int code,
				  const char *text);

struct qphs_daemon_stats {
	uint64_t accepted;
	uint64_t replied;
	uint64_t timed_out;        /* request or write deadline passed */
	uint64_t refused_at_cap;   /* closed at once: max_connections reached */
	uint64_t rejected_frame[8];/* by wire error: index -(code) - 1000 */
	uint64_t rejected_body;    /* well-formed JSON of the wrong shape */
	uint64_t open_connections;
	uint64_t live_bytes;       /* bytes allocated for connections now */
	uint64_t refused_no_fd;    /* accepted and closed at once: the process
				    * ran out of file descriptors */
	uint64_t loop_wakeups;     /* times the loop thread's epoll_wait
				    * returned: a loop that spins shows here */
	/* The limits (docs/hs.md "Limits"); each refusal is also logged with
	 * "[Handshake]" (at most one line a second) and kept as the last
	 * refusal (qphs_daemon_last_refusal). */
	uint64_t refused_per_source; /* closed at once: the source had
				    * max_conns_per_source connections open or
				    * max_requests_per_source requests in
				    * flight */
	uint64_t refused_budget;   /* closed at once: the body would take the
				    * bytes buffered above the memory budget */
	uint64_t memory_trims;     /* times freed memory was handed back to
				    * the system (malloc_trim) */
	char limited_source[72];   /* the address (no port) of the last source
				    * a limit refused; "" when none */
	uint64_t accept_wakeups;   /* times the accept thread woke for the
				    * listener (the loop was not waiting):
				    * an accept thread that spins shows here */
	uint64_t accept_thread_took; /* connections the accept thread took
				    * for a busy loop (in accepted too) */
};

/* The daemon's last refusal: the last request it refused before
 * any handler ran — a bad frame, a body that is not JSON, a body of the
 * wrong shape (closed, or for a Connection answered with an error reply) —
 * with the very line it logged ("[Handshake] closing connection from
 * ADDR:PORT without a reply: frame length is zero (ERR_FRAME_ZERO_LENGTH)").
 * count counts every refusal since the daemon was made (0: none yet, and
 * code and text are then 0 and ""); a caller that compares count before
 * and after sending knows whether the text is about its own request. */
#define QPHS_DAEMON_REFUSAL_TEXT 400
struct qphs_daemon_refusal {
	uint64_t count;
	int code;                  /* the error table code of the reason */
	char text[QPHS_DAEMON_REFUSAL_TEXT];
};
/* Any thread.  out: caller's. */
QPHS_EXPORT void qphs_daemon_last_refusal(const struct qphs_daemon *d,
					  struct qphs_daemon_refusal *out);

/* Any thread. */
QPHS_EXPORT void qphs_daemon_stats(const struct qphs_daemon *d,
				   struct qphs_daemon_stats *out);

/* Fault injection (tests, `qplab hs serve --fault`, the lab's agent): the
 * daemon misbehaves on purpose when it answers, so other implementations'
 * clients can be tested.  The handler still sees every request; the fault
 * transforms what goes back on the wire.  Each kind provokes one client
 * error (docs/hs.md): the fault names are the error table's FAULT column. */
enum qphs_fault_kind {
	QPHS_FAULT_NONE = 0,
	QPHS_FAULT_CLOSE,        /* close without a reply: ERR_PEER_CLOSED */
	QPHS_FAULT_STALL,        /* never answer, hold the connection open
				  * (until reply_timeout_ms): ERR_REPLY_TIMEOUT */
	QPHS_FAULT_DELAY,        /* answer correctly after delay_ms */
	QPHS_FAULT_TRUNCATE,     /* header and half the body, then close */
	QPHS_FAULT_OVERSIZE,     /* a length above 128 MiB: ERR_FRAME_TOO_LONG */
	QPHS_FAULT_ZERO_LENGTH,  /* length 0: ERR_FRAME_ZERO_LENGTH */
	QPHS_FAULT_GARBAGE,      /* valid length, first payload byte 0x80-0xff,
				  * then seeded random bytes: ERR_FRAME_BAD_TYPE */
	QPHS_FAULT_EMPTY_BODY,   /* typed frame of length 1 */
	QPHS_FAULT_NOT_JSON,     /* a body that is not JSON */
	QPHS_FAULT_TRAILING,     /* the reply with bytes after the JSON value */
	QPHS_FAULT_WRONG_TYPE,   /* the reply under another type byte */
	QPHS_FAULT_OLD_PROTOCOL, /* the reply without a type byte */
	QPHS_FAULT_NULL_REPLY,   /* the body `null`, as Mooncake's daemon answers a
				  * type no transport registered a handler for
				  * (transfer_metadata_plugin.cpp,
				  * SocketHandShakePlugin::startDaemon):
				  * ERR_PEER_NO_TRANSPORT */
	QPHS_FAULT_REJECT,       /* not a wire fault: a handler's business (a
				  * Connection reply whose reply_msg is text) */
};

struct qphs_fault {
	enum qphs_fault_kind kind;
	int delay_ms;      /* QPHS_FAULT_DELAY */
	uint64_t seed;     /* QPHS_FAULT_GARBAGE's bytes */
	unsigned types;    /* bit (1 << type) per request type the fault applies
			    * to (bit 4: old protocol); 0 = every request */
	char text[256];    /* QPHS_FAULT_REJECT: the reply_msg */
};

/* Parses a fault spec: "close", "stall", "delay:MS", "truncate", "oversize",
 * "zero-length", "garbage", "empty-body", "not-json", "trailing",
 * "wrong-type", "old-protocol", "null-reply", "reject:TEXT".  The names are the error
 * table's FAULT names (qphs_errcode_by_name) plus delay.  Returns 0, or
 * QPHS_ERR_INVALID_ARGUMENT with a message in err (caller's, may be NULL). */
QPHS_EXPORT int qphs_fault_parse(const char *spec, struct qphs_fault *out,
				 char *err, size_t errlen);

/* Installs f (copied; NULL or QPHS_FAULT_NONE = behave).  Call before
 * qphs_daemon_start. */
QPHS_EXPORT int qphs_daemon_set_fault(struct qphs_daemon *d,
				      const struct qphs_fault *f);

#endif
