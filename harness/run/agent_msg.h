/*
 * agent_msg.h — the runner's side of the agent protocol (docs/agent-protocol.md,
 * version 3, and version 2 for agents that speak it: the Mooncake adapter):
 * request lines, reply lines, and replies mapped onto facts.
 *
 * Pure: strings and json-c objects in and out, no pipes or processes, so
 * the mapping is unit-tested without an agent.
 */
#ifndef QPLAB_AGENT_MSG_H
#define QPLAB_AGENT_MSG_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario/expect.h"
#include "scenario/scenario.h"

/* The version the runner builds its requests in, and the oldest it still
 * takes: 2 differs from 3 only in the datapath reply, which has no "qps"
 * and "failed_qp" (their facts stay "not collected"). */
#define QPLAB_AGENT_PROTO_VERSION 3
#define QPLAB_AGENT_PROTO_MIN 2
#define QPLAB_AGENT_LINE_MAX 65536

/* The `--config` JSON of a host's agent: {"agent": {...}, "fault": {...}}
 * with only the keys the scenario set, in the scenario's spelling.  A new
 * reference; NULL when out of memory. */
json_object *qplab_agent_config(const struct qplab_host *h);

/* The fault as the spec string qphs_fault_parse() and `hs serve --fault`
 * take: "stall", "delay:300", "reject:TEXT" ("" when no fault); seed and
 * types are set on struct qphs_fault separately.  Returns 0, or
 * QPHS_ERR_INVALID_ARGUMENT when buf is too small. */
int qplab_fault_spec(const struct qplab_fault *f, char *buf, size_t len);

/* Request lines, each a new malloc'd string ending in '\n' (caller frees),
 * NULL when out of memory.  deadline_ms < 0 leaves the agent's default. */
char *qplab_agent_req_connect(int id, const char *peer, int64_t at_realtime_ns, int deadline_ms);
char *qplab_agent_req_report(int id);
/* The device port's hardware counters, absolute ("hw_counters"). */
char *qplab_agent_req_counters(int id);
char *qplab_agent_req_datapath(int id, const char *peer, long bytes, int deadline_ms,
			       bool read_only, int rkey_mode, int verb, uint64_t seed);
/* A datapath "burst": count signalled WRITEs of bytes, polled only
 * after the library's hold (CQ overflow). */
char *qplab_agent_req_burst(int id, const char *peer, long bytes, int deadline_ms, int count,
			    uint64_t seed);
/* fan_in: count servers of the agent's host connect to peer at once (at
 * the CLOCK_REALTIME barrier at_realtime_ns) and are kept ("check":
 * false); fan_in_check then checks each one's data path (deadline_ms per
 * completion) and frees them. */
char *qplab_agent_req_fan_in(int id, const char *peer, int count, int64_t at_realtime_ns);
char *qplab_agent_req_fan_in_check(int id, long bytes, int deadline_ms);
/* The read-only check a passive host makes towards peer as soon as its
 * endpoint to peer is CONNECTED (waiting up to deadline_ms for that): a
 * connect step's peer_posts. */
char *qplab_agent_req_datapath_when_connected(int id, const char *peer, int deadline_ms);
/* verify: the responder's check of bytes written with seed. */
char *qplab_agent_req_verify(int id, long bytes, uint64_t seed);
/* region: access is QPHS_ACCESS_* bits, sent as their words. */
char *qplab_agent_req_region(int id, int access);
char *qplab_agent_req_disconnect(int id, const char *peer);
char *qplab_agent_req_probe(int id, const char *address, int deadline_ms);
char *qplab_agent_req_raw_frame(int id, const char *address, const uint8_t *bytes, size_t len,
				int deadline_ms);
/* raw_frame with a named frame instead of bytes: kind is a frame FAULT
 * name (the agent builds it with qplab_bad_frame) or "stale_ack" (peer: the
 * nic path whose previous ready-ACK to re-send).  address or peer NULL =
 * left out (address: the agent's own daemon). */
char *qplab_agent_req_raw_frame_kind(int id, const char *address, const char *kind,
				     const char *peer, int deadline_ms);
/* daemon_refusal: mark notes the daemon's refusal count; else the agent
 * takes the refusal its daemon logged since (waiting up to deadline_ms)
 * as its last outcome (docs/agent-protocol.md "daemon_refusal"). */
char *qplab_agent_req_daemon_refusal(int id, bool mark, int deadline_ms);
char *qplab_agent_req_exit(int id);
/* line (a datapath request) with "notify_posted": true, so the agent
 * writes a `posted` line for it once its first WR is posted.  NULL when
 * line is not a JSON object (line is freed either way). */
char *qplab_agent_req_notify_posted(char *line);
/* A request line for an agent that speaks version v (its ready line's):
 * takes line (one of the above) and returns it with "v" set to v, or line
 * itself when v is ours or 0 (not known).  The requests are the same in
 * every version the runner takes.  NULL when out of memory or line is
 * not a JSON object (line is freed either way). */
char *qplab_agent_req_for_version(char *line, int v);

enum qplab_agent_msg_type {
	QPLAB_AGENT_READY,
	QPLAB_AGENT_FATAL,
	QPLAB_AGENT_REPLY,
	QPLAB_AGENT_POSTED,    /* a datapath's first WR is outstanding (notify_posted) */
};

/* One line from an agent, decoded.  body is owned (json_object_put via
 * qplab_agent_msg_free); the strings point into it. */
struct qplab_agent_msg {
	enum qplab_agent_msg_type type;
	int v;                 /* its protocol version */
	int64_t id;            /* -1 for ready/fatal and for "id": null */
	const char *op;        /* replies; NULL otherwise */
	int ok;                /* replies: the request was carried out */
	const char *code;      /* error table NAME ("OK" ...); fatal and replies */
	const char *error;     /* text; "" when none */
	json_object *body;
};

/* Decodes one line (len bytes, no newline needed).  Refuses a version
 * other than QPLAB_AGENT_PROTO_MIN..QPLAB_AGENT_PROTO_VERSION, an unknown type, and replies without ok/code/error of the
 * right JSON types.  Returns 0, or QPHS_ERR_MALFORMED_JSON /
 * QPHS_ERR_INVALID_ARGUMENT with a message in err. */
int qplab_agent_parse_line(const char *line, size_t len, struct qplab_agent_msg *m, char *err,
			   size_t errlen);
void qplab_agent_msg_free(struct qplab_agent_msg *m);

/* Copies what a reply says into facts.  connect: code, error_text,
 * reply_msg_*, time_ms.  report: endpoint (of `peer`, else the only one,
 * else "NONE"), endpoints, qp_states/qp_count (device_qps), last code /
 * texts, gid_index, gid_reason, path_mtu, time_ms.  datapath: datapath,
 * wc_status, wc_waited_ms, code, error_text, and (version 3) the per-QP
 * results dp_qps / dp_nqp and dp_failed_qp.  probe: daemon_alive.
 * raw_frame: frame_outcome, daemon_alive, code, error_text,
 * reply_msg_received.  Keys of the wrong JSON type are an error
 * (strict decoding); absent keys leave the fact as it was.  Returns 0,
 * QPHS_ERR_INVALID_ARGUMENT (message in err) or QPHS_ERR_MEMORY. */
int qplab_facts_from_reply(const struct qplab_agent_msg *m, const char *peer, struct qplab_facts *f,
			   char *err, size_t errlen);

#endif
