/*
 * realise.h — a plan in `netns/topo`'s terms: the `topo up` words, the
 * `topo fault` words of each topology step, and why a scenario cannot be
 * realised here (the SKIP reason), from topo's fault table
 * (docs/lab-backends.md in the lab's branch): link down/up, netem loss and
 * delay, drop-roce, clear, mtu, del-rxe, blackhole/unblackhole.
 *
 * Pure: it builds argument vectors, it runs nothing.  Words point into the
 * plan, into static strings, or into the caller's buffer.
 */
#ifndef QPLAB_REALISE_H
#define QPLAB_REALISE_H

#include <stddef.h>

#include "scenario/scenario.h"

#define QPLAB_TOPO_ARGV_MAX 64

/* The netdev MTU a host starts with: its own, else its link's, else 1500. */
int qplab_host_mtu(const struct qplab_plan *p, int host);

/* Why the plan cannot run with these capabilities (NULL-ended, may be
 * NULL): a missing `requires` capability, IPv6, netem, or a netem the
 * topology has no knob for.  Returns NULL when it can run, else the reason
 * (in buf). */
const char *qplab_plan_skip_reason(const struct qplab_plan *p, const char *const *caps,
				   char *buf, size_t len);

/* "up --name ID --hosts a,b --mtu a=1500 ... [--ipv6] [--mode MODE]"
 * (without the program name).  Returns the word count, or -1 when buf
 * (len bytes) is too small.  mode NULL: topo's own choice (auto). */
int qplab_topo_up_args(const struct qplab_plan *p, const char *id, const char *mode,
		       const char *argv[QPLAB_TOPO_ARGV_MAX], char *buf, size_t len);

/* The `fault` words after "fault --name ID" for a topology step
 * ("link a down", "netem a loss 100 delay 5", "drop-roce a", "clear a",
 * "mtu a 1500", "del-rxe a", "blackhole a b"), or 0 for a step the agents
 * carry out.  Returns the word count or -1 (buf too small, or a netem the
 * topology cannot do: check qplab_plan_skip_reason first). */
int qplab_topo_step_args(const struct qplab_plan *p, const struct qplab_step *st,
			 const char *argv[QPLAB_TOPO_ARGV_MAX], char *buf, size_t len);

/* The same for a netem in force from the start on one end of a link. */
int qplab_topo_netem_args(const char *host, const struct qplab_netem *n,
			  const char *argv[QPLAB_TOPO_ARGV_MAX], char *buf, size_t len);

#endif
