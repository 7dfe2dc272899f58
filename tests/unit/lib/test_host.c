/* The host object (setup/host.c) without an RDMA device: its workers and
 * its ready-ACK lane answer Connection requests for a device it does not
 * have, from many clients at once (the threads `make tsan` watches), and a
 * thread of it that cannot start is ERR_THREAD with the errno. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/thread.h"
#include "hs_testutil.h"
#include "unit.h"

#define CLIENTS 8
#define REQUESTS 10

struct host {
	struct qphs_daemon *d;
	struct qphs_rdma *r;
	char server[80];
};

static void host_up(struct host *h)
{
	struct qphs_config cfg;
	char err[256] = "";

	hs_test_config(&cfg);
	ck_assert_int_eq(qphs_daemon_new(&cfg, &h->d), 0);
	ck_assert_int_eq(qphs_daemon_listen(h->d, "127.0.0.1", 0), 0);
	snprintf(h->server, sizeof(h->server), "%s", qphs_daemon_address(h->d));
	ck_assert_msg(qphs_rdma_new(&cfg, h->server, &h->r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(qphs_rdma_attach(h->r, h->d), 0);
	ck_assert_int_eq(qphs_daemon_start(h->d), 0);
}

struct client {
	struct host *h;
	int index, rejected;
	char first_text[512];
};

/* REQUESTS Connection requests for device nodev, every other one a ready
 * ACK (answered on the daemon's loop thread or the ACK lane). */
static void *client_main(void *arg)
{
	struct client *c = arg;
	struct qphs_config cfg;

	hs_test_config(&cfg);
	for (int i = 0; i < REQUESTS; i++) {
		struct qphs_client_result res;
		char body[256];
		int rc;

		snprintf(body, sizeof(body), "{\"local_nic_path\":\"10.0.0.%d:1@dev\","
			 "\"peer_nic_path\":\"%s@nodev\",\"qp_num\":[7,8]%s}\n", c->index,
			 c->h->server, i % 2 ? ",\"ready_ack\":true" : "");
		rc = qphs_client_request(&cfg, c->h->server, QPHS_HS_CONNECTION, body,
					 strlen(body), &res);
		if (rc == QPHS_ERR_REJECT_HANDSHAKE && !c->rejected++)
			snprintf(c->first_text, sizeof(c->first_text), "%s", res.errstr);
		free(res.reply);
	}
	return NULL;
}

START_TEST(host_rejects_connections_for_a_device_it_lacks_from_many_clients_at_once)
{
	struct client c[CLIENTS];
	pthread_t t[CLIENTS];
	struct host h;
	char want[256], last[512];

	host_up(&h);
	/* Mooncake names the device only (the nic path after its '@'). */
	snprintf(want, sizeof(want), "Local RDMA context not found for handshake NIC: nodev "
		 "[no usable device nodev on %s]", h.server);
	for (int i = 0; i < CLIENTS; i++) {
		c[i] = (struct client){.h = &h, .index = i + 1};
		ck_assert_int_eq(pthread_create(&t[i], NULL, client_main, &c[i]), 0);
	}
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < CLIENTS; i++) {
		ck_assert_int_eq(c[i].rejected, REQUESTS);
		ck_assert_str_eq(c[i].first_text, want);
	}
	ck_assert_uint_eq(qphs_rdma_last_rejection(h.r, last, sizeof(last)),
			  (uint64_t)CLIENTS * REQUESTS);
	ck_assert_str_eq(last, want);
	qphs_daemon_stop(h.d);
	qphs_rdma_free(h.r);
	qphs_daemon_free(h.d);
}
END_TEST

static int threads_now(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(dir);
	while ((e = readdir(dir)))
		n += e->d_name[0] != '.';
	closedir(dir);
	return n;
}

static void *nothing(void *arg)
{
	return arg;
}

static atomic_int creates, fail_at;

static int failing_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg)
{
	if (atomic_fetch_add(&creates, 1) + 1 == atomic_load(&fail_at))
		return EAGAIN;
	return pthread_create(t, attr, fn, arg);
}

/* The n-th thread of qphs_rdma_new fails to start (1: the ACK thread, 2
 * and 3: workers): ERR_THREAD, the text names the thread and the errno,
 * and the threads already started are gone again. */
static const char *const which_thread[] = {"ready-ACK thread", "worker thread 1 of 4",
					   "worker thread 2 of 4"};

START_TEST(host_thread_that_cannot_start_is_err_thread_with_the_errno)
{
	struct qphs_config cfg;
	struct qphs_rdma *r = NULL;
	char err[256] = "";
	pthread_t warm;
	int before, rc;

	/* A sanitizer's runtime may start a thread of its own at the first
	 * pthread_create: have that happen before counting. */
	ck_assert_int_eq(pthread_create(&warm, NULL, nothing, NULL), 0);
	pthread_join(warm, NULL);
	before = threads_now();
	hs_test_config(&cfg);
	cfg.worker_threads = 4;
	atomic_store(&creates, 0);
	atomic_store(&fail_at, _i + 1);
	qphs__thread_set_create(failing_create);
	rc = qphs_rdma_new(&cfg, "127.0.0.1:1", &r, err, sizeof(err));
	qphs__thread_set_create(NULL);
	ck_assert_int_eq(rc, QPHS_ERR_THREAD);
	ck_assert_ptr_null(r);
	ck_assert_msg(strstr(err, which_thread[_i]) && strstr(err, strerror(EAGAIN)), "err '%s'",
		      err);
	/* A joined thread may stay listed for a moment while the kernel
	 * reaps it. */
	for (int i = 0; i < 100 && threads_now() != before; i++)
		usleep((useconds_t)(unit_timeout(1) * 10000));
	ck_assert_int_eq(threads_now(), before);
}
END_TEST

Suite *suite_host(void)
{
	Suite *s = suite_create("host");
	TCase *tc = unit_tcase(s, "workers", 20);

	tcase_add_test(tc, host_rejects_connections_for_a_device_it_lacks_from_many_clients_at_once);
	tcase_add_loop_test(tc, host_thread_that_cannot_start_is_err_thread_with_the_errno, 0,
			    (int)(sizeof(which_thread) / sizeof(which_thread[0])));
	return s;
}
