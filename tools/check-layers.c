/*
 * check-layers — the layer rules of the tree, enforced (make unit runs it).
 *
 *   check-layers [--root DIR] [--cc CC] [--gen DIR] [--ignore DIR]... [--table]
 *
 * Three rules, each reported as "FILE[:LINE]: rule: what":
 *
 *   include   a file includes, directly or through other headers, a header
 *             of a folder its own folder may not include (the table below).
 *             What a file includes is the compiler's own answer: `CC -MM
 *             -MG` with that folder's include path, run on every .c and .h.
 *   verbs     a file outside the verbs ops table (lib/rdma/verbs.[ch])
 *             calls an ibv_* function or inline (bench/setup_floor.c, the
 *             bench's measure of a setup without libqphs, excepted).
 *             Comments, string and character literals are skipped.
 *   harness   anything in lib/ includes a harness header (the library never
 *             knows about the lab).
 *
 * A folder may also name headers from outside the tree that it includes
 * (the table's `external`, e.g. Mooncake's transfer_engine_c.h for
 * mooncake/): `-MG` lists such a header as written, since it is on no
 * include path of ours, and only the names listed there are let through.
 *
 * --gen DIR is where the build writes generated headers (the suite lists):
 * on every include path, and never a layer of its own.
 *
 * Every .c and .h under lib/, harness/, mooncake/, bench/, fuzz/ and tests/ must sit
 * in a folder of the table (rule "folder"), except under --ignore DIRs and
 * tests/layers/ (this tool's fixtures).  With a README.md at the root, its
 * Layout section's rule table must be the one --table prints (rule
 * "readme"), so the table is written down once and checked in both places.
 *
 * Exit 0 when everything holds, 1 on a violation, 2 on a usage or system
 * error.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The rule table: folder -> the folders it may include (its own always).
 * A folder's files are the .c and .h directly in it; lib/include also holds
 * qphs/.  Keep README.md's Layout table the same (rule "readme").
 */
struct layer {
	const char *folder;
	const char *incpath; /* its include path, as the Makefile gives it */
	const char *may;     /* space-separated folders */
};

static const struct layer layers[] = {
	{"lib/include", "-Ilib/include", ""},
	{"lib/base", "-Ilib/include -Ilib", "lib/include"},
	{"lib/codec", "-Ilib/include -Ilib", "lib/base lib/include"},
	{"lib/hs", "-Ilib/include -Ilib", "lib/codec lib/base lib/include"},
	{"lib/rdma", "-Ilib/include -Ilib", "lib/codec lib/base lib/include"},
	{"lib/setup", "-Ilib/include -Ilib",
	 "lib/hs lib/rdma lib/codec lib/base lib/include"},
	{"lib/probe", "-Ilib/include -Ilib", "lib/rdma lib/codec lib/base lib/include"},
	{"harness/cli", "-Ilib/include -Iharness", "lib/include"},
	{"harness/scenario", "-Ilib/include -Iharness", "harness/cli lib/include"},
	{"harness/report", "-Ilib/include -Iharness", "harness/scenario harness/cli lib/include"},
	{"harness/hs", "-Ilib/include -Iharness", "harness/cli lib/include"},
	{"harness/agent", "-Ilib/include -Iharness", "harness/hs harness/cli lib/include"},
	{"harness/quirks", "-Ilib/include -Iharness", "harness/cli lib/include"},
	{"harness/run", "-Ilib/include -Iharness",
	 "harness/report harness/quirks harness/scenario harness/cli lib/include"},
	{"mooncake", "-Ilib/include -Iharness -Imooncake", "harness/hs harness/cli lib/include"},
	{"bench", "-Ilib/include", "lib/include"},
	{"fuzz", "-Ilib/include -Ilib -Iharness",
	 "lib/codec lib/base lib/include harness/scenario harness/run harness/agent"},
	{"tools", "", ""},
	{"tests/unit", "-Ilib/include -Itests/unit", "lib/include"},
	{"tests/unit/lib", "-Ilib/include -Ilib -Itests/unit",
	 "tests/unit lib/setup lib/probe lib/rdma lib/hs lib/codec lib/base lib/include"},
	{"tests/unit/lab", "-Ilib/include -Iharness -Itests/unit -Itests/unit/lab",
	 "tests/unit harness/run harness/report harness/scenario harness/agent harness/hs "
	 "harness/quirks harness/cli lib/include"},
	{"tests/unit/mooncake", "-Ilib/include -Imooncake -Itests/unit", "tests/unit mooncake lib/include"},
	{"tests/rdma", "-Ilib/include -Ilib -Itests/unit -Itests/rdma",
	 "tests/unit lib/setup lib/probe lib/rdma lib/hs lib/codec lib/base lib/include"},
	{"tests/compat", "-Ilib/include -Ilib", "lib/codec lib/base lib/include"},
	{"tests/wire", "", ""},
};
#define NLAYERS (sizeof(layers) / sizeof(layers[0]))

/* Headers from outside the tree a folder includes by name (space-
 * separated): Mooncake's C API for the adapter, found only on the include
 * path of a Mooncake build (scripts/mooncake-agent.sh). */
static const struct {
	const char *folder, *headers;
} externals[] = {
	{"mooncake", "transfer_engine_c.h"},
};

static const char *external_of(const struct layer *l)
{
	for (size_t i = 0; i < sizeof(externals) / sizeof(externals[0]); i++)
		if (!strcmp(externals[i].folder, l->folder))
			return externals[i].headers;
	return NULL;
}

/* The files that may call libibverbs: the library's verbs ops table, and
 * bench/setup_floor.c, which measures what a setup costs without libqphs
 * and so must not go through it. */
static const char *const verbs_files[] = {"lib/rdma/verbs.c", "lib/rdma/verbs.h",
					  "bench/setup_floor.c"};

static const char *cc = "cc";
static char gen[PATH_MAX];
static char ignore[8][PATH_MAX];
static int nignore;
static int violations;

static void violation(const char *file, int line, const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void violation(const char *file, int line, const char *rule, const char *fmt, ...)
{
	va_list ap;

	if (line > 0)
		printf("%s:%d: %s: ", file, line, rule);
	else
		printf("%s: %s: ", file, rule);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	violations++;
}

static int has_word(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
			return 1;
	return 0;
}

/* The table folder a path (relative to the root) belongs to: the longest
 * folder that is its directory (lib/include also owns lib/include/qphs). */
static const struct layer *layer_of(const char *path)
{
	const struct layer *best = NULL;
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) : 0;

	for (size_t i = 0; i < NLAYERS; i++) {
		size_t n = strlen(layers[i].folder);
		int exact = n == dirlen && !strncmp(path, layers[i].folder, n);
		int nested = !strcmp(layers[i].folder, "lib/include") && dirlen > n &&
			     !strncmp(path, "lib/include/", n + 1);

		if ((exact || nested) && (!best || n > strlen(best->folder)))
			best = &layers[i];
	}
	return best;
}

/* A dependency as a path relative to the root, or "" when outside it
 * (system headers) or under an ignored directory (generated headers).
 * Returns 0 when the header was not found (-MG lists it as written). */
static int normalise(const char *root, const char *dep, char *out, size_t len)
{
	char abs[PATH_MAX];
	size_t rl = strlen(root);

	out[0] = 0;
	if (!realpath(dep, abs)) {
		snprintf(out, len, "%s", dep);
		return 0;
	}
	if (strncmp(abs, root, rl) || abs[rl] != '/')
		return 1;
	for (int i = 0; i < nignore; i++) {
		size_t il = strlen(ignore[i]);
		if (!strncmp(abs, ignore[i], il) && abs[il] == '/')
			return 1;
	}
	snprintf(out, len, "%s", abs + rl + 1);
	return 1;
}

/* Runs CC -MM -MG on file with its layer's include path and checks every
 * project header it pulls in. */
static int check_includes(const char *root, const char *file, const struct layer *l)
{
	char cmd[3 * PATH_MAX], *buf = NULL;
	size_t cap = 0, used = 0;
	FILE *p;
	int c;

	snprintf(cmd, sizeof(cmd), "%s -MM -MG -std=c11 -D_GNU_SOURCE %s%s%s -x c '%s' 2>&1", cc,
		 l->incpath, gen[0] ? " -I" : "", gen, file);
	if (!(p = popen(cmd, "r")))
		return -1;
	while ((c = fgetc(p)) != EOF) {
		if (used + 2 > cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 4096)))
			return -1;
		buf[used++] = (char)c;
	}
	if (pclose(p) != 0) {
		fprintf(stderr, "check-layers: %s failed:\n%.*s", cmd, (int)used, buf ? buf : "");
		free(buf);
		return -1;
	}
	if (!buf)
		return 0;
	buf[used] = 0;
	char *s = strchr(buf, ':'), *save = NULL;
	for (char *t = s ? strtok_r(s + 1, " \t\n\\", &save) : NULL; t;
	     t = strtok_r(NULL, " \t\n\\", &save)) {
		char dep[PATH_MAX];
		const struct layer *dl;

		int found = normalise(root, t, dep, sizeof(dep));

		if (!found && external_of(l) && has_word(external_of(l), dep))
			continue;
		if (!found) {
			violation(file, 0, "include", "includes \"%s\", which is not on %s's include "
				  "path (%s)", dep, l->folder, l->incpath);
			continue;
		}
		if (!dep[0] || !strcmp(dep, file))
			continue;
		if (!strncmp(file, "lib/", 4) && !strncmp(dep, "harness/", 8)) {
			violation(file, 0, "harness", "includes %s: the library never includes the "
				  "harness", dep);
			continue;
		}
		dl = layer_of(dep);
		if (dl == l || (dl && has_word(l->may, dl->folder)))
			continue;
		violation(file, 0, "include", "includes %s (%s), which %s may not include", dep,
			  dl ? dl->folder : "a folder outside the table", l->folder);
	}
	free(buf);
	return 0;
}

/* Blanks comments and string and character literals (newlines kept, so
 * line numbers hold). */
static void strip(char *s)
{
	enum { CODE, LINE, BLOCK, STR, CHR } st = CODE;

	for (char *p = s; *p; p++) {
		switch (st) {
		case CODE:
			if (p[0] == '/' && p[1] == '/')
				st = LINE;
			else if (p[0] == '/' && p[1] == '*')
				st = BLOCK, *p++ = ' ';
			else if (*p == '"')
				st = STR;
			else if (*p == '\'')
				st = CHR;
			else
				continue;
			*p = ' ';
			break;
		case LINE:
			if (*p == '\n')
				st = CODE;
			else
				*p = ' ';
			break;
		case BLOCK:
			if (p[0] == '*' && p[1] == '/') {
				*p++ = ' ';
				*p = ' ';
				st = CODE;
			} else if (*p != '\n') {
				*p = ' ';
			}
			break;
		case STR:
		case CHR:
			if (*p == '\\' && p[1]) {
				*p++ = ' ';
				if (*p != '\n')
					*p = ' ';
			} else if (*p == (st == STR ? '"' : '\'')) {
				*p = ' ';
				st = CODE;
			} else if (*p != '\n') {
				*p = ' ';
			}
			break;
		}
	}
}

static char *slurp(const char *file)
{
	FILE *f = fopen(file, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int c;

	if (!f)
		return NULL;
	while ((c = fgetc(f)) != EOF) {
		if (n + 2 > cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 8192)))
			break;
		buf[n++] = (char)c;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	else
		buf[n] = 0;
	return buf;
}

static void check_verbs(const char *file)
{
	char *src;
	int line = 1;

	for (size_t i = 0; i < sizeof(verbs_files) / sizeof(verbs_files[0]); i++)
		if (!strcmp(file, verbs_files[i]))
			return;
	if (!(src = slurp(file)))
		return;
	strip(src);
	for (char *p = src; *p; p++) {
		if (*p == '\n') {
			line++;
			continue;
		}
		if (strncmp(p, "ibv_", 4) || (p > src && (isalnum((unsigned char)p[-1]) ||
							  p[-1] == '_')))
			continue;
		char *e = p + 4;
		while (isalnum((unsigned char)*e) || *e == '_')
			e++;
		char *q = e;
		while (*q == ' ' || *q == '\t' || *q == '\n')
			q++;
		if (*q == '(')
			violation(file, line, "verbs", "calls %.*s outside the verbs ops table "
				  "(lib/rdma/verbs.[ch])", (int)(e - p), p);
		p = e - 1;
	}
	free(src);
}

static int ignored(const char *root, const char *rel)
{
	char abs[PATH_MAX];

	snprintf(abs, sizeof(abs), "%s/%s", root, rel);
	for (int i = 0; i < nignore; i++) {
		size_t il = strlen(ignore[i]);
		if (!strncmp(abs, ignore[i], il) && (abs[il] == '/' || abs[il] == 0))
			return 1;
	}
	return !strcmp(rel, "tests/layers") || !strncmp(rel, "tests/layers/", 13);
}

/* Every .c and .h under dir (relative to the root), recursively. */
static int walk(const char *root, const char *dir)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (ignored(root, dir) || !(d = opendir(dir)))
		return 0;
	while (!rc && (e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		size_t n = strlen(e->d_name);

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			rc = walk(root, path);
			continue;
		}
		if (n < 3 || e->d_name[n - 2] != '.' || (e->d_name[n - 1] != 'c' &&
							 e->d_name[n - 1] != 'h'))
			continue;
		const struct layer *l = layer_of(path);
		if (!l) {
			violation(path, 0, "folder", "is in no folder of the layer table");
			continue;
		}
		check_verbs(path);
		rc = check_includes(root, path, l);
	}
	closedir(d);
	return rc;
}

static void print_table(FILE *out)
{
	fprintf(out, "| folder | may include |\n| --- | --- |\n");
	for (size_t i = 0; i < NLAYERS; i++) {
		fprintf(out, "| %s | ", layers[i].folder);
		if (!*layers[i].may)
			fprintf(out, "(nothing of the project)");
		for (const char *p = layers[i].may; *p;) {
			size_t n = strcspn(p, " ");
			fprintf(out, "%s%.*s", p == layers[i].may ? "" : ", ", (int)n, p);
			p += n + (p[n] == ' ');
		}
		if (external_of(&layers[i]))
			fprintf(out, "; from outside the tree: %s", external_of(&layers[i]));
		fprintf(out, " |\n");
	}
}

/* README.md's table: the lines from "| folder | may include |" to the first
 * line that does not start with '|'. */
static void check_readme(void)
{
	char *readme = slurp("README.md"), *want = NULL, *have, *end;
	size_t wl = 0;
	FILE *m;

	if (!readme)
		return;
	if ((m = open_memstream(&want, &wl))) {
		print_table(m);
		fclose(m);
	}
	have = strstr(readme, "| folder | may include |");
	if (!have) {
		violation("README.md", 0, "readme", "has no layer table (check-layers --table "
			  "prints it)");
	} else {
		for (end = have; *end == '|'; end = strchr(end, '\n') ? strchr(end, '\n') + 1 :
			     end + strlen(end))
			;
		if ((size_t)(end - have) != wl || memcmp(have, want, wl))
			violation("README.md", 0, "readme", "the layer table differs from "
				  "check-layers --table");
	}
	free(want);
	free(readme);
}

static int usage(int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: check-layers [--root DIR] [--cc CC] [--gen DIR] [--ignore DIR]... [--table]\n"
		"  Checks the layer rules of the tree (include table, libibverbs calls,\n"
		"  lib/ never including the harness); exit 0 ok, 1 violation, 2 error.\n"
		"  --table prints the rule table in README.md's form.\n");
	return rc;
}

int main(int argc, char **argv)
{
	const char *root = ".";
	char absroot[PATH_MAX];
	static const char *const tops[] = {"lib", "harness", "mooncake", "bench", "fuzz", "tools", "tests"};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--table")) {
			print_table(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--root") && i + 1 < argc) {
			root = argv[++i];
		} else if (!strcmp(argv[i], "--cc") && i + 1 < argc) {
			cc = argv[++i];
		} else if (!strcmp(argv[i], "--gen") && i + 1 < argc && nignore < 8) {
			if (!realpath(argv[++i], gen)) {
				fprintf(stderr, "check-layers: --gen %s: %s\n", argv[i], strerror(errno));
				return 2;
			}
			snprintf(ignore[nignore++], PATH_MAX, "%s", gen);
		} else if (!strcmp(argv[i], "--ignore") && i + 1 < argc && nignore < 8) {
			if (!realpath(argv[++i], ignore[nignore])) {
				if (errno != ENOENT) {
					fprintf(stderr, "check-layers: %s: %s\n", argv[i], strerror(errno));
					return 2;
				}
				continue;
			}
			nignore++;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			return usage(0);
		} else {
			fprintf(stderr, "check-layers: unknown argument '%s'\n", argv[i]);
			return usage(2);
		}
	}
	if (!realpath(root, absroot) || chdir(absroot)) {
		fprintf(stderr, "check-layers: %s: %s\n", root, strerror(errno));
		return 2;
	}
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		if (walk(absroot, tops[i]))
			return 2;
	check_readme();
	if (violations)
		fprintf(stderr, "check-layers: %d violation%s of the layer rules\n", violations,
			violations == 1 ? "" : "s");
	return violations ? 1 : 0;
}
