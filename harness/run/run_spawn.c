/* The runner's fork-and-exec (run_spawn.h).  Entering a namespace here
 * instead of through `ip netns exec NS env K=V ...` spares two program
 * starts per agent: under TCG each costs 0.1-0.3 s. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_spawn.h"

/* What `ip netns exec` does (iproute2 netns_switch): join the namespace,
 * and give this process its own mount namespace with a sysfs of the new
 * network namespace, so /sys/class/net shows the host's own interfaces. */
static int enter_netns(const char *name)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) || unshare(CLONE_NEWNS))
		return -1;
	close(fd);
	if (mount("", "/", "none", MS_SLAVE | MS_REC, NULL))
		return -1;
	umount2("/sys", MNT_DETACH);
	return mount(name, "/sys", "sysfs", 0, NULL);
}

/* libibverbs dlopen()s every provider its config directory names (17 on
 * Debian) the first time it lists devices; under TCG that is most of an
 * agent's start.  A lab agent only ever opens rxe: in a mount namespace of
 * its own the directory is replaced by one naming rxe alone.  Any failure
 * leaves the real directory (slower, not wrong). */
static void only_providers(const char *dir, bool have_ns)
{
	if (!have_ns && (unshare(CLONE_NEWNS) || mount("", "/", "none", MS_SLAVE | MS_REC, NULL)))
		return;
	mount(dir, "/etc/libibverbs.d", NULL, MS_BIND, NULL);
}

static void child(const struct run_spawn *sp, const int in[2], const int out[2])
{
	if (sp->with_stdin)
		dup2(in[0], 0);
	dup2(out[1], 1);
	if (sp->err_path) {
		int fd = open(sp->err_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd >= 0)
			dup2(fd, 2);
	}
	if (sp->own_group)
		setpgid(0, 0);
	for (size_t i = 0; sp->env && sp->env[i]; i++)
		putenv(sp->env[i]); /* the child's copy of the environment */
	if (sp->netns && enter_netns(sp->netns)) {
		fprintf(stderr, "qplab run: cannot enter network namespace %s: %s\n", sp->netns,
			strerror(errno));
		_exit(126);
	}
	if (sp->verbs_dir)
		only_providers(sp->verbs_dir, sp->netns != NULL);
	execvp(sp->argv[0], sp->argv);
	fprintf(stderr, "qplab run: cannot run %s: %s\n", sp->argv[0], strerror(errno));
	_exit(127);
}

int run_spawn_start(struct run_spawn *sp)
{
	int in[2] = {-1, -1}, out[2];

	sp->pid = -1;
	sp->to_fd = -1;
	sp->from_fd = -1;
	if (pipe2(out, O_CLOEXEC))
		return -1;
	if (sp->with_stdin && pipe2(in, O_CLOEXEC)) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	sp->pid = fork();
	if (sp->pid == 0)
		child(sp, in, out);
	close(out[1]);
	if (in[0] >= 0)
		close(in[0]);
	if (sp->pid < 0) {
		int e = errno;

		close(out[0]);
		if (in[1] >= 0)
			close(in[1]);
		errno = e;
		return -1;
	}
	sp->to_fd = in[1];
	sp->from_fd = out[0];
	return 0;
}

int run_spawn_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
