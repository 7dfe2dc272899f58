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

static void set_events(struct qphs_daemon *d, struct conn *c, uint32_t ev)
{
	struct epoll_event e = {.events = ev, .data.ptr = c};

	epoll_ctl(d->epfd, EPOLL_CTL_MOD, c->fd, &e);
}

int qphs__conn_accept(struct qphs_daemon *d, int fd, const struct sockaddr *sa)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct epoll_event e = {.events = EPOLLIN};

	if (!c)
		return QPHS_ERR_MEMORY;
	c->fd = fd;
	c->tlist = T_NONE;
	c->type = -1;
	qphs__sockaddr_format(sa, c->peer, sizeof(c->peer));
	c->dec = qphs_decoder_new(d->cfg.max_length);
	e.data.ptr = c;
	if (!c->dec || epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
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
	return 0;
}

static void drop_decoder(struct qphs_daemon *d, struct conn *c)
{
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
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	drop_decoder(d, c);
	free(c->out);
	qphs__live_add(d, -(int64_t)c->out_len);
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
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL);
		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (c->tlist != T_WRITE)
				qphs__timer_arm(d, c, T_WRITE);
			set_events(d, c, EPOLLOUT);
			return;
		}
		QPHS_INFO("[Handshake] writing the reply to %s failed: %s", c->peer,
			  strerror(errno));
		qphs__conn_close(d, c);
		return;
	}
	atomic_fetch_add(&d->n_replied, 1);
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
		set_events(d, c, EPOLLIN);
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

void qphs__conn_complete(struct qphs_daemon *d, struct qphs_request *req)
{
	struct conn *c = req->conn;

	if (c) {
		c->req = NULL;
		qphs__timer_disarm(d, c);
		if (req->action == REQ_REPLY)
			answer(d, c, req->reply, req->reply_len);
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

/* Checks the body's shape for its type.  Returns 0, or the error code with
 * the text in err.  A Connection body is parsed into *desc. */
static int check_body(int type, const char *json, size_t len, struct qphs_hs_desc *desc,
		      char *err, size_t errlen)
{
	struct qphs_notify n;
	struct qphs_segment_desc s;
	int rc;

	switch (type) {
	case QPHS_HS_PROBE:
		return qphs_probe_parse(json, len, err, errlen);
	case QPHS_HS_NOTIFY:
		rc = qphs_notify_parse(json, len, &n, err, errlen);
		if (rc == 0)
			qphs_notify_clear(&n);
		return rc;
	case QPHS_HS_METADATA:
		rc = qphs_segment_desc_parse(json, len, &s, err, errlen);
		if (rc == 0)
			qphs_segment_desc_clear(&s);
		return rc;
	default:
		return qphs_hs_desc_parse(json, len, desc, err, errlen);
	}
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

static void dispatch(struct qphs_daemon *d, struct conn *c, const struct qphs_frame *f)
{
	struct qphs_hs_desc desc;
	struct qphs_request *req;
	const struct handler *h;
	char err[512] = "";
	int htype = f->type == QPHS_HS_OLD_PROTOCOL ? QPHS_HS_CONNECTION : f->type;
	int rc;

	c->type = f->type;
	memset(&desc, 0, sizeof(desc));
	rc = check_body(htype, f->json, f->json_len, &desc, err, sizeof(err));
	if (rc != 0 && (is_frame_error(rc) || htype != QPHS_HS_CONNECTION)) {
		reject(d, c, rc, err);
		return;
	}
	qphs__timer_disarm(d, c);
	c->state = C_WAIT;
	if (rc != 0) {
		atomic_fetch_add(&d->n_rejected_body, 1);
		qphs__daemon_refusal(d, rc, "[Handshake] rejecting Connection request from %s: %s",
				     c->peer, err);
		answer_connection_error(d, c, err);
		return;
	}
	req = qphs__request_new(d, c, f->type, f->json, f->json_len);
	if (!req) {
		if (htype == QPHS_HS_CONNECTION)
			qphs_hs_desc_clear(&desc);
		qphs__conn_close(d, c);
		return;
	}
	if (htype == QPHS_HS_CONNECTION) {
		/* The request owns the parsed body from here on. */
		req->desc = desc;
		req->has_desc = true;
	}
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
		set_events(d, c, 0);
}

/* Accounts the decoder's buffered bytes in live_bytes. */
static void account_decoder(struct qphs_daemon *d, struct conn *c, size_t now)
{
	qphs__live_add(d, (int64_t)now - (int64_t)c->dec_acct);
	c->dec_acct = now;
}

static void feed(struct qphs_daemon *d, struct conn *c, const uint8_t *buf, size_t n)
{
	struct qphs_frame f;
	size_t off = 0;

	while (off < n) {
		ssize_t used = qphs_decoder_feed(c->dec, buf + off, n - off);
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
	case C_DELAY:
		start_write(d, c);
		break;
	case C_STALL:
	case C_DEAD:
		qphs__conn_close(d, c);
		break;
	}
}
