/*
 * qphs/addr.h — the handshake's address strings: GIDs, nic paths and
 * "host:port" server names.  Pure; any thread.
 */
#ifndef QPHS_ADDR_H
#define QPHS_ADDR_H

#include <stddef.h>
#include <stdint.h>

#include "qphs/export.h"

#define QPHS_GID_STR_LEN 47 /* "xx:" x 15 + "xx" */

/* GID strings, as Mooncake's parseGidString (rdma_endpoint.cpp) reads
 * them: 16 fields separated by ':', each 1..n hex digits (either case,
 * optional 0x prefix, whitespace allowed after a colon), value <= 0xff,
 * nothing trailing.  Returns 0 or QPHS_ERR_BAD_GID. */
QPHS_EXPORT int qphs_gid_parse(const char *s, uint8_t gid[16]);
/* 47 lowercase characters plus NUL, the way Mooncake writes a GID. */
QPHS_EXPORT void qphs_gid_format(const uint8_t gid[16], char out[QPHS_GID_STR_LEN + 1]);

/* Nic path "<server>@<device>": server is everything before the first '@',
 * device everything after.  Both must be non-empty.  *server and *device are
 * malloc'd (transferred: free()).  Returns 0 or QPHS_ERR_BAD_NIC_PATH. */
QPHS_EXPORT int qphs_nic_path_split(const char *path, char **server, char **device);

/* "host:port" (IPv6 in brackets), as Mooncake's parseHostNameWithPort
 * (common.h) splits it: [v6], [v6]:port, bare v6 (no port), v6%scope:port,
 * else split at the last ':'.  "Bare v6" is what inet_pton takes (so
 * fe80::1:1500 is a host with no port, but fe80::1:15000 is host fe80::1,
 * port 15000, as in Mooncake).  A missing port gives default_port.  host is
 * copied into hostbuf (hostlen bytes; brackets removed).  Returns 0 or
 * QPHS_ERR_BAD_ADDRESS (bad port, empty host, too long).  Ours, stricter
 * than Mooncake, which falls back to the default port: a port that is not
 * all digits 0..65535 (empty after ':' included), and anything but ":port"
 * after a ']'. */
QPHS_EXPORT int qphs_parse_host_port(const char *server, char *hostbuf, size_t hostlen,
				     uint16_t *port, uint16_t default_port);
/* Formats host and port as a server name into buf (len bytes), bracketing
 * IPv6 hosts.  Returns 0 or QPHS_ERR_BAD_ADDRESS (empty host, or the name
 * does not fit). */
QPHS_EXPORT int qphs_format_host_port(const char *host, uint16_t port, char *buf, size_t len);

#endif
