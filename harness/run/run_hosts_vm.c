/* `qplab run --backend hosts-vm --kernel a=K --kernel b=K`: the hosts
 * backend on two lab VMs booted for the run.  netns/vm-hosts boots the
 * guests, writes their inventory to OUT/inventory.json and runs this same
 * command line here with --backend hosts --inventory OUT/inventory.json;
 * its stdout is relayed as is, and an interrupt of ours is passed on (the
 * script tears the guests down on every exit). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "report/report.h"
#include "run.h"
#include "run_args.h"
#include "run_spawn.h"

/* Our own arguments minus --backend, --kernel and --out (given anew). */
static size_t copy_args(int argc, char **argv, char **v, size_t n, size_t max)
{
	static const char *const drop[] = {"--backend", "--kernel", "--out"};

	for (int i = 1; i < argc && n + 12 < max; i++) {
		bool skip = false;

		for (size_t d = 0; d < 3; d++) {
			size_t l = strlen(drop[d]);

			if (!strcmp(argv[i], drop[d]))
				skip = true, i++;
			else if (!strncmp(argv[i], drop[d], l) && argv[i][l] == '=')
				skip = true;
			if (skip)
				break;
		}
		if (!skip)
			v[n++] = argv[i];
	}
	return n;
}

int run_hosts_vm(int argc, char **argv, const struct qplab_run_opts *o)
{
	static char vm[4200], exe[PATH_MAX], inv[PATH_MAX + 32];
	char *v[QPLAB_RUN_MAX_LIST * 2 + 64], buf[4096];
	struct run_spawn sp = {0};
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1), r;
	size_t k = 0;
	bool passed_on = false;
	int rc;

	exe[n > 0 ? n : 0] = '\0';
	if (qplab_report_mkdir(o->out))
		return qplab_usage_error("run: cannot create %s", o->out);
	snprintf(vm, sizeof(vm), "%s/vm", qplab_script_dir());
	snprintf(inv, sizeof(inv), "%s/inventory.json", o->out);
	v[k++] = vm;
	for (size_t i = 0; i < o->nkernels; i++) {
		v[k++] = (char *)"--guest";
		v[k++] = (char *)o->kernels[i];
	}
	v[k++] = (char *)"--inventory";
	v[k++] = inv;
	v[k++] = (char *)"--qplab";
	v[k++] = exe;
	v[k++] = (char *)"--";
	v[k++] = exe;
	v[k++] = (char *)"run";
	k = copy_args(argc, argv, v, k, sizeof(v) / sizeof(v[0]));
	v[k++] = (char *)"--backend";
	v[k++] = (char *)"hosts";
	v[k++] = (char *)"--inventory";
	v[k++] = inv;
	v[k++] = (char *)"--out";
	v[k++] = (char *)o->out;
	v[k] = NULL;
	sp.argv = v;
	if (run_spawn_start(&sp)) {
		fprintf(stderr, "qplab run: cannot start %s: %s\n", vm, strerror(errno));
		return QPLAB_EXIT_FAIL;
	}
	for (;;) {
		/* Once: the script interrupts the inner run, then stops the guests. */
		if (qplab_run_interrupted && !passed_on) {
			kill(sp.pid, SIGINT);
			passed_on = true;
		}
		r = read(sp.from_fd, buf, sizeof(buf));
		if (r > 0) {
			fwrite(buf, 1, (size_t)r, stdout);
			fflush(stdout);
		} else if (r == 0 || errno != EINTR) {
			break;
		}
	}
	close(sp.from_fd);
	rc = run_spawn_wait(sp.pid);
	if (rc == 125)
		fprintf(stderr, "qplab run: the hosts-vm guests did not come up (build/vm/guest-*.log)\n");
	return rc == 0 ? QPLAB_EXIT_OK : rc == 2 ? QPLAB_EXIT_USAGE : QPLAB_EXIT_FAIL;
}
