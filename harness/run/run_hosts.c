/*
 * The hosts backend (run.h, docs/inventory.md): the inventory's machines
 * stand in for a topology.  Every command on a machine is one ssh whose
 * remote words are quoted (inventory_rules.c); a fault is the one ip, tc
 * or rdma command it is there, and what it changed is recorded so that a
 * reset, on every exit path, puts it back.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lab_conf.h"
#include "run.h"
#include "run_spawn.h"

/* Asked once per machine: kernel, the lab netdev's MTU, the RDMA
 * device's driver (its PCI driver; a software device such as rxe has a
 * parent netdev and no PCI device).  A fixed script; the netdev and the
 * device are its quoted arguments, never part of it. */
static const char FACTS_SCRIPT[] =
	"uname -r; cat /sys/class/net/\"$1\"/mtu || echo 0; d=/sys/class/infiniband/\"$2\"; "
	"if [ -e \"$d/device/driver\" ]; then basename \"$(readlink -f \"$d/device/driver\")\"; "
	"elif [ -e \"$d/parent\" ]; then echo rxe; elif [ -e \"$d\" ]; then echo unknown; "
	"else echo missing; fi";

char **run_hosts_argv(const struct run_host *h, const char *const *remote)
{
	char **argv = qplab_inv_ssh_argv(h->inv, remote), **with;
	char path[sizeof(h->ctl) + 16];
	size_t n = 0;

	if (!argv || !h->master)
		return argv;
	while (argv[n])
		n++;
	with = calloc(n + 5, sizeof(*with));
	snprintf(path, sizeof(path), "ControlPath=%s", h->ctl);
	if (!with || !(with[1] = strdup("-o")) || !(with[2] = strdup(path)) || !(with[3] = strdup("-o")) ||
	    !(with[4] = strdup("ControlMaster=no"))) {
		for (int i = 1; with && i < 5; i++)
			free(with[i]);
		free(with);
		qplab_inv_argv_free(argv);
		return NULL;
	}
	with[0] = argv[0];
	memcpy(with + 5, argv + 1, n * sizeof(*with)); /* the rest and the NULL */
	free(argv);
	return with;
}

/* One ssh session per machine that every later command rides on: a key
 * exchange costs seconds under TCG and on a loaded host.  The master is
 * the runner's child in a group of its own, stopped by run_hosts_stop; a
 * master that does not come up leaves plain ssh.  Every machine's is
 * started (master_spawn) before the first is waited for (master_wait):
 * the key exchanges overlap. */
static void master_spawn(struct run_host *h)
{
	char **argv = qplab_inv_ssh_argv(h->inv, NULL), **m;
	char path[sizeof(h->ctl) + 16];
	struct run_spawn sp = {.own_group = true, .err_path = "/dev/null"};
	size_t n = 0;

	if (!argv)
		return;
	while (argv[n])
		n++;
	snprintf(h->ctl, sizeof(h->ctl), "%s/ssh-%d-%s", QPLAB_LAB_STATE_DIR, (int)getpid(), h->inv->name);
	snprintf(path, sizeof(path), "ControlPath=%s", h->ctl);
	m = calloc(n + 7, sizeof(*m));
	if (m) {
		const char *extra[] = {"-o", "ControlMaster=yes", "-o", path, "-N"};

		m[0] = argv[0];
		for (int i = 0; i < 5; i++)
			m[1 + i] = (char *)extra[i];
		memcpy(m + 6, argv + 1, n * sizeof(*m));
		sp.argv = m;
		mkdir(QPLAB_LAB_STATE_DIR, 0755);
		unlink(h->ctl);
		if (run_spawn_start(&sp) == 0) {
			close(sp.from_fd);
			h->master = sp.pid;
		}
	}
	free(m);
	qplab_inv_argv_free(argv);
}

/* Until h's master listens on its socket, it ends, or deadline (ms). */
static void master_wait(struct run_host *h, double deadline)
{
	while (h->master && access(h->ctl, F_OK) && run_now_ms() < deadline && !qplab_run_interrupted) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		if (waitpid(h->master, NULL, WNOHANG) == h->master) {
			h->master = 0;
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (h->master && access(h->ctl, F_OK)) { /* never came up */
		kill(h->master, SIGKILL);
		waitpid(h->master, NULL, 0);
		h->master = 0;
	}
}

void run_hosts_stop(struct run_topo *t)
{
	for (size_t i = 0; i < t->nhosts; i++) {
		struct run_host *h = &t->hosts[i];

		if (!h->master)
			continue;
		kill(h->master, SIGTERM);
		for (int k = 0; k < 100 && waitpid(h->master, NULL, WNOHANG) == 0; k++) {
			struct timespec ts = {0, 20 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
		if (waitpid(h->master, NULL, WNOHANG) == 0) {
			kill(h->master, SIGKILL);
			waitpid(h->master, NULL, 0);
		}
		unlink(h->ctl);
		h->master = 0;
	}
}

/* Starts one command on h (its output read by exec_finish); -1 when it
 * cannot be started. */
static int exec_start(const struct run_host *h, const char *const *remote, bool quiet, struct run_spawn *sp)
{
	char **argv = run_hosts_argv(h, remote);
	int rc;

	memset(sp, 0, sizeof(*sp));
	sp->err_path = quiet ? "/dev/null" : NULL;
	if (!argv)
		return -1;
	sp->argv = argv;
	if (getenv("QPLAB_RUN_TRACE")) {
		fprintf(stderr, "qplab run: host %s:", h->name);
		for (int i = 0; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		fputc('\n', stderr);
	}
	rc = run_spawn_start(sp);
	qplab_inv_argv_free(argv);
	sp->argv = NULL;
	return rc ? -1 : 0;
}

/* Reads a started command's output to its end (into *out, malloc'd, when
 * out is not NULL) and returns its exit status. */
static int exec_finish(struct run_spawn *sp, char **out)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int rc;

	for (;;) {
		ssize_t got;

		if (len + 256 > cap) {
			char *n = cap < (1 << 20) ? realloc(buf, cap = cap ? 2 * cap : 4096) : NULL;

			if (!n)
				break;
			buf = n;
		}
		got = read(sp->from_fd, buf + len, cap - len - 1);
		if (got == 0 || (got < 0 && errno != EINTR))
			break;
		if (got > 0)
			len += (size_t)got;
	}
	close(sp->from_fd);
	rc = run_spawn_wait(sp->pid);
	if (buf)
		buf[len] = '\0';
	if (out)
		*out = buf;
	else
		free(buf);
	return rc;
}

int run_hosts_exec(const struct run_host *h, const char *const *remote, char **out, bool quiet)
{
	struct run_spawn sp;

	if (out)
		*out = NULL;
	if (exec_start(h, remote, quiet, &sp))
		return -1;
	return exec_finish(&sp, out);
}

/* Line k (0-based) of text into dst, "" when there is none. */
static void line_at(const char *text, int k, char *dst, size_t len)
{
	const char *s = text;

	dst[0] = '\0';
	for (; s && k > 0; k--) {
		s = strchr(s, '\n');
		s = s ? s + 1 : NULL;
	}
	if (s && *s)
		snprintf(dst, len, "%.*s", (int)strcspn(s, "\n"), s);
}

int run_hosts_topo(const struct qplab_inventory *inv, struct run_topo *t, char *err, size_t errlen)
{
	struct run_spawn facts[QPLAB_MAX_HOSTS];
	int started[QPLAB_MAX_HOSTS];
	double deadline;

	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "hosts");
	snprintf(t->mode, sizeof(t->mode), "hosts");
	t->inv = inv;
	for (size_t i = 0; i < inv->nhosts && t->nhosts < QPLAB_MAX_HOSTS; i++) {
		const struct qplab_inv_host *ih = &inv->hosts[i];
		struct run_host *h = &t->hosts[t->nhosts++];

		snprintf(h->name, sizeof(h->name), "%s", ih->name);
		snprintf(h->rxe, sizeof(h->rxe), "%s", ih->device);
		snprintf(h->ifname, sizeof(h->ifname), "%s", ih->netdev);
		snprintf(ih->ipv6 ? h->addr6 : h->addr4, sizeof(h->addr4), "%s", ih->address);
		h->inv = ih;
		if (!getenv("QPLAB_HOSTS_NO_MASTER"))
			master_spawn(h);
	}
	deadline = run_now_ms() + 30000 * run_mult();
	for (size_t i = 0; i < t->nhosts; i++)
		master_wait(&t->hosts[i], deadline);
	/* Every machine asked before the first answer is read. */
	for (size_t i = 0; i < t->nhosts; i++) {
		const struct qplab_inv_host *ih = t->hosts[i].inv;
		const char *remote[] = {"sh", "-c", FACTS_SCRIPT, "sh", ih->netdev, ih->device, NULL};

		started[i] = exec_start(&t->hosts[i], remote, false, &facts[i]) == 0;
	}
	for (size_t i = 0; i < t->nhosts; i++) {
		const struct qplab_inv_host *ih = t->hosts[i].inv;
		struct run_host *h = &t->hosts[i];
		char *out = NULL, mtu[16];
		int rc = started[i] ? exec_finish(&facts[i], &out) : -1;

		started[i] = 0;
		line_at(out, 0, h->kernel, sizeof(h->kernel));
		line_at(out, 1, mtu, sizeof(mtu));
		line_at(out, 2, h->driver, sizeof(h->driver));
		free(out);
		h->mtu = h->orig_mtu = atoi(mtu);
		if (rc || !h->kernel[0] || h->mtu <= 0 || !strcmp(h->driver, "missing")) {
			snprintf(err, errlen,
				 rc == 255 ? "host %s: ssh %s failed (qplab doctor --inventory says why)"
				 : !strcmp(h->driver, "missing") ? "host %s (%s): no RDMA device %s there"
								 : "host %s (%s): cannot read its kernel and the MTU of %s",
				 ih->name, ih->ssh.destination[0] ? ih->ssh.destination : ih->ssh.alias,
				 !strcmp(h->driver, "missing") ? ih->device : ih->netdev);
			/* The other machines' answers, read and dropped. */
			for (size_t k = i + 1; k < t->nhosts; k++)
				if (started[k])
					exec_finish(&facts[k], NULL);
			run_hosts_stop(t);
			return -1;
		}
	}
	/* The first kernel stands for the run (the per-host ones are in
	 * results.json's "hosts"). */
	snprintf(t->kernel, sizeof(t->kernel), "%s", t->hosts[0].kernel);
	t->up = true;
	return 0;
}

static struct run_host *host_named(struct run_topo *t, const char *name)
{
	for (size_t i = 0; i < t->nhosts; i++)
		if (!strcmp(t->hosts[i].name, name))
			return &t->hosts[i];
	return NULL;
}

int run_hosts_fault_words(const struct run_host *h, const struct run_topo *t,
			  const char *const *w, int n, const char *out[16], char bufs[2][64])
{
	int k = 0;

	(void)t;
	if (n == 3 && !strcmp(w[0], "link") && (!strcmp(w[2], "up") || !strcmp(w[2], "down"))) {
		const char *r[] = {"ip", "link", "set", "dev", h->ifname, w[2]};

		for (int i = 0; i < 6; i++)
			out[k++] = r[i];
	} else if (n == 3 && !strcmp(w[0], "mtu")) {
		const char *r[] = {"ip", "link", "set", "dev", h->ifname, "mtu", w[2]};

		for (int i = 0; i < 7; i++)
			out[k++] = r[i];
	} else if (n >= 4 && n <= 6 && n % 2 == 0 && !strcmp(w[0], "netem")) {
		const char *r[] = {"tc", "qdisc", "replace", "dev", h->ifname, "root", "netem"};

		for (int i = 0; i < 7; i++)
			out[k++] = r[i];
		for (int i = 2; i < n; i += 2) {
			bool loss = !strcmp(w[i], "loss");

			if (!loss && strcmp(w[i], "delay"))
				return -1;
			snprintf(bufs[(i - 2) / 2], 64, "%s%s", w[i + 1], loss ? "%" : "ms");
			out[k++] = w[i];
			out[k++] = bufs[(i - 2) / 2];
		}
	} else if (n == 2 && !strcmp(w[0], "clear")) {
		const char *r[] = {"tc", "qdisc", "del", "dev", h->ifname, "root"};

		for (int i = 0; i < 6; i++)
			out[k++] = r[i];
	} else if (n == 2 && !strcmp(w[0], "del-rxe")) {
		const char *r[] = {"rdma", "link", "del", h->rxe};

		for (int i = 0; i < 4; i++)
			out[k++] = r[i];
	} else {
		return -1; /* blackhole, drop-roce: inventory_rules.c skips them */
	}
	out[k] = NULL;
	return k;
}

/* The fault bit a word list records. */
static unsigned touched_by(const char *w0)
{
	if (!strcmp(w0, "link"))
		return QPLAB_INV_FAULT_LINK;
	if (!strcmp(w0, "mtu"))
		return QPLAB_INV_FAULT_MTU;
	if (!strcmp(w0, "netem"))
		return QPLAB_INV_FAULT_NETEM;
	if (!strcmp(w0, "del-rxe"))
		return QPLAB_INV_FAULT_DELETE_DEVICE;
	return 0;
}

int run_hosts_fault(struct run_topo *t, const char *const *words, int n, bool quiet)
{
	struct run_host *h = n >= 2 ? host_named(t, words[1]) : NULL;
	const char *remote[16];
	char bufs[2][64], why[400];
	unsigned bit = n >= 1 ? touched_by(words[0]) : 0;

	if (!h || !h->inv || run_hosts_fault_words(h, t, words, n, remote, bufs) < 0)
		return -1;
	/* The scenario was checked against the inventory before it ran
	 * (qplab_inventory_fits); this is the last guard before a machine is
	 * touched.  clear undoes, and is not a fault of its own. */
	if (bit && !qplab_inv_fault_allowed(h->inv, bit, why, sizeof(why))) {
		fprintf(stderr, "qplab run: %s\n", why);
		return -1;
	}
	h->touched |= bit;
	return run_hosts_exec(h, remote, NULL, quiet);
}

int run_hosts_reset(struct run_topo *t)
{
	int failed = 0;

	for (size_t i = 0; i < t->nhosts; i++) {
		struct run_host *h = &t->hosts[i];
		char mtu[16];
		const char *del[] = {"rdma", "link", "add", h->rxe, "type", "rxe", "netdev", h->ifname, NULL};
		const char *up[] = {"ip", "link", "set", "dev", h->ifname, "up", NULL};
		const char *clr[] = {"tc", "qdisc", "del", "dev", h->ifname, "root", NULL};
		const char *setmtu[] = {"ip", "link", "set", "dev", h->ifname, "mtu", mtu, NULL};

		snprintf(mtu, sizeof(mtu), "%d", h->orig_mtu);
		if (h->touched & QPLAB_INV_FAULT_LINK)
			failed += run_hosts_exec(h, up, NULL, false) != 0;
		/* No qdisc left is no error: quiet, not counted. */
		if (h->touched & QPLAB_INV_FAULT_NETEM)
			run_hosts_exec(h, clr, NULL, true);
		if (h->touched & QPLAB_INV_FAULT_MTU) {
			failed += run_hosts_exec(h, setmtu, NULL, false) != 0;
			h->mtu = h->orig_mtu;
		}
		/* A deleted device comes back only where it can be made again:
		 * a software device (rxe) on the lab netdev. */
		if ((h->touched & QPLAB_INV_FAULT_DELETE_DEVICE) && !strcmp(h->driver, "rxe"))
			failed += run_hosts_exec(h, del, NULL, false) != 0;
		else if (h->touched & QPLAB_INV_FAULT_DELETE_DEVICE)
			failed++;
		h->touched = 0;
	}
	return failed;
}

void run_hosts_count_qps(const struct run_topo *t, const int hostmap[], const long pids[],
			 size_t n, int counts[])
{
	const char *remote[] = {"rdma", "resource", "show", "qp", NULL};
	struct run_spawn sp[QPLAB_MAX_HOSTS];
	int started[QPLAB_MAX_HOSTS];

	/* Every host asked before the first answer is read: one round trip. */
	for (size_t i = 0; i < n; i++) {
		const struct run_host *h = hostmap[i] >= 0 ? &t->hosts[hostmap[i]] : NULL;

		counts[i] = 0;
		started[i] = -1; /* not asked */
		if (h && pids[i] > 0)
			started[i] = exec_start(h, remote, false, &sp[i]) == 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct run_host *h = hostmap[i] >= 0 ? &t->hosts[hostmap[i]] : NULL;
		char *out = NULL, *line, *save = NULL, want[40];

		if (started[i] < 0)
			continue;
		if (!started[i] || exec_finish(&sp[i], &out)) {
			counts[i] = -1;
			free(out);
			continue;
		}
		/* "link DEV/PORT lqpn N ... pid P comm C": the agent's own QPs
		 * on its own device; every other process's are not ours. */
		snprintf(want, sizeof(want), " pid %ld ", pids[i]);
		for (line = out ? strtok_r(out, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
			size_t k = strlen(h->rxe);

			if (!strncmp(line, "link ", 5) && !strncmp(line + 5, h->rxe, k) && line[5 + k] == '/' &&
			    strstr(line, want))
				counts[i]++;
		}
		free(out);
	}
}
