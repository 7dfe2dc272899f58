/*
 * run_args.h — the pure front of `qplab run`: its command line, and the
 * scenario list it names (files and directories, tag filter), parsed and
 * checked before anything is built.
 *
 *   qplab run [FILES|DIRS...] [--backend auto|netns|shared|vm|hosts] [--kernel K]...
 *             [--inventory FILE] [--tag T]... [--jobs N] [--out DIR] [--keep] [--capture]
 *             [--impl HOST=NAME]... [--placements] [--mooncake-agent PATH] [--ablate]
 *
 * Nothing here touches RDMA, namespaces or processes.
 */
#ifndef QPLAB_RUN_ARGS_H
#define QPLAB_RUN_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "scenario/scenario.h"

#define QPLAB_RUN_MAX_LIST 32

enum qplab_backend {
	QPLAB_BACKEND_AUTO,
	QPLAB_BACKEND_NETNS,
	QPLAB_BACKEND_SHARED,
	QPLAB_BACKEND_VM,
	QPLAB_BACKEND_HOSTS, /* the machines of an inventory, over ssh */
	QPLAB_BACKEND_HOSTS_VM, /* the hosts backend on lab VMs booted for the run */
};

/* "auto", "netns", "shared", "vm", "hosts", "hosts-vm". */
const char *qplab_backend_name(enum qplab_backend b);

/* Pointers borrow argv's strings. */
struct qplab_run_opts {
	const char *paths[QPLAB_RUN_MAX_LIST]; /* none: the catalogue */
	size_t npaths;
	enum qplab_backend backend;
	const char *kernels[QPLAB_RUN_MAX_LIST]; /* none: the default kernel */
	size_t nkernels;
	const char *tags[QPLAB_RUN_MAX_LIST];    /* none: every scenario */
	size_t ntags;
	int jobs;                                /* >= 1 */
	const char *out;                         /* default "build/lab" */
	const char *inventory;                   /* --backend hosts: its inventory */
	bool keep;                               /* keep the topology after a failure */
	bool capture;                            /* --capture: a pcap per scenario */
	bool ablate;                             /* --ablate: each passing scenario's twin too */
	bool help;
	/* --impl HOST=NAME: host HOST of every scenario that has one runs
	 * NAME (a qplab_impls name), whatever its file says. */
	struct {
		char host[QPLAB_NAME_MAX];
		char name[20];
	} impls[QPLAB_RUN_MAX_LIST];
	size_t nimpls;
	bool placements;                         /* one run per "placements" entry */
	const char *mooncake_agent;              /* the adapter; NULL = default */
};

/* Parses argv (argv[0] is "run").  Returns 0, or QPHS_ERR_INVALID_ARGUMENT
 * with a message in err.  `--help` sets o->help and returns 0. */
int qplab_run_parse_args(int argc, char **argv, struct qplab_run_opts *o, char *err,
			 size_t errlen);

/* Prints the usage text. */
void qplab_run_usage(FILE *out);

/* Refuses --jobs > 1 where the topology mode cannot run two scenarios at
 * once, saying why: "shared" (one namespace, one routing table rewritten
 * per topology).  "netns" runs them side by side; NULL (the mode is not
 * known yet: the vm backend decides inside the VM) passes.  Returns 0 or
 * QPHS_ERR_INVALID_ARGUMENT with a message in err. */
int qplab_run_check_jobs(const struct qplab_run_opts *o, const char *mode, char *err,
			 size_t errlen);

/* The scenarios of a run, sorted by id. */
struct qplab_catalogue {
	struct qplab_plan **plans; /* owned */
	size_t n;
	size_t filtered;           /* parsed, but left out by the tag filter */
};

/* Expands paths (files as given; directories recursively to their *.json
 * files, hidden entries skipped), parses every file, refuses two files
 * with one id, and keeps the plans carrying any of tags (all when ntags is
 * 0).  Every problem of every file goes into errs ("FILE:LINE: message").
 * Returns 0, or QPHS_ERR_INVALID_ARGUMENT when any file had a problem
 * (the caller exits 2 and runs nothing). */
int qplab_catalogue_load(const char *const *paths, size_t npaths, const char *const *tags,
			 size_t ntags, struct qplab_catalogue *cat, struct qplab_errors *errs);
void qplab_catalogue_free(struct qplab_catalogue *cat);

/* --ablate: the ablated twin of every plan whose `ablate` key lists
 * pointers, in plan->twin (qplab_plan_ablate).  Returns 0, or
 * QPHS_ERR_INVALID_ARGUMENT with every plan's problem in errs. */
int qplab_catalogue_twins(struct qplab_catalogue *cat, struct qplab_errors *errs);

/* Who runs which host: with o->placements every plan with "placements"
 * becomes one plan per placement (its file parsed again), the listed
 * hosts running "mooncake"; then o's --impl settings apply to every plan
 * that has the host.  A plan whose implementations changed gets its id
 * suffixed with them ("basic/connect-2qp@mooncake=b"), so every run of it
 * stays apart in the results.  Returns 0, or QPHS_ERR_INVALID_ARGUMENT
 * (errs: an --impl host no scenario has) or QPHS_ERR_MEMORY. */
int qplab_catalogue_impls(struct qplab_catalogue *cat, const struct qplab_run_opts *o,
			  struct qplab_errors *errs);

#endif
