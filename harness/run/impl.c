/* What a Mooncake host cannot be asked to do, and its port (impl.h). */
#include <stdio.h>
#include <string.h>

#include "agent_msg.h"
#include "cli/jread.h"
#include "impl.h"
#include "run.h"

bool qplab_host_is_mooncake(const struct qplab_plan *p, int h)
{
	return h >= 0 && (size_t)h < p->nhosts && !strcmp(p->hosts[h].impl, "mooncake");
}

/* The first agent option or fault the host's file sets, or NULL. */
static const char *option_of(const struct qplab_host *h, char *buf, size_t len)
{
	json_object *cfg = qplab_agent_config(h), *ag;
	struct jread jr = {0}; /* our own JSON */
	const char *r = NULL;

	if (jread_object(&jr, cfg, "agent", &ag) == JREAD_OK) {
		json_object_object_foreach(ag, k, v) {
			(void)v;
			snprintf(buf, len, "agent option %s", k);
			r = buf;
			break;
		}
	}
	if (!r && h->fault.set) {
		snprintf(buf, len, "daemon fault %s", h->fault.name);
		r = buf;
	}
	json_object_put(cfg);
	return r;
}

/* A wait's `until` that needs what a Mooncake report leaves out. */
static const char *until_needs(const struct qplab_assert *a)
{
	if (a->endpoint[0])
		return "its endpoint status";
	if (a->endpoints >= 0)
		return "its endpoint count";
	if (a->reply_sent.set || a->reply_received.set)
		return "a reply_msg";
	return NULL;
}

/* The step's unsupported request, or NULL. */
static const char *step_needs(const struct qplab_plan *p, const struct qplab_step *st)
{
	switch (st->kind) {
	case QPLAB_STEP_DISCONNECT:
		return qplab_host_is_mooncake(p, st->from) ? "disconnect: Mooncake's C API has no call that drops an endpoint" : NULL;
	case QPLAB_STEP_CONNECT:
		return qplab_host_is_mooncake(p, st->from) && st->to_device[0]
			       ? "to_device: a Mooncake initiator takes the peer's device from its segment descriptor"
			       : NULL;
	case QPLAB_STEP_RAW_FRAME:
		return st->from >= 0 && !strcmp(st->frame_kind, "stale_ack") &&
				       qplab_host_is_mooncake(p, st->from)
			       ? "stale_ack: a Mooncake host sends no ready-ACK of our making"
			       : NULL;
	case QPLAB_STEP_WAIT:
		return qplab_host_is_mooncake(p, st->host) ? until_needs(&st->until) : NULL;
	default:
		return NULL;
	}
}

const char *qplab_impl_skip_reason(const struct qplab_plan *p, char *buf, size_t len)
{
	char opt[80];

	for (size_t h = 0; h < p->nhosts; h++) {
		const char *o;

		if (!qplab_host_is_mooncake(p, (int)h))
			continue;
		if ((o = option_of(&p->hosts[h], opt, sizeof(opt)))) {
			snprintf(buf, len, "host %s runs Mooncake, which has no %s (it takes MC_* variables only)",
				 p->hosts[h].name, o);
			return buf;
		}
		if (p->hosts[h].ipv6 || p->hosts[h].addresses[0]) {
			snprintf(buf, len, "host %s runs Mooncake over IPv6 or without IPv4, which the adapter "
				 "does not set up (MC_USE_IPV6)", p->hosts[h].name);
			return buf;
		}
	}
	for (size_t i = 0; i < p->nsteps; i++) {
		const char *why = step_needs(p, &p->steps[i]);

		if (why) {
			snprintf(buf, len, "line %d: %s step on a Mooncake host: %s", p->steps[i].line,
				 qplab_step_kind_name(p->steps[i].kind), why);
			return buf;
		}
	}
	return NULL;
}

int qplab_host_port(const struct qplab_plan *p, int h, bool own_netns, unsigned topo_seq)
{
	/* 800 ports of 8 hosts: 100 scenarios before one comes back, at
	 * least 25 minutes later at the 15 s a scenario takes at its
	 * quickest, far beyond TIME_WAIT's 60 s. */
	if (own_netns || !qplab_host_is_mooncake(p, h))
		return RUN_AGENT_PORT;
	return QPLAB_MC_PORT_BASE + (int)(((unsigned long)topo_seq * QPLAB_MAX_HOSTS + (unsigned)h) % QPLAB_MC_PORTS);
}
