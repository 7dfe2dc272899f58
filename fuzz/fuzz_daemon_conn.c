/*
 * libFuzzer target over the daemon's connection handling (lib/hs): one real
 * daemon on 127.0.0.1, and the input a script of what up to four peers do
 * to it over real TCP — open, write bytes (whole, one send per byte, or a
 * frame cut at a chosen byte), announce a length, half-close, close, reset,
 * read.
 *
 * What must hold, every run:
 *   - every byte the daemon sends decodes as well-formed frames (no fault
 *     is installed: the daemon's own replies are never bad);
 *   - once the peers are gone, a probe on a new connection is answered
 *     {"status":"success"} (and the newline Mooncake's writer adds);
 *   - then the daemon holds nothing: every connection made was accepted
 *     or refused (but for one the kernel may have dropped, see
 *     early_resets), none stays open and no connection bytes stay
 *     allocated.
 * Every wait is bounded; a run that breaks one of these traps.
 *
 * Inputs are at most 128 bytes (the Makefile's FUZZ_FLAGS_fuzz_daemon_conn): a run costs a
 * real daemon round trip per operation, and longer scripts only made runs
 * slower (a corpus grown to 700-byte scripts ran 770 runs a second).
 *
 * Script bytes: op = b & 0x0f, peer = (b >> 4) & 3; ops that take an
 * argument read the next byte(s).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "qphs/config.h"
#include "qphs/daemon.h"
#include "qphs/error.h"
#include "qphs/frame.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PEERS 4
#define WAIT_BUDGET_MS 10 /* all READ ops of one run together */
#define SETTLE_MS 3000    /* the checks at the end of a run */

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_daemon_conn: " __VA_ARGS__);     \
			fputc('\n', stderr);                                   \
			__builtin_trap();                                      \
		}                                                              \
	} while (0)

enum op {
	OP_OPEN, OP_WRITE, OP_WRITE_BYTES, OP_FRAME, OP_FRAME_CUT, OP_LENGTH,
	OP_HALF_CLOSE, OP_CLOSE, OP_RESET, OP_READ, OP_COUNT
};

static struct qphs_daemon *daemon_;
static struct sockaddr_in addr;
static uint64_t connects; /* every connect that succeeded, since start */
/* Resets of a connection made while the daemon had not yet accounted for
 * every connect.  Such a connection can be gone before accept returns it
 * (seen once in 2 million connects: one connect the daemon never saw; a
 * reset handled before the handshake's last ACK is a likely path), so each
 * such reset allows one connect the daemon did not see. */
static uint64_t early_resets;

struct peer {
	int fd;
	struct qphs_decoder *dec;
	int whole; /* whole frames sent since the last READ */
	int dirty; /* bytes other than whole frames were sent */
};

static const char connection_body[] =
	"{\"local_nic_path\":\"127.0.0.1:1@rxe0\",\"peer_nic_path\":\"127.0.0.1:2@rxe0\","
	"\"qp_num\":[17,18]}";
static const struct {
	int type;
	const char *json;
} frames[] = {
	{QPHS_HS_PROBE, "{}"},
	{QPHS_HS_CONNECTION, connection_body},
	{QPHS_HS_METADATA, "{\"name\":\"fuzz\",\"protocol\":\"rdma\"}"},
	{QPHS_HS_NOTIFY, "{\"name\":\"fuzz\",\"notify_msg\":\"hello\"}"},
	{QPHS_HS_OLD_PROTOCOL, connection_body},
	{QPHS_HS_CONNECTION, "{\"local_nic_path\":7}"},
	{QPHS_HS_PROBE, "[1,2"},
};
#define NFRAMES (sizeof(frames) / sizeof(frames[0]))

static void answer_connection(struct qphs_request *req, void *user)
{
	static const char reply[] =
		"{\"local_nic_path\":\"127.0.0.1:2@rxe0\",\"peer_nic_path\":\"127.0.0.1:1@rxe0\","
		"\"qp_num\":[33,34],\"reply_msg\":\"\"}";

	(void)user;
	qphs_request_reply(req, reply, sizeof(reply) - 1);
}

static void answer_metadata(struct qphs_request *req, void *user)
{
	static const char reply[] = "{\"name\":\"fuzz\",\"protocol\":\"rdma\",\"devices\":[],"
				    "\"buffers\":[],\"priority_matrix\":null}";

	(void)user;
	qphs_request_reply(req, reply, sizeof(reply) - 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct qphs_config cfg;
	int rc;

	(void)argc;
	(void)argv;
	qphs_config_init(&cfg);
	rc = qphs_daemon_new(&cfg, &daemon_);
	CHECK(rc == 0, "qphs_daemon_new: %d", rc);
	qphs_daemon_set_handler(daemon_, QPHS_HS_CONNECTION, answer_connection, NULL);
	qphs_daemon_set_handler(daemon_, QPHS_HS_METADATA, answer_metadata, NULL);
	rc = qphs_daemon_listen(daemon_, "127.0.0.1", 0);
	CHECK(rc == 0, "listen: %s", qphs_daemon_errstr(daemon_));
	rc = qphs_daemon_start(daemon_);
	CHECK(rc == 0, "start: %s", qphs_daemon_errstr(daemon_));
	addr.sin_family = AF_INET;
	addr.sin_port = htons(qphs_daemon_port(daemon_));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t seen(const struct qphs_daemon_stats *st)
{
	return st->accepted + st->refused_at_cap + st->refused_no_fd + st->refused_per_source;
}

/* A script can open and reset connections faster than a loop thread
 * that is not scheduled accepts them; past the listen backlog (128) the
 * kernel drops the SYN and connect waits a second for its retransmit.  So
 * no more than half the backlog stays unaccepted: a wait, bounded. */
#define UNSEEN_MAX 64

static int dial(void)
{
	int fd, one = 1;
	struct qphs_daemon_stats st;
	long end = now_ms() + SETTLE_MS;

	for (qphs_daemon_stats(daemon_, &st); seen(&st) + UNSEEN_MAX <= connects && now_ms() < end;
	     qphs_daemon_stats(daemon_, &st))
		sched_yield();
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0, "socket: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		close(fd);
		return -1;
	}
	connects++;
	return fd;
}

static void send_all(struct peer *p, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	while (p->fd >= 0 && len) {
		ssize_t n = send(p->fd, b, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* the daemon closed, or the buffer is full: as a peer sees it */
		b += n;
		len -= (size_t)n;
	}
}

/* Feeds what the daemon sent to p's decoder: it must never be bad. */
static void take(struct peer *p, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t used = qphs_decoder_feed(p->dec, buf, len);
		struct qphs_frame f;

		CHECK(used >= 0, "the daemon sent a bad frame: %s", qphs_errname((int)used));
		CHECK(used > 0, "the decoder took nothing of %zu bytes", len);
		if (qphs_decoder_frame(p->dec, &f))
			CHECK(f.json_len > 0, "an empty reply");
		buf += used;
		len -= (size_t)used;
	}
}

/* Reads what p has for up to wait_ms; returns 1 at EOF or error. */
static int drain(struct peer *p, int wait_ms)
{
	uint8_t buf[4096];
	struct pollfd pfd = {.fd = p->fd, .events = POLLIN};

	while (poll(&pfd, 1, wait_ms) == 1) {
		ssize_t n = recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return 1;
		take(p, buf, (size_t)n);
		wait_ms = 0;
	}
	return 0;
}

static void shut(struct peer *p, int reset)
{
	if (p->fd < 0)
		return;
	if (reset) {
		struct linger l = {.l_onoff = 1, .l_linger = 0};
		struct qphs_daemon_stats st;

		qphs_daemon_stats(daemon_, &st);
		if (seen(&st) < connects)
			early_resets++;

		setsockopt(p->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	close(p->fd);
	p->fd = -1;
	p->whole = p->dirty = 0;
	qphs_decoder_reset(p->dec);
}

static void probe_answered(void)
{
	struct peer p = {.fd = dial(), .dec = qphs_decoder_new(0)};
	uint8_t *frame;
	size_t len, got = 0;
	long end = now_ms() + SETTLE_MS;
	struct qphs_frame f;

	CHECK(p.fd >= 0 && p.dec, "cannot dial the daemon: %s", strerror(errno));
	CHECK(qphs_frame_encode(QPHS_HS_PROBE, "{}", 2, &frame, &len) == 0, "encode");
	send_all(&p, frame, len);
	free(frame);
	while (!qphs_decoder_frame(p.dec, &f) && now_ms() < end) {
		uint8_t buf[512];
		struct pollfd pfd = {.fd = p.fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, (int)(end - now_ms())) != 1)
			break;
		n = recv(p.fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		take(&p, buf, (size_t)n);
	}
	CHECK(qphs_decoder_frame(p.dec, &f) && f.type == QPHS_HS_PROBE &&
		      /* Mooncake's writer ends a body with a newline */
		      !strncmp(f.json, "{\"status\":\"success\"}", 20) && f.json[20 + strspn(f.json + 20, "\n")] == '\0',
	      "the probe after the run was not answered (%zu bytes back)", got);
	shut(&p, 0);
	qphs_decoder_free(p.dec);
}

static void nothing_held(void)
{
	struct qphs_daemon_stats st;
	long end = now_ms() + SETTLE_MS;

	for (;;) {
		qphs_daemon_stats(daemon_, &st);
		if ((seen(&st) >= connects &&
		     st.open_connections == 0 && st.live_bytes == 0) ||
		    now_ms() >= end)
			break;
		sched_yield();
	}
	CHECK(st.open_connections == 0 && st.live_bytes == 0,
	      "after the run the daemon still holds %llu connections, %llu bytes",
	      (unsigned long long)st.open_connections, (unsigned long long)st.live_bytes);
	CHECK(seen(&st) + early_resets >= connects,
	      "%llu connects, the daemon saw %llu (%llu resets before it had seen every connect)",
	      (unsigned long long)connects, (unsigned long long)seen(&st),
	      (unsigned long long)early_resets);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peer peers[PEERS];
	int budget = WAIT_BUDGET_MS;
	size_t i = 0;

	for (int k = 0; k < PEERS; k++) {
		peers[k].fd = -1;
		peers[k].whole = peers[k].dirty = 0;
		peers[k].dec = qphs_decoder_new(0);
		CHECK(peers[k].dec, "out of memory");
	}
	while (i < size) {
		uint8_t b = data[i++];
		struct peer *p = &peers[(b >> 4) & 3];
		size_t n = 0;

		switch ((enum op)((b & 0x0f) % OP_COUNT)) {
		case OP_OPEN:
			if (p->fd < 0)
				p->fd = dial();
			break;
		case OP_WRITE: /* n bytes of the script, in one send */
			n = i < size ? data[i++] : 0;
			n = n < size - i ? n : size - i;
			send_all(p, data + i, n);
			p->dirty |= n > 0;
			i += n;
			break;
		case OP_WRITE_BYTES: /* n bytes, one send and one yield per byte */
			n = i < size ? data[i++] % 32 : 0;
			n = n < size - i ? n : size - i;
			for (size_t k = 0; k < n; k++) {
				send_all(p, data + i + k, 1);
				sched_yield();
			}
			p->dirty |= n > 0;
			i += n;
			break;
		case OP_FRAME:
		case OP_FRAME_CUT: { /* a whole frame, or one cut at a byte */
			uint8_t *frame;
			size_t len, cut;
			unsigned t = i < size ? data[i++] % NFRAMES : 0;

			CHECK(qphs_frame_encode(frames[t].type, frames[t].json, strlen(frames[t].json),
						&frame, &len) == 0,
			      "encode");
			cut = (b & 0x0f) == OP_FRAME_CUT && i < size ? data[i++] % (len + 1) : len;
			send_all(p, frame, cut);
			if (cut < len) {
				sched_yield();
				send_all(p, frame + cut, len - cut);
			}
			p->whole++;
			free(frame);
			break;
		}
		case OP_LENGTH: { /* a header announcing 4 script bytes' worth of length */
			uint8_t hdr[9] = {0};

			for (int k = 0; k < 4 && i < size; k++)
				hdr[k] = data[i++];
			hdr[8] = QPHS_HS_CONNECTION;
			send_all(p, hdr, sizeof(hdr));
			p->dirty = 1;
			break;
		}
		case OP_HALF_CLOSE:
			if (p->fd >= 0)
				shutdown(p->fd, SHUT_WR);
			break;
		case OP_CLOSE:
			shut(p, 0);
			break;
		case OP_RESET:
			shut(p, 1);
			break;
		case OP_READ:
			/* A READ waits only after a whole frame on a connection
			 * that carried nothing else, which the daemon answers or
			 * closes on at once: otherwise (it may be waiting for more
			 * bytes) it takes what is there.  A wait that runs out
			 * costs a run its milliseconds and finds nothing more. */
			if (p->fd >= 0) {
				long t0 = now_ms();
				int wait = p->whole && !p->dirty ? (budget > 2 ? 2 : budget) : 0;

				p->whole = 0;
				if (drain(p, wait))
					shut(p, 0);
				budget -= (int)(now_ms() - t0);
				if (budget < 0)
					budget = 0;
			}
			break;
		case OP_COUNT:
			break;
		}
	}
	for (int k = 0; k < PEERS; k++) {
		if (peers[k].fd >= 0)
			drain(&peers[k], 0);
		shut(&peers[k], 1); /* reset: no TIME_WAIT left behind per run */
		qphs_decoder_free(peers[k].dec);
	}
	probe_answered();
	nothing_held();
	return 0;
}
