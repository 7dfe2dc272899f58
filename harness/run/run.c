/* `qplab run`: scenarios -> TAP, results.json, junit.xml.  With the vm
 * backend it re-executes itself inside `netns/vm` once per kernel and
 * merges the runs; otherwise it runs the scenarios here, one at a time or,
 * with --jobs N in the netns mode, N at once (run_jobs.c). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/jread.h"
#include "qphs/error.h"
#include "lab_conf.h"
#include "registry.h"
#include "report/report.h"
#include "run.h"
#include "run_args.h"
#include "run_jobs.h"
#include "run_wire.h"

volatile sig_atomic_t qplab_run_interrupted;

static void on_signal(int sig)
{
	qplab_run_interrupted = sig;
}

static void catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: waits end */

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* rdma_cgroup: the kernel has the rdma cgroup controller (a line "rdma"
 * in /proc/cgroups, mounted or not: the agent mounts cgroup2 itself). */
static bool has_rdma_cgroup(void)
{
	char line[256];
	FILE *f = fopen("/proc/cgroups", "r");
	bool yes = false;

	while (f && !yes && fgets(line, sizeof(line), f))
		yes = !strncmp(line, "rdma\t", 5);
	if (f)
		fclose(f);
	return yes;
}

/* Capabilities from netns/probe --json and the tools present. */
static int probe_caps(const char *caps[8], char *mode, size_t modelen)
{
	char probe[4200], *out = NULL;
	char *argv[] = {probe, (char *)"--json", NULL};
	char err[256] = "";
	struct jread r = {.what = "netns/probe --json", .err = err, .errlen = sizeof(err)};
	const char *rxe = "";
	json_object *o;
	int n = 0;

	snprintf(probe, sizeof(probe), "%s/probe", qplab_script_dir());
	mode[0] = '\0';
	if (run_capture(argv, &out) == 0 && out &&
	    jread_parse_object(&r, out, strlen(out), &o) == JREAD_OK) {
		jread_str_copy(&r, o, "mode", mode, modelen);
		if (jread_str(&r, o, "netns_rxe", &rxe) == JREAD_OK && !strcmp(rxe, "yes"))
			caps[n++] = "rxe_netns";
		json_object_put(o);
	}
	if (r.errors) {
		fprintf(stderr, "qplab run: %s\n", err);
		mode[0] = '\0';
	}
	free(out);
	if (access("/usr/sbin/tc", X_OK) == 0 || access("/sbin/tc", X_OK) == 0)
		caps[n++] = "netem";
	if (has_rdma_cgroup())
		caps[n++] = "rdma_cgroup";
	caps[n++] = "veth"; /* netns/topo joins two hosts with a veth pair */
	caps[n] = NULL;
	return mode[0] && strcmp(mode, "none") ? 0 : -1;
}

/* auto outside the VM: this machine runs the lab itself only in netns
 * mode (shared mode rewrites the routing rules, so it is the VM's, or an
 * explicit --backend shared); everything else goes to the vm backend. */
static bool host_has_netns(void)
{
	const char *caps[8];
	char mode[16];

	if (getenv("QPLAB_IN_VM"))
		return true;
	if (access("/sys/module/rdma_rxe", F_OK) && access("/sys/module/ib_core", F_OK) &&
	    geteuid() != 0)
		return false;
	return probe_caps(caps, mode, sizeof(mode)) == 0 && !strcmp(mode, "netns");
}

/* "overhead_ms": the scenario's wall time beyond its own steps, and where
 * it went (docs/results.md); "kept_topology" under --keep. */
static void add_overhead(json_object *j, const struct run_outcome *o)
{
	static const char *const names[RUN_PHASE_COUNT] = {"topology_ms", "agents_ms", "facts_ms",
							   "teardown_ms", "topology_down_ms"};
	json_object *ph = json_object_new_object();
	double over = o->elapsed_s * 1000.0 - o->steps_ms;

	json_object_object_add(j, "steps_ms", json_object_new_int64((int64_t)(o->steps_ms + 0.5)));
	json_object_object_add(j, "overhead_ms", json_object_new_int64((int64_t)(over > 0 ? over + 0.5 : 0)));
	for (int i = 0; i < RUN_PHASE_COUNT; i++)
		json_object_object_add(ph, names[i], json_object_new_int64((int64_t)(o->phase_ms[i] + 0.5)));
	json_object_object_add(j, "overhead", ph);
	json_object_object_add(j, "kept_topology", o->kept[0] ? json_object_new_string(o->kept) : NULL);
}

/* The `# overhead:` line: the mean over the scenarios that ran, and the
 * same without building and removing topologies (a cost of the run, shared
 * by every scenario that reuses one). */
static void print_overhead(const struct run_outcome *o, int n, int built)
{
	double all = 0, own = 0, max = 0;

	if (n == 0)
		return;
	for (int i = 0; i < n; i++) {
		double over = o[i].elapsed_s * 1000.0 - o[i].steps_ms;

		all += over;
		over -= o[i].phase_ms[RUN_PHASE_TOPO] + o[i].phase_ms[RUN_PHASE_TOPO_DOWN];
		own += over;
		max = over > max ? over : max;
	}
	printf("# overhead: mean %.2f s per scenario beyond its steps; %.2f s (max %.2f s) without "
	       "building and removing topologies (%d built for %d scenarios)\n",
	       all / n / 1000.0, own / n / 1000.0, max / 1000.0, built, n);
}

/* "implementations": what ran on each host, and for a Mooncake host the
 * build its adapter was made from (docs/results.md). */
static void add_impls(json_object *j, const struct qplab_plan *p, const struct run_outcome *o)
{
	json_object *all = json_object_new_object();

	for (size_t h = 0; h < p->nhosts; h++) {
		json_object *one = json_object_new_object();

		json_object_object_add(one, "impl", json_object_new_string(o->impl[h].impl[0] ? o->impl[h].impl
											: p->hosts[h].impl));
		if (!strcmp(p->hosts[h].impl, "mooncake")) {
			json_object_object_add(one, "mooncake_commit", o->impl[h].commit[0] ?
					       json_object_new_string(o->impl[h].commit) : NULL);
			json_object_object_add(one, "mooncake_build", o->impl[h].build[0] ?
					       json_object_new_string(o->impl[h].build) : NULL);
		}
		json_object_object_add(all, p->hosts[h].name, one);
	}
	json_object_object_add(j, "implementations", all);
}

/* The output directory of this run (run_here): "logs" paths are relative
 * to it, where results.json and report.html are. */
static const char *run_out_dir = "";
/* The scenarios' pcaps: OUT/pcaps, "pcaps" in results.json. */
static const char *run_pcap_rel = "pcaps";

/* "logs": host -> its agent's log (run_agent.c names it by host, so it
 * holds the lines of every scenario that host ran in this directory). */
static void add_logs(json_object *j, const struct qplab_plan *p)
{
	const char *dir = getenv("QPLAB_RUN_LOGDIR");
	size_t n = strlen(run_out_dir);
	json_object *logs;

	if (!dir)
		return;
	if (n && !strncmp(dir, run_out_dir, n) && dir[n] == '/')
		dir += n + 1;
	logs = json_object_new_object();
	for (size_t h = 0; h < p->nhosts; h++) {
		char path[4400];

		snprintf(path, sizeof(path), "%s/agent-%s.log", dir, p->hosts[h].name);
		json_object_object_add(logs, p->hosts[h].name, json_object_new_string(path));
	}
	json_object_object_add(j, "logs", logs);
}

json_object *run_scenario_json(const struct qplab_plan *p, struct run_outcome *o,
			       const struct qplab_runinfo *ri)
{
	struct qplab_verdict *v = NULL;
	struct qplab_runinfo hri = *ri;
	struct qplab_scenario_result r = {.plan = p, .status = o->status,
					  .reason = o->reason[0] ? o->reason : NULL,
					  .elapsed_s = o->elapsed_s,
					  .facts = o->have_facts ? &o->facts : NULL};
	json_object *j;

	if (o->status == QPLAB_PASS) {
		int failed;

		for (size_t h = 0; h < p->nhosts && h < QPLAB_MAX_HOSTS; h++)
			if (o->host_kernel[h][0])
				hri.host_kernel[h] = o->host_kernel[h];
		failed = qplab_expect_eval(p, &hri, &o->facts, &v);

		r.verdicts = v;
		r.status = failed > 0 ? QPLAB_FAIL : failed < 0 ? QPLAB_ERROR : QPLAB_PASS;
	}
	j = qplab_result_json(&r);
	qplab_verdicts_free(v, v ? p->nexpect : 0);
	if (j && o->status != QPLAB_SKIP) {
		add_overhead(j, o);
		add_logs(j, p);
		if (run_wire_json(j, p, o, run_pcap_rel) > 0 && r.status == QPLAB_PASS)
			json_object_object_add(j, "status", json_object_new_string(qplab_status_name(QPLAB_FAIL)));
	} else {
		run_cap_result_free(&o->cap);
	}
	if (j)
		add_impls(j, p, o);
	return j;
}

/* One scenario after another, in catalogue order, one run_ctx. */
static void run_serial(struct run_ctx *c, const struct qplab_catalogue *cat,
		       const struct qplab_runinfo *ri, struct qplab_tap *tap, json_object *run,
		       struct run_totals *tot)
{
	for (size_t i = 0; i < cat->n && !qplab_run_interrupted; i++) {
		struct run_outcome out;
		json_object *j;

		memset(&out, 0, sizeof(out));
		c->last = i + 1 == cat->n && !run_ablate_wants_twin(c, cat->plans[i]);
		run_scenario(c, cat->plans[i], &out);
		if (tot->over && out.status != QPLAB_SKIP)
			tot->over[tot->nover++] = out;
		j = run_scenario_json(cat->plans[i], &out, ri);
		run_ablate(c, cat->plans[i], i + 1 == cat->n, j, ri);
		qplab_tap_result(tap, j);
		qplab_results_run_add(run, j);
		json_object_put(j);
		if (out.have_facts)
			qplab_scenario_facts_free(&out.facts);
	}
	tot->left = run_ctx_finish(c);
	run_tshark_stop(&c->tshark);
	tot->built = c->built;
}

/* Objects named like the lab's that no undo registry names are not this
 * run's (nor any topology's): said once, left alone, not counted. */
static void report_foreign(void)
{
	char list[2048];
	int n = run_reg_foreign(QPLAB_LAB_PREFIX, list, sizeof(list));

	if (n > 0)
		printf("# %d object%s named like the lab's that no undo registry names (not this run's; left "
		       "alone): %s\n", n, n == 1 ? "" : "s", list);
}

static bool catalogue_has_wire(const struct qplab_catalogue *cat)
{
	for (size_t i = 0; i < cat->n; i++)
		if (cat->plans[i]->nwire)
			return true;
	return false;
}

/* Runs every scenario here (inside the lab): serially, or with --jobs N
 * on N workers (netns mode; shared mode refuses, run_args.c). */
/* The hosts backend's machines, asked once before the first scenario:
 * results.json's run gets "hosts" (name -> kernel, driver, device,
 * netdev, address, the machine), and the run's kernel and driver are the
 * machines' when they agree, else "mixed". */
static int hosts_begin(struct run_ctx *c, struct qplab_runinfo *ri, char *kernel, size_t klen,
		       char *driver, size_t dlen, json_object **hosts, char *err, size_t errlen)
{
	if (run_hosts_topo(c->inv, &c->topo, err, errlen))
		return -1;
	snprintf(c->sig, sizeof(c->sig), "hosts");
	*hosts = json_object_new_object();
	snprintf(kernel, klen, "%s", c->topo.hosts[0].kernel);
	snprintf(driver, dlen, "%s", c->topo.hosts[0].driver);
	for (size_t i = 0; i < c->topo.nhosts; i++) {
		const struct run_host *h = &c->topo.hosts[i];
		json_object *j = json_object_new_object();

		if (strcmp(kernel, h->kernel))
			snprintf(kernel, klen, "mixed");
		if (strcmp(driver, h->driver))
			snprintf(driver, dlen, "mixed");
		json_object_object_add(j, "kernel", json_object_new_string(h->kernel));
		json_object_object_add(j, "driver", json_object_new_string(h->driver));
		json_object_object_add(j, "device", json_object_new_string(h->rxe));
		json_object_object_add(j, "netdev", json_object_new_string(h->ifname));
		json_object_object_add(j, "address", json_object_new_string(h->inv->address));
		json_object_object_add(j, "mtu", json_object_new_int(h->orig_mtu));
		json_object_object_add(j, "ssh", json_object_new_string(h->inv->ssh.destination[0]
									  ? h->inv->ssh.destination
									  : h->inv->ssh.alias));
		json_object_object_add(*hosts, h->name, j);
		printf("# host %s: kernel %s, driver %s, device %s on %s (%s)\n", h->name, h->kernel,
		       h->driver, h->rxe, h->ifname, h->inv->address);
	}
	ri->kernel = kernel;
	ri->driver = driver;
	return 0;
}

static int run_here(const struct qplab_run_opts *o, struct qplab_catalogue *cat,
		    const struct qplab_inventory *inv)
{
	const char *caps[8];
	char mode[16], err[512], kernel[128] = "", logdir[4200], pcapdir[4200];
	struct utsname u;
	struct qplab_tap tap;
	struct run_ctx c = {.caps = caps};
	struct qplab_runinfo ri = {.driver = "rxe", .caps = caps, .time_multiplier = run_mult()};
	json_object *doc = qplab_results_doc(), *run;
	double t0 = run_now_ms();
	struct run_totals tot = {0};
	json_object *hosts = NULL;
	char driver[64];
	int rc;

	if (inv) {
		/* tc on the machines is the inventory's word (its faults). */
		caps[0] = "netem";
		caps[1] = NULL;
		snprintf(mode, sizeof(mode), "hosts");
		c.inv = inv;
	} else if (probe_caps(caps, mode, sizeof(mode)) != 0) {
		qplab_tap_begin(&tap, stdout, (int)cat->n);
		qplab_tap_bail(&tap, "no topology mode works here (netns/probe: no rxe)");
		json_object_put(doc);
		return QPLAB_EXIT_FAIL;
	}
	if (inv && hosts_begin(&c, &ri, kernel, sizeof(kernel), driver, sizeof(driver), &hosts, err,
			       sizeof(err))) {
		qplab_tap_begin(&tap, stdout, (int)cat->n);
		qplab_tap_bail(&tap, err);
		json_object_put(doc);
		return QPLAB_EXIT_FAIL;
	}
	if (o->backend == QPLAB_BACKEND_NETNS || o->backend == QPLAB_BACKEND_SHARED)
		snprintf(mode, sizeof(mode), "%s", qplab_backend_name(o->backend));
	if (qplab_run_check_jobs(o, mode, err, sizeof(err))) {
		json_object_put(doc);
		return qplab_usage_error("run: %s", err);
	}
	c.mode = mode;
	c.keep = o->keep;
	c.ablate = o->ablate;
	if (!inv) {
		uname(&u);
		snprintf(kernel, sizeof(kernel), "%s", u.release);
		ri.kernel = kernel;
	}
	ri.backend = mode;
	snprintf(logdir, sizeof(logdir), "%s/logs", o->out);
	run_out_dir = o->out;
	qplab_report_mkdir(logdir);
	snprintf(pcapdir, sizeof(pcapdir), "%s/pcaps", o->out);
	c.capture = o->capture;
	c.pcap_dir = pcapdir;
	if (o->capture || catalogue_has_wire(cat))
		qplab_report_mkdir(pcapdir);
	/* Scenarios sharing a topology run one after another (run_order.c). */
	run_order_plans(cat->plans, cat->n);
	setenv("QPLAB_RUN_LOGDIR", logdir, 1);
	run = qplab_results_run(&ri, NULL);
	if (hosts)
		json_object_object_add(run, "hosts", hosts);
	tot.over = calloc(cat->n + 1, sizeof(*tot.over));
	qplab_tap_begin(&tap, stdout, (int)cat->n);
	tap.ablate = o->ablate;
	if (o->jobs < 2 || cat->n < 2 || run_jobs(&c, cat, &ri, o->jobs, logdir, &tap, run, &tot))
		run_serial(&c, cat, &ri, &tap, run, &tot);
	if (tot.left > 0) {
		printf("# the lab's topology was not removed completely (netns/topo down --all)\n");
		tap.counts[QPLAB_ERROR]++;
	}
	report_foreign();
	if (qplab_run_interrupted)
		printf("# interrupted (signal %d): torn down, %d of %zu scenarios ran\n",
		       (int)qplab_run_interrupted, tap.done, cat->n);
	qplab_results_run_finish(run, (run_now_ms() - t0) / 1000.0);
	qplab_results_add_run(doc, run);
	json_object_put(run);
	if (qplab_report_write_outputs(o->out, doc, err, sizeof(err)))
		fprintf(stderr, "qplab run: %s\n", err);
	json_object_put(doc);
	print_overhead(tot.over, tot.nover, tot.built);
	free(tot.over);
	rc = qplab_tap_end(&tap);
	return qplab_run_interrupted ? QPLAB_EXIT_FAIL : rc;
}

/* The adapter for Mooncake hosts: --mooncake-agent, else
 * $QPLAB_MOONCAKE_AGENT, else mooncake/qplab-mooncake-agent beside this
 * qplab (build/mooncake/ in a checkout: make mooncake-agent puts it
 * there); absolute, in QPLAB_MOONCAKE_AGENT for the agents' spawner (and
 * the vm backend's inner run, which gets it as --mooncake-agent). */
static void mooncake_agent_path(struct qplab_run_opts *o)
{
	static char path[4200];
	char exe[4096], real[4096];
	const char *env = getenv("QPLAB_MOONCAKE_AGENT");
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (o->mooncake_agent) {
		snprintf(path, sizeof(path), "%s", o->mooncake_agent);
	} else if (env && *env) {
		snprintf(path, sizeof(path), "%s", env);
	} else {
		exe[n > 0 ? n : 0] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(path, sizeof(path), "%s/mooncake/qplab-mooncake-agent", exe);
	}
	if (realpath(path, real))
		snprintf(path, sizeof(path), "%s", real);
	setenv("QPLAB_MOONCAKE_AGENT", path, 1);
	o->mooncake_agent = path;
}

/* Bad scenario files, --impl hosts or ablated twins: every message, exit 2
 * with nothing run. */
static int refuse(struct qplab_errors *errs, struct qplab_catalogue *cat, struct qplab_inventory *inv)
{
	for (size_t i = 0; i < errs->n; i++)
		fprintf(stderr, "%s\n", errs->msgs[i]);
	qplab_errors_free(errs);
	qplab_catalogue_free(cat);
	qplab_inventory_free(inv);
	return QPLAB_EXIT_USAGE;
}

int cmd_run(int argc, char **argv)
{
	struct qplab_run_opts o;
	struct qplab_catalogue cat = {0};
	struct qplab_errors errs = {0};
	char err[512], dflt[4200];
	const char *paths[1];
	struct qplab_inventory *inv = NULL;
	double mult;
	int rc;

	if (qplab_run_parse_args(argc, argv, &o, err, sizeof(err)))
		return qplab_usage_error("run: %s", err);
	if (o.help) {
		qplab_run_usage(stdout);
		return QPLAB_EXIT_OK;
	}
	if (qplab_time_multiplier(&mult, err, sizeof(err)))
		return qplab_usage_error("run: %s", err);
	if (o.inventory && qplab_inventory_load(o.inventory, &inv, &errs)) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msgs[i]);
		qplab_errors_free(&errs);
		return QPLAB_EXIT_USAGE;
	}
	snprintf(dflt, sizeof(dflt), "%s/scenarios", qplab_root());
	paths[0] = dflt;
	if (qplab_catalogue_load(o.npaths ? o.paths : paths, o.npaths ? o.npaths : 1, o.tags, o.ntags,
				 &cat, &errs) ||
	    qplab_catalogue_impls(&cat, &o, &errs) ||
	    (o.ablate && qplab_catalogue_twins(&cat, &errs)))
		return refuse(&errs, &cat, inv);
	mooncake_agent_path(&o);
	/* --jobs is checked where the topology mode is known: inside the lab
	 * (run_here; with the vm backend, inside the VM, which gets --jobs). */
	catch_signals();
	if (o.backend == QPLAB_BACKEND_HOSTS_VM)
		rc = run_hosts_vm(argc, argv, &o);
	else if (inv)
		rc = run_here(&o, &cat, inv);
	else if (o.backend == QPLAB_BACKEND_VM || (o.backend == QPLAB_BACKEND_AUTO && !host_has_netns()))
		rc = run_in_vm(argc, argv, &o, cat.n);
	else
		rc = run_here(&o, &cat, NULL);
	qplab_catalogue_free(&cat);
	qplab_inventory_free(inv);
	return rc;
}
