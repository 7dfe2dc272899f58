/* `qplab run` through the vm backend: the same command line, re-executed
 * inside `netns/vm --kernel K` once per kernel (--backend auto there), each
 * run writing OUT/kernel-K/; then one results.json and junit.xml in OUT
 * holding every kernel's run. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"
#include "run.h"
#include "run_args.h"

/* The inner argv: our own arguments minus --backend/--kernel/--out. */
static int inner_argv(int argc, char **argv, const char *kernel, const char *out, char *exe,
		      char **v, size_t max)
{
	static char vm[4200];
	size_t n = 0;

	snprintf(vm, sizeof(vm), "%s/vm", qplab_script_dir());
	v[n++] = vm;
	if (kernel) {
		v[n++] = (char *)"--kernel";
		v[n++] = (char *)kernel;
	}
	v[n++] = (char *)"--";
	v[n++] = exe;
	v[n++] = (char *)"run";
	for (int i = 1; i < argc && n + 6 < max; i++) {
		if (!strcmp(argv[i], "--backend") || !strcmp(argv[i], "--kernel") || !strcmp(argv[i], "--out")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--backend=", 10) || !strncmp(argv[i], "--kernel=", 9) ||
		    !strncmp(argv[i], "--out=", 6))
			continue;
		v[n++] = argv[i];
	}
	v[n++] = (char *)"--backend";
	v[n++] = (char *)"auto";
	v[n++] = (char *)"--out";
	v[n++] = (char *)out;
	v[n] = NULL;
	return (int)n;
}

int run_in_vm(int argc, char **argv, const struct qplab_run_opts *o);

int run_in_vm(int argc, char **argv, const struct qplab_run_opts *o)
{
	char exe[PATH_MAX], out[PATH_MAX + 200], err[512];
	char *v[QPLAB_RUN_MAX_LIST * 2 + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	json_object *doc = qplab_results_doc();
	size_t nk = o->nkernels ? o->nkernels : 1;
	int worst = 0;

	exe[n > 0 ? n : 0] = '\0';
	qplab_report_mkdir(o->out);
	for (size_t k = 0; k < nk && !qplab_run_interrupted; k++) {
		json_object *sub;
		int rc;

		snprintf(out, sizeof(out), "%s/kernel-%s", o->out, o->nkernels ? o->kernels[k] : "default");
		if (o->out[0] != '/') {
			char cwd[PATH_MAX];

			if (getcwd(cwd, sizeof(cwd)))
				snprintf(out, sizeof(out), "%s/%s/kernel-%s", cwd, o->out,
					 o->nkernels ? o->kernels[k] : "default");
		}
		printf("# kernel %s: qplab run inside netns/vm\n", o->nkernels ? o->kernels[k] : "(default)");
		fflush(stdout);
		inner_argv(argc, argv, o->nkernels ? o->kernels[k] : NULL, out, exe, v,
			   sizeof(v) / sizeof(v[0]));
		rc = run_capture(v, NULL) ;
		if (rc > worst)
			worst = rc;
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "/results.json");
		if (qplab_results_load(out, &sub, err, sizeof(err)) == 0) {
			qplab_results_merge(doc, sub);
			json_object_put(sub);
		} else {
			fprintf(stderr, "qplab run: kernel %s: %s\n", o->nkernels ? o->kernels[k] : "default", err);
			worst = worst ? worst : 1;
		}
	}
	if (qplab_report_write_outputs(o->out, doc, err, sizeof(err)))
		fprintf(stderr, "qplab run: %s\n", err);
	json_object_put(doc);
	return worst > 2 ? QPLAB_EXIT_FAIL : worst;
}
