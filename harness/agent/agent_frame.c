/*
 * The agent's `raw_frame` request: exact bytes (hex, a named bad frame, or
 * a stale ready-ACK) to a daemon on a fresh TCP connection, what the daemon
 * did with them (closed / replied / silent), whether it still answers a
 * Probe, and — when the daemon is this agent's own — the reason it logged
 * (qphs_daemon_last_refusal).  docs/agent-protocol.md "raw_frame".
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "cli/jread.h"
#include "hs/bad_frame.h"
#include "qphs/body.h"
#include "qphs/frame.h"

#define REPLY_HEX_MAX 512 /* bytes of the daemon's answer shown as hex */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* "0a 0B ff" -> bytes (malloc'd).  Returns the length, or -1 (also for
 * no bytes at all). */
static long unhex(const char *hex, uint8_t **out)
{
	size_t n = strlen(hex), k = 0;
	uint8_t *b = malloc(n / 2 + 1);

	if (!b || qphs_hex_decode(hex, n, 0, b, n / 2 + 1, &k, NULL) || !k) {
		free(b);
		return -1;
	}
	*out = b;
	return (long)k;
}

/* A blocking TCP connection to addr ("host:port", bracketed IPv6) within
 * ms, or -1 with the reason in err. */
static int dial(const char *addr, int ms, char *err, size_t errlen)
{
	char host[256], port[8];
	uint16_t p;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	int fd = -1;

	if (qphs_parse_host_port(addr, host, sizeof(host), &p, 0) || !p) {
		snprintf(err, errlen, "raw_frame: bad address \"%s\"", addr);
		return -1;
	}
	snprintf(port, sizeof(port), "%u", p);
	if (getaddrinfo(host, port, &hints, &res) || !res) {
		snprintf(err, errlen, "raw_frame: cannot resolve %s", addr);
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* SO_SNDTIMEO bounds connect() too (Linux). */
	if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
			connect(fd, res->ai_addr, res->ai_addrlen))) {
		snprintf(err, errlen, "raw_frame: connect %s: %s", addr, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

struct outcome {
	const char *word;         /* closed, replied, silent */
	char hex[2 * REPLY_HEX_MAX + 1];
	double waited_ms;
};

/* Writes the bytes, half-closes (a partial frame then ends at EOF, as when
 * a peer dies mid-frame), and reads until the daemon closes or the
 * deadline passes. */
static int exchange(int fd, const uint8_t *b, size_t len, int ms, struct outcome *o)
{
	double t0 = now_ms(), end = t0 + ms;
	size_t got = 0, off = 0;

	while (off < len) {
		ssize_t n = send(fd, b + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the daemon closed early (oversize): read says so */
		off += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	o->word = "silent";
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint8_t buf[4096];
		int left = (int)(end - now_ms());
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			o->word = got ? "replied" : "closed";
			break;
		}
		for (ssize_t i = 0; i < n && got < REPLY_HEX_MAX; i++, got++)
			sprintf(o->hex + 2 * got, "%02x", buf[i]);
		o->word = "replied";
	}
	o->waited_ms = now_ms() - t0;
	return 0;
}

/* The refusal the own daemon logged for our frame: it is written before
 * the close we saw, so a short grace suffices (a "silent" frame has none). */
static int own_refusal(struct agent *a, uint64_t before, struct qphs_daemon_refusal *r)
{
	double end = now_ms() + 200;

	do {
		struct timespec ts = {0, 5 * 1000 * 1000};

		qphs_daemon_last_refusal(a->d, r);
		if (r->count > before)
			return 1;
		nanosleep(&ts, NULL);
	} while (now_ms() < end);
	return 0;
}

static int probe(const struct agent *a, const char *addr, int ms)
{
	struct qphs_client_result res;
	struct qphs_config cfg = a->cfg;
	int rc;

	cfg.reply_timeout_ms = ms;
	cfg.connect_timeout_s = 1 + ms / 1000;
	memset(&res, 0, sizeof(res));
	rc = qphs_client_request(&cfg, addr, QPHS_HS_PROBE, "{}", 2, &res);
	free(res.reply);
	return rc == 0;
}

/* The bytes of the request: hex, or a named bad frame.  Returns the
 * length (bytes malloc'd) or -1 with err. */
static long request_bytes(struct jread *r, json_object *req, uint8_t **bytes, char *err,
			  size_t errlen)
{
	const char *hex, *kind;

	if (jread_str(r, req, "hex", &hex) == JREAD_OK) {
		long n = unhex(hex, bytes);

		if (n <= 0)
			snprintf(err, errlen, "raw_frame: \"hex\" is not pairs of hex digits");
		return n > 0 ? n : -1;
	}
	if (jread_str(r, req, "kind", &kind) == JREAD_OK) {
		size_t len = 0;

		*bytes = malloc(QPLAB_BAD_FRAME_MAX);
		if (*bytes && qplab_bad_frame(kind, *bytes, &len) == 0)
			return (long)len;
		snprintf(err, errlen, "raw_frame: unknown kind \"%.60s\" (a frame FAULT name, or "
			 "stale_ack)", kind);
		return -1;
	}
	snprintf(err, errlen, "raw_frame: needs \"hex\" or \"kind\"");
	return -1;
}

static json_object *frame_reply(json_object *id, int rc, const char *text, const struct outcome *o,
				int alive, const struct qphs_daemon_refusal *r)
{
	json_object *out = agent_reply(id, "raw_frame", 1, rc, text), *de = NULL;

	json_object_object_add(out, "frame_outcome", json_object_new_string(o->word));
	json_object_object_add(out, "reply_hex", json_object_new_string(o->hex));
	json_object_object_add(out, "waited_ms", agent_ms(o->waited_ms));
	json_object_object_add(out, "daemon_alive", json_object_new_boolean(alive));
	if (r) {
		de = json_object_new_object();
		json_object_object_add(de, "code", json_object_new_string(qphs_errname(r->code)));
		json_object_object_add(de, "text", json_object_new_string(r->text));
	}
	json_object_object_add(out, "daemon_error", de);
	return out;
}

json_object *agent_op_raw_frame(struct agent *a, json_object *id, json_object *req)
{
	const char *addr = qphs_daemon_address(a->d), *kind;
	int ms = 2000, own, fd, alive, got = 0;
	struct qphs_daemon_refusal before, r;
	struct outcome o = {.word = "silent"};
	uint8_t *bytes = NULL;
	char err[300] = "";
	struct jread jr = {.what = "request", .err = err, .errlen = sizeof(err)};
	long len;

	if (jread_str(&jr, req, "kind", &kind) == JREAD_OK && !strcmp(kind, "stale_ack"))
		return agent_op_stale_ack(a, id, req);
	jread_str(&jr, req, "address", &addr);
	jread_int(&jr, req, "deadline_ms", 1, INT_MAX, &ms);
	if (jr.errors)
		return agent_reply(id, "raw_frame", 0, QPHS_ERR_INVALID_ARGUMENT, err);
	own = !strcmp(addr, qphs_daemon_address(a->d));
	if ((len = request_bytes(&jr, req, &bytes, err, sizeof(err))) < 0) {
		free(bytes);
		return agent_reply(id, "raw_frame", 0, QPHS_ERR_INVALID_ARGUMENT, err);
	}
	qphs_daemon_last_refusal(a->d, &before);
	fd = dial(addr, ms, err, sizeof(err));
	if (fd < 0) {
		free(bytes);
		return agent_reply(id, "raw_frame", 0, QPHS_ERR_CONNECT_REFUSED, err);
	}
	exchange(fd, bytes, (size_t)len, ms, &o);
	close(fd);
	free(bytes);
	if (own)
		got = own_refusal(a, before.count, &r);
	alive = probe(a, addr, ms);
	/* Its own daemon's refusal becomes this host's last outcome, so the
	 * report after the step carries the reason as code and error. */
	if (own)
		agent_remember(a, got ? r.code : 0, got ? r.text : "", NULL);
	return frame_reply(id, got ? r.code : 0, got ? r.text : "", &o, alive, got ? &r : NULL);
}
