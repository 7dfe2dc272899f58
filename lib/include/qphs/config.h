/*
 * qphs/config.h — the options every part of libqphs reads.
 *
 * One plain struct the caller owns and fills: start from qphs_config_init()
 * (Mooncake's defaults), then change fields by hand, or let
 * qphs_config_from_env() apply the MC_* environment variables Mooncake reads.
 * Fields marked "API only" have no MC_* name.  The library copies the struct
 * when a daemon, context or endpoint is created; later changes to the
 * caller's copy have no effect on them.
 */
#ifndef QPHS_CONFIG_H
#define QPHS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qphs/export.h"

enum qphs_reset_policy {
	QPHS_RESET_RECONSTRUCT = 0, /* destroy and recreate QPs (default) */
	QPHS_RESET_REUSE = 1,       /* RTS -> RESET, then the four steps again */
};

struct qphs_config {
	/* Transport (MC_*). */
	uint16_t handshake_port;    /* MC_HANDSHAKE_PORT, 12001, 1..65535 */
	uint16_t min_rpc_port;      /* MC_MIN_RPC_PORT (alias MC_MIN_PRC_PORT), 15000 */
	uint16_t max_rpc_port;      /* MC_MAX_RPC_PORT (alias MC_MAX_PRC_PORT), 17000 */
	int listen_backlog;         /* MC_HANDSHAKE_LISTEN_BACKLOG, 128, 1..65535 */
	int connect_timeout_s;      /* MC_HANDSHAKE_CONNECT_TIMEOUT, 5, 1..3599 */
	uint64_t max_length;        /* MC_HANDSHAKE_MAX_LENGTH, 1 MiB..128 MiB */
	bool use_ipv6;              /* MC_USE_IPV6: set and not "0" */
	/* RDMA (MC_*). */
	int ib_port;                /* MC_IB_PORT, 1, 1..255 */
	int gid_index;              /* MC_GID_INDEX / NCCL_IB_GID_INDEX, -1 = auto */
	int pkey_index;             /* MC_PKEY_INDEX, 0, 0..65535 */
	int ib_tc;                  /* MC_IB_TC, 0, 0..255 */
	int ib_sl;                  /* MC_IB_SL, 0, 0..15 */
	int mtu;                    /* MC_MTU in bytes, 4096: 512/1024/2048/4096 */
	int num_qp_per_ep;          /* MC_NUM_QP_PER_EP, 2, 1..255 */
	int max_cqe_per_ctx;        /* MC_MAX_CQE_PER_CTX, 4096, 1..65535 */
	int max_sge;                /* MC_MAX_SGE, 4, 1..65535 */
	int max_wr;                 /* MC_MAX_WR, 256, 1..65535 */
	int max_inline;             /* MC_MAX_INLINE, 64, 0..65535 */
	/* API only. */
	int request_timeout_ms;     /* daemon: whole request must arrive, 5000 */
	int write_timeout_ms;       /* daemon: reply must be written, 5000 */
	int reply_timeout_ms;       /* client: reply must arrive, 60000 */
	int max_connections;        /* daemon: open connection cap, 1024 */
	int qp_timeout;             /* RTS timeout exponent, 14 */
	int qp_retry_cnt;           /* RTS retry_cnt, 7 */
	int qp_rnr_retry;           /* RTS rnr_retry, 7 */
	bool mtu_negotiation;       /* send and honour qphs_path_mtu, true */
	bool ready_ack;             /* speak the ready-ACK exchange, true */
	bool strict_reset;          /* always issue ->RESET, true: Mooncake's
				     * doSetupConnection (rdma_endpoint.cpp)
				     * sends it with no state query; false
				     * skips it when the QP is already RESET
				     * (the countermeasure to Mooncake issue
				     * 1143 on Intel E810) */
	bool passive_build_first;   /* passive side: create the endpoint and its
				     * QPs before checking the request (nic
				     * path, QP count, GID), as Mooncake's
				     * onSetupRdmaConnections does
				     * (rdma_transport.cpp); a rejected request
				     * then leaves QPs in RESET.  false: check
				     * first, build nothing on a rejection */
	bool checksum_extension;    /* data-path check extra: advertise "qphs":
				     * {"checksum": true} in our segment
				     * descriptor and answer qphs-checksum
				     * Metadata requests; Mooncake neither
				     * sends nor reads it.  true */
	enum qphs_reset_policy reset_policy; /* QPHS_RESET_RECONSTRUCT */
	char quirk_profile[32];     /* "" = real driver; qphs_quirk_profiles() */
	/* API only, RDMA (lib/context, lib/endpoint). */
	bool rd_atomic_clamp;       /* clamp rd_atomic to the device caps, true */
	bool mtu_reread;            /* re-read active MTU at every connect, true */
	int connect_attempts;       /* active tries after retirement, 5, 1..100 */
	int worker_threads;         /* passive-setup workers per server, 4, 1..64 */
	/* API only, handshake client. */
	bool old_protocol;          /* send Connection requests (and the ready
				     * ACK) as old-protocol, untyped frames, as
				     * Mooncake's client did before the type
				     * byte; expects untyped replies.  false */
	int qp_pool_size;           /* RESET QPs each context creates ahead of
				     * need, off the critical path, 0 (off),
				     * 0..65535 (lib/rdma/qppool.c) */
	/* API only, daemon hardening (docs/hs.md "Limits"): one peer cannot deny
	 * service or exhaust memory.  A source is a peer address (no port). */
	int max_conns_per_source;   /* open connections per source, 128, 1..1<<20 */
	int max_requests_per_source;/* requests in flight per source (from
				     * the header to the close), 128, 1..1<<20:
				     * a node running many engines connects
				     * in bursts (fanin/one-host-64) */
	int memory_budget_kib;      /* bytes buffered for requests across all
				     * connections, KiB, 65536 (64 MiB),
				     * 1024..1<<30; never below twice
				     * max_length */
	int max_small_body;         /* bytes of a Connection, old-protocol,
				     * Notify or Probe body, 65536,
				     * 4096..128 MiB (Metadata: max_length) */
	int max_body_keys;          /* keys plus array elements of one body,
				     * counted before parsing, 32768,
				     * 16..1<<24 */
	int accept_thread_nice;     /* nice value the daemon's accept thread
				     * asks for, -20, -20..0; 0 leaves the
				     * one it inherits.  Raising it needs
				     * CAP_SYS_NICE (or RLIMIT_NICE); without,
				     * the thread keeps its own and logs one
				     * line.  Only that thread's: it takes
				     * connections off a filling accept queue
				     * while the loop waits for a CPU (docs/
				     * hs.md), and a burst of connecting
				     * threads at its own priority leaves it
				     * too small a share to keep up */
};

/* Fills cfg with the defaults above.  cfg: caller-owned, not NULL. */
QPHS_EXPORT void qphs_config_init(struct qphs_config *cfg);

/* Looks one variable up; returns NULL when it is not set.  The returned
 * string is borrowed for the duration of the call. */
typedef const char *(*qphs_env_lookup_fn)(const char *name, void *user);

/* Applies every MC_* variable the fields above name, found through lookup
 * (getenv when lookup is NULL), on top of cfg's current values.  Stops at
 * the first invalid value: returns QPHS_ERR_CONFIG_SYNTAX or
 * QPHS_ERR_CONFIG_RANGE and writes a message naming the variable, its value
 * and the accepted range into err (caller's buffer of errlen bytes; may be
 * NULL).  cfg is left unchanged on error.  Returns 0 on success. */
QPHS_EXPORT int qphs_config_from_env(struct qphs_config *cfg,
				     qphs_env_lookup_fn lookup, void *user,
				     char *err, size_t errlen);

/* Checks every field of cfg against its range, the way the environment is
 * checked; same return values and message form (naming the field). */
QPHS_EXPORT int qphs_config_validate(const struct qphs_config *cfg, char *err,
				     size_t errlen);

/* The quirk profiles quirk_profile may name, NULL-terminated (static:
 * never freed).  Each imitates a driver we cannot run; lib/rdma/verbs.c
 * says which and from what source. */
QPHS_EXPORT const char *const *qphs_quirk_profiles(void);

#endif
