/* `qplab quirks --kernel K`: the same command re-executed inside
 * `netns/vm --kernel K` (one boot per kernel) with --lab --json; the
 * documents come back on the VM's stdout and become one matrix.  And
 * --lab itself: the two-host shared topology of netns/topo around a run. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/jread.h"
#include "quirks.h"

#define CAPTURE_MAX (1 << 20)

int quirks_capture(char *const argv[], char **out)
{
	int fds[2], status = 0;
	size_t used = 0;
	ssize_t r;
	pid_t pid;

	*out = calloc(1, CAPTURE_MAX + 1);
	if (!*out || pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	/* Past the cap the rest is read and dropped, so the child never blocks. */
	for (;;) {
		char sink[4096];
		char *dst = used < CAPTURE_MAX ? *out + used : sink;
		size_t room = used < CAPTURE_MAX ? CAPTURE_MAX - used : sizeof(sink);

		r = read(fds[0], dst, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (dst != sink)
			used += (size_t)r;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- --lab ------------------------------------------------------------- */

/* topo up (ID qk) or down of the topology topo named (name). */
static int topo(const char *verb, const char *name, char **out)
{
	char path[4200];
	char *up[] = {path, (char *)"up", (char *)"--name", (char *)"qk", (char *)"--hosts",
		      (char *)"a,b", (char *)"--mode", (char *)"shared", NULL};
	char *down[] = {path, (char *)"down", (char *)"--name", (char *)name, NULL};

	snprintf(path, sizeof(path), "%s/topo", qplab_script_dir());
	return quirks_capture(!strcmp(verb, "up") ? up : down, out);
}

/* hosts[i].rxe and .gid4_index of the topo JSON. */
static int lab_host(json_object *doc, size_t i, char *dev, size_t len, int *gid)
{
	struct jread r = {0};
	json_object *hosts, *h;

	if (jread_array(&r, doc, "hosts", &hosts) != JREAD_OK ||
	    jread_elem(&r, hosts, "hosts", i, json_type_object, &h) != JREAD_OK ||
	    jread_str_copy(&r, h, "rxe", dev, len) != JREAD_OK)
		return -1;
	jread_int(&r, h, "gid4_index", 0, INT_MAX, gid);
	return r.errors ? -1 : 0;
}

int quirks_lab(struct quirks_args *a, int (*run)(const struct quirks_args *))
{
	char *out = NULL;
	char dev[2][64], name[32] = "";
	int gid[2] = {-1, -1}, st = topo("up", NULL, &out), rc = QPLAB_EXIT_FAIL;
	struct jread r = {0};
	json_object *doc = NULL;

	if (st == 0 && out && jread_parse_object(&r, out, strlen(out), &doc) != JREAD_OK)
		doc = NULL;

	/* topo names the topology qk plus a unique suffix; a failed up has
	 * unwound itself. */
	if (doc)
		jread_str_copy(&r, doc, "name", name, sizeof(name));
	if (!doc || !name[0] || lab_host(doc, 0, dev[0], sizeof(dev[0]), &gid[0]) ||
	    lab_host(doc, 1, dev[1], sizeof(dev[1]), &gid[1])) {
		fprintf(stderr, "qplab quirks: netns/topo up failed (exit %d)%s\n", st,
			st == 0 ? ": its JSON has no name or hosts[].rxe" : "");
		goto down;
	}
	if (!a->o.device) {
		a->o.device = dev[0];
		a->o.peer_device = a->o.peer_device ? a->o.peer_device : dev[1];
		a->o.gid_index = a->o.gid_index >= 0 ? a->o.gid_index : gid[0];
		a->o.peer_gid_index = a->o.peer_gid_index >= 0 ? a->o.peer_gid_index : gid[1];
	}
	rc = run(a);
down:
	json_object_put(doc);
	free(out);
	out = NULL;
	if (name[0] && (st = topo("down", name, &out)))
		fprintf(stderr, "qplab quirks: netns/topo down --name %s failed (exit %d)\n", name, st);
	free(out);
	return rc;
}

/* ---- --kernel ------------------------------------------------------------ */

/* vm --kernel K --timeout S -- qplab quirks --lab --json ARGS (ARGS without
 * --kernel, --out, --json and --lab). */
static void inner_argv(int argc, char **argv, const char *kernel, char *vm, char *exe, char **v,
		       size_t max)
{
	size_t n = 0;

	v[n++] = vm;
	v[n++] = (char *)"--kernel";
	v[n++] = (char *)kernel;
	v[n++] = (char *)"--timeout";
	v[n++] = (char *)"900";
	v[n++] = (char *)"--";
	v[n++] = exe;
	v[n++] = (char *)"quirks";
	v[n++] = (char *)"--lab";
	v[n++] = (char *)"--json";
	for (int i = 1; i < argc && n + 2 < max; i++) {
		if (!strcmp(argv[i], "--kernel") || !strcmp(argv[i], "--out")) {
			i++;
			continue;
		}
		if (strcmp(argv[i], "--json") && strcmp(argv[i], "--lab"))
			v[n++] = argv[i];
	}
	v[n] = NULL;
}

/* Each line of the VM's stdout is one kernel's document ("all" boots
 * every cached kernel in one vm invocation, so one --kernel may give
 * several).  A failed run adds a column saying so. */
static size_t take_docs(char *out, const char *kernel, int st, struct quirks_column *cols,
			size_t room, json_object *all)
{
	size_t n = 0;
	char err[256] = "";

	for (char *line = strtok(out, "\n"); line && n < room; line = strtok(NULL, "\n")) {
		struct jread r = {.err = err, .errlen = sizeof(err)};
		json_object *doc = NULL;

		if (jread_parse(&r, line, strlen(line), &doc) == JREAD_OK &&
		    !quirks_from_json(doc, &cols[n], err, sizeof(err))) {
			json_object_array_add(all, doc);
			n++;
			continue;
		}
		json_object_put(doc);
		fprintf(stderr, "qplab quirks: kernel %s: a line is not a probe document%s%s\n",
			kernel, err[0] ? ": " : "", err);
	}
	if ((st != 0 || n == 0) && n < room) {
		memset(&cols[n], 0, sizeof(cols[n]));
		snprintf(cols[n].label, sizeof(cols[n].label), "%s", kernel);
		snprintf(cols[n].failed, sizeof(cols[n].failed), "the VM run exited %d%s", st,
			 n ? "" : " with no probe document");
		fprintf(stderr, "qplab quirks: kernel %s: %s\n", kernel, cols[n].failed);
		n++;
	}
	return n;
}

static size_t run_kernel(int argc, char **argv, const char *kernel, struct quirks_column *cols,
			 size_t room, json_object *all)
{
	char vm[4200], exe[PATH_MAX];
	char *v[96], *out = NULL;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t n;
	int st;

	exe[len > 0 ? len : 0] = '\0';
	/* A rebuild while we run unlinks our file: run the new one. */
	if (len > 10 && !strcmp(exe + len - 10, " (deleted)"))
		exe[len - 10] = '\0';
	snprintf(vm, sizeof(vm), "%s/vm", qplab_script_dir());
	inner_argv(argc, argv, kernel, vm, exe, v, sizeof(v) / sizeof(v[0]));
	fprintf(stderr, "qplab quirks: kernel %s: probing inside netns/vm\n", kernel);
	st = quirks_capture(v, &out);
	n = take_docs(out ? out : (char *)"", kernel, st, cols, room, all);
	free(out);
	return n;
}

int quirks_in_vms(int argc, char **argv, const struct quirks_args *a)
{
	static struct quirks_column cols[QUIRKS_MAX_COLUMNS];
	json_object *all = json_object_new_array();
	size_t ncols = 0;
	int failed = 0;

	for (size_t k = 0; k < a->nkernels && ncols < QUIRKS_MAX_COLUMNS; k++)
		ncols += run_kernel(argc, argv, a->kernels[k], cols + ncols,
				    QUIRKS_MAX_COLUMNS - ncols, all);
	for (size_t c = 0; c < ncols; c++)
		failed |= cols[c].failed[0] != '\0';
	if (a->json)
		printf("%s\n", json_object_to_json_string_ext(all, JSON_C_TO_STRING_PRETTY));
	else
		quirks_matrix_print(stdout, cols, ncols);
	if (a->out && json_object_to_file_ext(a->out, all, JSON_C_TO_STRING_PRETTY)) {
		fprintf(stderr, "qplab quirks: cannot write %s: %s\n", a->out, json_util_get_last_err());
		failed = 1;
	}
	json_object_put(all);
	return failed ? QPLAB_EXIT_FAIL : QPLAB_EXIT_OK;
}

int quirks_from_file(const char *path, int json)
{
	static struct quirks_column cols[QUIRKS_MAX_COLUMNS];
	char err[256] = "";
	struct jread r = {.err = err, .errlen = sizeof(err)};
	json_object *all = NULL;
	size_t n = 0;

	if (jread_parse_file(&r, path, &all) != JREAD_OK || !json_object_is_type(all, json_type_array)) {
		fprintf(stderr, "qplab quirks: %s: not a JSON array (%s)\n", path,
			r.errors ? err : "wrong type");
		json_object_put(all);
		return QPLAB_EXIT_FAIL;
	}
	for (size_t i = 0; i < json_object_array_length(all) && n < QUIRKS_MAX_COLUMNS; i++) {
		if (quirks_from_json(json_object_array_get_idx(all, i), &cols[n], err, sizeof(err))) {
			fprintf(stderr, "qplab quirks: %s: run %zu: %s\n", path, i, err);
			json_object_put(all);
			return QPLAB_EXIT_FAIL;
		}
		n++;
	}
	if (json)
		printf("%s\n", json_object_to_json_string_ext(all, JSON_C_TO_STRING_PRETTY));
	else
		quirks_matrix_print(stdout, cols, n);
	json_object_put(all);
	return QPLAB_EXIT_OK;
}
