/* `qplab run`: its command line, and the list of scenarios it names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "run_args.h"

static const char *const backend_names[] = {"auto", "netns", "shared", "vm", "hosts", "hosts-vm"};
#define NBACKENDS (sizeof(backend_names) / sizeof(backend_names[0]))

const char *qplab_backend_name(enum qplab_backend b)
{
	return (unsigned)b < NBACKENDS ? backend_names[b] : "?";
}

void qplab_run_usage(FILE *out)
{
	fprintf(out,
		"usage: qplab run [FILES|DIRS...] [--backend auto|netns|shared|vm|hosts|hosts-vm] [--kernel K]...\n"
		"                 [--inventory FILE] [--tag T]... [--jobs N] [--out DIR] [--keep] [--capture]\n"
		"                 [--impl HOST=NAME]... [--placements] [--mooncake-agent PATH] [--ablate]\n\n"
		"Runs scenario files (a directory means every *.json below it; none means the\n"
		"catalogue).  TAP on stdout; results.json, junit.xml and report.html (open it in\n"
		"a browser; `qplab report` makes it again) in DIR (default build/lab).\n"
		"  --backend B   where the lab runs (default auto: the best this machine offers);\n"
		"                'hosts': the machines of --inventory, agents started over ssh;\n"
		"                'hosts-vm': the hosts backend on two lab VMs booted for the run\n"
		"                (one --kernel NAME=K each, e.g. --kernel a=6.1 --kernel b=7)\n"
		"  --inventory F the hosts backend's machines (docs/inventory.md)\n"
		"  --kernel K    run on kernel K (vm backend; repeat for several, merged results);\n"
		"                hosts-vm: NAME=K, scenario host NAME's guest runs kernel K\n"
		"  --tag T       only scenarios tagged T (repeat: any of them)\n"
		"  --jobs N      scenarios at once (netns mode; the shared mode refuses N > 1)\n"
		"  --out DIR     output directory\n"
		"  --keep        leave the topology of a scenario that errored, and of the last\n"
		"                scenario, in place for inspection (netns/topo down --name ID)\n"
		"  --capture     a pcap of each scenario's lab traffic (handshake TCP, RoCEv2 UDP\n"
		"                4791) in DIR/pcaps, at most 8 MiB each; a scenario with wire\n"
		"                expectations is always captured\n"
		"  --impl HOST=NAME  host HOST runs NAME (qplab, mooncake-compat, mooncake),\n"
		"                whatever the file says (repeat for several hosts)\n"
		"  --placements  run each scenario with \"placements\" once per placement (the\n"
		"                hosts it lists run Mooncake; ids get @mooncake=HOSTS)\n"
		"  --mooncake-agent PATH  the adapter for mooncake hosts (default\n"
		"                $QPLAB_MOONCAKE_AGENT, else mooncake/qplab-mooncake-agent beside qplab)\n"
		"  --ablate      run each passing scenario again without its fault (its \"ablate\"\n"
		"                key), right after it: sensitive (an expectation now fails),\n"
		"                insensitive (all still pass: exit 1), error, no fault, unmarked, not run\n"
		"Exit: 0 all passed or skipped, 1 a scenario failed (or is insensitive), 2 usage\n"
		"error or bad file.\n");
}

static int fail(char *err, size_t errlen, const char *fmt, const char *arg)
{
	snprintf(err, errlen, fmt, arg);
	return QPHS_ERR_INVALID_ARGUMENT;
}

static int push(const char **list, size_t *n, const char *v, char *err, size_t errlen)
{
	if (*n == QPLAB_RUN_MAX_LIST)
		return fail(err, errlen, "too many values for %s", "one option");
	list[(*n)++] = v;
	return 0;
}

/* --impl HOST=NAME */
static int impl_option(struct qplab_run_opts *o, const char *val, char *err, size_t errlen)
{
	const char *eq = strchr(val, '=');
	size_t hl = eq ? (size_t)(eq - val) : 0;

	if (!eq || !hl || hl >= QPLAB_NAME_MAX || !qplab_impl_known(eq + 1))
		return fail(err, errlen, "--impl '%s': HOST=NAME, NAME one of qplab, mooncake-compat, mooncake", val);
	if (o->nimpls == QPLAB_RUN_MAX_LIST)
		return fail(err, errlen, "too many values for %s", "--impl");
	snprintf(o->impls[o->nimpls].host, sizeof(o->impls[0].host), "%.*s", (int)hl, val);
	snprintf(o->impls[o->nimpls].name, sizeof(o->impls[0].name), "%s", eq + 1);
	o->nimpls++;
	return 0;
}

/* One option with a value ("--out DIR" or "--out=DIR"). */
static int option(struct qplab_run_opts *o, const char *name, const char *val, char *err,
		  size_t errlen)
{
	if (!strcmp(name, "--backend")) {
		for (size_t b = 0; b < NBACKENDS; b++)
			if (!strcmp(val, backend_names[b]))
				o->backend = (enum qplab_backend)b;
		if (strcmp(qplab_backend_name(o->backend), val))
			return fail(err, errlen, "--backend '%s': one of auto, netns, shared, vm, hosts, hosts-vm", val);
		return 0;
	}
	if (!strcmp(name, "--inventory")) {
		if (!*val)
			return fail(err, errlen, "--inventory needs a file%s", "");
		o->inventory = val;
		return 0;
	}
	if (!strcmp(name, "--kernel"))
		return push(o->kernels, &o->nkernels, val, err, errlen);
	if (!strcmp(name, "--tag"))
		return push(o->tags, &o->ntags, val, err, errlen);
	if (!strcmp(name, "--out")) {
		if (!*val)
			return fail(err, errlen, "--out needs a directory%s", "");
		o->out = val;
		return 0;
	}
	if (!strcmp(name, "--impl"))
		return impl_option(o, val, err, errlen);
	if (!strcmp(name, "--mooncake-agent")) {
		if (!*val)
			return fail(err, errlen, "--mooncake-agent needs a path%s", "");
		o->mooncake_agent = val;
		return 0;
	}
	if (!strcmp(name, "--jobs")) {
		char *end;
		long j = strtol(val, &end, 10);
		if (!*val || *end || j < 1 || j > 64)
			return fail(err, errlen, "--jobs '%s': a number from 1 to 64", val);
		o->jobs = (int)j;
		return 0;
	}
	return fail(err, errlen, "unknown option '%s'", name);
}

/* --backend hosts-vm: two --kernel NAME=K, distinct scenario host names
 * (netns/vm-hosts checks the kernels against its cache). */
static int hosts_vm_check(const struct qplab_run_opts *o, char *err, size_t errlen)
{
	if (o->nkernels != 2)
		return fail(err, errlen, "--backend hosts-vm needs two --kernel NAME=K, one per guest "
					 "(e.g. --kernel a=6.1 --kernel b=7)%s", "");
	for (size_t i = 0; i < 2; i++) {
		const char *k = o->kernels[i], *eq = strchr(k, '=');
		size_t n = eq ? (size_t)(eq - k) : 0;

		if (!eq || n < 1 || n > 8 || k[0] < 'a' || k[0] > 'z' || strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789") != n ||
		    eq[1] < '0' || eq[1] > '9')
			return fail(err, errlen, "--kernel '%s': hosts-vm wants NAME=K (NAME a scenario host "
						 "name such as a, K a kernel release or prefix such as 6.1)", k);
	}
	if (!strncmp(o->kernels[0], o->kernels[1], strcspn(o->kernels[0], "=") + 1))
		return fail(err, errlen, "--kernel '%s': two guests of one name", o->kernels[1]);
	if (o->jobs > 1)
		return fail(err, errlen, "--jobs: the hosts backend runs one scenario at a time on the inventory's machines%s", "");
	return 0;
}

int qplab_run_parse_args(int argc, char **argv, struct qplab_run_opts *o, char *err, size_t errlen)
{
	static const char *const with_value[] = {"--backend", "--kernel", "--tag", "--jobs", "--out",
						 "--impl", "--mooncake-agent", "--inventory", NULL};

	memset(o, 0, sizeof(*o));
	o->jobs = 1;
	o->out = "build/lab";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		char name[32];
		int rc;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			o->help = true;
			continue;
		}
		if (!strcmp(a, "--keep")) {
			o->keep = true;
			continue;
		}
		if (!strcmp(a, "--placements")) {
			o->placements = true;
			continue;
		}
		if (!strcmp(a, "--capture")) {
			o->capture = true;
			continue;
		}
		if (!strcmp(a, "--ablate")) {
			o->ablate = true;
			continue;
		}
		if (strncmp(a, "--", 2) || !strcmp(a, "--")) {
			if (!strcmp(a, "--") && ++i >= argc)
				break;
			if ((rc = push(o->paths, &o->npaths, argv[i], err, errlen)) < 0)
				return rc;
			continue;
		}
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
		size_t k;
		for (k = 0; with_value[k] && strcmp(with_value[k], name); k++)
			;
		if (!with_value[k])
			return fail(err, errlen, "unknown option '%s'", a);
		if (!eq && i + 1 >= argc)
			return fail(err, errlen, "%s needs a value", name);
		if ((rc = option(o, name, eq ? eq + 1 : argv[++i], err, errlen)) < 0)
			return rc;
	}
	if (o->backend == QPLAB_BACKEND_HOSTS && !o->inventory)
		return fail(err, errlen, "--backend hosts needs --inventory FILE (docs/inventory.md)%s", "");
	if (o->inventory && o->backend != QPLAB_BACKEND_HOSTS)
		return fail(err, errlen, "--inventory goes with --backend hosts%s", "");
	if (o->backend == QPLAB_BACKEND_HOSTS && o->nkernels)
		return fail(err, errlen, "--kernel is the vm backend's: the hosts run their own kernels%s", "");
	if (o->backend == QPLAB_BACKEND_HOSTS_VM)
		return hosts_vm_check(o, err, errlen);
	if (o->backend == QPLAB_BACKEND_HOSTS && o->jobs > 1)
		return fail(err, errlen, "--jobs: the hosts backend runs one scenario at a time on the inventory's machines%s", "");
	return 0;
}

int qplab_run_check_jobs(const struct qplab_run_opts *o, const char *mode, char *err, size_t errlen)
{
	if (o->jobs <= 1 || !mode || strcmp(mode, "shared"))
		return 0;
	snprintf(err, errlen, "--jobs %d: the shared topology mode (this kernel's rxe cannot work "
			      "in a network namespace) rewrites one routing table and runs one "
			      "scenario at a time; use --jobs 1, or a kernel whose rxe runs in "
			      "namespaces (netns mode)", o->jobs);
	return QPHS_ERR_INVALID_ARGUMENT;
}
