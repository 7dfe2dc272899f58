/* The topology through netns/topo: up (its JSON read back), faults, down
 * and an independent count of what is left. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "realise.h"
#include "run.h"

int run_capture(char *const argv[], char **out)
{
	int fds[2], status;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	pid_t pid;

	if (!buf || pipe(fds)) {
		free(buf);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger)
				break; /* keep what was read; the caller parses it */
			buf = bigger;
			cap *= 2;
		}
		n = read(fds[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static const char *topo_path(void)
{
	static char path[4200];

	snprintf(path, sizeof(path), "%s/topo", qplab_script_dir());
	return path;
}

static void copy(json_object *o, const char *key, char *dst, size_t len)
{
	json_object *v;

	dst[0] = '\0';
	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		snprintf(dst, len, "%s", json_object_get_string(v));
}

static int parse_topo(const char *text, struct run_topo *t, char *err, size_t errlen)
{
	json_object *o = json_tokener_parse(text), *hosts, *ex;

	if (!o || !json_object_object_get_ex(o, "hosts", &hosts) ||
	    !json_object_is_type(hosts, json_type_array)) {
		json_object_put(o);
		snprintf(err, errlen, "topo up: its output is not the topology JSON");
		return -1;
	}
	copy(o, "mode", t->mode, sizeof(t->mode));
	copy(o, "kernel", t->kernel, sizeof(t->kernel));
	copy(o, "unowned4", t->unowned4, sizeof(t->unowned4));
	copy(o, "unroutable4", t->unroutable4, sizeof(t->unroutable4));
	t->nhosts = json_object_array_length(hosts);
	if (t->nhosts > QPLAB_MAX_HOSTS)
		t->nhosts = QPLAB_MAX_HOSTS;
	for (size_t i = 0; i < t->nhosts; i++) {
		json_object *h = json_object_array_get_idx(hosts, i);
		struct run_host *rh = &t->hosts[i];

		copy(h, "name", rh->name, sizeof(rh->name));
		copy(h, "addr4", rh->addr4, sizeof(rh->addr4));
		copy(h, "rxe", rh->rxe, sizeof(rh->rxe));
		copy(h, "ifname", rh->ifname, sizeof(rh->ifname));
		snprintf(rh->unowned4, sizeof(rh->unowned4), "%s", t->unowned4);
		if (json_object_object_get_ex(h, "exec", &ex) && json_object_is_type(ex, json_type_array))
			for (size_t k = 0; k < json_object_array_length(ex) && k < 7; k++)
				rh->exec[k] = strdup(json_object_get_string(json_object_array_get_idx(ex, k)));
	}
	json_object_put(o);
	return 0;
}

int run_topo_up(const struct qplab_plan *p, const char *id, const char *mode, struct run_topo *t,
		char *err, size_t errlen)
{
	const char *words[QPLAB_TOPO_ARGV_MAX];
	char *argv[QPLAB_TOPO_ARGV_MAX + 2], buf[2048], *out = NULL;
	int n = qplab_topo_up_args(p, id, mode, words, buf, sizeof(buf)), rc;

	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "%s", id);
	if (n < 0) {
		snprintf(err, errlen, "topo up: arguments too long");
		return -1;
	}
	argv[0] = (char *)topo_path();
	for (int i = 0; i < n; i++)
		argv[i + 1] = (char *)words[i];
	argv[n + 1] = NULL;
	rc = run_capture(argv, &out);
	t->up = true; /* whatever it built, down undoes */
	if (rc != 0) {
		snprintf(err, errlen, "topo up --name %s failed (exit %d)", id, rc);
		free(out);
		return -1;
	}
	rc = parse_topo(out, t, err, errlen);
	free(out);
	return rc;
}

int run_topo_fault(const struct run_topo *t, const struct qplab_plan *p, const struct qplab_step *st,
		   char *err, size_t errlen)
{
	const char *words[QPLAB_TOPO_ARGV_MAX];
	char *argv[QPLAB_TOPO_ARGV_MAX + 5], buf[1024];
	int n = qplab_topo_step_args(p, st, words, buf, sizeof(buf)), rc;

	if (n < 0) {
		snprintf(err, errlen, "step %s: the topology cannot do it", qplab_step_kind_name(st->kind));
		return -1;
	}
	argv[0] = (char *)topo_path();
	argv[1] = (char *)"fault";
	argv[2] = (char *)"--name";
	argv[3] = (char *)t->id;
	for (int i = 0; i < n; i++)
		argv[i + 4] = (char *)words[i];
	argv[n + 4] = NULL;
	rc = run_capture(argv, NULL);
	if (rc != 0)
		snprintf(err, errlen, "topo fault %s failed (exit %d)", qplab_step_kind_name(st->kind), rc);
	return rc ? -1 : 0;
}

static int count_lines(const char *cmd, const char *needle)
{
	FILE *f = popen(cmd, "r");
	char line[1024];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	pclose(f);
	return n;
}

int run_count_qps(const char *rxe)
{
	char cmd[256], needle[96];

	/* QP 1 (GSI) belongs to the kernel, not to an agent. */
	snprintf(cmd, sizeof(cmd), "rdma resource show qp link %s/1 2>/dev/null | grep -v 'lqpn 1 '", rxe);
	snprintf(needle, sizeof(needle), "link %s/", rxe);
	return count_lines(cmd, needle);
}

int run_topo_down(struct run_topo *t)
{
	char *argv[] = {(char *)topo_path(), (char *)"down", (char *)"--name", t->id, NULL};
	char needle[32];
	int left = 0;

	if (!t->up)
		return 0;
	run_capture(argv, NULL);
	t->up = false;
	snprintf(needle, sizeof(needle), "ql%s-", t->id);
	left += count_lines("ip netns list 2>/dev/null", needle);
	left += count_lines("ip -o link show 2>/dev/null", needle);
	left += count_lines("rdma link show 2>/dev/null", needle);
	for (size_t i = 0; i < t->nhosts; i++) {
		char addr[80];

		snprintf(addr, sizeof(addr), " %s ", t->hosts[i].addr4);
		if (t->hosts[i].addr4[0])
			left += count_lines("ip rule show 2>/dev/null | sed 's/$/ /'", addr);
	}
	return left;
}

void run_topo_free(struct run_topo *t)
{
	for (size_t i = 0; i < t->nhosts; i++)
		for (int k = 0; t->hosts[i].exec[k]; k++) {
			free(t->hosts[i].exec[k]);
			t->hosts[i].exec[k] = NULL;
		}
}
