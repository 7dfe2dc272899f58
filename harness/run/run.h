/*
 * run.h — `qplab run`'s moving parts: agents as child processes speaking
 * JSON lines (run_agent.c), the topology through netns/topo (run_topo.c),
 * one scenario from `topo up` to teardown (run_scenario.c, run_steps.c).
 *
 * Every wait is bounded by a deadline; an interrupt (SIGINT/SIGTERM to the
 * runner) makes every wait return early, and the scenario tears down.
 */
#ifndef QPLAB_RUN_H
#define QPLAB_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "agent_msg.h"
#include "cli/hwc.h"
#include "run_capture.h"
#include "scenario/expect.h"
#include "scenario/inventory.h"
#include "scenario/scenario.h"

#define RUN_AGENT_PORT 12001
#define RUN_AGENT_PORT_STR "12001" /* the same, as topo's word */
/* connect to_address "unresolvable": a name no resolver knows (.invalid,
 * RFC 6761), looked up in the connecting host's namespace. */
#define RUN_UNRESOLVABLE_NAME "qplab-peer.invalid"

/* Set by the runner's signal handler: every wait gives up. */
extern volatile sig_atomic_t qplab_run_interrupted;

struct run_agent {
	char name[QPLAB_NAME_MAX];
	pid_t pid;                 /* 0 = not running */
	int to_fd, from_fd;        /* its stdin, its stdout */
	char *buf;                 /* unread bytes from its stdout */
	size_t len;
	char nic_path[320];
	char listen[300];
	int next_id;
	/* The runner's monotonic clock minus the agent's, taken when its
	 * ready line arrived (the line's mono_ms); clock_known false: the
	 * agent sent none, its events cannot be placed. */
	double clock_offset_ms;
	bool clock_known;
	/* From its ready line: what runs there, and for a Mooncake host the
	 * build the adapter was made from ("" when not said). */
	char impl[20];
	char mc_commit[48];
	char mc_build[256];
	/* Its `fatal` line, when it did not start ("" otherwise). */
	char fatal_code[48];
	char fatal_text[400];
	long remote_pid;           /* the agent's own pid (its ready line): on a
				      remote host, pid is the local ssh's */
	int proto;                 /* the protocol version of its ready line (0
				      before it): requests go in that version */
	int qp_per_ep;             /* QPs per endpoint, from its ready line (0:
				      not said) */
};

/* One host of the topology, as `topo up` printed it. */
struct run_host {
	char name[QPLAB_NAME_MAX];
	char *exec[8];             /* command prefix that runs inside it (owned), NULL-ended */
	char addr4[64];            /* "" when the host has no IPv4 (addresses) */
	char addr6[64];            /* "" when it has no global IPv6 */
	char rxe[64];
	char rxe2[64];             /* its second device (topo up --second), else "" */
	char addr4_2[64];          /* that device's netdev's IPv4 address, else "" */
	char ifname[64];
	char unowned4[64];         /* the lab's unowned address (advertise gid "unowned") */
	char netns[64];            /* "" = the runner's own namespace (shared mode) */
	int mtu;                   /* its link's MTU now (topo up's, then as set in place) */
	unsigned topo_seq;         /* which topology of this run it belongs to (0, 1, ...):
				      picks a shared-mode Mooncake host's port (impl.h) */
	/* The hosts backend: the machine that plays this host (NULL: a lab
	 * topology's), its netdev's MTU before the run, and the faults in
	 * force there (enum qplab_inv_fault bits) that a reset must undo. */
	const struct qplab_inv_host *inv;
	int orig_mtu;
	unsigned touched;
	char kernel[128], driver[64];
	pid_t master;              /* its ssh ControlMaster (0: none: every
				      command is an ssh of its own) */
	char ctl[108];             /* the master's socket */
};

struct run_topo {
	char id[16];
	char mode[16];
	char kernel[128];
	char unowned4[64], unroutable4[64];
	struct run_host hosts[QPLAB_MAX_HOSTS];
	size_t nhosts;
	char bridge[64];           /* the bridge of 3+ hosts, "" = a veth pair */
	bool up;
	const struct qplab_inventory *inv; /* the hosts backend: mode "hosts" */
};

/* Monotonic milliseconds. */
double run_now_ms(void);
/* QPLAB_TIME_MULTIPLIER, 1..100 (cmd_run refuses any other value). */
double run_mult(void);

/* Runs argv (NULL-ended) and captures stdout into *out (malloc'd, caller
 * frees; may be NULL); stderr goes to the runner's.  Returns exit status,
 * or -1 when it could not run. */
int run_capture(char *const argv[], char **out);
/* The same with the child's stderr appended to err_path (NULL: the
 * runner's). */
int run_capture_err(char *const argv[], char **out, const char *err_path);

/* What a topology for p must be built with (the `topo up` words without
 * the name and the MTUs: those are set in place) into sig; two plans with
 * the same sig share a topology.  A host MTU below 1280 is part of it:
 * below IPv6's minimum the kernel drops the link's IPv6 addresses, and
 * with them GIDs, so such a link is built, not set. */
void run_topo_sig(const struct qplab_plan *p, const char *mode, char *sig, size_t len);
/* Sets each host's MTU to p's where it differs (topo fault mtu); returns
 * 0 or -1 (err). */
int run_topo_mtus(struct run_topo *t, const struct qplab_plan *p, char *err, size_t errlen);
/* Orders plans so that the ones sharing a topology (run_topo_sig) run one
 * after another: groups in the order of their first plan, catalogue order
 * within a group, except that a plan whose topology cannot be reset
 * (delete_device) goes last in its group, where the topology is rebuilt
 * anyway.  Stable; only the order of plans[] changes. */
void run_order_plans(struct qplab_plan **plans, size_t n);
/* topo up --name id for plan (mode NULL = auto); fills t, t->id the name
 * topo gave it (id plus a unique suffix).  err: message; a failed up has
 * unwound itself and t is not up. */
int run_topo_up(const struct qplab_plan *p, const char *id, const char *mode, struct run_topo *t,
		char *err, size_t errlen);
int run_topo_fault(const struct run_topo *t, const struct qplab_plan *p, const struct qplab_step *st,
		   char *err, size_t errlen);
/* delete_device, bounded: when `rdma link del` has not returned after
 * deadline_ms (the kernel waits for the device's users), holder (the
 * host's agent) is killed and *blocked_ms says how long it blocked. */
struct run_agent;
int run_topo_del_device(const struct run_topo *t, const struct qplab_plan *p, const struct qplab_step *st,
			int deadline_ms, struct run_agent *holder, double *blocked_ms, char *err, size_t errlen);
/* The links' netem (in force from the start), on both ends. */
int run_topo_links(const struct run_topo *t, const struct qplab_plan *p, char *err, size_t errlen);
/* Undoes what p's links and steps changed (link up, qdisc cleared, MTU
 * back, blackholes gone) so the next scenario can reuse the topology.
 * Returns 0, or -1 when p did something that cannot be undone
 * (delete_device) or an undo failed: the topology must go. */
int run_topo_reset(const struct run_topo *t, const struct qplab_plan *p);
/* topo down --name ID, then counts what is left of what its undo registry
 * named (namespaces, links, rxe devices; rules of its addresses and
 * tables), read before the down; a down that failed (an undo failed)
 * counts at least 1.  Returns that count. */
int run_topo_down(struct run_topo *t);
void run_topo_free(struct run_topo *t);
/* QPs on each of n rxe devices (one `rdma resource show qp`) into
 * counts; -1 each when it could not be run. */
void run_count_qps(const char *const rxe[], size_t n, int counts[]);

/* Spawns the agent of host h (plan host index hi) without waiting;
 * run_agent_ready then reads its `ready` line. */
int run_agent_spawn(struct run_agent *ag, const struct qplab_plan *p, int hi,
		    const struct run_host *h, char *err, size_t errlen);
int run_agent_ready(struct run_agent *ag, double deadline, char *err, size_t errlen);
/* Asks an agent to exit without waiting (run_agent_stop reaps it). */
void run_agent_ask_exit(struct run_agent *ag);
/* Starts the agent of host h (plan host index hi) inside its topology
 * host and waits for `ready` until the deadline.  Returns 0 or -1 (err). */
int run_agent_start(struct run_agent *ag, const struct qplab_plan *p, int hi,
		    const struct run_host *h, int deadline_ms, char *err, size_t errlen);
/* Sends line (owned: freed here; built with id) and waits for the reply to id.
 * Returns 0 with *m filled (free it), or -1 (err: timeout, EOF, bad line). */
int run_agent_call(struct run_agent *ag, int id, char *line, int deadline_ms,
		   struct qplab_agent_msg *m, char *err, size_t errlen);
/* Sends line without waiting; run_agent_wait reads the reply to id. */
int run_agent_send(struct run_agent *ag, char *line);
int run_agent_wait(struct run_agent *ag, int id, int deadline_ms, struct qplab_agent_msg *m,
		   char *err, size_t errlen);
/* The next line the agent writes, whatever it is (a posted line
 * included): 0 with *m filled, or -1 (err). */
int run_agent_wait_any(struct run_agent *ag, int deadline_ms, struct qplab_agent_msg *m, char *err,
		       size_t errlen);
/* exit, then SIGTERM, then SIGKILL: each bounded.  Safe on a stopped agent. */
void run_agent_stop(struct run_agent *ag, int deadline_ms);
void run_agent_kill(struct run_agent *ag);
bool run_agent_alive(const struct run_agent *ag);

/* One scenario from topo up to teardown. */
struct run_ctx {
	const char *mode;          /* topo --mode, NULL = auto */
	const char *log_dir;       /* agents' stderr */
	const char *const *caps;
	const struct qplab_inventory *inv; /* the hosts backend (NULL: topologies) */
	int seq;                   /* topology ID counter */
	int job, jobs;             /* --jobs: this worker (0-based) of how many (0/1: serial) */
	int built;                 /* topologies built by this run */
	bool keep;                 /* --keep */
	bool last;                 /* the run's last scenario: nothing reuses its topology */
	bool ablate;               /* --ablate: a passing scenario's twin runs after it */
	/* The topology is kept for the next scenario when that one can be
	 * made from it (run_topo_sig: same hosts and addresses; MTUs are set
	 * in place) and this one left it resettable (no delete_device, no
	 * error): topo up/down cost seconds under TCG. */
	struct run_topo topo;
	char sig[1024];
	/* Captures (run_capture.h): --capture, or a scenario's wire
	 * expectations; one tcpdump per topology build. */
	bool capture;              /* --capture: every scenario */
	const char *pcap_dir;      /* where each scenario's pcap goes */
	const char *pcap_rel;      /* pcap_dir as results.json names it */
	struct run_cap cap;
	struct run_tshark tshark;  /* one for the run (run_tshark.c) */
};

/* The vm backend (run_vm.c): the same run inside `netns/vm`, once per
 * kernel; TAP relayed under one plan, results merged into o->out. */
struct qplab_run_opts;
int run_in_vm(int argc, char **argv, const struct qplab_run_opts *o, size_t nscenarios);
/* The hosts-vm backend (run_hosts_vm.c): netns/vm-hosts boots two guests
 * (o->kernels: NAME=K each) and runs this command line against their
 * inventory with --backend hosts; its output relayed, its status mapped. */
int run_hosts_vm(int argc, char **argv, const struct qplab_run_opts *o);

/* The ID for c's seq-th topology (run_jobs_msg.c), distinct per worker;
 * topo adds a suffix unique on the machine, so neither parallel workers
 * nor two runs at once share a namespace, veth or rxe device. */
void run_topo_name(const struct run_ctx *c, int seq, char *id, size_t len);

/* The hosts backend (run_hosts.c).  run_hosts_topo fills t with the
 * inventory's machines (each asked over ssh for its kernel, driver and
 * MTU: one ssh each); err says which host could not be reached. */
int run_hosts_topo(const struct qplab_inventory *inv, struct run_topo *t, char *err, size_t errlen);
/* The ssh words that run remote on h: the inventory's (inventory.h),
 * through h's ControlMaster when it has one.  Free with
 * qplab_inv_argv_free; NULL when out of memory. */
char **run_hosts_argv(const struct run_host *h, const char *const *remote);
/* Ends every host's ControlMaster (and with it whatever still runs
 * through it). */
void run_hosts_stop(struct run_topo *t);
/* Runs remote (NULL-ended words) on h over ssh; stdout into *out when out
 * is not NULL (malloc'd); stderr dropped when quiet.  Returns the exit
 * status (255: ssh itself failed), or -1. */
int run_hosts_exec(const struct run_host *h, const char *const *remote, char **out, bool quiet);
/* A `topo fault` word list (run_topo.c's) carried out on the host it
 * names, as the one command it is there (docs/inventory.md); the fault is
 * recorded in the host's touched bits for run_hosts_reset. */
int run_hosts_fault(struct run_topo *t, const char *const *words, int n, bool quiet);
/* The remote words of a topo fault word list on host h (pure; words
 * point into h, the fault words, or bufs).  Returns how many, -1 when
 * the hosts backend has no such fault. */
int run_hosts_fault_words(const struct run_host *h, const struct run_topo *t,
			  const char *const *words, int n, const char *out[16], char bufs[2][64]);
/* Undoes every fault in force on t's hosts (link up, qdisc removed, MTU
 * back, an rxe device deleted re-added).  Returns how many undos failed. */
int run_hosts_reset(struct run_topo *t);
/* QPs on each host's device that belong to its agent (pids[i], its own
 * pid; other users' QPs are not counted): -1 when it could not be told. */
void run_hosts_count_qps(const struct run_topo *t, const int hostmap[], const long pids[],
			 size_t n, int counts[]);

/* Tears the kept topology down; returns what is left of it (objects). */
int run_ctx_finish(struct run_ctx *c);

/* Where a scenario's time goes besides its steps (results.json
 * "overhead"). */
enum run_phase {
	RUN_PHASE_TOPO,            /* topo up (when not reused) and the links' netem */
	RUN_PHASE_AGENTS,          /* agents started until every one is ready */
	RUN_PHASE_FACTS,           /* final report and probe */
	RUN_PHASE_TEARDOWN,        /* agents stopped, QPs counted, topology reset */
	RUN_PHASE_TOPO_DOWN,       /* topo down and the leftover count (when not reused) */
	RUN_PHASE_COUNT
};

struct run_outcome {
	int status;                /* enum qplab_status */
	/* Each host's implementation as its agent's ready line said it. */
	struct {
		char impl[20], commit[48], build[256];
	} impl[QPLAB_MAX_HOSTS];
	char reason[512];
	double elapsed_s;
	double steps_ms;           /* the steps' own wall time */
	double phase_ms[RUN_PHASE_COUNT];
	char kept[16];             /* --keep: the topology left up, "" = none */
	char backend[16], kernel[128];
	/* The hosts backend: each plan host's machine's kernel ("" = kernel). */
	char host_kernel[QPLAB_MAX_HOSTS][128];
	struct qplab_scenario_facts facts;
	bool have_facts;
	struct run_cap_result cap; /* its capture, when it was captured */
};

void run_scenario(struct run_ctx *c, const struct qplab_plan *p, struct run_outcome *out);

/* --ablate (run_ablate.c).  run_ablate_wants_twin: p's twin may follow it
 * (so p's run is not the last to use its topology).  run_ablate, after
 * p's result entry j: runs the twin when p passed (c->last = last for it)
 * and adds j's "ablation" object; nothing without c->ablate. */
struct qplab_runinfo;
bool run_ablate_wants_twin(const struct run_ctx *c, const struct qplab_plan *p);
void run_ablate(struct run_ctx *c, const struct qplab_plan *p, bool last, json_object *j,
		const struct qplab_runinfo *ri);

/* The steps (run_steps.c): executes step si.  Returns 0, or -1 with the
 * reason in err (the scenario errors out). */
struct run_state {
	const struct qplab_plan *p;
	struct run_topo *t;
	struct run_agent *ag;      /* plan->nhosts of them, host order */
	struct qplab_scenario_facts *facts;
	int hostmap[QPLAB_MAX_HOSTS]; /* plan host -> topo host */
	const char *log_dir;
	uint64_t seed;             /* this run's: datapath "write" patterns */
	/* Set by a step whose host answered "unsupported" (a Mooncake host
	 * asked for what its C API cannot do): the scenario is a SKIP for
	 * this placement, with this reason. */
	char skip[400];
};

/* A datapath step with on_posted (run_posted.c): sends line (owned) with
 * notify_posted, runs the step's on_posted actions when the agent has
 * posted, and waits up to wait_ms for the reply to id into *m.  0, or -1 (err). */
int run_datapath_posted(struct run_state *s, const struct qplab_step *st, int id, char *line,
			int wait_ms, struct qplab_agent_msg *m, char *err, size_t errlen);
/* The adapter that runs a Mooncake host (QPLAB_MOONCAKE_AGENT, which
 * cmd_run sets from --mooncake-agent or its default). */
const char *run_mooncake_agent(void);
int run_step(struct run_state *s, int si, char *err, size_t errlen);
/* The hardware counters of every live agent's device port (run_hwc.c):
 * one reading before a step, then the change over it into the step's
 * facts (hw_counters).  A host whose agent cannot say (not running, a
 * Mooncake adapter without the request, no netlink) gets "not collected"
 * and the reason; the step goes on. */
struct run_hwc_reading {
	int ok[QPLAB_MAX_HOSTS];
	struct qplab_hwc c[QPLAB_MAX_HOSTS];
	char error[QPLAB_MAX_HOSTS][160];
};
void run_hwc_read(struct run_state *s, struct run_hwc_reading *r);
void run_hwc_delta(struct run_state *s, int si, const struct run_hwc_reading *before);
/* connect_both (run_both.c): the rounds, then every live agent's report
 * into the step's facts. */
int run_connect_both(struct run_state *s, int si, const struct qplab_step *st, char *err, size_t errlen);
/* Its schedule: slots per round for n listed hosts, and host i's partner
 * in a slot (an index into the list, or -1: no connect in that slot). */
int run_both_slots(int n);
int run_both_partner(int i, int slot, int n);
/* The longest the runner waits for the reply to a datapath request whose
 * deadline_ms (already scaled by QPLAB_TIME_MULTIPLIER) holds for each
 * completion, on an endpoint of nqp QPs (its agent's ready line; 0 =
 * not said: RUN_DEFAULT_QP_PER_EP): the check's worst case
 * (qphs_data_check_max_wait_ms) plus RUN_REPLY_SLACK_MS for the round
 * trip, at most QPLAB_MAX_DEADLINE_MS (run_dpwait.c). */
#define RUN_REPLY_SLACK_MS 2000
#define RUN_DEFAULT_QP_PER_EP 2
long run_datapath_wait_ms(int deadline_ms, int nqp, int verb, bool read_only);
/* Reports of every live agent into facts of step (-1 = final). */
int run_collect(struct run_state *s, int step, int peer_of[QPLAB_MAX_HOSTS], char *err, size_t errlen);

#endif
