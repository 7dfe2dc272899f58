/* The topology through netns/topo: up (its JSON read back), faults, down
 * and an independent count of what is left (of what its undo registry
 * names). */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/jread.h"
#include "realise.h"
#include "registry.h"
#include "run.h"
#include "run_spawn.h"

int run_capture(char *const argv[], char **out)
{
	return run_capture_err(argv, out, NULL);
}

int run_capture_err(char *const argv[], char **out, const char *err_path)
{
	struct run_spawn sp = {.argv = argv, .err_path = err_path};
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (!buf || run_spawn_start(&sp)) {
		free(buf);
		return -1;
	}
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger)
				break; /* keep what was read; the caller parses it */
			buf = bigger;
			cap *= 2;
		}
		n = read(sp.from_fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(sp.from_fd);
	if (out)
		*out = buf;
	else
		free(buf);
	return run_spawn_wait(sp.pid);
}

static const char *topo_path(void)
{
	static char path[4200];

	snprintf(path, sizeof(path), "%s/topo", qplab_script_dir());
	return path;
}

/* The exec prefix of host h: strings, each strdup'd (checked); t's hosts
 * free them, up to the first NULL, so reading stops at the first error. */
static void host_exec(struct jread *r, json_object *h, struct run_host *rh)
{
	json_object *ex;
	const char *arg;

	if (jread_array(r, h, "exec", &ex) != JREAD_OK)
		return;
	for (size_t k = 0; k < json_object_array_length(ex) && k < 7; k++) {
		if (jread_elem_str(r, ex, "exec", k, &arg) != JREAD_OK)
			return;
		if (!(rh->exec[k] = strdup(arg))) {
			jread_fail(r, "exec", "out of memory");
			return;
		}
	}
}

/* netns/topo up's JSON, read strictly like every JSON the harness takes
 * in (cli/jread.h): t was zeroed by the caller, so what is absent is "". */
/* "link": {"kind": "veth"|"bridge", "bridge": NAME or null}. */
static void link_bridge(struct jread *r, json_object *o, struct run_topo *t)
{
	json_object *link = jread_object_or_null(o, "link"), *b;

	t->bridge[0] = '\0';
	if (link && json_object_object_get_ex(link, "bridge", &b) && b)
		jread_str_copy(r, link, "bridge", t->bridge, sizeof(t->bridge));
}

static int parse_topo(const char *text, struct run_topo *t, char *err, size_t errlen)
{
	struct jread r = {.what = "topo up: its output", .err = err, .errlen = errlen};
	json_object *o, *hosts, *h;

	if (jread_parse_object(&r, text, strlen(text), &o) != JREAD_OK)
		return -1;
	if (jread_array(&r, o, "hosts", &hosts) != JREAD_OK) {
		if (!r.errors)
			jread_missing(&r, "hosts");
		json_object_put(o);
		return -1;
	}
	/* topo names the topology: the ID asked for plus a unique suffix. */
	jread_str_copy(&r, o, "name", t->id, sizeof(t->id));
	if (!r.errors && !t->id[0])
		jread_fail(&r, "name", "its JSON names no topology");
	jread_str_copy(&r, o, "mode", t->mode, sizeof(t->mode));
	jread_str_copy(&r, o, "kernel", t->kernel, sizeof(t->kernel));
	jread_str_copy(&r, o, "unowned4", t->unowned4, sizeof(t->unowned4));
	jread_str_copy(&r, o, "unroutable4", t->unroutable4, sizeof(t->unroutable4));
	link_bridge(&r, o, t);
	t->nhosts = json_object_array_length(hosts);
	if (t->nhosts > QPLAB_MAX_HOSTS)
		t->nhosts = QPLAB_MAX_HOSTS;
	for (size_t i = 0; i < t->nhosts; i++) {
		struct run_host *rh = &t->hosts[i];

		if (jread_elem(&r, hosts, "hosts", i, json_type_object, &h) != JREAD_OK)
			continue;
		jread_str_copy(&r, h, "name", rh->name, sizeof(rh->name));
		jread_str_copy(&r, h, "addr4", rh->addr4, sizeof(rh->addr4));
		jread_str_copy(&r, h, "addr6", rh->addr6, sizeof(rh->addr6));
		jread_str_copy(&r, h, "rxe", rh->rxe, sizeof(rh->rxe));
		jread_str_copy(&r, h, "rxe2", rh->rxe2, sizeof(rh->rxe2));
		jread_str_copy(&r, h, "addr4_2", rh->addr4_2, sizeof(rh->addr4_2));
		jread_str_copy(&r, h, "ifname", rh->ifname, sizeof(rh->ifname));
		snprintf(rh->unowned4, sizeof(rh->unowned4), "%s", t->unowned4);
		jread_str_copy(&r, h, "netns", rh->netns, sizeof(rh->netns));
		jread_int(&r, h, "mtu", 0, 65535, &rh->mtu);
		host_exec(&r, h, rh);
	}
	json_object_put(o);
	return r.errors ? -1 : 0;
}

void run_topo_sig(const struct qplab_plan *p, const char *mode, char *sig, size_t len)
{
	const char *words[QPLAB_TOPO_ARGV_MAX];
	char buf[2048];
	int n = qplab_topo_up_args(p, "ID", mode, words, buf, sizeof(buf));

	sig[0] = '\0';
	if (n < 0) /* topo up will refuse it; nothing shares it */
		snprintf(sig, len, "? %s", p->id);
	for (int i = 0; i < n; i++) {
		const char *eq = i + 1 < n && !strcmp(words[i], "--mtu") ? strchr(words[i + 1], '=') : NULL;

		if (eq && atoi(eq + 1) >= 1280) {
			i++;
			continue;
		}
		snprintf(sig + strlen(sig), len - strlen(sig), "%s ", words[i]);
	}
}

/* topo fault --name ID WORDS...; quiet: its stderr is dropped (a reset
 * that finds nothing to undo is no error). */
static int fault_words(const struct run_topo *t, const char *const *words, int n, bool quiet);

/* On the hosts backend a machine keeps its own MTU unless the plan names
 * one (the host's or a link's). */
static int wanted_mtu(const struct run_topo *t, const struct qplab_plan *p, size_t h,
		      const struct run_host *rh)
{
	bool named = p->hosts[h].mtu >= 0;

	for (size_t l = 0; l < p->nlinks && !named; l++)
		named = p->links[l].mtu >= 0 && (p->links[l].a == (int)h || p->links[l].b == (int)h);
	return t->inv && !named ? rh->orig_mtu : qplab_host_mtu(p, (int)h);
}

int run_topo_mtus(struct run_topo *t, const struct qplab_plan *p, char *err, size_t errlen)
{
	for (size_t h = 0; h < p->nhosts; h++) {
		int want;
		char mtu[16];
		const char *words[] = {"mtu", p->hosts[h].name, mtu, NULL};

		for (size_t k = 0; k < t->nhosts; k++) {
			struct run_host *rh = &t->hosts[k];

			if (strcmp(rh->name, p->hosts[h].name))
				continue;
			want = wanted_mtu(t, p, h, rh);
			if (rh->mtu == want)
				continue;
			snprintf(mtu, sizeof(mtu), "%d", want);
			if (fault_words(t, words, 3, false)) {
				snprintf(err, errlen, "host %s: its link's MTU could not be set to %d", rh->name, want);
				return -1;
			}
			rh->mtu = want;
		}
	}
	return 0;
}

int run_topo_up(const struct qplab_plan *p, const char *id, const char *mode, struct run_topo *t,
		char *err, size_t errlen)
{
	const char *words[QPLAB_TOPO_ARGV_MAX];
	char *argv[QPLAB_TOPO_ARGV_MAX + 2], buf[2048], *out = NULL;
	int n = qplab_topo_up_args(p, id, mode, words, buf, sizeof(buf)), rc;

	memset(t, 0, sizeof(*t));
	if (n < 0) {
		snprintf(err, errlen, "topo up: arguments too long");
		return -1;
	}
	argv[0] = (char *)topo_path();
	for (int i = 0; i < n; i++)
		argv[i + 1] = (char *)words[i];
	argv[n + 1] = NULL;
	rc = run_capture(argv, &out);
	/* A failing up unwinds what it built itself (its EXIT trap). */
	if (rc != 0) {
		snprintf(err, errlen, "topo up --name %s failed (exit %d%s)", id, rc,
			 rc == 4 ? ": a command it needs is missing" : "");
		free(out);
		return -1;
	}
	rc = parse_topo(out, t, err, errlen);
	free(out);
	if (rc == 0) {
		static unsigned seq; /* topologies come up one at a time (shared mode: --jobs 1) */

		t->up = true;
		for (size_t i = 0; i < t->nhosts; i++)
			t->hosts[i].topo_seq = seq;
		seq++;
	}
	return rc;
}

/* Runs argv to its end, its stdout drained, its stderr dropped when
 * quiet.  Returns its exit status, or -1. */
static int run_words(char *const argv[], bool quiet)
{
	struct run_spawn sp = {.argv = argv, .err_path = quiet ? "/dev/null" : NULL};
	char buf[256];
	ssize_t got;

	if (run_spawn_start(&sp))
		return -1;
	while ((got = read(sp.from_fd, buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR))
		;
	close(sp.from_fd);
	return run_spawn_wait(sp.pid);
}

/* netem HOST [loss PCT] [delay MS] as tc's words after "root netem"
 * (topo's own translation) into rest; returns how many, -1 if malformed. */
static int netem_rest(const char *const *words, int n, char bufs[2][24], const char *rest[4])
{
	int k = 0;

	if (n < 4 || n > 6 || n % 2)
		return -1;
	for (int i = 2; i < n; i += 2) {
		bool loss = !strcmp(words[i], "loss");
		char *b = bufs[(i - 2) / 2];

		if (!loss && strcmp(words[i], "delay"))
			return -1;
		snprintf(b, sizeof(bufs[0]), "%s%s", words[i + 1], loss ? "%" : "ms");
		rest[k++] = words[i];
		rest[k++] = b;
	}
	return k;
}

/* `mtu HOST N`, `clear HOST` and `netem HOST ...` are one command each in
 * topo fault (docs/lab-backends.md, "Faults"): run here as that command,
 * with the host's link and namespace from the topology JSON, they cost one
 * ip or tc (0.1-0.3 s under TCG) instead of a topo start (1-2 s).
 * Returns the status, or -2 when words are another fault. */
static int fault_direct(const struct run_topo *t, const char *const *words, int n, bool quiet)
{
	const struct run_host *h = NULL;
	char *argv[16], bufs[2][24];
	const char *nrest[4];
	int k = 0, nn = 0;
	bool mtu = n == 3 && !strcmp(words[0], "mtu");
	bool netem = n >= 4 && !strcmp(words[0], "netem") && (nn = netem_rest(words, n, bufs, nrest)) > 0;

	if (!mtu && !netem && !(n == 2 && !strcmp(words[0], "clear")))
		return -2;
	for (size_t i = 0; i < t->nhosts; i++)
		if (!strcmp(t->hosts[i].name, words[1]))
			h = &t->hosts[i];
	if (!h || !h->ifname[0])
		return -2;
	argv[k++] = (char *)(mtu ? "ip" : "tc");
	if (h->netns[0]) {
		argv[k++] = (char *)"-n";
		argv[k++] = (char *)h->netns;
	}
	if (mtu) {
		const char *rest[] = {"link", "set", "dev", h->ifname, "mtu", words[2]};

		for (size_t i = 0; i < 6; i++)
			argv[k++] = (char *)rest[i];
	} else if (netem) {
		const char *rest[] = {"qdisc", "replace", "dev", h->ifname, "root", "netem"};

		for (size_t i = 0; i < 6; i++)
			argv[k++] = (char *)rest[i];
		for (int i = 0; i < nn; i++)
			argv[k++] = (char *)nrest[i];
	} else {
		const char *rest[] = {"qdisc", "del", "dev", h->ifname, "root"};

		for (size_t i = 0; i < 5; i++)
			argv[k++] = (char *)rest[i];
	}
	argv[k] = NULL;
	/* clear is topo's `tc qdisc del ... || true`: no qdisc is no error. */
	k = run_words(argv, quiet || !(mtu || netem));
	return mtu || netem ? k : 0;
}

static int fault_words(const struct run_topo *t, const char *const *words, int n, bool quiet)
{
	char *argv[QPLAB_TOPO_ARGV_MAX + 5];
	int rc;

	/* The hosts backend records the fault in the host (for its reset):
	 * the topology is the caller's own, const only to the lab's path. */
	if (t->inv)
		return run_hosts_fault((struct run_topo *)t, words, n, quiet);
	rc = fault_direct(t, words, n, quiet);
	if (rc != -2)
		return rc;
	argv[0] = (char *)topo_path();
	argv[1] = (char *)"fault";
	argv[2] = (char *)"--name";
	argv[3] = (char *)t->id;
	for (int i = 0; i < n && i < QPLAB_TOPO_ARGV_MAX; i++)
		argv[i + 4] = (char *)words[i];
	argv[n + 4] = NULL;
	return run_words(argv, quiet);
}

int run_topo_fault(const struct run_topo *t, const struct qplab_plan *p, const struct qplab_step *st,
		   char *err, size_t errlen)
{
	const char *words[QPLAB_TOPO_ARGV_MAX];
	char buf[1024];
	int n = qplab_topo_step_args(p, st, words, buf, sizeof(buf)), rc;

	if (n < 0) {
		snprintf(err, errlen, "step %s: the topology cannot do it", qplab_step_kind_name(st->kind));
		return -1;
	}
	rc = fault_words(t, words, n, false);
	if (rc != 0)
		snprintf(err, errlen, "topo fault %s failed (exit %d)", qplab_step_kind_name(st->kind), rc);
	return rc ? -1 : 0;
}

/* Reads from fd until EOF or the deadline (absolute ms); 1 at EOF. */
static int drain_until(int fd, double deadline)
{
	char buf[256];

	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int left = (int)(deadline - run_now_ms()), r;

		if (left <= 0)
			return 0;
		r = poll(&pfd, 1, left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0) {
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n == 0 || (n < 0 && errno != EINTR))
				return 1;
		}
	}
}

int run_topo_del_device(const struct run_topo *t, const struct qplab_plan *p, const struct qplab_step *st,
			int deadline_ms, struct run_agent *holder, double *blocked_ms, char *err, size_t errlen)
{
	const char *words[QPLAB_TOPO_ARGV_MAX];
	char *argv[QPLAB_TOPO_ARGV_MAX + 5], buf[256];
	struct run_spawn sp = {.argv = argv};
	int n = qplab_topo_step_args(p, st, words, buf, sizeof(buf)), rc;
	double t0 = run_now_ms();

	char **ssh = NULL;

	*blocked_ms = 0;
	argv[0] = (char *)topo_path();
	argv[1] = (char *)"fault";
	argv[2] = (char *)"--name";
	argv[3] = (char *)t->id;
	for (int i = 0; i < n; i++)
		argv[i + 4] = (char *)words[i];
	argv[n + 4] = NULL;
	if (t->inv && n >= 2) { /* the hosts backend: `rdma link del` over ssh */
		struct run_host *h = NULL;
		const char *remote[16];
		char bufs[2][64], why[400];

		for (size_t i = 0; i < t->nhosts; i++)
			if (!strcmp(t->hosts[i].name, words[1]))
				h = (struct run_host *)&t->hosts[i];
		if (!h || !qplab_inv_fault_allowed(h->inv, QPLAB_INV_FAULT_DELETE_DEVICE, why, sizeof(why)) ||
		    run_hosts_fault_words(h, t, words, n, remote, bufs) < 0 ||
		    !(ssh = run_hosts_argv(h, remote))) {
			snprintf(err, errlen, "delete_device: %s", h ? why : "no such host");
			return -1;
		}
		h->touched |= QPLAB_INV_FAULT_DELETE_DEVICE;
		sp.argv = ssh;
	}
	rc = n < 0 ? -1 : run_spawn_start(&sp);
	qplab_inv_argv_free(ssh);
	if (rc) {
		snprintf(err, errlen, "delete_device: cannot run topo");
		return -1;
	}
	/* If the kernel waits for the device's users, the agent is one: it is
	 * killed, and the step records how long the deletion blocked. */
	if (!drain_until(sp.from_fd, t0 + deadline_ms)) {
		*blocked_ms = run_now_ms() - t0;
		run_agent_kill(holder);
		if (!drain_until(sp.from_fd, run_now_ms() + 10000 * run_mult())) {
			close(sp.from_fd);
			snprintf(err, errlen, "delete_device: rdma link del still blocked %.0f ms after the agent was killed",
				 10000 * run_mult());
			return -1; /* the topo process is left to finish; down cleans up */
		}
	}
	close(sp.from_fd);
	rc = run_spawn_wait(sp.pid);
	if (rc)
		snprintf(err, errlen, "topo fault del-rxe failed (exit %d)", rc);
	return rc ? -1 : 0;
}

int run_topo_links(const struct run_topo *t, const struct qplab_plan *p, char *err, size_t errlen)
{
	for (size_t l = 0; l < p->nlinks; l++) {
		int ends[2] = {p->links[l].a, p->links[l].b};

		if (!p->links[l].netem.set)
			continue;
		/* The wire's netem works both ways: on each end's egress. */
		for (int e = 0; e < 2; e++) {
			const char *words[QPLAB_TOPO_ARGV_MAX];
			char buf[256];
			int n = qplab_topo_netem_args(p->hosts[ends[e]].name, &p->links[l].netem, words, buf,
						      sizeof(buf));

			if (n < 0 || fault_words(t, words, n, false)) {
				snprintf(err, errlen, "line %d: the link's netem could not be set", p->links[l].line);
				return -1;
			}
		}
	}
	return 0;
}

/* The words that undo step st (NULL-ended lists into out); returns how
 * many lists, -1 when it cannot be undone (delete_device, remove_address,
 * disable_ipv6).  A link_up
 * needs none, and a link_down none when a later link_up put the link back
 * (reset runs only after every step succeeded; in shared mode a topo
 * `link up` costs a topo start and the host's routes). */
static int undo_words(const struct qplab_plan *p, const struct qplab_step *st, const char *out[3][6],
		      char mtu[16])
{
	const char *h = st->host >= 0 ? p->hosts[st->host].name : NULL;

	switch (st->kind) {
	case QPLAB_STEP_LINK_DOWN:
		out[0][0] = "link", out[0][1] = h, out[0][2] = "up", out[0][3] = NULL;
		return 1;
	case QPLAB_STEP_NETEM_ON: case QPLAB_STEP_NETEM_OFF:
		out[0][0] = "clear", out[0][1] = h, out[0][2] = NULL;
		return 1;
	case QPLAB_STEP_SET_MTU:
		snprintf(mtu, 16, "%d", qplab_host_mtu(p, st->host));
		out[0][0] = "mtu", out[0][1] = h, out[0][2] = mtu, out[0][3] = NULL;
		return 1;
	case QPLAB_STEP_BLACKHOLE: case QPLAB_STEP_UNBLACKHOLE:
		out[0][0] = "unblackhole", out[0][1] = h, out[0][2] = p->hosts[st->peer].name, out[0][3] = NULL;
		out[1][0] = "clear", out[1][1] = h, out[1][2] = NULL;
		return 2;
	case QPLAB_STEP_ADD_ADDRESS:
		out[0][0] = "addr", out[0][1] = h, out[0][2] = "del-second", out[0][3] = NULL;
		return 1;
	case QPLAB_STEP_FIREWALL_DROP: case QPLAB_STEP_FIREWALL_REJECT:
		out[0][0] = "firewall", out[0][1] = h, out[0][2] = "off", out[0][3] = RUN_AGENT_PORT_STR;
		out[0][4] = NULL;
		return 1;
	case QPLAB_STEP_DELETE_DEVICE:
	/* Rebuilt: a re-added address gets another GID index while QPs hold
	 * the old entry (observed on 7.2), and the link's IPv6 addresses do
	 * not come back with disable_ipv6=0. */
	case QPLAB_STEP_REMOVE_ADDRESS:
	case QPLAB_STEP_DISABLE_IPV6:
		return -1;
	default:
		return 0;
	}
}

/* "w0 w1 ..." of an undo, to run each distinct one once (a file that
 * takes a link down and up twice needs one `link a up`). */
static void undo_key(const char *const *w, char *key, size_t len)
{
	key[0] = '\0';
	for (int c = 0; w[c]; c++)
		snprintf(key + strlen(key), len - strlen(key), "%s ", w[c]);
}

/* A link_up of step si's host comes after step si. */
static bool relinked(const struct qplab_plan *p, size_t si)
{
	for (size_t j = si + 1; j < p->nsteps; j++)
		if (p->steps[j].host == p->steps[si].host && p->steps[j].kind == QPLAB_STEP_LINK_UP) {
			for (size_t k = j + 1; k < p->nsteps; k++)
				if (p->steps[k].host == p->steps[si].host && p->steps[k].kind == QPLAB_STEP_LINK_DOWN)
					return false;
			return true;
		}
	return false;
}

int run_topo_reset(const struct run_topo *t, const struct qplab_plan *p)
{
	char done[32][64];
	int ndone = 0, rc = 0;

	if (t->inv)
		return run_hosts_reset((struct run_topo *)t) ? -1 : 0;
	for (size_t l = 0; l < p->nlinks; l++)
		if (p->links[l].netem.set) {
			const char *a[] = {"clear", p->hosts[p->links[l].a].name, NULL};
			const char *b[] = {"clear", p->hosts[p->links[l].b].name, NULL};

			rc |= fault_words(t, a, 2, true) | fault_words(t, b, 2, true);
		}
	for (size_t i = 0; i < p->nsteps; i++) {
		const char *w[3][6];
		char mtu[16], key[64];
		int n = undo_words(p, &p->steps[i], w, mtu), seen;

		if (p->steps[i].kind == QPLAB_STEP_LINK_DOWN && relinked(p, i))
			n = 0;

		if (n < 0)
			return -1;
		for (int k = 0; k < n; k++) {
			int c = 0;

			undo_key(w[k], key, sizeof(key));
			for (seen = 0; seen < ndone && strcmp(done[seen], key); seen++)
				;
			if (seen < ndone)
				continue;
			if (ndone < 32)
				snprintf(done[ndone++], sizeof(done[0]), "%s", key);
			while (w[k][c])
				c++;
			/* An undo that finds nothing to undo fails harmlessly
			 * (unblackhole after unblackhole): not an error. */
			fault_words(t, w[k], c, true);
		}
	}
	return rc ? -1 : 0;
}

/* Does the rule line name address a (a whole word)? */
static bool names_word(const char *line, const char *a)
{
	size_t k = strlen(a);

	for (const char *at = k ? strstr(line, a) : NULL; at; at = strstr(at + 1, a))
		if (at > line && at[-1] == ' ' && (at[k] == ' ' || at[k] == '\0'))
			return true;
	return false;
}

/* Lines of `ip rule show` naming one of t's IPv4 addresses or looking up
 * a table reg registered (shared mode's blackhole rules name neither host). */
static int count_rules(const struct run_topo *t, const struct run_reg *reg)
{
	char *argv[] = {(char *)"ip", (char *)"rule", (char *)"show", NULL};
	char *out = NULL, *line, *save = NULL;
	int n = 0;

	/* netns mode adds no rule to the runner's namespace. */
	if (!strcmp(t->mode, "netns") || run_capture(argv, &out) != 0) {
		free(out);
		return 0;
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool ours = false;

		for (size_t i = 0; i < t->nhosts && !ours; i++)
			ours = names_word(line, t->hosts[i].addr4);
		for (size_t i = 0; reg && i < reg->nobjs && !ours; i++) {
			char want[80];

			snprintf(want, sizeof(want), "lookup %s", reg->objs[i].name);
			ours = !strcmp(reg->objs[i].kind, "table4") && names_word(line, want);
		}
		n += ours;
	}
	free(out);
	return n;
}

/* One `rdma resource show qp` for every device (under TCG a program
 * start costs 0.1-0.3 s; the shell pipeline per host cost three). */
void run_count_qps(const char *const rxe[], size_t n, int counts[])
{
	char *argv[] = {(char *)"rdma", (char *)"resource", (char *)"show", (char *)"qp", NULL};
	char *out = NULL, *line, *save = NULL;
	int rc = run_capture(argv, &out);

	for (size_t i = 0; i < n; i++)
		counts[i] = rc == 0 && out ? 0 : -1;
	for (line = out ? strtok_r(out, "\n", &save) : NULL; rc == 0 && line;
	     line = strtok_r(NULL, "\n", &save)) {
		/* QP 1 (GSI) belongs to the kernel, not to an agent. */
		if (strncmp(line, "link ", 5) || strstr(line, " lqpn 1 "))
			continue;
		for (size_t i = 0; i < n; i++) {
			size_t k = strlen(rxe[i]);

			if (k && !strncmp(line + 5, rxe[i], k) && line[5 + k] == '/')
				counts[i]++;
		}
	}
	free(out);
}

int run_topo_down(struct run_topo *t)
{
	char *argv[] = {(char *)topo_path(), (char *)"down", (char *)"--name", t->id, NULL};
	struct run_reg *reg;
	int left, rc;

	if (!t->up)
		return 0;
	if (t->inv) { /* the machines stay; what the faults changed goes */
		t->up = false;
		left = run_hosts_reset(t);
		run_hosts_stop(t);
		return left;
	}
	/* What the registry says was made, read before down removes it; then
	 * counted here, not taken from topo's word. */
	reg = malloc(sizeof(*reg));
	if (reg && run_reg_load(t->id, reg)) {
		fprintf(stderr, "qplab run: topology %s has no undo registry (%s/%s.undo)\n", t->id,
			QPLAB_LAB_STATE_DIR, t->id);
		free(reg);
		reg = NULL;
	}
	rc = run_capture(argv, NULL);
	t->up = false;
	left = reg ? run_reg_present(reg) : 1;
	left += count_rules(t, reg);
	/* An undo that failed (topo named its log) counts even when what it
	 * should have removed is gone now. */
	if (rc != 0 && left == 0)
		left = 1;
	free(reg);
	return left;
}

void run_topo_free(struct run_topo *t)
{
	for (size_t i = 0; i < t->nhosts; i++)
		for (int k = 0; t->hosts[i].exec[k]; k++) {
			free(t->hosts[i].exec[k]);
			t->hosts[i].exec[k] = NULL;
		}
}
