/* The active side: resolve, connect with a deadline, send one request,
 * read one reply with a deadline, and say exactly what went wrong.
 *
 * A request that was sent is never sent again: only a failed connect moves
 * on to the next resolved address (Mooncake re-sends after any error,
 * a reply timeout included, so a peer could act twice). */
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json_object.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client_int.h"
#include "codec/descfast.h"
#include "qphs/body.h"
#include "net.h"
#include "qphs/client.h"
#include "qphs/daemon.h"
#include "qphs/error.h"
#include "qphs/frame.h"

static int fail(struct qphs_client_result *res, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct qphs_client_result *res, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->errstr, sizeof(res->errstr), fmt, ap);
	va_end(ap);
	return code;
}

/* Waits for events on fd until deadline (ms, monotonic).  Returns what
 * poll reported (never 0), or 0 at the deadline; a failed poll reports
 * POLLERR, so the caller's next call on fd tells why. */
static short wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};

	for (;;) {
		int64_t left = deadline - qphs__now_ms();
		int n;

		if (left <= 0)
			return 0;
		n = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return p.revents;
		if (n < 0 && errno != EINTR)
			return POLLERR;
	}
}

/* Connects to one address within timeout_ms.  Returns the socket, or a
 * negative code with the reason in res->errstr. */
static int connect_one(const struct addrinfo *ai, int timeout_ms, struct qphs_client_result *res)
{
	char addr[80];
	int fd, err = 0;
	socklen_t el = sizeof(err);
	short ev;

	qphs__sockaddr_format(ai->ai_addr, addr, sizeof(addr));
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(res, qphs__errno_code(errno), "socket: %s", strerror(errno));
	/* Delayed ACKs from the first segment on: the request then carries
	 * the ACK that completes TCP's handshake, and our FIN the ACK of a
	 * reply that came with the peer's FIN (as our daemon sends it).  A
	 * request costs seven segments instead of ten (docs/hs.md); where the
	 * option fails, the ACKs only go out on their own. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &(int){0}, sizeof(int));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (errno != EINPROGRESS && errno != EINTR)
			err = errno;
		else if (!(ev = wait_fd(fd, POLLOUT, qphs__now_ms() + timeout_ms)))
			err = ETIMEDOUT;
		/* Writable with no error or hang-up: connected, nothing to ask. */
		else if ((ev & (POLLERR | POLLHUP) || !(ev & POLLOUT)) &&
			 getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
			err = errno;
	}
	if (err) {
		close(fd);
		if (err == ETIMEDOUT)
			return fail(res, QPHS_ERR_CONNECT_TIMEOUT, "connecting to %s: no answer "
				    "within %d ms", addr, timeout_ms);
		return fail(res, qphs__errno_code(err), "connecting to %s: %s", addr,
			    strerror(err));
	}
	/* addr fits: no cut, and no format to interpret. */
	_Static_assert(sizeof(addr) <= sizeof(res->peer), "res->peer holds addr");
	memcpy(res->peer, addr, strlen(addr) + 1);
	return fd;
}

/* A numeric address, the usual case (segment descriptors carry IPs),
 * needs no resolver: *ai and *ss become the one address getaddrinfo
 * would give for it.  Anything else (a name, "127.1", a scoped IPv6
 * address) is left to getaddrinfo. */
static bool numeric_addr(const char *host, uint16_t port, struct sockaddr_storage *ss,
			 struct addrinfo *ai)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	memset(ai, 0, sizeof(*ai));
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		ai->ai_addrlen = sizeof(*in);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		ai->ai_addrlen = sizeof(*in6);
	} else {
		return false;
	}
	ai->ai_family = ss->ss_family;
	ai->ai_socktype = SOCK_STREAM;
	ai->ai_addr = (struct sockaddr *)ss;
	return true;
}

/* Resolves server and connects to the first address that accepts. */
static int connect_server(const struct qphs_config *cfg, const char *server,
			  struct qphs_client_result *res)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *list = NULL, one;
	struct sockaddr_storage ss;
	char host[256], port_s[8];
	uint16_t port;
	int rc;

	rc = qphs_parse_host_port(server, host, sizeof(host), &port, cfg->handshake_port);
	if (rc)
		return fail(res, rc, "bad server address '%s' (want HOST:PORT)", server);
	if (numeric_addr(host, port, &ss, &one))
		return connect_one(&one, cfg->connect_timeout_s * 1000, res);
	snprintf(port_s, sizeof(port_s), "%u", port);
	rc = getaddrinfo(host, port_s, &hints, &list);
	if (rc != 0 || !list)
		return fail(res, QPHS_ERR_DNS, "failed to get IP address of peer server %s: %s",
			    server, rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
	rc = QPHS_ERR_SOCKET;
	for (const struct addrinfo *ai = list; ai; ai = ai->ai_next) {
		rc = connect_one(ai, cfg->connect_timeout_s * 1000, res);
		if (rc >= 0)
			break;
	}
	freeaddrinfo(list);
	return rc;
}

static int send_all(int fd, const uint8_t *buf, size_t len, int64_t deadline,
		    struct qphs_client_result *res)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait_fd(fd, POLLOUT, deadline))
				return fail(res, QPHS_ERR_REPLY_TIMEOUT, "sending the request to %s "
					    "did not finish in time", res->peer);
		} else if (n < 0 && errno != EINTR) {
			return fail(res, errno == EPIPE || errno == ECONNRESET
						 ? QPHS_ERR_PEER_CLOSED : QPHS_ERR_SOCKET,
				    "sending the request to %s: %s", res->peer, strerror(errno));
		}
	}
	return 0;
}

/* The connection ended: inside a frame it is a truncated reply, before
 * the first byte the peer closed without replying. */
static int ended(struct qphs_decoder *dec, int err, struct qphs_client_result *res)
{
	int rc = qphs_decoder_eof(dec);
	const char *why = err ? strerror(err) : "end of stream";

	if (rc)
		return fail(res, rc, "reply from %s ended inside a frame after %zu bytes (%s)",
			    res->peer, qphs_decoder_buffered(dec), why);
	return fail(res, QPHS_ERR_PEER_CLOSED, "%s closed the connection without a reply (%s)",
		    res->peer, why);
}

/* Reads one frame into dec before deadline.  1 KiB of stack: a
 * Connection reply (about 300 bytes) fits in it, a longer one (a segment
 * descriptor) takes more reads, and a fresh thread (one per connect in a
 * burst) touches less new stack (a page-sized buffer here was where a
 * warm 64 burst's client threads took one page fault a connection).  It
 * waits before the first read: a reply is never there the moment the
 * request has left, so a read first would only say EAGAIN. */
static int read_frame(int fd, struct qphs_decoder *dec, int64_t deadline, int timeout_ms,
		      struct qphs_frame *f, struct qphs_client_result *res)
{
	uint8_t buf[1024];
	bool wait = true;

	for (;;) {
		ssize_t n;
		size_t off = 0;

		if (wait && !wait_fd(fd, POLLIN, deadline))
			return fail(res, QPHS_ERR_REPLY_TIMEOUT, "no reply from %s within %d ms "
				    "(%zu bytes received)", res->peer, timeout_ms,
				    qphs_decoder_buffered(dec));
		n = recv(fd, buf, sizeof(buf), 0);
		wait = false;
		if (n == 0)
			return ended(dec, 0, res);
		if (n < 0) {
			if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
				return ended(dec, errno, res);
			wait = errno != EINTR;
			continue;
		}
		while (off < (size_t)n) {
			ssize_t used = qphs_decoder_feed(dec, buf + off, (size_t)n - off);
			if (used < 0)
				return fail(res, (int)used, "bad reply frame from %s: %s",
					    res->peer, qphs_strerror((int)used));
			off += (size_t)used;
			if (qphs_decoder_frame(dec, f))
				return 0;
			if (used == 0)
				break;
		}
	}
}

/* A Connection reply read into desc (its strings in block, or its own
 * when block is NULL): a reply_msg is the peer's refusal.  desc goes to
 * *out (and block to *block_out, which is NULL only when block is) when
 * out is not NULL, else it is freed. */
static int reply_msg_of(struct qphs_hs_desc *desc, void *block, struct qphs_client_result *res,
			struct qphs_hs_desc *out, void **block_out)
{
	int rc = 0;

	if (desc->reply_msg[0]) {
		snprintf(res->errstr, sizeof(res->errstr), "%s", desc->reply_msg);
		rc = QPHS_ERR_REJECT_HANDSHAKE;
	}
	if (out) {
		*out = *desc;
		if (block_out)
			*block_out = block;
	} else {
		qphs__hs_desc_release(desc, block);
	}
	return rc;
}

/* Checks the reply frame against the request: type, JSON, shape, and for
 * Connection the peer's reply_msg; the Connection reply read goes to
 * *desc_out (reply_msg_of), in one block when block_out is not NULL. */
static int check_reply(int type, const struct qphs_frame *f, struct qphs_client_result *res,
		       struct qphs_hs_desc *desc_out, void **block_out)
{
	struct qphs_hs_desc desc;
	struct json_object *obj = NULL;
	char err[512] = "";
	size_t members;
	void *block = NULL;
	int rc;

	if (type != QPHS_HS_OLD_PROTOCOL && f->type == QPHS_HS_OLD_PROTOCOL)
		return fail(res, QPHS_ERR_REPLY_OLD_PROTOCOL, "%s answered a %s request with an "
			    "old-protocol (untyped) frame", res->peer, qphs_msg_type_name(type));
	if (f->type != type)
		return fail(res, QPHS_ERR_REPLY_WRONG_TYPE, "%s answered a %s request with a %s "
			    "frame", res->peer, qphs_msg_type_name(type),
			    qphs_msg_type_name(f->type));
	/* The common Connection reply in one pass, without json-c: what the
	 * fast reader takes, qphs_json_parse takes too, as an object
	 * (codec/descfast.h); anything else goes the long way below. */
	if (type == QPHS_HS_CONNECTION || type == QPHS_HS_OLD_PROTOCOL) {
		if (desc_out && block_out ?
		    qphs__hs_desc_fast_block(f->json, f->json_len, &desc, &members, &block) :
		    qphs__hs_desc_fast(f->json, f->json_len, &desc, &members))
			return reply_msg_of(&desc, block, res, desc_out, block_out);
	}
	rc = qphs_json_parse(f->json, f->json_len, &obj, err, sizeof(err));
	if (rc)
		return fail(res, rc, "reply from %s: %s", res->peer, err);
	json_object_put(obj);
	/* Mooncake's daemon answers null for a type no transport registered a
	 * handler for: Connection and Metadata when its RDMA transport did not
	 * install (transfer_metadata_plugin.cpp, SocketHandShakePlugin::
	 * startDaemon; transfer_metadata.cpp, receivePeerMetadata). */
	if (!obj && type != QPHS_HS_PROBE && type != QPHS_HS_NOTIFY)
		return fail(res, QPHS_ERR_PEER_NO_TRANSPORT, "%s answered the %s request with "
			    "null: no transport of the peer handles it (a Mooncake node whose RDMA "
			    "transport failed to install answers so)", res->peer,
			    qphs_msg_type_name(type));
	if (type != QPHS_HS_CONNECTION && type != QPHS_HS_OLD_PROTOCOL)
		return 0;
	rc = qphs__hs_desc_parse_json(f->json, f->json_len, &desc, err, sizeof(err));
	if (rc)
		return fail(res, QPHS_ERR_MALFORMED_JSON, "Connection reply from %s: %s (%s)",
			    res->peer, err, qphs_errname(rc));
	return reply_msg_of(&desc, NULL, res, desc_out, block_out);
}

static int exchange(int fd, const struct qphs_config *cfg, int type, const char *json,
		    size_t len, struct qphs_client_result *res, struct qphs_hs_desc *desc_out,
		    void **block_out)
{
	int64_t deadline = qphs__now_ms() + cfg->reply_timeout_ms;
	struct qphs_decoder *dec = NULL;
	struct qphs_frame f;
	uint8_t *frame = NULL;
	size_t frame_len = 0;
	int rc;

	rc = qphs_frame_encode(type, json, len, &frame, &frame_len);
	if (rc)
		return fail(res, rc, "cannot encode the request: %s", qphs_strerror(rc));
	rc = send_all(fd, frame, frame_len, deadline, res);
	free(frame);
	if (rc)
		return rc;
	dec = qphs_decoder_new(cfg->max_length);
	if (!dec)
		return fail(res, QPHS_ERR_MEMORY, "out of memory");
	rc = read_frame(fd, dec, deadline, cfg->reply_timeout_ms, &f, res);
	if (rc == 0) {
		res->reply_type = f.type;
		/* A caller that takes the parsed reply (desc_out) has no use
		 * for its text: the copy is made for the public call only. */
		if (!desc_out) {
			if (!(res->reply = malloc(f.json_len + 1))) {
				rc = fail(res, QPHS_ERR_MEMORY, "out of memory");
			} else {
				memcpy(res->reply, f.json, f.json_len);
				res->reply[f.json_len] = '\0';
				res->reply_len = f.json_len;
			}
		}
		if (rc == 0)
			rc = check_reply(type, &f, res, desc_out, block_out);
	}
	qphs_decoder_free(dec);
	return rc;
}

int qphs__client_request_desc(const struct qphs_config *cfg, const char *server, int type,
			      const char *json, size_t json_len, struct qphs_client_result *res,
			      struct qphs_hs_desc *desc_out, void **block_out)
{
	struct qphs_config defaults;
	int64_t start = qphs__now_ms();
	int fd, rc;

	if (!res)
		return QPHS_ERR_INVALID_ARGUMENT;
	memset(res, 0, sizeof(*res));
	res->reply_type = -1;
	if (!cfg) {
		qphs_config_init(&defaults);
		cfg = &defaults;
	}
	if (!server || !json || !json_len || !qphs_msg_type_name(type))
		return fail(res, QPHS_ERR_INVALID_ARGUMENT, "invalid argument");
	fd = connect_server(cfg, server, res);
	res->connect_ms = (double)(qphs__now_ms() - start);
	if (fd < 0)
		return fd;
	rc = exchange(fd, cfg, type, json, json_len, res, desc_out, block_out);
	close(fd);
	res->total_ms = (double)(qphs__now_ms() - start);
	return rc;
}

int qphs_client_request(const struct qphs_config *cfg, const char *server, int type,
			const char *json, size_t json_len, struct qphs_client_result *res)
{
	return qphs__client_request_desc(cfg, server, type, json, json_len, res, NULL, NULL);
}
