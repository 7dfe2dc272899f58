/* One connection's life on the daemon's loop thread:
 *
 *   C_READ --whole frame--> C_WAIT (a handler holds the request)
 *          --completed----> C_WRITE (or C_DELAY / C_STALL under a fault)
 *          --reply sent---> closed by us: the daemon closes first, so the
 *                           TIME_WAIT lands on the server side and the
 *                           client's ephemeral port is free at once.
 *
 * Any bad frame, a body that is not JSON, a deadline, or the peer going
 * away closes the connection without a reply.  Nothing here blocks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_int.h"
#include "qphs/body.h"
#include "base/log.h"
#include "net.h"
#include "qphs/error.h"

static const char probe_reply[] = "{\"status\":\"success\"}\n";
static const char notify_reply[] = "{\"name\":\"\",\"notify_msg\":\"success\"}\n";

/* Sets what the loop waits for on c, adding c to its epoll set the first
 * time: a connection whose request and reply go through at once is never
 * added (qphs__conn_accept reads before it watches).  Interest 0 still
 * reports an error or a hang-up.  A connection epoll cannot take is
 * closed; returns false then. */
static bool watch(struct qphs_daemon *d, struct conn *c, uint32_t ev)
{
	struct epoll_event e = {.events = ev, .data.ptr = c};

	if (c->polled) {
		epoll_ctl(d->epfd, EPOLL_CTL_MOD, c->fd, &e);
		return true;
	}
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, c->fd, &e) == 0) {
		c->polled = true;
		return true;
	}
	QPHS_WARN("[Handshake] closing connection from %s: epoll_ctl: %s", c->peer,
		  strerror(errno));
	qphs__conn_close(d, c);
	return false;
}

static void read_request(struct qphs_daemon *d, struct conn *c);

int qphs__conn_accept(struct qphs_daemon *d, int fd, const struct sockaddr *sa)
{
	struct conn *c = calloc(1, sizeof(*c));
	char addr[sizeof(((struct source *)0)->addr)];

	if (!c)
		return QPHS_ERR_MEMORY;
	c->fd = fd;
	c->tlist = T_NONE;
	c->type = -1;
	qphs__sockaddr_format(sa, c->peer, sizeof(c->peer));
	if (!qphs__source_may_connect(d, c->peer, addr, sizeof(addr))) {
		qphs__limit_refusal(d, QPHS_ERR_LIMIT_SOURCE, addr,
				    "[Handshake] refusing a connection from %s: %d connections "
				    "from %s are open already (max_conns_per_source)",
				    c->peer, d->cfg.max_conns_per_source, addr);
		free(c);
		return QPHS_ERR_LIMIT_SOURCE;
	}
	c->dec = qphs_decoder_new(d->cfg.max_length);
	c->src = c->dec ? qphs__source_get(d, addr) : NULL;
	if (!c->src) {
		qphs__source_put(d, c->src);
		qphs_decoder_free(c->dec);
		free(c);
		return QPHS_ERR_MEMORY;
	}
	qphs__live_add(d, (int64_t)sizeof(*c));
	c->next = d->conns;
	if (d->conns)
		d->conns->prev = c;
	d->conns = c;
	d->open++;
	atomic_store(&d->n_open, d->open);
	atomic_fetch_add(&d->n_accepted, 1);
	qphs__timer_arm(d, c, T_REQUEST);
	/* A client sends its request right after connecting, so it is
	 * often here already (docs/hs.md has how often): read it now, and
	 * watch the socket only when something is left to wait for.  That
	 * spares the epoll_ctl calls and a turn of the loop for each request
	 * answered at once; a request not here yet costs one recv. */
	read_request(d, c);
	if (c->state == C_READ)
		watch(d, c, EPOLLIN);
	return 0;
}

static void drop_decoder(struct qphs_daemon *d, struct conn *c)
{
	qphs__trim_note(d, c->dec_acct);
	qphs_decoder_free(c->dec);
	c->dec = NULL;
	qphs__live_add(d, -(int64_t)c->dec_acct);
	c->dec_acct = 0;
}

void qphs__conn_close(struct qphs_daemon *d, struct conn *c)
{
	if (c->state == C_DEAD)
		return;
	qphs__timer_disarm(d, c);
	/* Out of the set before the close: a forked child may still hold
	 * the socket, and epoll forgets it only when every holder closed. */
	if (c->polled)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	c->polled = false;
	close(c->fd);
	c->fd = -1;
	drop_decoder(d, c);
	qphs__trim_note(d, c->out_len);
	free(c->out);
	qphs__live_add(d, -(int64_t)c->out_len);
	if (c->inflight)
		c->src->inflight--;
	c->inflight = false;
	qphs__source_put(d, c->src);
	c->src = NULL;
	c->out = NULL;
	c->out_len = 0;
	if (c->req)
		c->req->conn = NULL; /* the handler still holds it */
	c->req = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		d->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = d->dead;
	d->dead = c;
	c->state = C_DEAD;
	d->open--;
	atomic_store(&d->n_open, d->open);
}

void qphs__conn_free(struct qphs_daemon *d, struct conn *c)
{
	qphs__live_add(d, -(int64_t)sizeof(*c));
	free(c);
}

/* A bad frame or body: close without a reply, count and say why. */
static void reject(struct qphs_daemon *d, struct conn *c, int code, const char *detail)
{
	int idx = -code - 1000;

	if (idx >= 0 && idx < 8)
		atomic_fetch_add(&d->n_rejected_frame[idx], 1);
	else
		atomic_fetch_add(&d->n_rejected_body, 1);
	qphs__daemon_refusal(d, code, "[Handshake] closing connection from %s without a reply: "
			     "%s (%s)%s%s", c->peer, qphs_strerror(code), qphs_errname(code),
			     detail && *detail ? ": " : "", detail ? detail : "");
	qphs__conn_close(d, c);
}

static void write_some(struct qphs_daemon *d, struct conn *c)
{
	while (c->out_off < c->out_len) {
		/* MSG_MORE holds the last bytes until the shutdown below, which
		 * sends them with the FIN: one segment, and one ACK less. */
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_MORE);
		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (c->tlist != T_WRITE)
				qphs__timer_arm(d, c, T_WRITE);
			watch(d, c, EPOLLOUT);
			return;
		}
		QPHS_INFO("[Handshake] writing the reply to %s failed: %s", c->peer,
			  strerror(errno));
		qphs__conn_close(d, c);
		return;
	}
	atomic_fetch_add(&d->n_replied, 1);
	/* A shutdown, not the close alone: a close finding bytes the peer sent
	 * after its request unread would reset the connection and drop the
	 * held reply. */
	shutdown(c->fd, SHUT_WR);
	qphs__conn_close(d, c);
}

static void start_write(struct qphs_daemon *d, struct conn *c)
{
	c->state = C_WRITE;
	qphs__timer_disarm(d, c);
	write_some(d, c);
}

/* Turns a completed request into bytes on the wire, under the fault. */
static void answer(struct qphs_daemon *d, struct conn *c, const char *body, size_t len)
{
	const struct qphs_fault *f = &d->fault;
	bool faulty = qphs__fault_applies(f, c->type);
	int rc;

	if (faulty && f->kind == QPHS_FAULT_STALL) {
		c->state = C_STALL;
		qphs__timer_arm(d, c, T_WAIT);
		watch(d, c, EPOLLIN);
		return;
	}
	rc = qphs__fault_frame(faulty ? f : NULL, &d->fault_rng, c->type, body, len,
			       &c->out, &c->out_len);
	if (rc != 0) {
		qphs__conn_close(d, c);
		return;
	}
	qphs__live_add(d, (int64_t)c->out_len);
	c->out_off = 0;
	if (faulty && f->kind == QPHS_FAULT_DELAY) {
		c->state = C_DELAY;
		qphs__timer_arm(d, c, T_DELAY);
		return;
	}
	start_write(d, c);
}

/* A handler's reply.  Without a fault it is framed where it lies: its
 * allocation keeps REPLY_ROOM bytes before the body (qphs_request_reply),
 * the header goes there and the connection takes the whole, the same
 * bytes as answer() would copy into a new frame. */
static void answer_reply(struct qphs_daemon *d, struct conn *c, struct qphs_request *req)
{
	uint8_t *frame = (uint8_t *)req->reply - REPLY_ROOM;

	if (qphs__fault_applies(&d->fault, c->type) ||
	    qphs_frame_header(c->type, req->reply_len, frame) != REPLY_ROOM) {
		answer(d, c, req->reply, req->reply_len);
		return;
	}
	req->reply = NULL; /* the connection's now */
	c->out = frame;
	c->out_len = REPLY_ROOM + req->reply_len;
	qphs__live_add(d, (int64_t)c->out_len);
	c->out_off = 0;
	start_write(d, c);
}

static void proceed(struct qphs_daemon *d, struct conn *c, struct qphs_request *req);

void qphs__conn_complete(struct qphs_daemon *d, struct qphs_request *req)
{
	struct conn *c = req->conn;

	/* A large body's copy, and (REQ_PARSED) the parse's garbage, are
	 * freed about now: the trim must come after them. */
	qphs__trim_note(d, req->json_len + req->reply_len);

	if (c && req->action == REQ_PARSED) {
		proceed(d, c, req);
		return;
	}
	if (c) {
		c->req = NULL;
		qphs__timer_disarm(d, c);
		if (req->action == REQ_REPLY)
			answer_reply(d, c, req);
		else
			qphs__conn_close(d, c);
	}
	qphs__request_free(req);
}

/* A Connection reply carrying only an error text (a rejected Connection
 * request gets a reply whose reply_msg carries the error). */
static void answer_connection_error(struct qphs_daemon *d, struct conn *c, const char *msg)
{
	char *body = NULL;
	size_t len = 0;

	if (qphs__error_reply(NULL, msg, &body, &len) != 0) {
		qphs__conn_close(d, c);
		return;
	}
	answer(d, c, body, len);
	free(body);
}

static bool is_frame_error(int rc)
{
	return rc <= QPHS_ERR_FRAME_ZERO_LENGTH && rc >= QPHS_ERR_FRAME_TRAILING;
}

/* No handler registered: the built-in answers (docs/hs.md).  Mooncake's daemon writes whatever its callback left in the reply, and
 * without a callback that is null (SocketHandShakePlugin::startDaemon,
 * transfer_metadata_plugin.cpp): the answer of a node whose RDMA transport
 * did not install to Connection and Metadata requests. */
static const char null_reply[] = "null\n";

static void builtin(struct conn *c, struct qphs_request *req)
{
	switch (c->type) {
	case QPHS_HS_PROBE:
		qphs_request_reply(req, probe_reply, sizeof(probe_reply) - 1);
		return;
	case QPHS_HS_NOTIFY:
		qphs_request_reply(req, notify_reply, sizeof(notify_reply) - 1);
		return;
	default:
		QPHS_WARN("[Handshake] no %s handler is registered: answering null to %s",
			  c->type == QPHS_HS_METADATA ? "Metadata" : "Connection", c->peer);
		qphs_request_reply(req, null_reply, sizeof(null_reply) - 1);
	}
}

/* Acts on a checked request: refuse it, answer a Connection body of the
 * wrong shape with an error reply, or hand it to its handler. */
static void proceed(struct qphs_daemon *d, struct conn *c, struct qphs_request *req)
{
	const struct handler *h;
	int htype = c->type == QPHS_HS_OLD_PROTOCOL ? QPHS_HS_CONNECTION : c->type;
	int rc = req->check_rc;

	c->req = NULL;
	if (rc != 0 && (is_frame_error(rc) || htype != QPHS_HS_CONNECTION)) {
		reject(d, c, rc, req->check_err);
		qphs__request_free(req);
		return;
	}
	qphs__timer_disarm(d, c);
	c->state = C_WAIT;
	if (rc != 0) {
		atomic_fetch_add(&d->n_rejected_body, 1);
		qphs__daemon_refusal(d, rc, "[Handshake] rejecting Connection request from %s: %s",
				     c->peer, req->check_err);
		answer_connection_error(d, c, req->check_err);
		qphs__request_free(req);
		return;
	}
	req->action = REQ_PENDING;
	c->req = req;
	qphs__timer_arm(d, c, T_WAIT);
	h = &d->handlers[htype];
	if (h->fn)
		h->fn(req, h->user);
	else
		builtin(c, req);
	/* Still unanswered: stop reading while the handler works (an error or
	 * hang-up is still reported, and closes the connection). */
	if (c->state == C_WAIT)
		watch(d, c, 0);
}

/* A whole frame: its request is checked here when small, by the parse
 * worker when large (daemon_parse.c), then goes on in proceed. */
static void dispatch(struct qphs_daemon *d, struct conn *c, const struct qphs_frame *f)
{
	struct qphs_request *req;

	c->type = f->type;
	req = qphs__request_new(d, c, f->type, f->json, f->json_len);
	if (!req) {
		qphs__conn_close(d, c);
		return;
	}
	if (f->json_len > INLINE_PARSE_MAX) {
		c->req = req;
		c->state = C_PARSE;
		qphs__timer_arm(d, c, T_WAIT);
		if (!watch(d, c, 0)) {
			qphs__request_free(req); /* closed: nobody else holds it */
			return;
		}
		if (qphs__parser_push(d, req))
			return;
		c->req = NULL; /* no worker: check it here */
	}
	qphs__request_check(&d->cfg, req);
	proceed(d, c, req);
}

/* Accounts the decoder's buffered bytes in live_bytes. */
static void account_decoder(struct qphs_daemon *d, struct conn *c, size_t now)
{
	qphs__live_add(d, (int64_t)now - (int64_t)c->dec_acct);
	c->dec_acct = now;
}

/* The length bytes are in and first is the type byte: weigh the request
 * before the decoder allocates its body.  Refuses (and closes) a body above
 * its type's limit, a source with max_requests_per_source requests in
 * flight, and a body the memory budget has no room for; otherwise counts
 * the request in flight and reserves its bytes in live_bytes. */
static bool weigh(struct qphs_daemon *d, struct conn *c, uint8_t first)
{
	uint64_t len = qphs_decoder_declared(c->dec);
	int type = first <= QPHS_HS_PROBE ? first : QPHS_HS_OLD_PROTOCOL;
	uint64_t limit = type == QPHS_HS_METADATA ? d->cfg.max_length
						  : (uint64_t)d->cfg.max_small_body;
	uint64_t live = (uint64_t)atomic_load(&d->door->live_bytes);
	char detail[200];

	c->weighed = true;
	if (first >= 0x80)
		return true; /* the decoder refuses the type byte */
	if (len > limit) {
		snprintf(detail, sizeof(detail),
			 "a %s frame of %llu bytes, above this daemon's limit of %llu for the type "
			 "(%s)", qphs_msg_type_name(type), (unsigned long long)len,
			 (unsigned long long)limit,
			 type == QPHS_HS_METADATA ? "max_length" : "max_small_body");
		reject(d, c, QPHS_ERR_FRAME_TOO_LONG, detail);
		return false;
	}
	if (c->src->inflight >= d->cfg.max_requests_per_source) {
		qphs__limit_refusal(d, QPHS_ERR_LIMIT_SOURCE, c->src->addr,
				    "[Handshake] closing connection from %s without a reply: %d "
				    "requests from %s are in flight already "
				    "(max_requests_per_source)",
				    c->peer, c->src->inflight, c->src->addr);
		qphs__conn_close(d, c);
		return false;
	}
	if (live + len + 1 > d->budget) {
		qphs__limit_refusal(d, QPHS_ERR_LIMIT_MEMORY, c->src->addr,
				    "[Handshake] closing connection from %s without a reply: a %s "
				    "body of %llu bytes does not fit the memory budget (%llu of "
				    "%llu bytes buffered; memory_budget_kib)",
				    c->peer, qphs_msg_type_name(type), (unsigned long long)len,
				    (unsigned long long)live, (unsigned long long)d->budget);
		qphs__conn_close(d, c);
		return false;
	}
	c->inflight = true;
	c->src->inflight++;
	account_decoder(d, c, (size_t)len + 1);
	return true;
}

static void feed(struct qphs_daemon *d, struct conn *c, const uint8_t *buf, size_t n)
{
	struct qphs_frame f;
	size_t off = 0;

	while (off < n) {
		size_t chunk = n - off;
		ssize_t used;

		/* Up to the end of the length only (one call, not one per
		 * byte), so the decoder stops there and the request is weighed
		 * first. */
		if (!c->weighed && !qphs_decoder_declared(c->dec)) {
			size_t need = QPHS_FRAME_LEN_BYTES - qphs_decoder_buffered(c->dec);

			if (chunk > need)
				chunk = need;
		} else if (!c->weighed && !weigh(d, c, buf[off])) {
			return;
		}
		used = qphs_decoder_feed(c->dec, buf + off, chunk);
		if (used < 0) {
			reject(d, c, (int)used, NULL);
			return;
		}
		off += (size_t)used;
		if (qphs_decoder_frame(c->dec, &f)) {
			account_decoder(d, c, f.json_len + 1);
			if (off < n)
				QPHS_DEBUG("[Handshake] %zu bytes after the request from %s ignored",
					   n - off, c->peer);
			dispatch(d, c, &f);
			if (c->state != C_DEAD)
				drop_decoder(d, c);
			return;
		}
		if (used == 0)
			break;
	}
	if (!c->weighed)
		account_decoder(d, c, qphs_decoder_buffered(c->dec));
}

static void read_request(struct qphs_daemon *d, struct conn *c)
{
	uint8_t buf[16384];
	ssize_t n;
	int rc;

	do
		n = recv(c->fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		rc = qphs_decoder_eof(c->dec);
		if (rc != 0) {
			reject(d, c, rc, n < 0 ? strerror(errno) : "peer closed");
			return;
		}
		QPHS_DEBUG("[Handshake] %s closed before sending a request", c->peer);
		qphs__conn_close(d, c);
		return;
	}
	feed(d, c, buf, (size_t)n);
}

/* Fault stall: hold the connection, drop what arrives, notice the close. */
static void drain_stalled(struct qphs_daemon *d, struct conn *c)
{
	uint8_t buf[4096];
	ssize_t n;

	do
		n = recv(c->fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
		qphs__conn_close(d, c);
}

void qphs__conn_event(struct qphs_daemon *d, struct conn *c, uint32_t ev)
{
	switch (c->state) {
	case C_READ:
		read_request(d, c);
		break;
	case C_STALL:
		drain_stalled(d, c);
		break;
	case C_WRITE:
		if (ev & (EPOLLERR | EPOLLHUP) && !(ev & EPOLLOUT))
			qphs__conn_close(d, c);
		else
			write_some(d, c);
		break;
	case C_PARSE:
	case C_WAIT:
	case C_DELAY:
		/* Interest is empty: only an error or a hang-up lands here.
		 * The peer is gone; the handler's answer will be dropped. */
		if (ev & (EPOLLERR | EPOLLHUP))
			qphs__conn_close(d, c);
		break;
	case C_DEAD:
		break;
	}
}

void qphs__conn_timeout(struct qphs_daemon *d, struct conn *c)
{
	switch (c->state) {
	case C_READ:
		atomic_fetch_add(&d->n_timed_out, 1);
		QPHS_WARN("[Handshake] closing connection from %s: request not complete "
			  "within %d ms (%zu bytes received)",
			  c->peer, d->cfg.request_timeout_ms, qphs_decoder_buffered(c->dec));
		qphs__conn_close(d, c);
		break;
	case C_WRITE:
		atomic_fetch_add(&d->n_timed_out, 1);
		QPHS_WARN("[Handshake] closing connection to %s: reply not written within %d ms",
			  c->peer, d->cfg.write_timeout_ms);
		qphs__conn_close(d, c);
		break;
	case C_WAIT:
		atomic_fetch_add(&d->n_timed_out, 1);
		QPHS_WARN("[Handshake] closing connection from %s: no answer from the "
			  "handler within %d ms", c->peer, d->cfg.reply_timeout_ms);
		qphs__conn_close(d, c);
		break;
	case C_PARSE:
		atomic_fetch_add(&d->n_timed_out, 1);
		QPHS_WARN("[Handshake] closing connection from %s: body not checked within "
			  "%d ms", c->peer, d->cfg.reply_timeout_ms);
		qphs__conn_close(d, c);
		break;
	case C_DELAY:
		start_write(d, c);
		break;
	case C_STALL:
	case C_DEAD:
		qphs__conn_close(d, c);
		break;
	}
}
