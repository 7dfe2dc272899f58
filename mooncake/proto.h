/*
 * proto.h — the pure part of qplab-mooncake-agent, the adapter that runs a
 * real Mooncake Transfer Engine as a lab host (docs/agent-protocol.md, "A
 * Mooncake host").  Requests in, replies out, the adapter's own state, and
 * the readings it makes of what others print: the kernel's view of the
 * host's QPs (over RDMA netlink, cli/hwc.h), Mooncake's glog lines, and
 * Mooncake's showLinks JSON.
 *
 * Nothing here calls Mooncake, opens a socket or starts a process: this
 * file and proto.c are compiled into the unit tests (tests/unit/mooncake)
 * and run in CI without a Mooncake build.  adapter.c and engine.c, built
 * only against one (make mooncake-agent MOONCAKE_BUILD=DIR), do the I/O.
 *
 * Ownership: json_object results are new references (the caller puts
 * them); strings passed in are borrowed.
 */
#ifndef QPLAB_MOONCAKE_PROTO_H
#define QPLAB_MOONCAKE_PROTO_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qphs/body.h"

/* The agent protocol's version the adapter speaks (docs/agent-protocol.md):
 * 2, without version 3's per-QP datapath results, which the C API cannot
 * give; the runner sends it version 2 requests.  The adapter answers
 * "unsupported" to the operations a Mooncake host cannot do. */
#define MCA_PROTO_VERSION 2
#define MCA_LINE_MAX 65536       /* a request line, at most (as qplab agent) */
#define MCA_CONNECT_READ 64      /* bytes of the READ that makes a connect */
#define MCA_REGION_BYTES (1u << 20) /* the buffer the adapter exports */

enum mca_op {
	MCA_OP_CONNECT,
	MCA_OP_REPORT,
	MCA_OP_DATAPATH,
	MCA_OP_DISCONNECT,
	MCA_OP_PROBE,
	MCA_OP_RAW_FRAME,
	MCA_OP_EXIT,
};

/* One request.  Strings point into body; absent ones are NULL, absent
 * numbers -1. */
struct mca_request {
	json_object *body;         /* owned: mca_request_free */
	json_object *id;           /* borrowed from body */
	enum mca_op op;
	const char *op_name;
	const char *peer;          /* connect, datapath, disconnect, raw_frame stale_ack */
	const char *address;       /* probe, raw_frame */
	const char *kind;          /* raw_frame */
	const char *hex;           /* raw_frame */
	int64_t at_realtime_ns;    /* connect barrier */
	int deadline_ms;
	long bytes;                /* datapath */
	bool read_only;            /* datapath */
};

/* Decodes one request line (len bytes, no newline; lineno for messages).
 * Returns 0 with *r filled, or -1 with *error_reply set to the reply the
 * adapter must send instead (bad JSON, wrong version, no id, unknown op,
 * a key of the wrong type: the errors of docs/agent-protocol.md). */
int mca_request_parse(const char *line, size_t len, unsigned long lineno, struct mca_request *r,
		      json_object **error_reply);
void mca_request_free(struct mca_request *r);

/* {"v":1,"type":"reply","id":ID,"op":OP,"ok":OK,"code":CODE,"error":TEXT};
 * code is an error table NAME ("OK", "ERR_..."). */
json_object *mca_reply(json_object *id, const char *op, bool ok, const char *code, const char *error);
/* What the C API cannot do: ok false, code ERR_NOT_IMPLEMENTED, error and
 * "unsupported" the reason.  The runner makes the scenario a SKIP for
 * this placement when a step's reply carries "unsupported". */
json_object *mca_unsupported(json_object *id, const char *op, const char *reason);

/* --config as the runner passes it ({"impl": "mooncake", "agent": {},
 * ...}): a Mooncake host takes MC_* variables only, so any agent option
 * or daemon fault is refused, naming it (a startup `fatal`: the runner
 * should have skipped the placement).  Returns 0 or -1 with err. */
int mca_config_check(const char *json, char *err, size_t errlen);

/* The `ready` line.  context_code NULL = no context error. */
struct mca_ready_info {
	const char *host, *listen, *device;
	int pid;
	int gid_index;             /* -1 = unknown (no transport) */
	const char *gid;           /* "" = unknown */
	const char *context_code, *context_text;
	const char *commit, *build, *source; /* the Mooncake build (-D at build time) */
};
json_object *mca_ready(const struct mca_ready_info *in);

/* ---- the bounded ring of Mooncake's log lines ---- */

#define MCA_RING_LINES 512
#define MCA_RING_LINE_BYTES 1024

/* The last MCA_RING_LINES lines pushed; `pushed` counts every one ever
 * pushed, so a mark (a past `pushed`) names "the lines since". */
struct mca_ring {
	char lines[MCA_RING_LINES][MCA_RING_LINE_BYTES];
	uint64_t pushed;
};
/* Appends one line (len bytes, cut at MCA_RING_LINE_BYTES - 1). */
void mca_ring_push(struct mca_ring *r, const char *line, size_t len);
/* The lines pushed since mark still held, oldest first, as a JSON array;
 * *lost (may be NULL) = how many of them the ring no longer holds. */
json_object *mca_ring_since(const struct mca_ring *r, uint64_t mark, uint64_t *lost);
/* The i-th line since mark (0-based), or NULL when past the end or lost. */
const char *mca_ring_at(const struct mca_ring *r, uint64_t mark, uint64_t i);

/* ---- readings of glog lines ---- */

/* A glog line "Lmmdd hh:mm:ss.uuuuuu THREAD FILE:LINE] MESSAGE": 1 with
 * *level ('I', 'W', 'E', 'F') and *msg (the message) set; else 0. */
int mca_glog_parse(const char *line, char *level, const char **msg);

/* Who logged a line: Mooncake's client side (the adapter's own requests:
 * openSegment, transfers, the active handshake) or its daemon (requests
 * it serves, raw frames among them). */
enum mca_side { MCA_SIDE_CLIENT, MCA_SIDE_DAEMON };

/* The failure a Mooncake log message names, as the code Mooncake's
 * function returns there (our table keeps Mooncake's numbers), or, for the
 * daemon's frame refusals, which return no code, our table's row for the
 * same refusal: the rules of proto_log.c, each citing its Mooncake
 * function.  Returns the code (< 0) with *where (may be NULL) set to the
 * function, or 0 when the message names no failure the rules know. */
int mca_log_failure(const char *msg, enum mca_side side, const char **where);

/* The IBV_WC_* name for a completion text as ibv_wc_status_str prints it
 * ("transport retry counter exceeded" -> "IBV_WC_RETRY_EXC_ERR"); the text
 * after the last ": " of Mooncake's "Worker: Process failed for slice
 * (...): TEXT" line.  NULL when unknown. */
const char *mca_wc_name(const char *text);

/* The first failure among the lines since mark: its code (0 when none),
 * its message into text, and for a failed slice the completion status
 * name into wc (else "").  where: the function (may be NULL). */
int mca_first_failure(const struct mca_ring *r, uint64_t mark, enum mca_side side, char *text,
		      size_t textlen, char *wc, size_t wclen, const char **where);

/* ---- readings of the kernel's QPs and Mooncake's JSON ---- */

/* One QP of the host's device, as the kernel lists it (ops.c reads them
 * over RDMA netlink, cli/hwc.h). */
struct mca_qp {
	uint32_t qpn;
	char state[8];             /* RESET, INIT, RTR, RTS, SQD, SQE, ERR */
};
/* showLinks(json) output: the GID and GID index of local NIC dev.
 * Returns 0, or -1 when dev is not listed with transport details. */
int mca_links_gid(const char *json, const char *dev, int *gid_index, char *gid, size_t gidlen);

/* ---- the data path ---- */

/* The peer buffer a Mooncake initiator would use for bytes at its start:
 * the first of buffers[] with rkeys that is at least bytes long
 * (RdmaTransport::selectDevice and bytesUntilBufferEnd, rdma_transport.cpp,
 * skip buffers without rkeys).  Returns its index, or -1 with err. */
int mca_pick_buffer(const struct qphs_segment_desc *s, size_t bytes, char *err, size_t errlen);

/* A pattern that differs from run to run (seed) and from byte to byte. */
void mca_pattern(uint8_t *buf, size_t len, uint64_t seed);

/* Mooncake's transfer status names (transfer_engine_c.h STATUS_*). */
const char *mca_status_name(int status);

/* ---- the adapter's state and its replies ---- */

struct mca_state {
	char last_code[48];        /* the last connect/datapath/raw_frame */
	char last_error[700];
	char last_where[64];       /* the Mooncake function the code is from, "" */
	char transfer_op[8];       /* "READ", "WRITE", "" = none yet */
	char transfer_status[16];  /* mca_status_name, or "NONE" (never returned) */
	long t_total;              /* ms of the last connect, -1 */
	unsigned long connects;
	uint64_t report_mark;      /* ring position of the previous report */
};
void mca_state_init(struct mca_state *st);
/* Records an outcome (code NAME, text, the Mooncake function or NULL). */
void mca_state_last(struct mca_state *st, const char *code, const char *text, const char *where);

/* The `report` reply: device_qps (the kernel's view), gid_index and gid
 * (showLinks, -1/"" when unknown), last, the last transfer, time_ms, the
 * log lines since the previous report (log_lines: taken), counters, and
 * not_reported: what a Mooncake host cannot tell. */
json_object *mca_report(json_object *id, const struct mca_state *st, const struct mca_qp *qps,
			int nqp, int gid_index, const char *gid, json_object *log_lines,
			uint64_t log_lost);

#endif
