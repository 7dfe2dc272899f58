/*
 * registry.h — netns/topo's undo registries, read by the runner
 * (docs/lab-backends.md, "State, teardown, crashes").
 *
 * Every script that creates lab objects registers each one, before it
 * creates it, in QPLAB_LAB_STATE_DIR/NAME.undo: `owner PID`, `pid PID`,
 * `obj KIND NAME` lines (netns, link, rxe by name; table4/table6 by
 * number; localrule4/localrule6), `undo`, `done` and `commit` lines.  The
 * runner reads the obj lines to count, after `topo down`, what of its
 * topology is still there (topo's exit status is not taken as the count),
 * and the owner lines to find the topologies of a worker that died.
 * Objects named like the lab's that no registry names are someone else's:
 * reported, never removed.
 */
#ifndef QPLAB_RUN_REGISTRY_H
#define QPLAB_RUN_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#define RUN_REG_MAX_OBJS 96

struct run_reg_obj {
	char kind[16];             /* netns, link, rxe, table4, table6, localrule4, localrule6 */
	char name[64];             /* the object's name, table number or rule preference */
};

struct run_reg {
	long owner;                /* the process that ran the creating script, -1 unknown */
	long pid;                  /* the creating script itself, -1 unknown */
	size_t nobjs;
	struct run_reg_obj objs[RUN_REG_MAX_OBJS];
	bool truncated;            /* more obj lines than RUN_REG_MAX_OBJS */
};

/* Pure: a registry's text into r.  Lines it does not know are ignored (a
 * newer topo may write more); an obj line with a kind or name too long for
 * r is refused.  Returns 0, or -1 when text is not a registry (its first
 * line is not "# qplab undo registry NAME"). */
int run_reg_parse(const char *text, struct run_reg *r);

/* Does r name this object (kind and name equal)? */
bool run_reg_names(const struct run_reg *r, const char *kind, const char *name);

/* Reads the registry of topology name.  Returns 0, or -1 when there is
 * none (or it cannot be read or parsed). */
int run_reg_load(const char *name, struct run_reg *r);

/* How many of r's namespaces, links and rxe devices still exist
 * (/run/netns, /sys/class/net, /sys/class/infiniband: no process). */
int run_reg_present(const struct run_reg *r);

/* Calls fn for every registry in the state directory (name without
 * ".undo"); stops early when fn returns non-zero.  Returns how many. */
int run_reg_each(int (*fn)(const char *name, const struct run_reg *r, void *arg), void *arg);

/* Namespaces, links and rxe devices named prefix... that no registry
 * names, as "KIND NAME" joined by ", " into out (len bytes; "" when none).
 * Returns how many. */
int run_reg_foreign(const char *prefix, char *out, size_t len);

#endif
