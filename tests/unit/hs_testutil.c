/* Loopback helpers for the transport suites (see hs_testutil.h). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "hs_testutil.h"
#include "unit.h"

void hs_test_config(struct qphs_config *cfg)
{
	qphs_config_init(cfg);
	cfg->connect_timeout_s = 2;
	cfg->reply_timeout_ms = (int)(unit_timeout(5) * 1000);
}

struct qphs_daemon *hs_test_daemon(const struct qphs_config *cfg, const struct qphs_fault *fault)
{
	struct qphs_daemon *d = NULL;

	ck_assert_int_eq(qphs_daemon_new(cfg, &d), 0);
	if (fault)
		ck_assert_int_eq(qphs_daemon_set_fault(d, fault), 0);
	ck_assert_int_eq(qphs_daemon_listen(d, "127.0.0.1", 0), 0);
	ck_assert_int_eq(qphs_daemon_start(d), 0);
	return d;
}

struct qphs_daemon *hs_test_serve(const struct qphs_config *cfg, unsigned types,
				  qphs_handler_fn fn, void *user)
{
	struct qphs_daemon *d = NULL;

	ck_assert_int_eq(qphs_daemon_new(cfg, &d), 0);
	for (int t = 0; t < 32; t++)
		if (types & HS_BIT(t))
			ck_assert_int_eq(qphs_daemon_set_handler(d, t, fn, user), 0);
	ck_assert_int_eq(qphs_daemon_listen(d, "127.0.0.1", 0), 0);
	ck_assert_int_eq(qphs_daemon_start(d), 0);
	return d;
}

const char *hs_test_addr(const struct qphs_daemon *d)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "127.0.0.1:%u", qphs_daemon_port(d));
	return buf;
}

int hs_test_connect(uint16_t port, double seconds)
{
	return hs_test_connect_from("127.0.0.1", port, seconds);
}

int hs_test_connect_from(const char *src, uint16_t port, double seconds)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct sockaddr_in me = {.sin_family = AF_INET};
	double t = unit_timeout(seconds);
	struct timeval tv = {.tv_sec = (time_t)t, .tv_usec = (suseconds_t)((t - (time_t)t) * 1e6)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(inet_pton(AF_INET, src, &me.sin_addr), 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect: %s",
		      strerror(errno));
	return fd;
}

/* Counts this process's threads named name; the first one's tid goes to
 * *first when first is not NULL (0 when there is none). */
static int threads_named(const char *name, pid_t *first)
{
	char path[300], comm[32];
	int n = 0;
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;

	ck_assert_ptr_nonnull(dir);
	if (first)
		*first = 0;
	while ((e = readdir(dir))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fgets(comm, sizeof(comm), f) && !strcmp(strtok(comm, "\n"), name) &&
			    n++ == 0 && first)
				*first = (pid_t)atoi(e->d_name);
			fclose(f);
		}
	}
	closedir(dir);
	return n;
}

int hs_test_threads_named(const char *name)
{
	return threads_named(name, NULL);
}

pid_t hs_test_thread_named(const char *name)
{
	pid_t tid;

	threads_named(name, &tid);
	return tid;
}

ssize_t hs_test_exchange(uint16_t port, const void *bytes, size_t len, int shut_wr,
			 uint8_t *out, size_t cap)
{
	int fd = hs_test_connect(port, 5);
	size_t got = 0;

	if (len)
		ck_assert_int_eq(send(fd, bytes, len, MSG_NOSIGNAL), (ssize_t)len);
	if (shut_wr)
		shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t n = recv(fd, out + got, cap - got, 0);
		if (n > 0) {
			got += (size_t)n;
			if (got == cap)
				break;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			close(fd);
			return -1;
		}
		break; /* EOF or reset */
	}
	close(fd);
	return (ssize_t)got;
}

size_t hs_test_frame(int type, const char *body, uint8_t *out, size_t cap)
{
	size_t blen = strlen(body), hl = type == 0xff ? 8 : 9;
	uint64_t len = blen + (hl - 8);

	ck_assert_uint_le(hl + blen, cap);
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(len >> (8 * i));
	if (hl == 9)
		out[8] = (uint8_t)type;
	memcpy(out + hl, body, blen);
	return hl + blen;
}

uint64_t hs_test_wait_open(struct qphs_daemon *d, uint64_t want, double seconds)
{
	struct qphs_daemon_stats st;
	struct timespec ts = {0, 2000000};
	double left = unit_timeout(seconds);

	for (;;) {
		qphs_daemon_stats(d, &st);
		if (st.open_connections == want || left <= 0)
			return st.open_connections;
		nanosleep(&ts, NULL);
		left -= 0.002;
	}
}

void hs_test_assert_probe(struct qphs_daemon *d)
{
	struct qphs_config cfg;
	struct qphs_client_result res;
	int rc;

	hs_test_config(&cfg);
	rc = qphs_client_request(&cfg, hs_test_addr(d), QPHS_HS_PROBE, "{}\n", 3, &res);
	ck_assert_msg(rc == 0, "probe failed: %s %s", qphs_errname(rc), res.errstr);
	ck_assert_str_eq(res.reply, "{\"status\":\"success\"}\n");
	free(res.reply);
}
