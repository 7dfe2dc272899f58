/*
 * scenario.h — scenario files -> an in-memory plan, with line-precise errors.
 *
 * A scenario file is JSON with comments (json-c accepts / * * / and //
 * comments).  docs/scenarios.md is the schema; this header is its C form.
 * The parser is strict: unknown keys, duplicate keys, wrong types, unknown
 * host names, error names that are not in the error table, fault names that
 * are not FAULT names of the table, regexes regcomp() refuses and keyed
 * expectations without a `why` are all errors.  It reports every error it
 * finds (not only the first) as "FILE:LINE: message".
 *
 * Ownership: a plan is one allocation tree owned by the caller, freed with
 * qplab_plan_free().  Strings inside it are owned by the plan.  Nothing here
 * touches RDMA, the network or the file system beyond reading the file.
 */
#ifndef QPLAB_SCENARIO_H
#define QPLAB_SCENARIO_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lab_conf.h" /* generated from netns/lab.conf */

#define QPLAB_MAX_HOSTS QPLAB_LAB_MAX_HOSTS /* topo's limit too */
#define QPLAB_MAX_STEPS 256
#define QPLAB_MAX_EXPECT 256
#define QPLAB_NAME_MAX 32 /* host, step and tag names, including the NUL */
#define QPLAB_SCENARIO_MAX_BYTES (1 << 20) /* a scenario file, at most */
#define QPLAB_MAX_PLACEMENTS 16

/* Timings a report can carry and an expectation can bound, in ms.  "step"
 * is the wall time of the step itself as the runner measured it; the rest
 * come from the agent's report (docs/agent-protocol.md). */
#define QPLAB_TIMINGS(X)                                                       \
	X(STEP, "step")                                                        \
	X(TCP_CONNECT, "tcp_connect")                                          \
	X(HANDSHAKE, "handshake")                                              \
	X(RESET, "reset")                                                      \
	X(INIT, "init")                                                        \
	X(RTR, "rtr")                                                          \
	X(RTS, "rts")                                                          \
	X(READY_ACK, "ready_ack")                                              \
	X(TOTAL, "total")

enum qplab_timing {
#define QPLAB__T_ENUM(id, name) QPLAB_TIME_##id,
	QPLAB_TIMINGS(QPLAB__T_ENUM)
#undef QPLAB__T_ENUM
	QPLAB_TIME_COUNT
};

/* Returns "step", "rtr", ... for t; NULL when out of range. */
const char *qplab_timing_name(int t);

/* Every error of one parse, each "FILE:LINE: message".  Caller-owned;
 * free with qplab_errors_free() (the struct itself is the caller's). */
struct qplab_errors {
	char **msgs;
	size_t n;
};
void qplab_errors_free(struct qplab_errors *errs);
/* Appends one formatted message (for callers that find problems of their
 * own, such as a missing file).  errs may be NULL. */
void qplab_errors_add(struct qplab_errors *errs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* netem on a host's lab interface.  `traffic` restricts it: "all", "roce"
 * (UDP 4791 only, so the TCP handshake still works) or "handshake" (TCP). */
struct qplab_netem {
	bool set;
	int loss_pct;  /* 0..100 */
	int delay_ms;  /* 0..60000 */
	int jitter_ms; /* 0..60000 */
	char traffic[16];
};

/* A daemon fault (the faults of `qplab hs serve --fault`, qphs_fault_parse):
 * `name` is a FAULT of the error table (stall, close, truncate, garbage,
 * reject, ...) or "delay" (the right reply, `ms` late). */
struct qplab_fault {
	bool set;
	char name[24];
	int code;      /* the table row the fault provokes; 0 for "delay" */
	int ms;        /* "delay" only, else -1 */
	char text[256]; /* "reject" only: the reply_msg ("" = the daemon's default) */
	int64_t seed;  /* "garbage" only: seed of the random bytes; -1 = default */
	unsigned types; /* bit (1 << type) per request type it applies to (bit 4:
			 * old protocol), as struct qphs_fault; 0 = every request */
};

/* Agent options.  Integers are -1 and tri-state booleans are -1 when the
 * file does not set them (the library's default applies). */
struct qplab_agent_opts {
	char quirk[32];            /* "" = the real driver */
	int mtu_negotiation;       /* tri-state */
	int ready_ack;             /* tri-state */
	char reset_policy[16];     /* "", "reuse" or "reconstruct" */
	int strict_reset;          /* tri-state */
	int qp_timeout;            /* 0..31 */
	int qp_retry_cnt;          /* 0..7 */
	int qp_rnr_retry;          /* 0..7 */
	int reply_timeout_ms;      /* 1..600000 */
	int old_protocol;          /* tri-state: client sends untyped frames */
	int rd_atomic_clamp;       /* tri-state: clamp rd_atomic to the device caps */
	/* Lab hooks: what the host advertises instead of the truth. */
	char *advertise_gid;       /* NULL = the real one */
	int64_t advertise_qpn;     /* -1 = the real ones; else every QPN */
	int advertise_qp_count;    /* -1 = the real count */
	char *advertise_address;   /* NULL = the real host:port */
	int delay_passive_rtr_ms;  /* -1 = no delay */
	int delay_active_rtr_ms;   /* -1 = no delay */
	int sq_psn, rq_psn;        /* lab hooks, 0..0xffffff; -1 = Mooncake's 0 */
	int mtu_reread;            /* tri-state: re-read the active MTU at each connect */
	int no_rdma_transport;     /* tri-state: answer Connection and Metadata null */
	/* Lab hook rdma_max: the host's agent in an rdma cgroup (when set)
	 * with these limits of its device, -1 = max. */
	bool rdma_max;
	int rdma_max_handle, rdma_max_object;
};

/* What a host runs: qplab; a stand-in that behaves as Mooncake 3b5a594
 * where the two differ (harness/agent/agent_cfg.c); or a real Mooncake
 * Transfer Engine behind qplab-mooncake-agent (mooncake/).  The names, in
 * order; NULL-ended. */
extern const char *const qplab_impls[];
/* True when name is one of qplab_impls. */
bool qplab_impl_known(const char *name);

struct qplab_env {
	char *name;  /* MC_* or NCCL_IB_GID_INDEX */
	char *value;
};

struct qplab_host {
	char name[QPLAB_NAME_MAX];
	int line;
	int mtu;                   /* netdev MTU; -1 = the link's or 1500 */
	bool ipv6;                 /* handshake and GIDs over IPv6 */
	char addresses[12];        /* "" (= "default"), "ipv6_only" or "none" */
	bool second_device;        /* "device": "second": a second netdev on a
				    * subnet of its own, and the agent opens its rxe */
	char impl[20];             /* a qplab_impls name; "qplab" by default */
	char impl_from[8];         /* "" = the file's; "run" = set by qplab run
				    * (--placements, --impl) */
	struct qplab_env *env;
	size_t nenv;
	struct qplab_agent_opts agent;
	struct qplab_fault fault;
};

struct qplab_link {
	int line;
	int a, b;                  /* host indexes */
	int mtu;                   /* -1 = unset */
	struct qplab_netem netem;  /* in force from the start */
};

enum qplab_step_kind {
	QPLAB_STEP_CONNECT,        /* from -> to (or from -> to_address) */
	QPLAB_STEP_CONNECT_BOTH,   /* every pair of hosts[] at a barrier, rounds times */
	QPLAB_STEP_DISCONNECT,     /* from drops its endpoint to `to` */
	QPLAB_STEP_LINK_DOWN,      /* host's lab interface down */
	QPLAB_STEP_LINK_UP,
	QPLAB_STEP_NETEM_ON,       /* host, netem */
	QPLAB_STEP_NETEM_OFF,      /* host */
	QPLAB_STEP_SET_MTU,        /* host, mtu */
	QPLAB_STEP_BLACKHOLE,      /* host drops every packet to peer (route blackhole) */
	QPLAB_STEP_UNBLACKHOLE,    /* and stops */
	QPLAB_STEP_DELETE_DEVICE,  /* host's rxe device */
	QPLAB_STEP_KILL_AGENT,     /* SIGKILL */
	QPLAB_STEP_START_AGENT,    /* same address and port as before */
	QPLAB_STEP_RESTART_AGENT,  /* kill, wait down_ms, start */
	QPLAB_STEP_RAW_FRAME,      /* bytes (hex) or a named bad frame -> to's daemon */
	QPLAB_STEP_DATAPATH,       /* RDMA WRITE then READ from -> to, verified */
	QPLAB_STEP_WAIT,           /* poll host's report until `until` holds */
	QPLAB_STEP_SNAPSHOT,       /* record every host's report under this name */
	QPLAB_STEP_REGION,         /* host's check region registered again: access */
	QPLAB_STEP_VERIFY,         /* host checks what step `of` (a write) left in its region */
	QPLAB_STEP_ADD_ADDRESS,    /* a second IPv4 address on host's lab link */
	QPLAB_STEP_REMOVE_ADDRESS, /* host's own IPv4 address removed */
	QPLAB_STEP_RESTORE_ADDRESS,/* and put back */
	QPLAB_STEP_DISABLE_IPV6,   /* disable_ipv6=1 on host's lab link */
	QPLAB_STEP_FIREWALL_DROP,  /* host drops TCP to its handshake port */
	QPLAB_STEP_FIREWALL_REJECT,/* host answers it with a TCP reset */
	QPLAB_STEP_FIREWALL_OFF,   /* and stops */
	QPLAB_STEP_NOOP,           /* nothing (what --ablate puts in place of a step) */
	QPLAB_STEP_FAN_IN,         /* count servers of `from` connect to `to` at once */
	QPLAB_STEP_KIND_COUNT
};
enum {
	QPLAB_FAN_IN_MAX = 256 /* servers of one fan_in step (the agent's limit) */
};

/* Returns the `do` word of a step kind ("connect", ...). */
const char *qplab_step_kind_name(enum qplab_step_kind kind);

/* Text matchers: every member that is set must hold. */
struct qplab_text_match {
	bool set;
	char *exact, *prefix, *contains, *regex; /* NULL when absent */
	regex_t re;                              /* compiled `regex` */
};

struct qplab_range {
	long min, max; /* -1 = no bound */
};

#define QPLAB_QP_STATE_LEN 8
#define QPLAB_WC_NAME_LEN 32
/* A datapath's first failing QP (expectation and fact) when none failed. */
#define QPLAB_NO_FAILED_QP (-2)

/* One block of assertions over one host's facts.  A member left at its
 * "unset" value (-1, "", NULL, set=false) asserts nothing. */
struct qplab_assert {
	int nfields;                     /* how many assertions are set */
	char qp_all[QPLAB_QP_STATE_LEN]; /* every QP in this state */
	char (*qp_each)[QPLAB_QP_STATE_LEN]; /* or exactly these, in order */
	int nqp_each;                    /* -1 = qp_each unset */
	int qp_count;                    /* exactly, or -1 */
	int qp_count_min, qp_count_max; /* {"min", "max"}: -1 each when unset */
	char endpoint[32];               /* endpoint status (qphs_ep_status_name, or NONE) */
	int endpoints;                   /* how many endpoints the host has */
	char code[48];                   /* error table NAME ("OK", "ERR_...") */
	struct qplab_text_match reply_sent, reply_received, error_text;
	char datapath[16];               /* "ok", "failed", "not_run" */
	char (*wc_any)[QPLAB_WC_NAME_LEN]; /* completion status is one of these */
	int nwc;
	long wc_none_within_ms;          /* or no completion for at least this long */
	struct qplab_range time[QPLAB_TIME_COUNT];
	int gid_index;
	struct qplab_text_match gid_reason; /* why the context chose that GID */
	int path_mtu;
	int peer_path_mtu;               /* 0: the peer sent none */
	int peer_ready_ack;              /* tri-state: the peer's last message had ready_ack */
	struct qplab_text_match warning;
	struct qplab_text_match log;     /* the log lines since the previous report */
	int datapath_restored;           /* tri-state */
	int datapath_peer_checksum;      /* tri-state */
	/* Per QP of a datapath step: every one's result is dp_all, or the
	 * results are exactly dp_each (ndp_each of them; -1 = unset); how
	 * many (-1 = unset); the first that failed (-1 = unset,
	 * QPLAB_NO_FAILED_QP: "none"). */
	char dp_all[16];
	char (*dp_each)[16];
	int ndp_each;
	int dp_qp_count;
	int dp_failed_qp;
	int daemon_alive;                /* tri-state */
	int leftover_qps;
	int leftover_objects;
	char frame_outcome[16];          /* "closed", "replied", "silent" */
	/* hw_counters: by how much each named device counter changed over
	 * the step (min..max, -1 = no bound), in the order written. */
	struct qplab_hwc_bound *hwc;
	int nhwc;
};

#define QPLAB_HWC_NAME_MAX 32
struct qplab_hwc_bound {
	char name[QPLAB_HWC_NAME_MAX];
	long min, max;
};

/* One term of a `when` key. */
enum qplab_when_kind {
	QPLAB_WHEN_CAP,        /* capability present */
	QPLAB_WHEN_NOT_CAP,    /* !capability */
	QPLAB_WHEN_KERNEL,     /* kernel OP version */
	QPLAB_WHEN_QUIRK,      /* quirk=NAME (the host's profile) */
	QPLAB_WHEN_DRIVER,     /* driver=NAME */
	QPLAB_WHEN_IMPL,       /* impl=NAME (the row's host) or impl:HOST=NAME */
	QPLAB_WHEN_OTHERWISE,  /* matches when no earlier row did */
};

struct qplab_when {
	enum qplab_when_kind kind;
	char name[32];         /* capability, quirk, driver or impl */
	int host;              /* impl:HOST=NAME: the host's index; -1 = the row's own */
	char op[4];            /* ">=", ">", "<=", "<" */
	int version[3];        /* major, minor, patch */
};

/* One keyed row: applies when every term holds. */
struct qplab_case {
	int line;
	char *when_text;       /* the key as written, for the report */
	struct qplab_when *terms;
	size_t nterms;
	char *why;             /* required */
	struct qplab_assert a;
};

struct qplab_expectation {
	int line;
	char *label;           /* NULL = none */
	int hosts[QPLAB_MAX_HOSTS];
	size_t nhosts;
	int step;              /* step index, or -1: the final report */
	struct qplab_assert a; /* unkeyed assertions (ncases == 0) */
	struct qplab_case *cases;
	size_t ncases;
};

struct qplab_step {
	enum qplab_step_kind kind;
	int line;
	char name[QPLAB_NAME_MAX];   /* unique; "" = unnamed */
	int host;                    /* link/netem/mtu/device/agent/wait steps */
	int from, to;                /* connect, disconnect, datapath, raw_frame (to) */
	int peer;                    /* blackhole, unblackhole */
	char to_address[16];         /* connect: "unowned", "unroutable", "closed_port", "unresolvable" */
	char to_device[64];          /* connect: ask `to` for this device ("" = its own) */
	bool peer_posts;             /* connect: `to` checks towards `from` once CONNECTED */
	int hosts[QPLAB_MAX_HOSTS];  /* connect_both: 2..QPLAB_MAX_HOSTS distinct hosts */
	size_t nhosts;               /* connect_both */
	int rounds;                  /* connect_both, >= 1 */
	int barrier_ms;              /* connect_both: lead time of the barrier */
	int deadline_ms;             /* -1 = the runner's default for the kind */
	int mtu;                     /* set_mtu */
	int down_ms;                 /* restart_agent: pause between kill and start */
	struct qplab_netem netem;    /* netem_on */
	uint8_t *frame;              /* raw_frame: bytes, or NULL with frame_kind */
	size_t frame_len;
	char frame_kind[24];         /* raw_frame: a frame FAULT name */
	long bytes;                  /* datapath: buffer size, default 4096 */
	bool read_only;              /* datapath: READ only, never write the peer */
	int rkey_mode;               /* datapath: enum qphs_rkey_mode (labwords.h) */
	int verb;                    /* datapath: enum qphs_data_verb */
	bool on_posted;              /* datapath: "on_posted" given (the agent says when it posted) */
	int posted_kill;             /* datapath on_posted: kill this host's agent (-1: none) */
	int posted_netem_off;        /* datapath on_posted: remove this host's netem (-1: none) */
	int count;                   /* datapath verb burst: WRs posted, 0 = none;
				      * fan_in: servers, 1..QPLAB_FAN_IN_MAX */
	int access;                  /* region: QPHS_ACCESS_* bits */
	int of;                      /* verify: index of the datapath "write" step */
	struct qplab_assert until;   /* wait */
};

struct qplab_wire_expect; /* wire.h */
struct json_object;

/* The `ablate` key (scenario_ablate.c). */
enum qplab_ablate_mode {
	QPLAB_ABLATE_UNMARKED,       /* no key */
	QPLAB_ABLATE_NONE,           /* []: the file declares it has no fault */
	QPLAB_ABLATE_LIST,           /* pointers to what injects the fault */
};

/* One entry: a pointer removed (a step: made a noop), or set to `to`. */
struct qplab_ablate {
	char *pointer;               /* RFC 6901, resolved against the file */
	char *to;                    /* {"set", "to"}: the value as JSON text; NULL: removed */
	int line;
	int step;                    /* "/steps/N" removed: N (it becomes a noop); else -1 */
};

struct qplab_plan {
	char *file;                  /* as given to the parser */
	char id[2 * QPLAB_NAME_MAX + 64]; /* "topic/name" from the path */
	char *description;
	char *source;
	char (*tags)[QPLAB_NAME_MAX];
	size_t ntags;
	char (*requires)[QPLAB_NAME_MAX]; /* capabilities; missing -> SKIP */
	size_t nrequires;
	int timeout_ms;              /* whole scenario; default 60000 */
	struct qplab_host hosts[QPLAB_MAX_HOSTS];
	size_t nhosts;
	struct qplab_link *links;
	size_t nlinks;
	struct qplab_step *steps;
	size_t nsteps;
	struct qplab_expectation *expect;
	size_t nexpect;
	/* "placements": the hosts that run Mooncake, one set per placement
	 * that makes sense for the scenario (bit h = plan host h); qplab run
	 * --placements runs it once per set. */
	unsigned placements[QPLAB_MAX_PLACEMENTS];
	size_t nplacements;
	struct qplab_wire_expect *wire; /* the `wire` section (wire.h) */
	size_t nwire;
	enum qplab_ablate_mode ablate_mode;
	struct qplab_ablate *ablate;
	size_t nablate;
	struct json_object *doc;     /* the parsed file, kept for the twin when nablate > 0 */
	/* The ablated twin (qplab_plan_ablate): which steps are noops, and how
	 * many expectations naming them it dropped. */
	bool is_twin;
	bool step_ablated[QPLAB_MAX_STEPS];
	size_t nexpect_ablated;
	struct qplab_plan *twin;     /* owned: qplab run --ablate builds it (NULL: none) */
};

/* Parses `len` bytes of `text` (need not be NUL-terminated); `file` names
 * it in messages.  Returns 0 and stores a new plan in *out, or returns
 * QPHS_ERR_MALFORMED_JSON (syntax) or QPHS_ERR_INVALID_ARGUMENT (schema)
 * with *out NULL and every problem appended to errs (may be NULL). */
int qplab_scenario_parse(const char *file, const char *text, size_t len,
			 struct qplab_plan **out, struct qplab_errors *errs);

/* Reads and parses a file; a read failure is one error "FILE: strerror"
 * and returns QPHS_ERR_INVALID_ARGUMENT. */
int qplab_scenario_load(const char *path, struct qplab_plan **out,
			struct qplab_errors *errs);

/* The ablated twin of a plan whose `ablate` key lists pointers: the
 * file's document with every entry applied at once (a "/steps/N" becomes
 * {"do": "noop", "name": its name}; another pointer is deleted; a set
 * replaces or adds), parsed again; the expectations that name a noop step
 * are dropped (nexpect_ablated counts them); id and the hosts' run-time
 * implementations are p's.  Returns 0 with *twin (free it), or
 * QPHS_ERR_INVALID_ARGUMENT with one error "FILE:LINE: ablate \"PTR\": ..."
 * naming the first entry after which the document no longer parses (or
 * when p has no list). */
int qplab_plan_ablate(const struct qplab_plan *p, struct qplab_plan **twin, struct qplab_errors *errs);

/* Accepts NULL (and frees p->twin too). */
void qplab_plan_free(struct qplab_plan *plan);

/* Host index by name, or -1. */
int qplab_plan_host(const struct qplab_plan *plan, const char *name);

/* Step index by name, or -1. */
int qplab_plan_step(const struct qplab_plan *plan, const char *name);

/* True when the plan carries tag. */
bool qplab_plan_has_tag(const struct qplab_plan *plan, const char *tag);

/* The capability names a `when` key or `requires` may use (NULL-ended). */
extern const char *const qplab_capabilities[];

#endif
