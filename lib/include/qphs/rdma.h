/*
 * qphs/rdma.h — RDMA devices and endpoints.
 *
 * Three handles:
 *
 *   struct qphs_rdma      one server: its name (the part before '@' of every
 *                         nic path), the devices it opened, a small pool of
 *                         worker threads that run passive setups, and the
 *                         handshake handlers it installs on a daemon.
 *   struct qphs_context   one RDMA device of a qphs_rdma (port, LID, GID,
 *                         PD, CQ).  Owned by its qphs_rdma; never freed alone.
 *   struct qphs_endpoint  one peer of one context: N RC QPs.  Reference
 *                         counted: every pointer handed out is a reference
 *                         the caller gives back with qphs_endpoint_put.
 *
 * Threads.  Every call may be made from any thread except a daemon's loop
 * thread (connect, wait and data checks block).  The handlers installed by
 * qphs_rdma_attach never block the loop: each request is handed to a worker
 * and answered later with qphs_request_reply.
 *
 * Teardown.  qphs_rdma_free stops the workers, then destroys every endpoint
 * (QPs), context (MR, CQ, PD, device) in reverse order of creation; it
 * continues past a step that fails, so nothing is leaked.  Detach the
 * daemon first (stop or free it) so no handler runs during the free.
 */
#ifndef QPHS_RDMA_H
#define QPHS_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qphs/config.h"
#include "qphs/daemon.h"
#include "qphs/export.h"

struct qphs_rdma;
struct qphs_context;
struct qphs_endpoint;

/* Endpoint status: Mooncake's RdmaEndPoint::Status numbers. */
enum qphs_ep_status {
	QPHS_EP_INITIALIZING = 0,
	QPHS_EP_UNCONNECTED = 1,
	QPHS_EP_CONNECTING = 2,
	QPHS_EP_WAIT_READY_ACK = 3, /* connected, may not post until the ACK */
	QPHS_EP_CONNECTED = 4,      /* ready to send */
	QPHS_EP_DESTROYING = 5,     /* retired: a connect builds a new one */
	QPHS_EP_DESTROYED = 6,
};
QPHS_EXPORT const char *qphs_ep_status_name(int status);

/* server: copied; the nic path server part, "host:port" (bracketed IPv6),
 * normally a daemon's address.  cfg: copied.  *out: transferred
 * (qphs_rdma_free).  Returns 0, QPHS_ERR_INVALID_ARGUMENT (bad config,
 * unknown quirk profile; text in err, caller's buffer, may be NULL),
 * QPHS_ERR_MEMORY or QPHS_ERR_THREAD (a worker thread could not start: err
 * names it and the errno). */
QPHS_EXPORT int qphs_rdma_new(const struct qphs_config *cfg, const char *server,
			      struct qphs_rdma **out, char *err, size_t errlen);
QPHS_EXPORT void qphs_rdma_free(struct qphs_rdma *r);

/* Opens device (copied name) at cfg->ib_port.  *out is borrowed: owned by r,
 * valid until qphs_rdma_free.  Errors: QPHS_ERR_DEVICE_NOT_FOUND,
 * QPHS_ERR_PORT_NOT_ACTIVE (the text names device, port and state),
 * QPHS_ERR_GID_NULL / QPHS_ERR_NO_SUITABLE_GID (Mooncake's texts),
 * QPHS_ERR_CONTEXT, QPHS_ERR_THREAD (the event or QP pool thread could not
 * start; the text names the errno).  The text is on r (qphs_rdma_errstr). */
QPHS_EXPORT int qphs_rdma_open_device(struct qphs_rdma *r, const char *device,
				      struct qphs_context **out);

/* Installs the Connection and Metadata handlers on d (before
 * qphs_daemon_start).  d is borrowed and must be stopped before r is freed. */
QPHS_EXPORT int qphs_rdma_attach(struct qphs_rdma *r, struct qphs_daemon *d);

/* Last error text of r (borrowed; valid until the next call on r). */
QPHS_EXPORT const char *qphs_rdma_errstr(const struct qphs_rdma *r);

/* The passive side's last rejection: the reply_msg of the last
 * Connection request r's handlers refused — QP count, nic path, GID,
 * device, a failed setup, a stale ready-ACK — copied into buf (caller's,
 * len bytes; "" when none).  Returns how many there were.  Any thread;
 * r may be NULL (returns 0). */
QPHS_EXPORT uint64_t qphs_rdma_last_rejection(struct qphs_rdma *r, char *buf, size_t len);

/* Lab hooks: make this context lie on the wire, for failure scenarios.
 * Zero / NULL fields are off. */
struct qphs_rdma_hooks {
	const char *advertise_gid;     /* sent as local_gid (copied) */
	uint32_t advertise_qpn;        /* every qp_num sent replaced by it */
	int advertise_qp_count;        /* qp_num sent with this many entries */
	const char *advertise_server;  /* server part of the nic path we send */
	int passive_rtr_delay_ms;      /* passive side sleeps before RTR (worker) */
	bool advertise_qpn_set;        /* advertise_qpn applies even when 0 (QPN 0) */
	int active_reply_delay_ms;     /* active side sleeps between the Connection
					* reply and its own RTR (caller's thread,
					* no lock held): the peer may change its
					* QPs meanwhile (simultaneous-open race) */
	uint32_t sq_psn;               /* RTS sq_psn of every QP (24 bits; 0 is
					* Mooncake's): the first PSN we send */
	uint32_t rq_psn;               /* RTR rq_psn (24 bits; 0 is Mooncake's): the
					* PSN we expect first.  Neither is told to
					* the peer: the handshake carries no PSN
					* (HandShakeDesc), so one side's setting
					* is a PSN mismatch with the other's 0 */
};
/* hooks: copied (strings too).  NULL clears all.  QPHS_ERR_INVALID_ARGUMENT
 * for a PSN above 24 bits.  The PSNs apply to the transitions made after
 * the call. */
QPHS_EXPORT int qphs_context_set_hooks(struct qphs_context *ctx,
				       const struct qphs_rdma_hooks *hooks);

#define QPHS_EVENT_TYPES 32 /* above the last enum ibv_event_type */
struct qphs_context_info {
	char device[64];
	char nic_path[300];
	int port;
	char port_state[16];     /* "ACTIVE", "DOWN", ... */
	uint16_t lid;
	int active_mtu;          /* bytes, read now */
	int gid_index;
	char gid[48];
	char gid_reason[256];    /* why this index: the rank and what was skipped */
	int max_qp;
	int max_qp_rd_atom;
	int max_qp_init_rd_atom;
	int max_res_rd_atom;
	char quirk_profile[32];
	int failed;              /* 1 after a device-fatal or port-error event,
				  * 0 again after IBV_EVENT_PORT_ACTIVE */
	char last_event[64];     /* name of the last async event, or "" */
	/* Async events read since open, indexed by enum ibv_event_type. */
	uint32_t event_count[QPHS_EVENT_TYPES];
};
QPHS_EXPORT int qphs_context_info(struct qphs_context *ctx, struct qphs_context_info *out);
/* Borrowed, stable until qphs_rdma_free. */
QPHS_EXPORT const char *qphs_context_nic_path(const struct qphs_context *ctx);
/* Refills ctx's QP pool (cfg->qp_pool_size) now, whatever its level, and
 * waits until it is full or timeout_ms passed: before an expected burst.
 * Returns 0 (also without a pool) or QPHS_ERR_BUSY on timeout. */
QPHS_EXPORT int qphs_context_fill_qp_pool(struct qphs_context *ctx, int timeout_ms);
/* Last error text of ctx, e.g. of a connect refused before any endpoint was
 * involved (borrowed; valid until the next call on ctx). */
QPHS_EXPORT const char *qphs_context_errstr(const struct qphs_context *ctx);

/* Active setup towards peer_nic_path (borrowed): creates or reuses the
 * endpoint, runs the handshake and brings every QP to RTS.
 * Simultaneous open is resolved here: a connect that finds its endpoint
 * retired retries after a randomised backoff, up to cfg->connect_attempts.
 * *out receives a reference (qphs_endpoint_put) on success, and also on
 * failure when an endpoint was involved, so the caller can read its error
 * text; otherwise NULL.  Returns 0 or a code: QPHS_ERR_REJECT_HANDSHAKE (the
 * peer's reply_msg is the endpoint's error text), QPHS_ERR_MODIFY_QP,
 * QPHS_ERR_NIC_PATH_MISMATCH, QPHS_ERR_QP_COUNT_MISMATCH, QPHS_ERR_BAD_GID,
 * QPHS_ERR_BAD_NIC_PATH, QPHS_ERR_ENDPOINT, transport codes (client.h). */
QPHS_EXPORT int qphs_connect(struct qphs_context *ctx, const char *peer_nic_path,
			     struct qphs_endpoint **out);

/* The endpoint for peer_nic_path (borrowed) if one exists (e.g. made by a
 * passive setup): a new reference, or NULL. */
QPHS_EXPORT struct qphs_endpoint *qphs_context_endpoint(struct qphs_context *ctx,
							const char *peer_nic_path);

/* Every endpoint of ctx, retired ones still holding QPs included, newest
 * first: up to max new references into out (caller's array; put each).
 * Returns how many there are (may exceed max; only max are stored). */
QPHS_EXPORT int qphs_context_endpoints(struct qphs_context *ctx, struct qphs_endpoint **out,
				       int max);

/* Waits (polling, bounded) until ep is CONNECTED.  Returns 0,
 * QPHS_ERR_RETIRED when it was retired or QPHS_ERR_ENDPOINT on timeout. */
QPHS_EXPORT int qphs_endpoint_wait_ready(struct qphs_endpoint *ep, int timeout_ms);

/* Disconnects ep per cfg->reset_policy: `reconstruct` destroys and recreates
 * the QPs, `reuse` moves them to RESET.  Ends UNCONNECTED. */
QPHS_EXPORT int qphs_endpoint_disconnect(struct qphs_endpoint *ep);

/* Retires ep (Mooncake's deleteEndpoint): it leaves the context's store,
 * its QPs go to ERR and are destroyed when the last reference is put; the
 * next connect to the same peer builds a new endpoint.  The peer is not
 * told.  The caller still holds its reference and must put it. */
QPHS_EXPORT int qphs_endpoint_close(struct qphs_endpoint *ep);

/* Gives a reference back.  NULL is fine. */
QPHS_EXPORT void qphs_endpoint_put(struct qphs_endpoint *ep);

#define QPHS_EP_MAX_QPS 255
enum { QPHS_TR_RESET, QPHS_TR_INIT, QPHS_TR_RTR, QPHS_TR_RTS, QPHS_TR_COUNT };

/* The phases of a setup, as qphs_endpoint_info dates them: the Connection
 * request's TCP connect, the request (sent until its reply arrived: the
 * peer's passive setup is inside), each transition (from the first QP's
 * call to the last one's return; QPs go one after the other through all
 * four, so with several QPs the transitions overlap), the ready-ACK round
 * trip.  The four
 * transitions are QPHS_PHASE_RESET + QPHS_TR_... */
enum {
	QPHS_PHASE_TCP_CONNECT,
	QPHS_PHASE_REQUEST,
	QPHS_PHASE_RESET,
	QPHS_PHASE_INIT,
	QPHS_PHASE_RTR,
	QPHS_PHASE_RTS,
	QPHS_PHASE_READY_ACK,
	QPHS_PHASE_COUNT
};
/* "tcp_connect", "request", "reset", "init", "rtr", "rts", "ready_ack";
 * "unknown" out of range.  Static storage. */
QPHS_EXPORT const char *qphs_phase_name(int phase);
/* The clock the phases are dated on: CLOCK_MONOTONIC in ms.  Any thread. */
QPHS_EXPORT double qphs_monotonic_ms(void);

struct qphs_endpoint_info {
	int status;                       /* enum qphs_ep_status */
	char peer_nic_path[300];
	int qp_count;
	uint32_t qpn[QPHS_EP_MAX_QPS];
	uint32_t peer_qpn[QPHS_EP_MAX_QPS];   /* 0 until connected */
	int qp_state[QPHS_EP_MAX_QPS];        /* ibv_query_qp now; -1 = failed */
	int path_mtu;                     /* bytes used at RTR, 0 before */
	int gid_index;
	int rd_atomic;                    /* max_dest_rd_atomic used at RTR */
	int last_error;                   /* code, 0 = none */
	char last_error_text[640];
	char reply_msg_sent[512];         /* last non-empty reply_msg we sent */
	char reply_msg_received[512];     /* last non-empty reply_msg we got */
	uint64_t transitions_ok[QPHS_TR_COUNT];
	uint64_t transitions_failed[QPHS_TR_COUNT];
	uint64_t reset_skipped;           /* ->RESET not sent: already RESET */
	uint64_t connect_attempts;        /* active attempts incl. retries (those
					   * on retired predecessors count too) */
	uint64_t retired_retries;         /* attempts that met a retired ep */
	int peer_ready_ack;               /* the peer spoke ready_ack */
	/* Last active setup, in ms: the Connection round trip (includes the
	 * peer's whole passive setup), our own transitions, the ACK round trip. */
	double rpc_ms, setup_ms, ack_ms;
	double passive_setup_ms;          /* last passive setup's transitions */
	/* The last setup, active or passive, in ms: the TCP connect of
	 * its Connection request (active only), and each transition summed
	 * over the endpoint's QPs, a failed call included (an RTR that times
	 * out shows its whole wait).  < 0: it did not happen (a RESET skipped
	 * because the QP was in RESET; the steps after a failed one). */
	double tcp_connect_ms;
	double transition_ms[QPHS_TR_COUNT];
	/* More of the last setup, in ms: taking or creating its QPs; the TCP
	 * connect of the ready ACK (active only); on the passive side, the
	 * wait for a worker thread. */
	double qp_take_ms, ack_tcp_connect_ms, worker_wait_ms;
	/* The last setup's phases at their times (QPHS_PHASE_...), on
	 * qphs_monotonic_ms()'s clock: start < 0 = it did not happen.  The
	 * active side has all of them; the passive side its transitions. */
	double phase_start_ms[QPHS_PHASE_COUNT], phase_end_ms[QPHS_PHASE_COUNT];
	/* MTU negotiation: the path MTU the peer sent (qphs_path_mtu), 0 when
	 * it sent none — a Mooncake peer, which does not negotiate; with
	 * mtu_negotiation on, path_mtu is then ours alone and warning says so. */
	int peer_path_mtu;
	char warning[640];                /* the last [Handshake] warning logged
					   * for this endpoint, or "" */
};
/* Fills out (caller's).  Reads every QP's state with ibv_query_qp. */
QPHS_EXPORT int qphs_endpoint_info(struct qphs_endpoint *ep,
				   struct qphs_endpoint_info *out);
/* Borrowed; valid while the reference is held and no other call runs on ep. */
QPHS_EXPORT const char *qphs_endpoint_errstr(struct qphs_endpoint *ep);

/* Data-path check against any peer that publishes a segment descriptor
 * (qplab or Mooncake).  The peer's buffer and rkey are found as a Mooncake
 * initiator finds them: a Metadata request, then the first remotely
 * accessible buffer that holds `bytes`, and the rkey of the device ep is
 * connected to (rkey[i] of devices[i]).
 *
 * QPHS_DATA_CHECK runs its round trip on every QP of ep in turn, QP 0
 * first, each posting only on its own QP (local QP i is connected to the
 * peer's QP i, so QP i carrying data proves that pairing): RDMA READ the
 * peer's bytes, RDMA WRITE a random pattern (new for each QP), READ it
 * back into a zeroed buffer and compare, WRITE the original bytes back and
 * READ them to prove it (restored).  The original bytes are those the
 * first QP read, so a QP that failed half-way cannot make a later one take
 * its pattern for the peer's bytes.  A qplab peer, whose descriptor
 * advertises the checksum extension, also checksums each QP's pattern (one
 * more Metadata request per QP).  read_only: each QP only READs.  The
 * check stops at the first QP that fails: the QPs after it are not posted
 * to (res->qp[i].ran 0), so a fault that breaks the path costs
 * one timeout, not one per QP, and leaves the other QPs as they were.
 * Every wait has timeout_ms; a WR that does not complete in time moves its
 * QP (only that one) to ERR and fails the endpoint.
 *
 * res: caller's, filled in every case.  A descriptor a Mooncake initiator
 * could not use the same way (no priority_matrix, another device
 * numbering) is reported in the endpoint's warning.
 *
 * Returns 0 (every QP ok), or the first failing QP's code:
 * QPHS_ERR_COMPLETION (a WR completed in error, or could not be posted),
 * QPHS_ERR_COMPLETION_TIMEOUT, QPHS_ERR_DATA_MISMATCH, QPHS_ERR_METADATA,
 * transport codes of the Metadata request (client.h); before any QP:
 * QPHS_ERR_INVALID_ARGUMENT, QPHS_ERR_ENDPOINT (not CONNECTED),
 * QPHS_ERR_MEMORY.  res->text says it in words, naming the QP (index and
 * qp_num) when the endpoint has more than one. */
enum qphs_rkey_mode {
	QPHS_RKEY_DESCRIPTOR = 0, /* the rkey the peer's descriptor publishes */
	QPHS_RKEY_BAD,            /* that rkey with its low 8 bits (the key
				   * part a driver bumps) inverted: a key the
				   * peer never handed out */
	QPHS_RKEY_STALE,          /* the rkey this endpoint used in its last
				   * check that found a target, even when the
				   * peer has since re-registered the buffer
				   * (qphs_context_register_region); none yet
				   * is QPHS_ERR_INVALID_ARGUMENT */
};
enum qphs_data_verb {
	QPHS_DATA_CHECK = 0,      /* the READ/WRITE check above */
	QPHS_DATA_WRITE,          /* one RDMA WRITE of `bytes` of the pattern of
				   * `seed` (qphs_pattern_fill) into the peer's
				   * buffer on QP 0, nothing else: the peer's
				   * memory is not restored, so the peer can
				   * check on its own side what arrived
				   * (qphs_context_verify_region).  One QP only:
				   * the same bytes written over every QP could
				   * not tell the peer which of them arrived */
	QPHS_DATA_SEND,           /* one signalled SEND of `bytes` on QP 0,
				   * nothing else: libqphs posts no receive
				   * on any QP, so the peer answers RNR NAKs and
				   * the requester retries per its rnr_retry
				   * (7: for ever).  write_status holds the
				   * SEND's completion; no Metadata request,
				   * rkey_mode ignored */
	QPHS_DATA_BURST,          /* `count` signalled RDMA WRITEs of `bytes` of
				   * the pattern into the peer's buffer on QP 0,
				   * all posted before any completion is polled,
				   * then none polled for QPHS_BURST_HOLD_MS (an
				   * application busy elsewhere), then polled
				   * until all came or timeout_ms: a CQ smaller
				   * than count overflows (MC_MAX_CQE_PER_CTX).
				   * write_status: the first failed completion,
				   * "no completion" when some never came; text
				   * says how many came, the CQ's size, QP 0's
				   * state before any flush and the
				   * IBV_EVENT_CQ_ERR events seen */
};
#define QPHS_BURST_HOLD_MS 1000
#define QPHS_BURST_MAX 65535
struct qphs_data_opts {
	size_t bytes;           /* 1..QPHS_CHECK_REGION_BYTES */
	int timeout_ms;         /* per completion, above 0 */
	bool read_only;         /* READ only: for a peer whose memory must not
				 * be written even for a moment */
	int rkey_mode;          /* enum qphs_rkey_mode; 0 = the descriptor's */
	int verb;               /* enum qphs_data_verb; 0 = the check */
	uint64_t seed;          /* QPHS_DATA_WRITE: the pattern's seed */
	/* Called once, right after the first WR of the call was posted and
	 * before its completion is waited for (NULL: not called): a caller
	 * that must act while that WR is outstanding (a lab that kills the
	 * peer mid-transfer).  Runs on the calling thread. */
	void (*on_posted)(void *arg);
	void *on_posted_arg;
	int count;              /* QPHS_DATA_BURST: WRs, 1..QPHS_BURST_MAX
				 * (at most the QP's MC_MAX_WR are accepted) */
};
/* What one QP of the check did: ok, failed (ran and not ok), or not run
 * (ran 0: an earlier QP failed). */
struct qphs_data_qp_result {
	uint32_t qpn;           /* this QP's number (ours) */
	uint32_t peer_qpn;      /* the peer's QP it is connected to */
	int ran;                /* 1 when a WR was posted on it */
	int ok;                 /* 1 when its whole round trip held */
	char write_status[40];  /* its last WRITE's completion, "not posted" */
	char read_status[40];   /* its last READ's completion, "not posted" */
	double ms;              /* its round trip, from its first post */
};
struct qphs_data_result {
	int ok;                 /* 1 when everything matched on every QP */
	/* The first failing QP's completions (else the last QP's): */
	char write_status[40];  /* "IBV_WC_SUCCESS", ... or "no completion" */
	char read_status[40];
	double write_ms, read_ms, total_ms;
	uint32_t local_crc, peer_crc; /* of the last pattern checksummed */
	int read_only;          /* the check only read */
	int peer_checksum;      /* the peer checksummed its copy (a qplab peer) */
	int restored;           /* the last bytes written to the peer were its
				 * original ones, and they read back equal */
	char peer_buffer[64];   /* the name of the peer's buffer used ("cpu:0") */
	uint32_t rkey;          /* the rkey posted (0: none was) */
	uint32_t descriptor_rkey; /* the rkey the descriptor published (0: none read) */
	char text[256];         /* what went wrong, in words */
	/* Per QP, in the endpoint's order: nqp entries (the endpoint's QP
	 * count for QPHS_DATA_CHECK, 1 for QPHS_DATA_WRITE and
	 * QPHS_DATA_SEND, which use QP 0 only; 0 when the check stopped before
	 * any QP, e.g. endpoint not CONNECTED). */
	int nqp;
	int failed_qp;          /* index of the first failing QP, -1 none */
	struct qphs_data_qp_result qp[QPHS_EP_MAX_QPS];
};
QPHS_EXPORT int qphs_endpoint_check_data_opts(struct qphs_endpoint *ep,
					      const struct qphs_data_opts *opts,
					      struct qphs_data_result *res);
/* The same with read_only off. */
QPHS_EXPORT int qphs_endpoint_check_data(struct qphs_endpoint *ep, size_t bytes,
					 int timeout_ms, struct qphs_data_result *res);

/* The completions one QP's round trip waits for (READ, WRITE, READ,
 * WRITE, READ), each up to timeout_ms; and the wait for the flush of a WR
 * that never completed, once per check. */
#define QPHS_DATA_CHECK_WAITS_PER_QP 5
#define QPHS_DATA_FLUSH_WAIT_MS 1000
/* The longest qphs_endpoint_check_data_opts(opts) can spend waiting for
 * completions on an endpoint of nqp QPs (pure): timeout_ms for each
 * completion it waits for, QPHS_DATA_CHECK_WAITS_PER_QP per QP (1
 * read_only) on every QP (QPHS_DATA_WRITE and _SEND: one, on QP 0), plus
 * QPHS_DATA_FLUSH_WAIT_MS.  A caller that waits for the check (the lab's
 * runner) waits at least this long.  The Metadata requests are not in it:
 * the cfg's handshake timeouts bound them (client.h).  nqp outside
 * 1..QPHS_EP_MAX_QPS counts as QPHS_EP_MAX_QPS; timeout_ms below 1 as 1. */
QPHS_EXPORT long long qphs_data_check_max_wait_ms(const struct qphs_data_opts *opts, int nqp);

/* Bytes of the host's check region, the buffer of its segment descriptor
 * (the largest check). */
#define QPHS_CHECK_REGION_BYTES (1u << 20)

/* The lab's data pattern (pure): n bytes made from seed, the same on
 * every host.  _compare counts the bytes of p that differ from it,
 * stores the offset of the first in *first_bad (n when none) and the
 * pattern's byte there in *want (may be NULL; untouched when none). */
QPHS_EXPORT void qphs_pattern_fill(uint8_t *p, size_t n, uint64_t seed);
QPHS_EXPORT size_t qphs_pattern_compare(const uint8_t *p, size_t n, uint64_t seed,
					size_t *first_bad, uint8_t *want);

/* Responder-side verification: whether the first `bytes` of ctx's check
 * region (where a peer's QPHS_DATA_WRITE lands) hold the pattern of seed,
 * byte for byte, read by this host from its own memory.  out: caller's,
 * filled in every case.  Returns 0, QPHS_ERR_DATA_MISMATCH (out->text
 * names the first differing byte, what it holds and what it should) or
 * QPHS_ERR_INVALID_ARGUMENT (bytes not in 1..QPHS_CHECK_REGION_BYTES). */
struct qphs_verify_result {
	size_t bytes;           /* compared */
	size_t mismatched;      /* bytes that differ */
	size_t first_mismatch;  /* offset of the first, == bytes when none */
	char text[160];
};
QPHS_EXPORT int qphs_context_verify_region(struct qphs_context *ctx, size_t bytes, uint64_t seed,
					   struct qphs_verify_result *out);

/* Lab hook: the access flags of a buffer registration (ibv_reg_mr's). */
enum {
	QPHS_ACCESS_LOCAL_WRITE = 1,
	QPHS_ACCESS_REMOTE_WRITE = 2,
	QPHS_ACCESS_REMOTE_READ = 4,
};
/* Lab hook: registers ctx's check region again with access (QPHS_ACCESS_*
 * bits), then deregisters the registration it had.  The segment
 * descriptor publishes the new rkey from then on; the old one is stale
 * (the new registration is made before the old is dropped, so a driver
 * cannot hand out the same key again).  old_rkey, new_rkey: caller's, may
 * be NULL.  Returns 0, QPHS_ERR_INVALID_ARGUMENT (an unknown bit, or
 * REMOTE_WRITE without LOCAL_WRITE, which verbs refuse), or
 * QPHS_ERR_CONTEXT (ibv_reg_mr failed; the old registration stays).  The
 * text is on ctx (qphs_context_errstr).  Peers' RDMA operations in flight
 * meet the old or the new registration. */
QPHS_EXPORT int qphs_context_register_region(struct qphs_context *ctx, int access,
					     uint32_t *old_rkey, uint32_t *new_rkey);

#endif
