/*
 * The scenarios a run names: files as given, directories walked for their
 * *.json files, every file parsed before anything runs, so one bad file
 * stops the run with every problem listed (exit 2) instead of half a run.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "qphs/error.h"
#include "run_args.h"

struct names {
	char **v;
	size_t n;
	int failed;
};

static void add_name(struct names *l, const char *path)
{
	char **n = realloc(l->v, (l->n + 1) * sizeof(*n));
	size_t len = strlen(path) + 1;

	if (!n || !(n[l->n] = malloc(len))) {
		if (n)
			l->v = n;
		l->failed = 1;
		return;
	}
	memcpy(n[l->n], path, len);
	l->v = n;
	l->n++;
}

static bool is_json(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && !strcmp(name + n - 5, ".json");
}

/* Every *.json below dir, hidden entries skipped; depth-bounded so a
 * symlink loop cannot recurse forever. */
static void walk(struct names *l, const char *dir, int depth, struct qplab_errors *errs)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	struct stat st;

	if (!d) {
		qplab_errors_add(errs, "%s: %s", dir, strerror(errno));
		l->failed = 1;
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		/* "scenarios/mtu/" as given: one slash, so the id's topic is
		 * the directory's name, not the empty text between two. */
		snprintf(path, sizeof(path), "%s%s%s", dir,
			 dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
		if (stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth < 8)
			walk(l, path, depth + 1, errs);
		else if (S_ISREG(st.st_mode) && is_json(e->d_name))
			add_name(l, path);
	}
	closedir(d);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_id(const void *a, const void *b)
{
	const struct qplab_plan *x = *(struct qplab_plan *const *)a, *y = *(struct qplab_plan *const *)b;
	int c = strcmp(x->id, y->id);

	return c ? c : strcmp(x->file, y->file);
}

static void expand(struct names *l, const char *const *paths, size_t npaths, struct qplab_errors *errs)
{
	struct stat st;

	for (size_t i = 0; i < npaths; i++) {
		size_t first = l->n;
		if (stat(paths[i], &st) != 0) {
			qplab_errors_add(errs, "%s: %s", paths[i], strerror(errno));
			l->failed = 1;
		} else if (S_ISDIR(st.st_mode)) {
			walk(l, paths[i], 0, errs);
			qsort(l->v + first, l->n - first, sizeof(*l->v), by_path);
		} else {
			add_name(l, paths[i]);
		}
	}
}

static bool wanted(const struct qplab_plan *p, const char *const *tags, size_t ntags)
{
	for (size_t i = 0; i < ntags; i++)
		if (qplab_plan_has_tag(p, tags[i]))
			return true;
	return ntags == 0;
}

int qplab_catalogue_load(const char *const *paths, size_t npaths, const char *const *tags,
			 size_t ntags, struct qplab_catalogue *cat, struct qplab_errors *errs)
{
	struct names l = {0};
	int bad = 0;

	memset(cat, 0, sizeof(*cat));
	expand(&l, paths, npaths, errs);
	cat->plans = calloc(l.n + 1, sizeof(*cat->plans));
	bad = l.failed || !cat->plans;
	for (size_t i = 0; cat->plans && i < l.n; i++) {
		struct qplab_plan *p;
		if (qplab_scenario_load(l.v[i], &p, errs) < 0) {
			bad = 1;
		} else if (!wanted(p, tags, ntags)) {
			cat->filtered++;
			qplab_plan_free(p);
		} else {
			cat->plans[cat->n++] = p;
		}
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	if (cat->n)
		qsort(cat->plans, cat->n, sizeof(*cat->plans), by_id);
	for (size_t i = 1; i < cat->n; i++) {
		if (!strcmp(cat->plans[i - 1]->id, cat->plans[i]->id)) {
			qplab_errors_add(errs, "%s: scenario id %s is also %s", cat->plans[i]->file,
					 cat->plans[i]->id, cat->plans[i - 1]->file);
			bad = 1;
		}
	}
	return bad ? QPHS_ERR_INVALID_ARGUMENT : 0;
}

void qplab_catalogue_free(struct qplab_catalogue *cat)
{
	for (size_t i = 0; cat->plans && i < cat->n; i++)
		qplab_plan_free(cat->plans[i]);
	free(cat->plans);
	memset(cat, 0, sizeof(*cat));
}

int qplab_catalogue_twins(struct qplab_catalogue *cat, struct qplab_errors *errs)
{
	int rc = 0;

	for (size_t i = 0; i < cat->n; i++) {
		struct qplab_plan *p = cat->plans[i];

		if (p->ablate_mode != QPLAB_ABLATE_LIST || p->twin)
			continue;
		if (qplab_plan_ablate(p, &p->twin, errs))
			rc = QPHS_ERR_INVALID_ARGUMENT;
	}
	return rc;
}

static void set_impl(struct qplab_plan *p, int h, const char *name)
{
	snprintf(p->hosts[h].impl, sizeof(p->hosts[h].impl), "%s", name);
	snprintf(p->hosts[h].impl_from, sizeof(p->hosts[h].impl_from), "run");
}

/* "@NAME=h1,h2" for each implementation the run set, in qplab_impls order. */
static void suffix_id(struct qplab_plan *p)
{
	size_t n = strlen(p->id);

	for (size_t i = 0; qplab_impls[i]; i++) {
		bool first = true;

		for (size_t h = 0; h < p->nhosts && n < sizeof(p->id); h++) {
			if (strcmp(p->hosts[h].impl_from, "run") || strcmp(p->hosts[h].impl, qplab_impls[i]))
				continue;
			if (first)
				n += (size_t)snprintf(p->id + n, sizeof(p->id) - n, "@%s=%s", qplab_impls[i],
						      p->hosts[h].name);
			else
				n += (size_t)snprintf(p->id + n, sizeof(p->id) - n, ",%s", p->hosts[h].name);
			first = false;
		}
	}
}

/* Every plan with placements becomes one plan per placement. */
static int expand_placements(struct qplab_catalogue *cat, struct qplab_errors *errs)
{
	size_t total = 0, k = 0;
	struct qplab_plan **all;

	for (size_t i = 0; i < cat->n; i++)
		total += cat->plans[i]->nplacements ? cat->plans[i]->nplacements : 1;
	all = calloc(total + 1, sizeof(*all));
	if (!all)
		return QPHS_ERR_MEMORY;
	for (size_t i = 0; i < cat->n; i++) {
		struct qplab_plan *p = cat->plans[i];

		all[k++] = p;
		for (size_t pl = 0; pl < p->nplacements; pl++) {
			struct qplab_plan *q = p;

			if (pl > 0 && qplab_scenario_load(p->file, &q, errs) < 0) {
				for (size_t j = i + 1; j < cat->n; j++)
					all[k++] = cat->plans[j];
				free(cat->plans);
				cat->plans = all;
				cat->n = k;
				return QPHS_ERR_INVALID_ARGUMENT;
			}
			if (pl > 0)
				all[k++] = q;
			for (size_t h = 0; h < q->nhosts; h++)
				if (p->placements[pl] & (1u << h))
					set_impl(q, (int)h, "mooncake");
		}
	}
	free(cat->plans);
	cat->plans = all;
	cat->n = k;
	return 0;
}

int qplab_catalogue_impls(struct qplab_catalogue *cat, const struct qplab_run_opts *o,
			  struct qplab_errors *errs)
{
	int rc = o->placements ? expand_placements(cat, errs) : 0;

	for (size_t i = 0; !rc && i < o->nimpls; i++) {
		bool found = false;

		for (size_t k = 0; k < cat->n; k++) {
			int h = qplab_plan_host(cat->plans[k], o->impls[i].host);

			if (h >= 0)
				set_impl(cat->plans[k], h, o->impls[i].name);
			found |= h >= 0;
		}
		if (!found && cat->n) {
			qplab_errors_add(errs, "--impl %s=%s: no scenario of this run has a host %s",
					 o->impls[i].host, o->impls[i].name, o->impls[i].host);
			rc = QPHS_ERR_INVALID_ARGUMENT;
		}
	}
	for (size_t k = 0; k < cat->n; k++)
		suffix_id(cat->plans[k]);
	if (cat->n)
		qsort(cat->plans, cat->n, sizeof(*cat->plans), by_id);
	return rc;
}
