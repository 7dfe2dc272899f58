/*
 * What an inventory lets a scenario do (inventory.h): the fault rules, the
 * SKIP reasons of a plan that cannot run on it, and the ssh command line
 * as words.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "wire.h"

bool qplab_inv_fault_allowed(const struct qplab_inv_host *h, enum qplab_inv_fault f,
			     char *reason, size_t len)
{
	const char *name = qplab_inv_fault_name(f);

	if (!h->lab_host) {
		snprintf(reason, len, "host %s is not a lab host (\"lab_host\": false): no fault %s there",
			 h->name, name);
		return false;
	}
	if (!(h->faults & (unsigned)f)) {
		snprintf(reason, len, "the inventory does not allow fault %s on host %s", name, h->name);
		return false;
	}
	if (f != QPLAB_INV_FAULT_DELETE_DEVICE && !h->ssh_netdev[0]) {
		snprintf(reason, len,
			 "host %s: fault %s changes netdev %s, and the inventory does not say which netdev its ssh session uses (\"ssh_netdev\")",
			 h->name, name, h->netdev);
		return false;
	}
	if (f != QPLAB_INV_FAULT_DELETE_DEVICE && !strcmp(h->ssh_netdev, h->netdev)) {
		snprintf(reason, len, "host %s: fault %s would change %s, the netdev its ssh session uses",
			 h->name, name, h->netdev);
		return false;
	}
	return true;
}

/* The fault a step makes, or 0. */
static enum qplab_inv_fault step_fault(enum qplab_step_kind k)
{
	switch (k) {
	case QPLAB_STEP_LINK_DOWN:
	case QPLAB_STEP_LINK_UP:
		return QPLAB_INV_FAULT_LINK;
	case QPLAB_STEP_NETEM_ON:
	case QPLAB_STEP_NETEM_OFF:
		return QPLAB_INV_FAULT_NETEM;
	case QPLAB_STEP_SET_MTU:
		return QPLAB_INV_FAULT_MTU;
	case QPLAB_STEP_BLACKHOLE:
	case QPLAB_STEP_UNBLACKHOLE:
		return QPLAB_INV_FAULT_BLACKHOLE;
	case QPLAB_STEP_DELETE_DEVICE:
		return QPLAB_INV_FAULT_DELETE_DEVICE;
	default:
		return 0;
	}
}

static bool host_fault(const struct qplab_inventory *inv, const struct qplab_plan *p, int hi,
		       enum qplab_inv_fault f, char *reason, size_t len)
{
	const struct qplab_inv_host *h = qplab_inventory_host(inv, p->hosts[hi].name);

	return h && qplab_inv_fault_allowed(h, f, reason, len);
}

static bool hosts_fit(const struct qplab_inventory *inv, const struct qplab_plan *p, char *reason,
		      size_t len)
{
	size_t missing = 0;
	char names[128] = "";

	for (size_t i = 0; i < p->nhosts; i++) {
		const struct qplab_inv_host *h = qplab_inventory_host(inv, p->hosts[i].name);
		const struct qplab_host *ph = &p->hosts[i];

		if (!h) {
			size_t n = strlen(names);

			snprintf(names + n, sizeof(names) - n, "%s%s", missing ? ", " : "", ph->name);
			missing++;
			continue;
		}
		if (ph->addresses[0]) {
			snprintf(reason, len,
				 "host %s: \"addresses\": \"%s\" needs the lab's own topology (the hosts backend keeps each machine's addresses)",
				 ph->name, ph->addresses);
			return false;
		}
		if (ph->ipv6 != h->ipv6) {
			snprintf(reason, len, "host %s wants %s, and the inventory gives it %s address %s",
				 ph->name, ph->ipv6 ? "IPv6" : "IPv4", h->ipv6 ? "IPv6" : "IPv4",
				 h->address);
			return false;
		}
		if (ph->agent.advertise_gid && !strcmp(ph->agent.advertise_gid, "unowned")) {
			snprintf(reason, len,
				 "host %s advertises the lab's unowned GID, which only a lab topology blackholes",
				 ph->name);
			return false;
		}
	}
	if (missing) {
		snprintf(reason, len, "the scenario needs %zu host%s, the inventory has %zu; %s missing: %s",
			 p->nhosts, p->nhosts == 1 ? "" : "s", inv->nhosts,
			 missing == 1 ? "this one is" : "these are", names);
		return false;
	}
	return true;
}

bool qplab_inventory_fits(const struct qplab_inventory *inv, const struct qplab_plan *p,
			  char *reason, size_t len)
{
	if (!hosts_fit(inv, p, reason, len))
		return false;
	/* The capture runs on the runner's machine, on the lab topology's
	 * interfaces; the machines' lab netdevs are not there. */
	if (p->nwire) {
		snprintf(reason, len,
			 "line %d: wire expectations need a capture of the lab link, which the hosts backend does not take on the machines yet",
			 p->wire[0].line);
		return false;
	}
	for (size_t i = 0; i < p->nhosts; i++)
		if (p->hosts[i].mtu >= 0 && !host_fault(inv, p, (int)i, QPLAB_INV_FAULT_MTU, reason, len))
			return false;
	for (size_t i = 0; i < p->nhosts; i++)
		if (p->hosts[i].second_device) {
			/* netns/topo --second builds it; an inventory names one device. */
			snprintf(reason, len, "host %s: device \"second\" needs the lab topology's second netdev",
				 p->hosts[i].name);
			return false;
		}
	for (size_t i = 0; i < p->nlinks; i++) {
		const struct qplab_link *l = &p->links[i];
		int ends[2] = {l->a, l->b};

		for (int e = 0; e < 2; e++) {
			if (l->mtu >= 0 && !host_fault(inv, p, ends[e], QPLAB_INV_FAULT_MTU, reason, len))
				return false;
			if (l->netem.set &&
			    !host_fault(inv, p, ends[e], QPLAB_INV_FAULT_NETEM, reason, len))
				return false;
			if (l->netem.set && strcmp(l->netem.traffic, "all")) {
				snprintf(reason, len,
					 "line %d: netem on %s traffic only needs the lab topology's filters",
					 l->line, l->netem.traffic);
				return false;
			}
		}
	}
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct qplab_step *st = &p->steps[i];
		enum qplab_inv_fault f = step_fault(st->kind);

		if (st->kind == QPLAB_STEP_CONNECT &&
		    (!strcmp(st->to_address, "unowned") || !strcmp(st->to_address, "unroutable"))) {
			snprintf(reason, len,
				 "step %zu connects to the lab's %s address, which only a lab topology blackholes",
				 i + 1, st->to_address);
			return false;
		}
		if (f && !host_fault(inv, p, st->host, f, reason, len))
			return false;
		if (st->kind == QPLAB_STEP_DISABLE_IPV6) {
			snprintf(reason, len, "step %zu: the hosts backend does not carry out disable_ipv6 yet", i + 1);
			return false;
		}
		if (f == QPLAB_INV_FAULT_BLACKHOLE) {
			snprintf(reason, len, "step %zu: the hosts backend does not carry out blackhole yet", i + 1);
			return false;
		}
		if (st->kind == QPLAB_STEP_NETEM_ON && strcmp(st->netem.traffic, "all")) {
			snprintf(reason, len,
				 "step %zu: netem on %s traffic only needs the lab topology's filters; the hosts backend applies netem to all traffic only",
				 i + 1, st->netem.traffic);
			return false;
		}
	}
	return true;
}

char *qplab_inv_shell_quote(const char *s)
{
	size_t n = 2;
	char *out, *o;

	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	o = out;
	*o++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *c;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

void qplab_inv_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* Appends a copy of the word; on failure argv is left as it was (no hole
 * a NULL-ended free would stop at). */
static int push(char **argv, size_t *n, const char *w)
{
	argv[*n] = strdup(w);
	return argv[*n] ? (++*n, 0) : -1;
}

static int push_opt(char **argv, size_t *n, const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 2;

	argv[*n] = malloc(len);
	if (!argv[*n])
		return -1;
	snprintf(argv[(*n)++], len, "%s=%s", name, value);
	return 0;
}

/* The remote words, each quoted, joined by spaces. */
static char *remote_line(const char *const *remote)
{
	size_t len = 1;
	char *line, *q;

	for (size_t i = 0; remote[i]; i++) {
		q = qplab_inv_shell_quote(remote[i]);
		if (!q)
			return NULL;
		len += strlen(q) + 1;
		free(q);
	}
	line = calloc(1, len);
	for (size_t i = 0; line && remote[i]; i++) {
		q = qplab_inv_shell_quote(remote[i]);
		if (!q) {
			free(line);
			return NULL;
		}
		if (i)
			strcat(line, " ");
		strcat(line, q);
		free(q);
	}
	return line;
}

char **qplab_inv_ssh_argv(const struct qplab_inv_host *h, const char *const *remote)
{
	const struct qplab_inv_ssh *s = &h->ssh;
	size_t cap = 16 + 2 * s->noptions, n = 0;
	char **argv = calloc(cap, sizeof(*argv)), port[16];
	int bad = !argv;

	if (bad)
		return NULL;
	bad |= push(argv, &n, "ssh");
	bad |= push(argv, &n, "-o") || push(argv, &n, "BatchMode=yes");
	bad |= push(argv, &n, "-o") || push(argv, &n, "ServerAliveInterval=5");
	bad |= push(argv, &n, "-o") || push(argv, &n, "ServerAliveCountMax=3");
	if (s->config[0])
		bad |= push(argv, &n, "-F") || push(argv, &n, s->config);
	if (s->port) {
		snprintf(port, sizeof(port), "%d", s->port);
		bad |= push(argv, &n, "-p") || push(argv, &n, port);
	}
	if (s->identity[0])
		bad |= push(argv, &n, "-i") || push(argv, &n, s->identity);
	for (size_t i = 0; i < s->noptions; i++)
		bad |= push(argv, &n, "-o") ||
		       push_opt(argv, &n, s->options[i].name, s->options[i].value);
	bad |= push(argv, &n, "--");
	bad |= push(argv, &n, s->destination[0] ? s->destination : s->alias);
	if (remote && remote[0]) {
		argv[n] = remote_line(remote);
		bad |= !argv[n];
	}
	if (bad) {
		qplab_inv_argv_free(argv);
		return NULL;
	}
	return argv;
}
