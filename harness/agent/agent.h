/*
 * agent.h — `qplab agent`: one lab host's device, daemon and endpoints,
 * driven by JSON lines (docs/agent-protocol.md, version 3).
 *
 * One struct agent per process.  The daemon runs on its own thread; every
 * request is served on the main thread, one at a time.
 */
#ifndef QPLAB_AGENT_H
#define QPLAB_AGENT_H

#include <json-c/json.h>

#include "qphs.h"

#define AGENT_PROTO_VERSION 3
#define AGENT_MAX_PEERS 16
#define AGENT_MAX_SET_QPS 64

struct agent_fanin;

/* One peer's QP numbers: the set in use and the one before the last
 * reconnect (for stale ready-ACKs, agent_stale.c). */
struct agent_qpset {
	char peer[300];
	int n, nprev;
	uint32_t cur[AGENT_MAX_SET_QPS], prev[AGENT_MAX_SET_QPS];
};

struct agent {
	const char *host, *device, *listen;
	char addr[256];
	uint16_t port;
	struct qphs_config cfg;
	struct qphs_rdma_hooks hooks;
	char hook_gid[64], hook_server[256];
	struct qphs_fault fault;
	char fault_name[32];           /* "" = none; for the ready line */
	struct qphs_daemon *d;
	struct qphs_rdma *r;
	struct qphs_context *ctx;      /* borrowed from r; NULL after a context error */
	char impl[20];                 /* "qplab" or "mooncake-compat" (agent_cfg.c) */
	bool no_rdma_transport;        /* attach no RDMA handlers: null replies */
	int ctx_code;                  /* 0, or why there is no context (config, device) */
	char ctx_error[700];
	/* The last connect/datapath/disconnect: what report's "last" says. */
	char last_code[48];
	char last_error[700];
	char last_sent[512], last_recv[512];
	/* ms, -1 = did not happen: the Connection round trip, the ACK round
	 * trip, the qphs_connect call, its TCP connect, each transition. */
	long t_handshake, t_ready_ack, t_total, t_tcp, t_tr[QPHS_TR_COUNT];
	unsigned long connects;
	struct agent_qpset sets[AGENT_MAX_PEERS];
	int nsets;
	/* daemon_refusal: the daemon's refusal count at its last "mark". */
	uint64_t refusal_mark;
	/* rdma_max (agent_cgroup.c): set, and each limit (-1 = max); the
	 * cgroup entered. */
	bool rdma_max_set;
	struct agent_fanin *fanin;     /* servers a fan_in kept for fan_in_check */
	int rdma_max_handle, rdma_max_object;
	char cgroup[500], cgroup_parent[400];
};

/* Applies the --config JSON ({"agent": {...}, "fault": {...}}) to a.
 * Returns 0, or a negative code with a message naming the key in err. */
int agent_apply_config(struct agent *a, const char *json, char *err, size_t errlen);

/* Serves one request object; returns the reply (new reference).  Sets
 * *quit for `exit`. */
json_object *agent_serve(struct agent *a, json_object *req, int *quit);

/* Records a request's outcome as the host's `last` (code, error; reply_msg
 * and timings from ep when given). */
void agent_remember(struct agent *a, int rc, const char *text, struct qphs_endpoint *ep);

/* `raw_frame` (agent_frame.c); kind "stale_ack" goes to agent_op_stale_ack
 * (agent_stale.c). */
json_object *agent_op_raw_frame(struct agent *a, json_object *id, json_object *req);
json_object *agent_op_stale_ack(struct agent *a, json_object *id, json_object *req);
/* `daemon_refusal` (agent_frame.c): "mark" notes the daemon's refusal
 * count; without it, the refusal logged since the mark (a frame another
 * host sent) becomes this host's last outcome. */
json_object *agent_op_daemon_refusal(struct agent *a, json_object *id, json_object *req);
/* region: the check region registered again with chosen access flags
 * (agent_region.c). */
json_object *agent_op_region(struct agent *a, json_object *id, json_object *req);
/* verify: the responder's own byte-for-byte check of what a peer's
 * datapath verb "write" left in its check region (agent_region.c). */
json_object *agent_op_verify(struct agent *a, json_object *id, json_object *req);
/* rdma_max: into a cgroup of the agent's own whose rdma.max limits its
 * device, before the device is opened; 0, or QPHS_ERR_CONTEXT with the
 * reason in err.  _leave moves back and removes it (agent_cgroup.c). */
int agent_cgroup_enter(struct agent *a, char *err, size_t errlen);
void agent_cgroup_leave(struct agent *a);
/* Sleeps until the CLOCK_REALTIME barrier at_ns; returns how late we
 * were (ns). */
int64_t agent_barrier(int64_t at_ns);
/* fan_in: count servers of this host connect to one peer at once, then
 * check their data paths (agent_fanin.c). */
json_object *agent_op_fan_in(struct agent *a, json_object *id, json_object *req);
json_object *agent_op_fan_in_check(struct agent *a, json_object *id, json_object *req);
void agent_fanin_free(struct agent *a);
/* Notes each connected endpoint's QP numbers (current and previous set);
 * agent_track_endpoint does it for one endpoint already read. */
void agent_track_qpsets(struct agent *a);
void agent_track_endpoint(struct agent *a, const struct qphs_endpoint_info *in);

/* on_posted of a datapath with "notify_posted": writes the `posted`
 * line for the request id (a json_object *) at once (agent_posted.c). */
void agent_posted_notice(void *id);

/* The `report` reply (agent_report.c). */
json_object *agent_report(struct agent *a, json_object *id);

/* Reply skeleton: {"v":3,"type":"reply","id":ID,"op":OP,"ok","code","error"}. */
json_object *agent_reply(json_object *id, const char *op, int ok, int code, const char *error);

/* The TIMINGS of the last connect as {"tcp_connect": ms|null, ...}. */
json_object *agent_times(const struct agent *a);

/* Milliseconds as a JSON int, or null for < 0. */
json_object *agent_ms(double ms);

#endif
