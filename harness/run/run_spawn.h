/*
 * run_spawn.h — the runner's one fork-and-exec: a child with its stdout on
 * a pipe (and optionally its stdin on another, stderr into a file, its own
 * process group, extra environment, and a network namespace entered the
 * way `ip netns exec` enters it).  run_topo.c (run_capture), run_vm.c (the
 * relayed VM) and run_agent.c (agents) all start their children here.
 */
#ifndef QPLAB_RUN_SPAWN_H
#define QPLAB_RUN_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

struct run_spawn {
	char *const *argv;      /* NULL-ended; argv[0] is looked up in PATH */
	char *const *env;       /* NULL or NULL-ended "NAME=VALUE" added to the child's */
	const char *netns;      /* NULL, or a name under /run/netns to run inside */
	const char *err_path;   /* NULL: stderr stays the runner's; else appended to */
	bool with_stdin;        /* a pipe to the child's stdin (else /dev/null is not
				   touched: the runner's stdin is inherited) */
	bool own_group;         /* setpgid(0, 0) in the child */
	const char *verbs_dir;  /* NULL, or a directory bind-mounted over
				   /etc/libibverbs.d in the child's own mount
				   namespace (which providers libibverbs loads) */
	/* Filled by run_spawn_start: */
	pid_t pid;
	int to_fd;              /* the child's stdin, or -1 */
	int from_fd;            /* the child's stdout */
};

/* Starts sp->argv.  Both pipe ends the runner keeps are close-on-exec, so
 * no other child inherits them.  Returns 0, or -1 with errno set (nothing
 * started, nothing left open). */
int run_spawn_start(struct run_spawn *sp);

/* Waits for pid (retrying on EINTR).  Returns its exit status, or 128+N
 * when signal N ended it, or -1 when it cannot be waited for. */
int run_spawn_wait(pid_t pid);

#endif
