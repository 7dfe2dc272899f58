/* A plan in netns/topo's terms, and what topo cannot do (SKIP reasons). */
#include <stdio.h>
#include <string.h>

#include "realise.h"
#include "run.h"

int qplab_host_mtu(const struct qplab_plan *p, int host)
{
	if (p->hosts[host].mtu > 0)
		return p->hosts[host].mtu;
	for (size_t l = 0; l < p->nlinks; l++)
		if ((p->links[l].a == host || p->links[l].b == host) && p->links[l].mtu > 0)
			return p->links[l].mtu;
	return 1500;
}

static int has(const char *const *caps, const char *name)
{
	for (size_t i = 0; caps && caps[i]; i++)
		if (!strcmp(caps[i], name))
			return 1;
	return 0;
}

/* What topo's netem can do: loss and delay on all traffic, or a full drop
 * of RoCE (drop-roce).  Returns the reason it cannot, or NULL. */
static const char *netem_gap(const struct qplab_netem *n)
{
	if (n->jitter_ms > 0)
		return "netem jitter (the topology has loss and delay only)";
	if (!strcmp(n->traffic, "handshake"))
		return "netem on the handshake's TCP only (the topology filters RoCE only)";
	if (!strcmp(n->traffic, "roce") && (n->loss_pct != 100 || n->delay_ms > 0))
		return "netem on RoCE other than a full drop (the topology has drop-roce only)";
	if (!strcmp(n->traffic, "all") && n->loss_pct == 0 && n->delay_ms == 0)
		return "a netem that changes nothing";
	return NULL;
}

static const char *netem_reason(const struct qplab_plan *p, const char *const *caps, int *line)
{
	const char *gap;

	for (size_t l = 0; l < p->nlinks; l++) {
		*line = p->links[l].line;
		if (p->links[l].netem.set && !has(caps, "netem"))
			return "no netem here";
		if (p->links[l].netem.set && (gap = netem_gap(&p->links[l].netem)))
			return gap;
	}
	for (size_t s = 0; s < p->nsteps; s++) {
		*line = p->steps[s].line;
		if (p->steps[s].kind == QPLAB_STEP_NETEM_ON && !has(caps, "netem"))
			return "no netem here";
		if (p->steps[s].kind == QPLAB_STEP_NETEM_ON && (gap = netem_gap(&p->steps[s].netem)))
			return gap;
	}
	return NULL;
}

const char *qplab_plan_skip_reason(const struct qplab_plan *p, const char *const *caps,
				   char *buf, size_t len)
{
	const char *why;
	int line = 0;

	for (size_t i = 0; i < p->nrequires; i++) {
		if (!has(caps, p->requires[i])) {
			snprintf(buf, len, "missing capability %s", p->requires[i]);
			return buf;
		}
	}
	for (size_t h = 0; h < p->nhosts; h++) {
		if (p->hosts[h].ipv6 && !has(caps, "ipv6")) {
			snprintf(buf, len, "host %s wants IPv6, which this lab has not", p->hosts[h].name);
			return buf;
		}
		/* Shared mode routes each pair by IPv4 source: a host without
		 * IPv4 needs namespaces of its own (netns/topo --addrs). */
		/* One routing table for all hosts would route the second subnet
		 * for everyone (netns/topo --second). */
		if (p->hosts[h].second_device && !has(caps, "rxe_netns")) {
			snprintf(buf, len, "host %s: device \"second\" needs the netns topology (shared mode "
				 "routes every host with one table: its second subnet would be everyone's)",
				 p->hosts[h].name);
			return buf;
		}
		if (p->hosts[h].addresses[0] && !has(caps, "rxe_netns")) {
			snprintf(buf, len, "host %s: addresses \"%s\" needs the netns topology", p->hosts[h].name,
				 p->hosts[h].addresses);
			return buf;
		}
	}
	for (size_t i = 0; i < p->nsteps; i++) {
		enum qplab_step_kind k = p->steps[i].kind;

		/* Shared mode's tables name each host's one IPv4 address, and
		 * every host's daemon listens in its one namespace. */
		if ((k == QPLAB_STEP_ADD_ADDRESS || k == QPLAB_STEP_REMOVE_ADDRESS ||
		     k == QPLAB_STEP_RESTORE_ADDRESS) && !has(caps, "rxe_netns")) {
			snprintf(buf, len, "line %d: %s needs the netns topology (shared mode routes each pair by the host's one IPv4 address)",
				 p->steps[i].line, qplab_step_kind_name(k));
			return buf;
		}
		if ((k == QPLAB_STEP_FIREWALL_DROP || k == QPLAB_STEP_FIREWALL_REJECT ||
		     k == QPLAB_STEP_FIREWALL_OFF) && !has(caps, "rxe_netns")) {
			snprintf(buf, len, "line %d: %s needs the netns topology (in shared mode every host's daemon listens in one namespace: a host's firewall would be everyone's)",
				 p->steps[i].line, qplab_step_kind_name(k));
			return buf;
		}
	}
	if ((why = netem_reason(p, caps, &line))) {
		snprintf(buf, len, "line %d: %s", line, why);
		return buf;
	}
	return NULL;
}

/* Appends a word copied into buf; NULL when buf is full. */
static const char *keep(char *buf, size_t len, size_t *used, const char *fmt, int a, const char *s)
{
	char *w = buf + *used;
	int n;

	if (*used >= len)
		return NULL;
	n = s ? snprintf(w, len - *used, fmt, s, a) : snprintf(w, len - *used, fmt, a);
	if (n < 0 || (size_t)n >= len - *used)
		return NULL;
	*used += (size_t)n + 1;
	return w;
}

int qplab_topo_up_args(const struct qplab_plan *p, const char *id, const char *mode,
		       const char *argv[QPLAB_TOPO_ARGV_MAX], char *buf, size_t len)
{
	size_t used = 0, hn = 0;
	int n = 0, ipv6 = 0;
	char hosts[QPLAB_MAX_HOSTS * QPLAB_NAME_MAX];

	hosts[0] = '\0';
	for (size_t h = 0; h < p->nhosts; h++) {
		hn += (size_t)snprintf(hosts + hn, sizeof(hosts) - hn, "%s%s", h ? "," : "", p->hosts[h].name);
		ipv6 |= p->hosts[h].ipv6;
	}
	argv[n++] = "up";
	argv[n++] = "--name";
	argv[n++] = id;
	argv[n++] = "--hosts";
	if (!(argv[n++] = keep(buf, len, &used, "%s", 0, hosts)))
		return -1;
	for (size_t h = 0; h < p->nhosts; h++) {
		argv[n++] = "--mtu";
		if (!(argv[n++] = keep(buf, len, &used, "%s=%d", qplab_host_mtu(p, (int)h), p->hosts[h].name)))
			return -1;
	}
	for (size_t h = 0; h < p->nhosts; h++) {
		char w[64];

		if (!p->hosts[h].addresses[0])
			continue;
		snprintf(w, sizeof(w), "%s=%s", p->hosts[h].name, p->hosts[h].addresses);
		argv[n++] = "--addrs";
		if (!(argv[n++] = keep(buf, len, &used, "%s", 0, w)))
			return -1;
	}
	for (size_t h = 0; h < p->nhosts; h++) {
		if (!p->hosts[h].second_device)
			continue;
		argv[n++] = "--second";
		argv[n++] = p->hosts[h].name;
	}
	if (ipv6)
		argv[n++] = "--ipv6";
	if (mode) {
		argv[n++] = "--mode";
		argv[n++] = mode;
	}
	argv[n] = NULL;
	return n;
}

int qplab_topo_netem_args(const char *host, const struct qplab_netem *ne,
			  const char *argv[QPLAB_TOPO_ARGV_MAX], char *buf, size_t len)
{
	size_t used = 0;
	int n = 0;

	if (netem_gap(ne))
		return -1;
	if (!strcmp(ne->traffic, "roce")) {
		argv[n++] = "drop-roce";
		argv[n++] = host;
		argv[n] = NULL;
		return n;
	}
	argv[n++] = "netem";
	argv[n++] = host;
	if (ne->loss_pct > 0) {
		argv[n++] = "loss";
		if (!(argv[n++] = keep(buf, len, &used, "%d", ne->loss_pct, NULL)))
			return -1;
	}
	if (ne->delay_ms > 0) {
		argv[n++] = "delay";
		if (!(argv[n++] = keep(buf, len, &used, "%d", ne->delay_ms, NULL)))
			return -1;
	}
	argv[n] = NULL;
	return n;
}

int qplab_topo_step_args(const struct qplab_plan *p, const struct qplab_step *st,
			 const char *argv[QPLAB_TOPO_ARGV_MAX], char *buf, size_t len)
{
	const char *host = st->host >= 0 ? p->hosts[st->host].name : NULL;
	size_t used = 0;
	int n = 0;

	switch (st->kind) {
	case QPLAB_STEP_LINK_DOWN:
	case QPLAB_STEP_LINK_UP:
		argv[n++] = "link";
		argv[n++] = host;
		argv[n++] = st->kind == QPLAB_STEP_LINK_DOWN ? "down" : "up";
		break;
	case QPLAB_STEP_NETEM_ON:
		return qplab_topo_netem_args(host, &st->netem, argv, buf, len);
	case QPLAB_STEP_NETEM_OFF:
		argv[n++] = "clear";
		argv[n++] = host;
		break;
	case QPLAB_STEP_SET_MTU:
		argv[n++] = "mtu";
		argv[n++] = host;
		if (!(argv[n++] = keep(buf, len, &used, "%d", st->mtu, NULL)))
			return -1;
		break;
	case QPLAB_STEP_DELETE_DEVICE:
		argv[n++] = "del-rxe";
		argv[n++] = host;
		break;
	case QPLAB_STEP_BLACKHOLE:
	case QPLAB_STEP_UNBLACKHOLE:
		argv[n++] = st->kind == QPLAB_STEP_BLACKHOLE ? "blackhole" : "unblackhole";
		argv[n++] = host;
		argv[n++] = p->hosts[st->peer].name;
		break;
	case QPLAB_STEP_ADD_ADDRESS:
	case QPLAB_STEP_REMOVE_ADDRESS:
	case QPLAB_STEP_RESTORE_ADDRESS:
		argv[n++] = "addr";
		argv[n++] = host;
		argv[n++] = st->kind == QPLAB_STEP_ADD_ADDRESS	  ? "add-second"
			    : st->kind == QPLAB_STEP_REMOVE_ADDRESS ? "remove"
								    : "restore";
		break;
	case QPLAB_STEP_DISABLE_IPV6:
		argv[n++] = "ipv6";
		argv[n++] = host;
		argv[n++] = "off";
		break;
	case QPLAB_STEP_FIREWALL_DROP:
	case QPLAB_STEP_FIREWALL_REJECT:
	case QPLAB_STEP_FIREWALL_OFF:
		argv[n++] = "firewall";
		argv[n++] = host;
		argv[n++] = st->kind == QPLAB_STEP_FIREWALL_DROP     ? "drop"
			    : st->kind == QPLAB_STEP_FIREWALL_REJECT ? "reject"
								     : "off";
		argv[n++] = RUN_AGENT_PORT_STR;
		break;
	default:
		return 0;
	}
	argv[n] = NULL;
	return n;
}
