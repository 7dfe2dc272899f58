/*
 * `qplab doctor --inventory FILE`: each machine of an inventory checked
 * over one ssh: reachable, the same qplab build as this one (build IDs),
 * its device's port ACTIVE, RoCE GIDs on the lab netdev, the netdev's MTU
 * and state, which faults the runner would run there, and its clock
 * against this one (more than 1 s apart fails: step times and logs of two
 * machines must line up).  Without --inventory it is netns/doctor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "run.h"

/* A fixed script; the inventory's values are its quoted arguments. */
static const char CHECK_SCRIPT[] =
	"q=$1 dev=$2 port=$3 nd=$4; p=/sys/class/infiniband/$dev/ports/$port; "
	"echo \"build $(\"$q\" build-id 2>/dev/null || echo missing)\"; "
	"echo \"time $(date +%s.%N)\"; "
	"s=$(cat \"$p/state\" 2>/dev/null) || s=missing; echo \"state $s\"; "
	"echo \"mtu $(cat /sys/class/net/\"$nd\"/mtu 2>/dev/null || echo missing)\"; "
	"echo \"oper $(cat /sys/class/net/\"$nd\"/operstate 2>/dev/null || echo missing)\"; "
	"echo \"kernel $(uname -r)\"; "
	/* A GID table has hundreds of entries (rxe: 1024), nearly all zero:
	 * one grep reads them all, the few in use are looked at one by one
	 * (a process per entry costs minutes under TCG). */
	"cd \"$p/gids\" 2>/dev/null && grep -H . * 2>/dev/null | "
	"grep -v -e ':0000:0000:0000:0000:0000:0000:0000:0000$' -e ':fe80:' | "
	"while IFS=: read -r i g; do n=$(cat \"$p/gid_attrs/ndevs/$i\" 2>/dev/null); "
	"t=$(cat \"$p/gid_attrs/types/$i\" 2>/dev/null | tr ' ' _); echo \"gid $i $g $t $n\"; done";

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The value of line "key VALUE" in out, "" when there is none. */
static void value_of(const char *out, const char *key, char *dst, size_t len)
{
	size_t k = strlen(key);

	dst[0] = '\0';
	for (const char *s = out; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (!strncmp(s, key, k) && s[k] == ' ') {
			snprintf(dst, len, "%.*s", (int)strcspn(s + k + 1, "\n"), s + k + 1);
			return;
		}
}

static void faults_line(const struct qplab_inv_host *ih)
{
	static const enum qplab_inv_fault all[] = {QPLAB_INV_FAULT_LINK, QPLAB_INV_FAULT_NETEM,
						   QPLAB_INV_FAULT_MTU, QPLAB_INV_FAULT_BLACKHOLE,
						   QPLAB_INV_FAULT_DELETE_DEVICE};
	char why[400], list[128] = "";

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (qplab_inv_fault_allowed(ih, all[i], why, sizeof(why)))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", list[0] ? ", " : "",
				 qplab_inv_fault_name(all[i]));
	if (list[0])
		printf("  faults the runner may run there: %s\n", list);
	else if (!ih->lab_host)
		printf("  faults: none (not a lab host: scenarios with faults on %s are skipped)\n", ih->name);
	else if (!ih->faults)
		printf("  faults: none (the inventory lists none)\n");
	else
		printf("  faults: none (%s)\n", why);
}

/* Checks one host; returns how many checks failed. */
static int check_host(const struct qplab_inv_host *ih)
{
	struct run_host h = {.inv = ih};
	char port[8], out_v[256], *out = NULL;
	const char *remote[] = {"sh", "-c", CHECK_SCRIPT, "sh", ih->qplab, ih->device, port, ih->netdev, NULL};
	double t0, t1, remote_t;
	int rc, bad = 0, gids = 0;

	snprintf(h.name, sizeof(h.name), "%s", ih->name);
	snprintf(port, sizeof(port), "%d", ih->port);
	printf("host %s (%s):\n", ih->name, ih->ssh.destination[0] ? ih->ssh.destination : ih->ssh.alias);
	t0 = wall_now();
	rc = run_hosts_exec(&h, remote, &out, false);
	t1 = wall_now();
	if (rc || !out || !strstr(out, "build ")) {
		printf("  FAIL ssh: not reachable (exit %d%s)\n", rc,
		       rc == 255 ? ": ssh failed; try the same ssh by hand with -v" : "");
		free(out);
		return 1;
	}
	printf("  ok   ssh: reachable, %.2f s for one command\n", t1 - t0);
	value_of(out, "kernel", out_v, sizeof(out_v));
	printf("  ok   kernel %s\n", out_v);
	value_of(out, "build", out_v, sizeof(out_v));
	if (!strcmp(out_v, qplab_build_id())) {
		printf("  ok   qplab %s: build %s, the runner's\n", ih->qplab, out_v);
	} else {
		printf("  FAIL qplab %s: build %s, the runner's is %s (install the same build there)\n",
		       ih->qplab, !strcmp(out_v, "missing") ? "missing (not there or not runnable)" : out_v,
		       qplab_build_id());
		bad++;
	}
	value_of(out, "state", out_v, sizeof(out_v));
	if (strstr(out_v, "ACTIVE")) {
		printf("  ok   %s port %d: %s\n", ih->device, ih->port, out_v);
	} else {
		printf("  FAIL %s port %d: %s\n", ih->device, ih->port,
		       !strcmp(out_v, "missing") ? "no such device or port" : out_v);
		bad++;
	}
	for (const char *s = out; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		char idx[16], gid[64], type[32], ndev[64];

		if (strncmp(s, "gid ", 4) || sscanf(s + 4, "%15s %63s %31s %63s", idx, gid, type, ndev) != 4 ||
		    strcmp(ndev, ih->netdev))
			continue;
		printf("  ok   GID %s %s (%s) on %s\n", idx, gid, type, ndev);
		gids++;
	}
	if (!gids) {
		printf("  FAIL no routable GID of %s on %s (is the address %s on it?)\n", ih->device, ih->netdev,
		       ih->address);
		bad++;
	}
	value_of(out, "mtu", out_v, sizeof(out_v));
	printf("  %s netdev %s MTU %s", atoi(out_v) > 0 ? "ok  " : "FAIL", ih->netdev, out_v);
	bad += atoi(out_v) <= 0;
	value_of(out, "oper", out_v, sizeof(out_v));
	printf(", %s\n", out_v);
	faults_line(ih);
	value_of(out, "time", out_v, sizeof(out_v));
	remote_t = atof(out_v);
	/* The remote clock was read somewhere inside [t0, t1]: the skew is
	 * known to within half the round trip. */
	if (remote_t <= 0) {
		printf("  FAIL clock: not read\n");
		bad++;
	} else if (fabs(remote_t - (t0 + t1) / 2) > 1.0 + (t1 - t0) / 2) {
		printf("  FAIL clock: %+.2f s from the runner's (more than 1 s)\n", remote_t - (t0 + t1) / 2);
		bad++;
	} else {
		printf("  ok   clock: %+.2f s from the runner's (within %.2f s)\n", remote_t - (t0 + t1) / 2,
		       (t1 - t0) / 2);
	}
	free(out);
	return bad;
}

int cmd_doctor(int argc, char **argv)
{
	struct qplab_inventory *inv = NULL;
	struct qplab_errors errs = {0};
	const char *file = NULL;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--inventory") && i + 1 < argc)
			file = argv[++i];
		else if (!strncmp(argv[i], "--inventory=", 12))
			file = argv[i] + 12;
		else if (!strcmp(argv[i], "--inventory"))
			return qplab_usage_error("doctor: --inventory needs a file");
	}
	if (!file)
		return cmd_script(argc, argv);
	if (argc != (strchr(argv[argc - 1], '=') && !strncmp(argv[argc - 1], "--inventory=", 12) ? 2 : 3))
		return qplab_usage_error("doctor: --inventory FILE takes no other arguments");
	if (qplab_inventory_load(file, &inv, &errs)) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msgs[i]);
		qplab_errors_free(&errs);
		return QPLAB_EXIT_USAGE;
	}
	printf("runner: qplab build %s\n", qplab_build_id());
	for (size_t i = 0; i < inv->nhosts; i++)
		bad += check_host(&inv->hosts[i]);
	printf("%s: %d problem%s on %zu host%s\n", bad ? "FAIL" : "ok", bad, bad == 1 ? "" : "s", inv->nhosts,
	       inv->nhosts == 1 ? "" : "s");
	qplab_inventory_free(inv);
	return bad ? QPLAB_EXIT_FAIL : QPLAB_EXIT_OK;
}
