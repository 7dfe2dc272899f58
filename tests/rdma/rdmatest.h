/* rdmatest.h — shared by the rdma suites (build/tests/rdma, in the VM). */
#ifndef QPLAB_RDMATEST_H
#define QPLAB_RDMATEST_H

#include <check.h>

#include "qphs.h"

#define SUITE(name) Suite *suite_##name(void);
#include "rdma_suites.h"
#undef SUITE

/* Same contract as tests/unit/unit.h. */
double unit_timeout(double seconds);
TCase *unit_tcase(Suite *s, const char *name, double seconds);
void unit_hit(int code);
/* A test case that also runs in smoke mode (the non-default kernels). */
TCase *rdma_smoke_tcase(Suite *s, const char *name, double seconds);
/* 1 in smoke mode (QPLAB_RDMA_SMOKE=1). */
int rdma_smoke(void);
/* Milliseconds deadline scaled by QPLAB_TIME_MULTIPLIER. */
int rdma_ms(int ms);
/* CLOCK_MONOTONIC in ms. */
double lab_now_ms(void);

/* One lab host: a daemon on the host's address, a qphs_rdma named after
 * it, and its device. */
struct lab_host {
	struct qphs_daemon *d;
	struct qphs_rdma *r;
	struct qphs_context *ctx;
	char dev[64];
	char addr[64];
	char netdev[64];
	char path[320];   /* its nic path */
};

/* Brings host i (0 = a, 1 = b) up with cfg (NULL = defaults).  Fails the
 * test on error. */
void lab_up(struct lab_host *h, int i, const struct qphs_config *cfg);
/* Same, with a server name other than the daemon's address. */
void lab_up_named(struct lab_host *h, int i, const struct qphs_config *cfg,
		  const char *server);
void lab_down(struct lab_host *h);
/* Takes both hosts down and asserts no QP of this process is left on
 * either device. */
void lab_down_clean(struct lab_host *a, struct lab_host *b);
/* Asserts every QP of ep is in RESET (nothing left half way). */
void lab_assert_reset(struct qphs_endpoint *ep);
/* The running kernel is major.minor or later (uname). */
int kernel_at_least(int major, int minor);
/* Config with the suite's defaults (short reply timeout). */
void lab_config(struct qphs_config *cfg);
/* QPs of this process on device dev, counted with `rdma -j resource show qp`. */
int lab_count_qps(const char *dev);
/* Sets netdev's MTU (ip link). */
void lab_set_mtu(const char *netdev, int mtu);
/* Asserts every QP of ep is RTS (read back with ibv_query_qp). */
void lab_assert_rts(struct qphs_endpoint *ep, int nqp);
/* Connects a -> b and asserts both sides CONNECTED, every QP RTS. */
void lab_connect_ok(struct lab_host *a, struct lab_host *b, int nqp,
		    struct qphs_endpoint **ea, struct qphs_endpoint **eb);
/* `topo fault --name NAME ARGS` on the suite's topology; 0 or -1 (also
 * when QPLAB_RDMA_TOPO / QPLAB_RDMA_TOPO_NAME are not set). */
int lab_topo_fault(const char *args);
/* Asserts text starts with prefix and has " [" detail after it. */
void lab_assert_mooncake(const char *text, const char *prefix);

#endif
