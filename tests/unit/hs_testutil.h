/* hs_testutil.h — loopback helpers for the daemon, client and cli suites. */
#ifndef QPLAB_HS_TESTUTIL_H
#define QPLAB_HS_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "qphs.h"

/* A config with test-friendly defaults: 127.0.0.1, short deadlines. */
void hs_test_config(struct qphs_config *cfg);

/* New daemon listening on 127.0.0.1 (random RPC port), started.  Fails the
 * test on error.  fault may be NULL. */
struct qphs_daemon *hs_test_daemon(const struct qphs_config *cfg,
				   const struct qphs_fault *fault);

/* The bit of one request type in hs_test_serve's mask. */
#define HS_BIT(type) (1u << (type))

/* New daemon with fn(user) handling every request type whose HS_BIT is in
 * types, listening on 127.0.0.1 (random RPC port), started.  cfg may be
 * NULL (the library's defaults).  Fails the test on error. */
struct qphs_daemon *hs_test_serve(const struct qphs_config *cfg, unsigned types,
				  qphs_handler_fn fn, void *user);

/* "127.0.0.1:PORT" of d, in static storage. */
const char *hs_test_addr(const struct qphs_daemon *d);

/* A blocking loopback connection to port, with send/receive timeouts of
 * unit_timeout(seconds). */
int hs_test_connect(uint16_t port, double seconds);

/* The same from the source address src (any of 127/8: "127.0.0.2"), so a
 * test can play several peers. */
int hs_test_connect_from(const char *src, uint16_t port, double seconds);

/* How many threads of this process are named name (/proc/self/task). */
int hs_test_threads_named(const char *name);
/* The tid of this process's first thread named name, or 0 when none is. */
pid_t hs_test_thread_named(const char *name);

/* Sends bytes (may be 0 bytes), optionally shuts down writing, then reads
 * until EOF or reset into out (cap bytes).  Returns the bytes read, or -1
 * on a receive timeout. */
ssize_t hs_test_exchange(uint16_t port, const void *bytes, size_t len, int shut_wr,
			 uint8_t *out, size_t cap);

/* A typed (type 0..3) or untyped (0xff) frame of body, little-endian
 * length written byte by byte (independently of lib/wire). */
size_t hs_test_frame(int type, const char *body, uint8_t *out, size_t cap);

/* Polls until stats.open_connections == want or the deadline passes;
 * returns the last value seen. */
uint64_t hs_test_wait_open(struct qphs_daemon *d, uint64_t want, double seconds);

/* Sends a probe through the client and asserts the reply. */
void hs_test_assert_probe(struct qphs_daemon *d);

#endif
