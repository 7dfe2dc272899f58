/*
 * qphs/probe.h — ask an RDMA driver directly what it does with the QP
 * transitions a Mooncake-style setup can hit (`qplab quirks`).
 *
 * No handshake and no daemon: qphs_probe_run opens the device itself, makes
 * its own PD, CQ, MR and RC QPs, and runs every probe in a fixed order, each
 * on fresh QPs.  Probes that need a remote end (a WRITE to an unknown QPN,
 * reusing a connected QP) connect to a QP on a peer device: the same device
 * by default (rxe loops a packet addressed to its own GID back to itself),
 * or a second one such as the other end of a veth pair.
 *
 * Every verbs call of the probed device goes through the library's verbs ops
 * table, so a quirk profile (opts.quirk) is probed exactly like a driver: the
 * result shows what the profile fakes on top of the real driver underneath.
 * The peer device always runs the real driver.
 *
 * Nothing here prints.  The probe uses the device like any verbs consumer;
 * it creates and destroys its own resources and leaves nothing behind, even
 * when a probe fails.
 */
#ifndef QPHS_PROBE_H
#define QPHS_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "qphs/export.h"

#define QPHS_PROBE_NAME_LEN 32
#define QPHS_PROBE_ERR_LEN 24
#define QPHS_PROBE_STATE_LEN 8
#define QPHS_PROBE_COMPLETION_LEN 48
#define QPHS_PROBE_NOTE_LEN 160
#define QPHS_PROBE_DEV_LEN 64
/* At most this many rows come out of one run. */
#define QPHS_PROBE_MAX_ROWS 24

/* The unknown QPN the unknown-qpn probes connect to: the top of the 24-bit
 * QPN space, which no driver here hands out. */
#define QPHS_PROBE_UNKNOWN_QPN 0xfffff0u

struct qphs_probe_opts {
	const char *device;      /* borrowed; NULL or "" = the first rxe device */
	const char *peer_device; /* borrowed; NULL or "" = device */
	int port;                /* 1 */
	int gid_index;           /* -1 = automatic (the library's ranking) */
	int peer_gid_index;      /* -1 = automatic */
	const char *quirk;       /* borrowed; NULL or "" = the real driver, else a
				    quirk profile name (qplab quirks --help) */
	int qp_timeout;          /* ACK timeout exponent of the unknown-QPN
				    probes: 14 = 4.096 us * 2^14 = 67 ms
				    (Mooncake's value) */
	int deadline_ms;         /* longest wait for one completion: 3000 */
};

/* Defaults as documented above. */
QPHS_EXPORT void qphs_probe_opts_init(struct qphs_probe_opts *o);

/* What the device is; filled before the first probe runs. */
struct qphs_probe_info {
	char device[QPHS_PROBE_DEV_LEN];
	char peer_device[QPHS_PROBE_DEV_LEN];
	char driver[QPHS_PROBE_DEV_LEN];  /* "rxe", "siw" or the sysfs driver */
	char quirk[QPHS_PROBE_NAME_LEN];  /* "" for the real driver */
	int port;
	int gid_index, peer_gid_index;
	int gid_tbl_len;
	int active_mtu, max_mtu;          /* bytes */
	int max_qp_rd_atom, max_qp_init_rd_atom;
	uint32_t vendor_id;
	int qp_timeout, deadline_ms;
};

/* One probe's outcome.  All strings are NUL-terminated. */
struct qphs_probe_row {
	char name[QPHS_PROBE_NAME_LEN];   /* stable id, e.g. "reset-reset" */
	int ran;                          /* 0 = skipped; note says why */
	int ret;                          /* the probed call: 0 or a positive errno */
	char err[QPHS_PROBE_ERR_LEN];     /* errno name, "" for 0 */
	char state[QPHS_PROBE_STATE_LEN]; /* QP state afterwards (ibv_query_qp):
					     RESET INIT RTR RTS SQD SQE ERR, or "?" */
	char completion[QPHS_PROBE_COMPLETION_LEN]; /* "IBV_WC_..." or
					     "none within N ms"; "" = nothing posted */
	double ms;                        /* the probed call; with a completion,
					     from the post to the completion */
	char note[QPHS_PROBE_NOTE_LEN];   /* the attributes or step that matters */
};

/* The probe names in run order, NULL-terminated (static storage). */
QPHS_EXPORT const char *const *qphs_probe_names(void);

/* Runs every probe.  opts, info, rows and err are borrowed: info and rows
 * (room for max, QPHS_PROBE_MAX_ROWS is enough) are filled by the call,
 * *nrows set to the rows written.  Returns 0 when the probes ran (a probe
 * that fails is a result, not an error) or QPHS_ERR_INVALID_ARGUMENT (unknown
 * quirk, bad port), QPHS_ERR_DEVICE_NOT_FOUND, QPHS_ERR_PORT_NOT_ACTIVE,
 * QPHS_ERR_NO_SUITABLE_GID, QPHS_ERR_CONTEXT (PD, CQ or MR failed), with
 * the reason in err (may be NULL). */
QPHS_EXPORT int qphs_probe_run(const struct qphs_probe_opts *opts, struct qphs_probe_info *info,
			       struct qphs_probe_row *rows, size_t max, size_t *nrows, char *err,
			       size_t errlen);

/* "EINVAL" for EINVAL; "" for 0; "E<number>" for an errno without a name.
 * Static storage for names; the fallback is written into buf (borrowed). */
QPHS_EXPORT const char *qphs_probe_errno_name(int e, char *buf, size_t len);

/* Measurements for `make bench`, on contexts the library opened
 * (qphs_rdma_open_device), so with their configured QP shape and quirk
 * profile.  Both create and destroy their own QPs and leave nothing. */
struct qphs_context;
struct qphs_qp_capacity {
	int created;           /* QPs created before the first refusal or cap */
	int limit_errno;       /* the refusal's errno; 0 when cap came first */
	double create_mean_ms; /* per created QP */
};
/* Creates QPs on ctx until one is refused or cap exist, then destroys
 * them.  out: caller's.  Returns 0 or QPHS_ERR_INVALID_ARGUMENT. */
QPHS_EXPORT int qphs_probe_qp_capacity(struct qphs_context *ctx, int cap,
				       struct qphs_qp_capacity *out);
/* modify_qp latency: m times, a fresh QP of a connected to a fresh QP of b
 * (RESET -> INIT -> RTR at 1024 bytes -> RTS, then RTS -> RESET), each
 * call timed.  us[QPHS_TR_RESET..QPHS_TR_RTS] (enum in qphs/rdma.h) are
 * caller's arrays of m doubles, filled with microseconds; RESET is the
 * RTS -> RESET call.  Returns 0, QPHS_ERR_CREATE_QP or QPHS_ERR_MODIFY_QP
 * (the arrays then hold what ran). */
QPHS_EXPORT int qphs_probe_transition_us(struct qphs_context *a, struct qphs_context *b,
					 int m, double *const us[4]);

#endif
