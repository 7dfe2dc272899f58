/*
 * impl.h — what runs on a host (its `impl`), as the runner sees it: which
 * program to start, on which port, and what a real Mooncake host (the
 * adapter qplab-mooncake-agent, docs/agent-protocol.md "A Mooncake host")
 * cannot be asked to do, as the SKIP reason of a scenario placed so.
 *
 * Pure: nothing here starts a process.
 */
#ifndef QPLAB_RUN_IMPL_H
#define QPLAB_RUN_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario/scenario.h"

/* True when host h of p runs a real Mooncake. */
bool qplab_host_is_mooncake(const struct qplab_plan *p, int h);

/* Why p cannot run with its Mooncake hosts, known before anything starts:
 * an agent option or daemon fault on a Mooncake host (it takes MC_*
 * variables only), IPv6 on one (not supported by the adapter), or a step
 * that asks a Mooncake host for what its C API has no call for
 * (disconnect, connect with to_device, a stale ready-ACK, a wait for its
 * endpoint status or reply_msg).  NULL when it can run, else the reason
 * (in buf). */
const char *qplab_impl_skip_reason(const struct qplab_plan *p, char *buf, size_t len);

/* The port of host h's daemon.  RUN_AGENT_PORT (12001); but a Mooncake
 * daemon binds the wildcard address (SocketHandShakePlugin::startDaemon's
 * socket comes from findAvailableTcpPort, bound to INADDR_ANY), so where
 * hosts share one namespace (shared mode: own_netns false) each Mooncake
 * host gets a port of its own.  And Mooncake binds it without
 * SO_REUSEADDR: the TIME_WAIT connections of the scenario before would
 * keep the same port from it ("P2P: No valid port found", seen on 6.12),
 * so the port moves on with each topology of the run (topo_seq):
 * 12101 + (topo_seq * QPLAB_MAX_HOSTS + h) mod QPLAB_MC_PORTS, the same for
 * every start of the host within one scenario. */
#define QPLAB_MC_PORT_BASE 12101
#define QPLAB_MC_PORTS 800
int qplab_host_port(const struct qplab_plan *p, int h, bool own_netns, unsigned topo_seq);

#endif
