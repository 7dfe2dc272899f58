/* Exact bytes to a daemon and what it did with them (raw_frame.h). */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bad_frame.h"
#include "qphs/addr.h"
#include "qphs/client.h"
#include "qphs/frame.h"
#include "qphs/config.h"
#include "raw_frame.h"

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

int qplab_raw_dial(const char *addr, int ms, char *err, size_t errlen)
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

void qplab_raw_exchange(int fd, const uint8_t *b, size_t len, int ms, struct qplab_raw_outcome *o)
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
		for (ssize_t i = 0; i < n && got < QPLAB_RAW_HEX_MAX; i++, got++)
			sprintf(o->hex + 2 * got, "%02x", buf[i]);
		o->word = "replied";
	}
	o->waited_ms = now_ms() - t0;
}

long qplab_raw_request_bytes(const char *hex, const char *kind, uint8_t **bytes, char *err,
			     size_t errlen)
{
	if (hex) {
		long n = unhex(hex, bytes);

		if (n <= 0)
			snprintf(err, errlen, "raw_frame: \"hex\" is not pairs of hex digits");
		return n > 0 ? n : -1;
	}
	if (kind) {
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

int qplab_raw_probe(const struct qphs_config *base, const char *addr, int ms)
{
	struct qphs_client_result res;
	struct qphs_config cfg = *base;
	int rc;

	cfg.reply_timeout_ms = ms;
	cfg.connect_timeout_s = 1 + ms / 1000;
	memset(&res, 0, sizeof(res));
	rc = qphs_client_request(&cfg, addr, QPHS_HS_PROBE, "{}", 2, &res);
	free(res.reply);
	return rc == 0;
}
