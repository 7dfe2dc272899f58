/* The undo registries on disk and the objects they name (registry.h).
 * Names are looked up in /run/netns and sysfs, never with a program: under
 * TCG each start costs 0.1-0.3 s. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab_conf.h"
#include "registry.h"

#define REG_MAX_BYTES (1 << 20)

/* Where each kind of named object shows. */
static const struct {
	const char *kind, *dir;
} places[] = {
	{"netns", "/run/netns"},
	{"link", "/sys/class/net"},
	{"rxe", "/sys/class/infiniband"},
};

static int load_path(const char *path, struct run_reg *r)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;
	int rc;

	if (!f)
		return -1;
	buf = malloc(REG_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, REG_MAX_BYTES, f);
	fclose(f);
	buf[n] = '\0';
	rc = run_reg_parse(buf, r);
	free(buf);
	return rc;
}

int run_reg_load(const char *name, struct run_reg *r)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.undo", QPLAB_LAB_STATE_DIR, name);
	return load_path(path, r);
}

int run_reg_present(const struct run_reg *r)
{
	int n = 0;

	for (size_t i = 0; i < r->nobjs; i++)
		for (size_t k = 0; k < sizeof(places) / sizeof(places[0]); k++) {
			char path[320];

			if (strcmp(r->objs[i].kind, places[k].kind))
				continue;
			snprintf(path, sizeof(path), "%s/%s", places[k].dir, r->objs[i].name);
			n += access(path, F_OK) == 0;
		}
	return n;
}

int run_reg_each(int (*fn)(const char *name, const struct run_reg *r, void *arg), void *arg)
{
	DIR *d = opendir(QPLAB_LAB_STATE_DIR);
	struct dirent *e;
	int n = 0;
	struct run_reg *r = malloc(sizeof(*r));

	while (d && r && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char path[512], name[256];

		if (len <= 5 || len - 5 >= sizeof(name) || strcmp(e->d_name + len - 5, ".undo"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", QPLAB_LAB_STATE_DIR, e->d_name);
		snprintf(name, sizeof(name), "%.*s", (int)(len - 5), e->d_name);
		if (load_path(path, r))
			continue;
		n++;
		if (fn && fn(name, r, arg))
			break;
	}
	if (d)
		closedir(d);
	free(r);
	return n;
}

/* Every registry's named objects, gathered for run_reg_foreign. */
struct known {
	struct run_reg_obj *objs;
	size_t n, cap;
};

static int gather(const char *name, const struct run_reg *r, void *arg)
{
	struct known *k = arg;

	(void)name;
	for (size_t i = 0; i < r->nobjs; i++) {
		if (k->n == k->cap) {
			size_t cap = k->cap ? k->cap * 2 : 64;
			struct run_reg_obj *o = realloc(k->objs, cap * sizeof(*o));

			if (!o)
				return 1;
			k->objs = o;
			k->cap = cap;
		}
		k->objs[k->n++] = r->objs[i];
	}
	return 0;
}

static bool known(const struct known *k, const char *kind, const char *name)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->objs[i].kind, kind) && !strcmp(k->objs[i].name, name))
			return true;
	return false;
}

int run_reg_foreign(const char *prefix, char *out, size_t len)
{
	struct known k = {0};
	int n = 0;

	out[0] = '\0';
	run_reg_each(gather, &k);
	for (size_t p = 0; p < sizeof(places) / sizeof(places[0]); p++) {
		DIR *d = opendir(places[p].dir);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			size_t used = strlen(out);

			if (strncmp(e->d_name, prefix, strlen(prefix)) || known(&k, places[p].kind, e->d_name))
				continue;
			n++;
			snprintf(out + used, len - used, "%s%s %s", used ? ", " : "", places[p].kind, e->d_name);
		}
		if (d)
			closedir(d);
	}
	free(k.objs);
	return n;
}
