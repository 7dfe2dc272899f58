/*
 * expect.h — expectations over collected facts.
 *
 * The runner collects facts (what the agents reported, what the runner
 * measured) per host: once at the end of the steps ("final"), and per step
 * for the steps that produce a result (connect, connect_both, disconnect,
 * datapath, raw_frame, wait, snapshot).  qplab_expect_eval() checks every
 * expectation of a plan against them, choosing for keyed expectations the
 * row that applies to this run (capabilities, kernel version range, driver,
 * the host's quirk profile), and returns, per expectation and host, every
 * check with its expected and observed value in words, for the diagnostic.
 *
 * Nothing here does I/O; facts come in as plain structs.
 */
#ifndef QPLAB_EXPECT_H
#define QPLAB_EXPECT_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario.h"

#define QPLAB_FACT_MAX_QPS 256
#define QPLAB_FACT_MAX_EVENTS 8
#define QPLAB_FACT_MAX_HWC 48

/* What one QP of a datapath step did (protocol 3's "qps").  result: ok,
 * failed, not_run; write_wc, read_wc: IBV_WC_... or "none". */
struct qplab_dp_qp {
	char result[16];
	long qpn, peer_qpn;
	char write_wc[QPLAB_WC_NAME_LEN], read_wc[QPLAB_WC_NAME_LEN];
	long ms;                    /* -1: the QP was not posted to */
};
/* One phase of a host's last setup at its times (what: qphs_phase_name). */
struct qplab_event {
	char what[16];
	double start_ms, end_ms;
};

/* One host's facts.  "Not collected" is NULL for strings held by pointer,
 * "" for fixed strings and -1 for numbers; a check against a fact that was
 * not collected fails and says so. */
struct qplab_facts {
	char endpoint[32];          /* qphs_ep_status_name() ("CONNECTED", ...) or "NONE" */
	int endpoints;              /* endpoints the host holds */
	int nqp;                    /* QPs the host holds; -1 = not collected */
	char qp_states[QPLAB_FACT_MAX_QPS][QPLAB_QP_STATE_LEN]; /* ibv_query_qp, in QP order */
	char code[48];              /* error table NAME of the last call ("OK", ...) */
	char *reply_sent;           /* reply_msg this host sent (owned) */
	char *reply_received;       /* reply_msg this host received (owned) */
	char *error_text;           /* the library's error text / log line (owned) */
	char datapath[16];          /* ok, failed, not_run */
	char wc_status[QPLAB_WC_NAME_LEN]; /* IBV_WC_..., or "none": no completion */
	long wc_waited_ms;          /* how long it waited for one */
	long time_ms[QPLAB_TIME_COUNT];
	int gid_index;
	char *gid_reason;           /* why that GID (owned), report only */
	int path_mtu;
	int peer_path_mtu;          /* qphs_path_mtu the peer sent, 0 = none */
	int peer_ready_ack;         /* tri-state: the peer's last handshake message
				     * had the ready_ack key (report only) */
	char *warning;              /* the endpoint's last warning (owned) */
	char *log;                  /* the host's log lines since its previous
				     * report, one per line (owned; a Mooncake
				     * host's glog lines) */
	int datapath_restored;      /* tri-state: the peer's bytes written back */
	int datapath_peer_checksum; /* tri-state: the peer checksummed its copy */
	/* The datapath's per-QP results, in the endpoint's order: dp_nqp of
	 * them (-1 = not collected: a protocol 2 agent, or no datapath), and
	 * the index of the first that failed (-1 = not collected,
	 * QPLAB_NO_FAILED_QP = none). */
	int dp_nqp;
	struct qplab_dp_qp dp_qps[QPLAB_FACT_MAX_QPS];
	int dp_failed_qp;
	int daemon_alive;           /* tri-state */
	int leftover_qps;           /* after teardown */
	int leftover_objects;       /* namespaces, veths, rxe devices, rules, agents */
	char frame_outcome[16];     /* closed, replied, silent */
	/* The device port's hardware counters: by how much each changed over
	 * the step (a reading before it, one after its reports); collected
	 * only for a plan that asserts hw_counters.  nhwc -1 = not collected,
	 * hwc_error then says why when the agent could not read them. */
	int nhwc;
	struct {
		char name[QPLAB_HWC_NAME_MAX];
		long delta;
	} hwc[QPLAB_FACT_MAX_HWC];
	char hwc_error[160];
	/* The phases of the endpoint's last setup (report only): on the
	 * agent's monotonic clock as decoded, in the steps' time base once the
	 * runner has rebased them; -1 = not collected.  events_peer: the host
	 * at the other end ("" = not known). */
	int nevents;
	struct qplab_event events[QPLAB_FACT_MAX_EVENTS];
	char events_peer[QPLAB_NAME_MAX];
};

/* Every fact "not collected".  f: caller's. */
void qplab_facts_init(struct qplab_facts *f);
/* Frees the owned strings and re-initialises f. */
void qplab_facts_free(struct qplab_facts *f);
/* Replaces *dst with a copy of s (NULL clears it).  Returns 0 or
 * QPHS_ERR_MEMORY. */
int qplab_facts_set(char **dst, const char *s);
/* The change of counter name over the step (negative when the device was
 * created anew), or LONG_MIN when not collected. */
long qplab_facts_hwc(const struct qplab_facts *f, const char *name);
/* Whether any expectation (or keyed row) of plan asserts hw_counters: the
 * runner reads the counters around each step only then. */
bool qplab_plan_uses_hwc(const struct qplab_plan *plan);

/* The facts of one scenario: final[h], and step[s * nhosts + h].  Per
 * step s, when it began and ended (step_started_ms[s], step_ended_ms[s]:
 * ms since the scenario's first step began; -1 = it did not run);
 * steps_t0_ms is that first step's start on the runner's monotonic clock
 * (-1 until it began). */
struct qplab_scenario_facts {
	size_t nhosts, nsteps;
	struct qplab_facts *final;
	struct qplab_facts *steps;
	long *step_started_ms, *step_ended_ms;
	double steps_t0_ms;
};
int qplab_scenario_facts_init(struct qplab_scenario_facts *sf, size_t nhosts, size_t nsteps);
void qplab_scenario_facts_free(struct qplab_scenario_facts *sf);
/* step -1 is the final report.  NULL when out of range. */
struct qplab_facts *qplab_facts_at(const struct qplab_scenario_facts *sf, int step, int host);

/* What the run is: chooses keyed rows.  All pointers borrowed. */
struct qplab_runinfo {
	const char *backend;        /* "netns", "shared", ... */
	const char *kernel;         /* uname -r inside the lab ("6.12.48+deb13-amd64") */
	/* Per plan host: the kernel of the machine that plays it (the hosts
	 * backend: machines differ); NULL = kernel.  "kernel OP X.Y" rows are
	 * evaluated for each host with its own. */
	const char *host_kernel[QPLAB_MAX_HOSTS];
	const char *driver;         /* "rxe" */
	const char *const *caps;    /* capabilities present, NULL-ended (NULL = none) */
	const char *quirk;          /* run-wide quirk profile, NULL or "" = the hosts' own */
	double time_multiplier;     /* scales `max` time bounds (TCG, sanitizers); <= 0 = 1 */
};

struct qplab_check {
	char what[32];              /* "qp_states", "time_ms.rtr", ... */
	char expected[256];
	char observed[256];
	bool ok;
};

struct qplab_host_verdict {
	int host;
	const struct qplab_case *row; /* the keyed row that applied (borrowed), or NULL */
	bool keyed;                 /* the expectation has rows */
	bool ok;
	struct qplab_check *checks; /* owned by the verdict */
	size_t nchecks;
};

struct qplab_verdict {
	const struct qplab_expectation *exp; /* borrowed from the plan */
	bool ok;
	struct qplab_host_verdict hosts[QPLAB_MAX_HOSTS];
	size_t nhosts;
};

/* Evaluates every expectation of plan.  Stores a new array of
 * plan->nexpect verdicts in *out (free with qplab_verdicts_free) and
 * returns how many failed, or QPHS_ERR_MEMORY.  A keyed expectation with no
 * applicable row fails with the check "row" (expected: a row for this run). */
int qplab_expect_eval(const struct qplab_plan *plan, const struct qplab_runinfo *run,
		      const struct qplab_scenario_facts *facts, struct qplab_verdict **out);
void qplab_verdicts_free(struct qplab_verdict *v, size_t n);

/* Checks one assertion block against facts.  With checks non-NULL, stores
 * a new array of every check (caller frees) and its length in *n.  Returns
 * true when every check holds.  The runner's `wait` step polls this. */
bool qplab_assert_eval(const struct qplab_assert *a, const struct qplab_facts *f,
		       double time_multiplier, struct qplab_check **checks, size_t *n);

/* The row of e that applies to host (an index of plan's hosts) on this
 * run, or NULL. */
const struct qplab_case *qplab_expect_row(const struct qplab_expectation *e,
					  const struct qplab_runinfo *run,
					  const struct qplab_plan *plan, int host);

/* Compares the leading X.Y.Z of a kernel release with v: <0, 0, >0; or
 * -2 when release has no version (never matches a range). */
int qplab_kernel_cmp(const char *release, const int v[3]);

#endif
