/* Agents as child processes: started inside their topology host, spoken to
 * through pipes, every read bounded by a deadline (poll), stopped politely
 * then firmly. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qphs/error.h"
#include "run.h"

#define BUF_MAX (QPLAB_AGENT_LINE_MAX * 4)

double run_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double run_mult(void)
{
	const char *m = getenv("QPLAB_TIME_MULTIPLIER");
	double v = m ? atof(m) : 1;

	return v >= 1 ? v : 1;
}

/* advertise gid "zero" and "unowned" (docs/scenarios.md) become GID
 * strings here: the all-zero GID, and the IPv4-mapped GID of the lab's
 * unowned (blackholed) address, which only the topology knows. */
static void lab_gid(json_object *cfg, const struct run_host *h)
{
	json_object *ag, *adv, *g;
	uint8_t raw[16] = {0};
	struct in_addr a4;
	char s[16 * 3];

	if (!json_object_object_get_ex(cfg, "agent", &ag) ||
	    !json_object_object_get_ex(ag, "advertise", &adv) ||
	    !json_object_object_get_ex(adv, "gid", &g))
		return;
	if (!strcmp(json_object_get_string(g), "unowned")) {
		if (inet_pton(AF_INET, h->unowned4, &a4) != 1)
			return;
		raw[10] = raw[11] = 0xff;
		memcpy(raw + 12, &a4, 4);
	} else if (strcmp(json_object_get_string(g), "zero")) {
		return;
	}
	for (int i = 0; i < 16; i++)
		snprintf(s + 3 * i, 4, i < 15 ? "%02x:" : "%02x", raw[i]);
	json_object_object_add(adv, "gid", json_object_new_string(s));
}

/* argv: exec prefix, env MC_*=..., qplab agent ... */
static void build_argv(const char *argv[64], char *bufs[48], const struct qplab_plan *p, int hi,
		       const struct run_host *h, const char *exe)
{
	const struct qplab_host *ph = &p->hosts[hi];
	json_object *cfg = qplab_agent_config(ph);
	int n = 0;

	lab_gid(cfg, h);

	for (int i = 0; h->exec[i] && n < 8; i++)
		argv[n++] = h->exec[i];
	argv[n++] = "env";
	for (size_t i = 0; i < ph->nenv && n < 40; i++) {
		char *kv = malloc(strlen(ph->env[i].name) + strlen(ph->env[i].value) + 2);

		sprintf(kv, "%s=%s", ph->env[i].name, ph->env[i].value);
		bufs[2 + i] = kv;
		argv[n++] = kv;
	}
	argv[n++] = exe;
	argv[n++] = "agent";
	argv[n++] = "--host";
	argv[n++] = ph->name;
	argv[n++] = "--device";
	argv[n++] = h->rxe;
	bufs[0] = malloc(128);
	snprintf(bufs[0], 128, "%s:%d", h->addr4, RUN_AGENT_PORT);
	argv[n++] = "--listen";
	argv[n++] = bufs[0];
	bufs[1] = strdup(json_object_to_json_string_ext(cfg, JSON_C_TO_STRING_PLAIN));
	argv[n++] = "--config";
	argv[n++] = bufs[1];
	argv[n] = NULL;
	json_object_put(cfg);
}

static pid_t spawn(const char *const *argv, int *to, int *from, const char *log)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(in[0], 0);
		dup2(out[1], 1);
		if (fd >= 0)
			dup2(fd, 2);
		/* Its own process group: the runner decides when it dies. */
		setpgid(0, 0);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return pid;
}

/* Reads one line before deadline (absolute ms).  Returns a malloc'd line,
 * or NULL (err says why). */
static char *read_line(struct run_agent *ag, double deadline, char *err, size_t errlen)
{
	for (;;) {
		char *nl = ag->buf ? memchr(ag->buf, '\n', ag->len) : NULL;
		struct pollfd pfd = {.fd = ag->from_fd, .events = POLLIN};
		int left = (int)(deadline - run_now_ms()), r;
		ssize_t n;

		if (nl) {
			size_t k = (size_t)(nl - ag->buf);
			char *line = strndup(ag->buf, k);

			memmove(ag->buf, nl + 1, ag->len - k - 1);
			ag->len -= k + 1;
			return line;
		}
		if (qplab_run_interrupted) {
			snprintf(err, errlen, "interrupted");
			return NULL;
		}
		if (left <= 0) {
			snprintf(err, errlen, "agent %s: no reply before the deadline", ag->name);
			return NULL;
		}
		r = poll(&pfd, 1, left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		if (!ag->buf)
			ag->buf = malloc(BUF_MAX);
		if (ag->len >= BUF_MAX) {
			snprintf(err, errlen, "agent %s: line longer than %d bytes", ag->name, BUF_MAX);
			return NULL;
		}
		n = read(ag->from_fd, ag->buf + ag->len, BUF_MAX - ag->len);
		if (n <= 0) {
			snprintf(err, errlen, "agent %s: its output ended (it exited)", ag->name);
			return NULL;
		}
		ag->len += (size_t)n;
	}
}

int run_agent_spawn(struct run_agent *ag, const struct qplab_plan *p, int hi,
		    const struct run_host *h, char *err, size_t errlen)
{
	const char *argv[64], *dir = getenv("QPLAB_RUN_LOGDIR");
	char *bufs[48] = {0}, exe[PATH_MAX], log[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	snprintf(ag->name, sizeof(ag->name), "%s", p->hosts[hi].name);
	ag->len = 0;
	build_argv(argv, bufs, p, hi, h, exe);
	snprintf(log, sizeof(log), "%s/agent-%s.log", dir ? dir : "/tmp", ag->name);
	if (getenv("QPLAB_RUN_TRACE")) {
		fprintf(stderr, "qplab run: agent %s:", ag->name);
		for (int i = 0; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		fputc('\n', stderr);
	}
	ag->pid = spawn(argv, &ag->to_fd, &ag->from_fd, log);
	for (int i = 0; i < 48; i++)
		free(bufs[i]);
	if (ag->pid < 0) {
		ag->pid = 0;
		snprintf(err, errlen, "agent %s: fork: %s", ag->name, strerror(errno));
		return -1;
	}
	return 0;
}

int run_agent_ready(struct run_agent *ag, double deadline, char *err, size_t errlen)
{
	struct qplab_agent_msg m;
	char *line = read_line(ag, deadline, err, errlen);
	int rc = -1;

	if (!line)
		return -1;
	if (qplab_agent_parse_line(line, strlen(line), &m, err, errlen) == 0) {
		if (m.type == QPLAB_AGENT_READY) {
			json_object *v;

			if (json_object_object_get_ex(m.body, "nic_path", &v))
				snprintf(ag->nic_path, sizeof(ag->nic_path), "%s", json_object_get_string(v));
			if (json_object_object_get_ex(m.body, "listen", &v))
				snprintf(ag->listen, sizeof(ag->listen), "%s", json_object_get_string(v));
			rc = 0;
		} else {
			snprintf(err, errlen, "agent %s did not start: %s: %s", ag->name, m.code, m.error);
		}
		qplab_agent_msg_free(&m);
	}
	free(line);
	return rc;
}

int run_agent_start(struct run_agent *ag, const struct qplab_plan *p, int hi,
		    const struct run_host *h, int deadline_ms, char *err, size_t errlen)
{
	if (run_agent_spawn(ag, p, hi, h, err, errlen))
		return -1;
	return run_agent_ready(ag, run_now_ms() + deadline_ms, err, errlen);
}

int run_agent_send(struct run_agent *ag, char *line)
{
	size_t len = line ? strlen(line) : 0, off = 0;

	while (ag->pid && off < len) {
		ssize_t n = write(ag->to_fd, line + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(line);
	return off == len && len ? 0 : -1;
}

int run_agent_wait(struct run_agent *ag, int id, int deadline_ms, struct qplab_agent_msg *m,
		   char *err, size_t errlen)
{
	double deadline = run_now_ms() + deadline_ms;

	for (;;) {
		char *line = read_line(ag, deadline, err, errlen);
		int rc;

		if (!line)
			return -1;
		rc = qplab_agent_parse_line(line, strlen(line), m, err, errlen);
		free(line);
		if (rc)
			return -1;
		if (m->type == QPLAB_AGENT_REPLY && m->id == id)
			return 0;
		qplab_agent_msg_free(m);
	}
}

int run_agent_call(struct run_agent *ag, int id, char *line, int deadline_ms,
		   struct qplab_agent_msg *m, char *err, size_t errlen)
{
	if (!ag->pid) {
		free(line);
		snprintf(err, errlen, "agent %s is not running", ag->name);
		return -1;
	}
	if (run_agent_send(ag, line)) {
		snprintf(err, errlen, "agent %s: cannot write its request", ag->name);
		return -1;
	}
	return run_agent_wait(ag, id, deadline_ms, m, err, errlen);
}

bool run_agent_alive(const struct run_agent *ag)
{
	return ag->pid > 0 && kill(ag->pid, 0) == 0;
}

/* Waits for the child until deadline; 1 when it was reaped. */
static int reap(pid_t pid, double deadline)
{
	while (run_now_ms() < deadline) {
		pid_t r = waitpid(pid, NULL, WNOHANG);
		struct timespec ts = {0, 5 * 1000 * 1000};

		if (r == pid || (r < 0 && errno == ECHILD))
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

void run_agent_kill(struct run_agent *ag)
{
	if (ag->pid > 0) {
		kill(ag->pid, SIGKILL);
		reap(ag->pid, run_now_ms() + 2000);
	}
	if (ag->pid > 0) {
		if (ag->to_fd >= 0)
			close(ag->to_fd);
		close(ag->from_fd);
	}
	ag->to_fd = -1;
	ag->pid = 0;
	free(ag->buf);
	ag->buf = NULL;
	ag->len = 0;
}

void run_agent_ask_exit(struct run_agent *ag)
{
	if (ag->pid <= 0 || ag->to_fd < 0)
		return;
	run_agent_send(ag, qplab_agent_req_exit(ag->next_id++));
	close(ag->to_fd);
	ag->to_fd = -1;
}

void run_agent_stop(struct run_agent *ag, int deadline_ms)
{
	if (ag->pid <= 0)
		return;
	run_agent_ask_exit(ag);
	if (!reap(ag->pid, run_now_ms() + deadline_ms)) {
		kill(ag->pid, SIGTERM);
		if (!reap(ag->pid, run_now_ms() + 1000))
			kill(ag->pid, SIGKILL), reap(ag->pid, run_now_ms() + 2000);
	}
	close(ag->from_fd);
	ag->pid = 0;
	free(ag->buf);
	ag->buf = NULL;
	ag->len = 0;
}
