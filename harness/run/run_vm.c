/* `qplab run` through the vm backend: the same command line, re-executed
 * inside `netns/vm --kernel K` once per kernel (--backend auto there), each
 * run writing OUT/kernel-K/; then one results.json and junit.xml in OUT
 * holding every kernel's run. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/jread.h"
#include "report/report.h"
#include "run.h"
#include "run_args.h"
#include "run_spawn.h"

/* The guest sees only the checkout's build/ and --share directories: an
 * output directory elsewhere (/tmp/x) must be shared too, or the inner
 * run's results.json never reaches the host.  NULL when no share is
 * needed (the directory is under build/) or it cannot be resolved. */
static const char *out_share(const char *out, const char *exe)
{
	static char root[PATH_MAX];
	char build[PATH_MAX];
	char *slash;

	if (!realpath(out, root))
		return NULL;
	snprintf(build, sizeof(build), "%s", exe);
	slash = strrchr(build, '/');
	if (slash)
		*slash = '\0';
	if (!strncmp(root, build, strlen(build)) &&
	    (root[strlen(build)] == '/' || root[strlen(build)] == '\0'))
		return NULL;
	return root;
}

static bool has_flag(int argc, char **argv, const char *flag)
{
	size_t n = strlen(flag);

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], flag, n) && (argv[i][n] == '\0' || argv[i][n] == '='))
			return true;
	return false;
}

/* The inner argv: our own arguments minus --backend/--kernel/--out. */
static int inner_argv(int argc, char **argv, const char *kernel, const char *out, char *exe,
		      char **v, size_t max, const char *share)
{
	static char vm[4200];
	size_t n = 0;

	snprintf(vm, sizeof(vm), "%s/vm", qplab_script_dir());
	v[n++] = vm;
	if (kernel) {
		v[n++] = (char *)"--kernel";
		v[n++] = (char *)kernel;
	}
	if (share) {
		v[n++] = (char *)"--share";
		v[n++] = (char *)share;
	}
	v[n++] = (char *)"--";
	v[n++] = exe;
	v[n++] = (char *)"run";
	for (int i = 1; i < argc && n + 8 < max; i++) {
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
	/* The guest gets no environment of ours: the adapter goes as a flag
	 * (the guest sees the host's root filesystem at the same paths). */
	if (getenv("QPLAB_MOONCAKE_AGENT") && !has_flag(argc, argv, "--mooncake-agent")) {
		v[n++] = (char *)"--mooncake-agent";
		v[n++] = getenv("QPLAB_MOONCAKE_AGENT");
	}
	v[n] = NULL;
	return (int)n;
}

/* One TAP line of the inner run, renumbered into the outer stream (one
 * plan for every kernel); test names get " [K]" when several kernels run. */
static void relay_line(char *line, int *num, const char *tag)
{
	char *rest, *skip;
	int not = !strncmp(line, "not ok ", 7);

	if (!strncmp(line, "TAP version", 11) || (line[0] == '1' && line[1] == '.' && line[2] == '.'))
		return;
	if (!not && strncmp(line, "ok ", 3)) {
		fputs(line, stdout);
		return;
	}
	rest = strstr(line, " - ");
	if (!rest) {
		fputs(line, stdout);
		return;
	}
	rest[strcspn(rest, "\n")] = '\0';
	skip = tag ? strstr(rest, " # ") : NULL;
	if (skip)
		*skip = '\0';
	printf("%s %d%s%s%s%s\n", not ? "not ok" : "ok", ++*num, rest, tag ? tag : "",
	       skip ? " # " : "", skip ? skip + 3 : "");
}

/* Runs the VM with its stdout relayed line by line.  Returns its status. */
static int relay(char *const argv[], int *num, const char *tag)
{
	struct run_spawn sp = {.argv = argv};
	FILE *in;
	char line[8192];

	if (run_spawn_start(&sp))
		return -1;
	in = fdopen(sp.from_fd, "r");
	while (in && fgets(line, sizeof(line), in)) {
		relay_line(line, num, tag);
		fflush(stdout);
	}
	if (in)
		fclose(in);
	else
		close(sp.from_fd);
	return run_spawn_wait(sp.pid);
}

/* Names the scenarios of every run in doc "id [K]". */
static void tag_names(json_object *doc, const char *tag)
{
	struct jread jr = {0}; /* results.json was read (and checked) by the merge */
	json_object *runs, *run, *scs, *sc;
	const char *id;

	if (!tag || jread_array(&jr, doc, "runs", &runs) != JREAD_OK)
		return;
	for (size_t r = 0; r < json_object_array_length(runs); r++) {
		if (jread_elem(&jr, runs, "runs", r, json_type_object, &run) != JREAD_OK ||
		    jread_array(&jr, run, "scenarios", &scs) != JREAD_OK)
			continue;
		for (size_t i = 0; i < json_object_array_length(scs); i++) {
			char name[512];

			if (jread_elem(&jr, scs, "scenarios", i, json_type_object, &sc) != JREAD_OK ||
			    jread_str(&jr, sc, "id", &id) != JREAD_OK)
				continue;
			snprintf(name, sizeof(name), "%s%s", id, tag);
			json_object_object_add(sc, "name", json_object_new_string(name));
		}
	}
}

/* The same for "pcaps" (objects with "path", run_wire.c). */
static void prefix_pcaps(json_object *sc, const char *kernel)
{
	json_object *pcaps, *path;

	if (!json_object_object_get_ex(sc, "pcaps", &pcaps) || !json_object_is_type(pcaps, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(pcaps); i++) {
		json_object *pc = json_object_array_get_idx(pcaps, i);
		char p[4600];

		if (!json_object_object_get_ex(pc, "path", &path) || !json_object_is_type(path, json_type_string) ||
		    json_object_get_string(path)[0] == '/')
			continue;
		snprintf(p, sizeof(p), "kernel-%s/%s", kernel, json_object_get_string(path));
		json_object_object_add(pc, "path", json_object_new_string(p));
	}
}

/* The inner run's "logs" paths are relative to OUT/kernel-K/; the merged
 * results.json is in OUT. */
static void prefix_logs(json_object *doc, const char *kernel)
{
	json_object *runs, *scs, *logs;

	if (!json_object_object_get_ex(doc, "runs", &runs))
		return;
	for (size_t r = 0; r < json_object_array_length(runs); r++) {
		if (!json_object_object_get_ex(json_object_array_get_idx(runs, r), "scenarios", &scs))
			continue;
		for (size_t i = 0; i < json_object_array_length(scs); i++) {
			prefix_pcaps(json_object_array_get_idx(scs, i), kernel);
			if (!json_object_object_get_ex(json_object_array_get_idx(scs, i), "logs", &logs) ||
			    !json_object_is_type(logs, json_type_object))
				continue;
			json_object_object_foreach(logs, host, path) {
				char p[4600];

				if (!json_object_is_type(path, json_type_string) || json_object_get_string(path)[0] == '/')
					continue;
				snprintf(p, sizeof(p), "kernel-%s/%s", kernel, json_object_get_string(path));
				json_object_object_add(logs, host, json_object_new_string(p));
			}
		}
	}
}

int run_in_vm(int argc, char **argv, const struct qplab_run_opts *o, size_t nscenarios)
{
	char exe[PATH_MAX], out[PATH_MAX + 200], err[512];
	char *v[QPLAB_RUN_MAX_LIST * 2 + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	json_object *doc = qplab_results_doc();
	size_t nk = o->nkernels ? o->nkernels : 1;
	int worst = 0, num = 0;
	char tag[80];

	exe[n > 0 ? n : 0] = '\0';
	qplab_report_mkdir(o->out);
	printf("TAP version 13\n1..%zu\n", nscenarios * nk);
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
			   sizeof(v) / sizeof(v[0]), out_share(o->out, exe));
		snprintf(tag, sizeof(tag), " [%s]", o->nkernels ? o->kernels[k] : "");
		rc = relay(v, &num, nk > 1 ? tag : NULL);
		if (rc > worst)
			worst = rc;
		if (rc == QPLAB_EXIT_USAGE)
			continue; /* refused inside (its reason is on stderr): no results */
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "/results.json");
		if (qplab_results_load(out, &sub, err, sizeof(err)) == 0) {
			tag_names(sub, nk > 1 ? tag : NULL);
			prefix_logs(sub, o->nkernels ? o->kernels[k] : "default");
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
	if (num < (int)(nscenarios * nk) && worst != QPLAB_EXIT_USAGE)
		printf("# %d of %zu scenarios reported (a VM failed or was interrupted)\n", num,
		       nscenarios * nk);
	return worst == 2 ? QPLAB_EXIT_USAGE : worst ? QPLAB_EXIT_FAIL : num < (int)(nscenarios * nk);
}
