/* daemon_int.h — the daemon's internal structures, shared by daemon.c (the
 * loop, listener and timers), daemon_conn.c (one connection's life),
 * daemon_req.c (the request API, the only door from other threads),
 * fault.c and daemon_accept.c (the loop's accepts and the accept thread).
 * Everything here belongs to the loop thread except struct door and
 * struct acceptor's shared part. */
#ifndef QPHS__DAEMON_INT_H
#define QPHS__DAEMON_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "qphs/body.h"
#include "qphs/daemon.h"
#include "qphs/frame.h"

/* Timer lists.  Every connection in one list waits for the same duration,
 * so appending keeps each list sorted by deadline: O(1) to arm, disarm and
 * find the next deadline, no heap needed. */
enum { T_REQUEST, T_WRITE, T_WAIT, T_DELAY, T_COUNT, T_NONE = -1 };

enum conn_state {
	C_READ,  /* reading the request (deadline T_REQUEST) */
	C_PARSE, /* the parse worker holds the request (deadline T_WAIT) */
	C_WAIT,  /* a handler holds the request (deadline T_WAIT) */
	C_STALL, /* fault stall: held open, input discarded (T_WAIT) */
	C_DELAY, /* fault delay: reply ready, not yet due (T_DELAY) */
	C_WRITE, /* writing the reply (deadline T_WRITE) */
	C_DEAD,  /* closed, waiting to be freed at the end of the loop turn */
};

/* One peer address (no port) with connections open: daemon_limits.c.
 * Lives while conns > 0. */
struct source {
	struct source *next;       /* hash bucket */
	int conns;                 /* open connections from it */
	int inflight;              /* of them, requests in flight: header seen,
				    * not yet closed */
	char addr[72];
};

struct conn {
	int fd;
	bool polled;               /* in the loop's epoll set (watch) */
	struct source *src;
	bool inflight;             /* counted in src->inflight */
	bool weighed;              /* header and type byte checked */
	enum conn_state state;
	int type;                  /* request type once known */
	struct qphs_decoder *dec; /* C_READ only */
	size_t dec_acct;           /* decoder bytes counted in live_bytes */
	struct qphs_request *req;  /* C_WAIT: the request a handler holds */
	uint8_t *out;              /* C_DELAY, C_WRITE: bytes to send */
	size_t out_len, out_off;
	int64_t deadline;
	int tlist;                 /* T_* or T_NONE */
	struct conn *tprev, *tnext;
	struct conn *prev, *next;  /* every live connection */
	char peer[80];
};

/* The part of the daemon requests can reach from any thread.  Reference
 * counted: the daemon holds one reference and every request handed out
 * holds one, so a request completed after qphs_daemon_free still finds a
 * valid mutex and the "stopped" flag. */
struct door {
	pthread_mutex_t mu;
	atomic_int refs;           /* not under mu: taken and dropped per request */
	bool stopped;
	bool loop_running;
	pthread_t loop_thread;
	struct qphs_daemon *daemon; /* valid while loop_running */
	int efd;                   /* eventfd that wakes the loop */
	struct qphs_request *head, *tail; /* completed, waiting for the loop */
	atomic_int_fast64_t live_bytes;
};

enum req_action { REQ_PENDING, REQ_PARSED, REQ_REPLY, REQ_CLOSE };

struct qphs_request {
	struct door *door;
	struct conn *conn;         /* loop thread only; NULL once the
				    * connection is gone */
	struct qphs_request *next; /* door queue */
	int type;
	enum req_action action;
	char *reply;               /* REQ_REPLY: body (owned), REPLY_ROOM
				    * bytes into its allocation */
	size_t reply_len;
	char peer[80];
	bool has_desc;             /* Connection / old protocol: desc is set */
	int check_rc;              /* REQ_PARSED: the body check's result */
	char check_err[512];       /* and its text */
	struct qphs_hs_desc desc; /* the body, parsed once by the daemon */
	void *desc_block;          /* non-NULL: desc's strings and qp_num are
				    * this one allocation (codec/descfast.h) */
	size_t json_len;
	char json[];               /* NUL-terminated copy of the body */
};

/* Room kept before a reply's body for a typed frame's header, so that
 * the loop frames it in place (daemon_conn.c). */
#define REPLY_ROOM (QPHS_FRAME_LEN_BYTES + 1)

struct handler {
	qphs_handler_fn fn;
	void *user;
};

#define SRC_BUCKETS 256

/* At most one refusal line a second (the rest counted in skipped). */
struct refusal_log {
	int64_t at;
	uint64_t skipped;
};

/* The accept thread (daemon_accept.c), which stands in for a busy loop:
 * it takes connections off the listener and queues them for the loop.  q,
 * n and reserve_fd are under mu; taken is the loop's. */
#define ACCEPT_QUEUE 128
struct accepted {
	int fd;
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} addr;
};
struct acceptor {
	pthread_mutex_t mu;
	pthread_cond_t room;       /* the loop took the queue */
	int n;
	struct accepted q[ACCEPT_QUEUE];
	struct accepted taken[ACCEPT_QUEUE]; /* the loop's copy of q */
	atomic_bool stop;
	bool running;
	pthread_t thread;
	int efd;                   /* wakes the loop: q is no longer empty */
	int epfd;                  /* the listener (EPOLLEXCLUSIVE) and stop_efd */
	int stop_efd;              /* wakes the thread: stop */
	int reserve_fd;            /* spare descriptor for EMFILE, both threads' */
	struct refusal_log log;    /* the thread's refusal lines */
};

/* The parse worker (daemon_parse.c): bodies above INLINE_PARSE_MAX bytes
 * are checked on its thread, not the loop's. */
#define INLINE_PARSE_MAX 4096
struct parser {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct qphs_request *head, *tail; /* waiting to be parsed */
	bool stop;
	bool running;
	pthread_t thread;
};

struct qphs_daemon {
	struct qphs_config cfg;
	struct parser parser;
	struct acceptor acc;
	struct source *srcs[SRC_BUCKETS];
	struct source *spare_src;  /* one forgotten source kept for the next:
				    * a peer connecting one at a time would
				    * make and free one per connection */
	uint64_t budget;           /* bytes: memory_budget_kib, never below
				    * twice max_length */
	int64_t trim_at;           /* 0, or when to return freed memory */
	struct {                   /* rate limit of the limit lines, per limit */
		int64_t at;
		uint64_t skipped;
	} lim_log[2];              /* 0: per source, 1: the memory budget */
	struct door *door;
	struct handler handlers[4];
	struct qphs_fault fault;
	int lfd;                   /* listener */
	int epfd;
	int64_t listen_paused_until; /* 0 = listening */
	bool started;
	bool stopped;
	atomic_bool stopping;
	pthread_t thread;
	struct conn *conns;        /* every live connection */
	struct conn *dead;         /* freed at the end of the loop turn */
	struct conn *thead[T_COUNT], *ttail[T_COUNT];
	int tdur[T_COUNT];         /* duration of each timer list, ms */
	uint64_t open;
	uint64_t fault_rng;
	struct refusal_log cap_log; /* the loop's refusal lines */
	char addr[96];
	uint16_t port;
	char errstr[256];
	/* Counters: written by the loop thread (n_accept_wakeups, n_accept_took
	 * and n_refused_nofd by the accept thread too), read by any thread. */
	atomic_uint_fast64_t n_accepted, n_replied, n_timed_out, n_refused_cap,
		n_refused_nofd, n_rejected_body, n_open, n_wakeups, n_refused_source,
		n_refused_budget, n_trims, n_accept_wakeups, n_accept_took;
	atomic_uint_fast64_t n_rejected_frame[8];
	/* The last refusal (qphs_daemon_last_refusal): written by the loop
	 * thread, read by any, both under door->mu. */
	uint64_t n_refusals;
	int refusal_code;
	char refusal_text[QPHS_DAEMON_REFUSAL_TEXT];
	char limited_source[72];   /* the last source a limit refused */
};

/* daemon.c */
void qphs__timer_arm(struct qphs_daemon *d, struct conn *c, int list);
void qphs__timer_disarm(struct qphs_daemon *d, struct conn *c);
void qphs__live_add(struct qphs_daemon *d, int64_t delta);

/* Logs a refusal ("[Handshake] " + the formatted text, at WARN) and keeps
 * it as the daemon's last refusal.  Loop thread. */
void qphs__daemon_refusal(struct qphs_daemon *d, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* daemon_limits.c: sources, the memory budget, returning memory. */
/* The source of addr (the address qphs__source_may_connect gave), made on
 * its first connection; counts the connection.  NULL when out of memory. */
struct source *qphs__source_get(struct qphs_daemon *d, const char *addr);
/* Forgets one connection of src (and src with its last). */
void qphs__source_put(struct qphs_daemon *d, struct source *src);
/* Whether one more connection from peer's source stays in its limit;
 * addr (addrlen bytes) gets the source's address. */
bool qphs__source_may_connect(struct qphs_daemon *d, const char *peer, char *addr,
			      size_t addrlen);
/* A refusal by a limit (code ERR_LIMIT_SOURCE or ERR_LIMIT_MEMORY): counted
 * in refused_per_source or refused_budget, kept as the last refusal and
 * the last limited source, logged "[Handshake] ..." at most once a second
 * (with the number of lines skipped).  Loop thread. */
void qphs__limit_refusal(struct qphs_daemon *d, int code, const char *source,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Memory of `bytes` was freed: return it to the system once idle. */
void qphs__trim_note(struct qphs_daemon *d, size_t bytes);
/* Runs a due trim; the next deadline (INT64_MAX: none). */
int64_t qphs__trim_run(struct qphs_daemon *d, int64_t now);

/* daemon_accept.c: accepting, by the loop and by the accept thread. */
/* One connection off the listener: 1 (*out filled), 0 when there is none
 * now, -1 when out of descriptors with no reserve left (stop accepting
 * for a moment).  Either thread; rl is the caller's. */
int qphs__accept_one(struct qphs_daemon *d, struct refusal_log *rl, struct accepted *out);
/* Makes an accepted connection the loop's, or refuses it (the connection
 * cap, a source's limit, memory).  Loop thread. */
void qphs__admit(struct qphs_daemon *d, const struct accepted *a);
/* Mutex and condition; 0 or QPHS_ERR_MEMORY. */
int qphs__acceptor_init(struct acceptor *a);
void qphs__acceptor_destroy(struct acceptor *a);
/* Its descriptors, and lfd in its epoll set: after the loop's, so that the
 * kernel wakes the loop first (-1 when something could not be had, errno
 * set); qphs__acceptor_close closes whatever is open.  rearm puts lfd back
 * behind the loop's registration after the loop re-added its own. */
int qphs__acceptor_open(struct acceptor *a, int lfd);
void qphs__acceptor_close(struct acceptor *a);
void qphs__acceptor_rearm(struct acceptor *a, int lfd);
/* Starts the thread (the errno pthread_create gave) and stops it: joins
 * it, then closes the connections the loop never took. */
int qphs__acceptor_start(struct qphs_daemon *d);
void qphs__acceptor_stop(struct qphs_daemon *d);
/* Loop thread: takes the queued connections and admits each. */
void qphs__acceptor_drain(struct qphs_daemon *d);
/* A refusal line, at most one a second per rl.  Any thread; rl is that
 * thread's own. */
void qphs__log_refusal(struct refusal_log *rl, const char *why);

/* daemon_parse.c: the parse worker. */
int qphs__parser_start(struct qphs_daemon *d);
/* Joins the worker; requests it had not started are freed. */
void qphs__parser_stop(struct qphs_daemon *d);
/* Hands req to the worker (false: no worker, check it here). */
bool qphs__parser_push(struct qphs_daemon *d, struct qphs_request *req);
/* Checks req's body for its type: size, shape counts, then the parse into
 * req->desc for Connection.  Sets check_rc and check_err.  Pure; any
 * thread. */
void qphs__request_check(const struct qphs_config *cfg, struct qphs_request *req);

/* daemon_conn.c */
/* Takes an accepted socket and reads what already came on it; the request
 * may be answered, and the connection closed, before it returns.  0, or
 * the error for which fd was not taken (the caller closes it). */
int qphs__conn_accept(struct qphs_daemon *d, int fd,
		      const struct sockaddr *sa);
void qphs__conn_event(struct qphs_daemon *d, struct conn *c, uint32_t ev);
void qphs__conn_timeout(struct qphs_daemon *d, struct conn *c);
void qphs__conn_close(struct qphs_daemon *d, struct conn *c);
void qphs__conn_free(struct qphs_daemon *d, struct conn *c);
/* Takes a completed request (on the loop thread) and acts on it. */
void qphs__conn_complete(struct qphs_daemon *d, struct qphs_request *req);

/* daemon_req.c */
struct qphs_request *qphs__request_new(struct qphs_daemon *d, struct conn *c,
				       int type, const char *json, size_t len);
void qphs__request_free(struct qphs_request *req);
/* Queues req for the loop and wakes it (frees req when the daemon has
 * stopped).  Any thread but the loop's. */
void qphs__door_post(struct qphs_request *req);
/* Drains the door queue on the loop thread. */
void qphs__door_drain(struct qphs_daemon *d);
struct door *qphs__door_new(void);
void qphs__door_unref(struct door *door);

/* A Connection reply whose reply_msg is msg: the nic paths of asked
 * swapped when given, empty otherwise.  *out transferred.  Pure. */
int qphs__error_reply(const struct qphs_hs_desc *asked, const char *msg, char **out,
		      size_t *out_len);

/* fault.c: the reply bytes for a body under the daemon's fault; *out
 * transferred.  Returns 0, or 1 when the connection must be closed with no
 * reply (QPHS_FAULT_CLOSE), or QPHS_ERR_MEMORY. */
int qphs__fault_frame(const struct qphs_fault *f, uint64_t *rng, int type,
		      const char *json, size_t len, uint8_t **out,
		      size_t *out_len);
/* Whether f applies to a request of type. */
bool qphs__fault_applies(const struct qphs_fault *f, int type);

#endif
