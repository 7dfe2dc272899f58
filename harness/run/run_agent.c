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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/jread.h"
#include "qphs/body.h"
#include "impl.h"
#include "lab_conf.h"
#include "qphs/error.h"
#include "cli/cli.h"
#include "run.h"
#include "run_spawn.h"

#define BUF_MAX (QPLAB_AGENT_LINE_MAX * 4)

double run_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* cmd_run refused an invalid value before anything ran (a usage error). */
double run_mult(void)
{
	static double m = -1;
	char err[160];

	if (m < 0 && qplab_time_multiplier(&m, err, sizeof(err)))
		m = 1;
	return m;
}

/* advertise gid "zero" and "unowned" (docs/scenarios.md) become GID
 * strings here: the all-zero GID, and the IPv4-mapped GID of the lab's
 * unowned (blackholed) address, which only the topology knows. */
static void lab_gid(json_object *cfg, const struct run_host *h)
{
	struct jread r = {0}; /* our own JSON: anything else is left to the agent */
	json_object *ag, *adv;
	const char *g;
	uint8_t raw[16] = {0};
	struct in_addr a4;
	char s[QPHS_GID_STR_LEN + 1];

	if (jread_object(&r, cfg, "agent", &ag) != JREAD_OK ||
	    jread_object(&r, ag, "advertise", &adv) != JREAD_OK ||
	    jread_str(&r, adv, "gid", &g) != JREAD_OK)
		return;
	if (!strcmp(g, "unowned")) {
		if (inet_pton(AF_INET, h->unowned4, &a4) != 1)
			return;
		raw[10] = raw[11] = 0xff;
		memcpy(raw + 12, &a4, 4);
	} else if (strcmp(g, "zero")) {
		return;
	}
	qphs_gid_format(raw, s);
	json_object_object_add(adv, "gid", json_object_new_string(s));
}

/* argv: qplab agent ...; env (malloc'd, NULL-ended): the host's MC_*
 * variables.  The child enters the host's namespace itself (run_spawn.c). */
static char **build_argv(const char *argv[16], char *bufs[2], const struct qplab_plan *p, int hi,
			 const struct run_host *h, const char *exe)
{
	const struct qplab_host *ph = &p->hosts[hi];
	json_object *cfg = qplab_agent_config(ph);
	char **env = calloc(ph->nenv + 1, sizeof(*env));
	size_t e = 0;
	int n = 0;

	lab_gid(cfg, h);

	for (size_t i = 0; env && i < ph->nenv; i++) {
		char *kv = malloc(strlen(ph->env[i].name) + strlen(ph->env[i].value) + 2);

		if (kv) {
			sprintf(kv, "%s=%s", ph->env[i].name, ph->env[i].value);
			env[e++] = kv;
		}
	}
	/* A Mooncake host: the adapter, with qplab agent's command line. */
	if (qplab_host_is_mooncake(p, hi)) {
		argv[n++] = run_mooncake_agent();
	} else {
		argv[n++] = exe;
		argv[n++] = "agent";
	}
	argv[n++] = "--host";
	argv[n++] = ph->name;
	argv[n++] = "--device";
	/* "device": "second": the rxe of its second netdev (topo up --second). */
	argv[n++] = ph->second_device ? h->rxe2 : h->rxe;
	bufs[0] = malloc(128);
	/* No IPv4 (addresses): its ULA; no address at all: its own loopback. */
	if (bufs[0] && (h->addr4[0] || !h->addr6[0]))
		snprintf(bufs[0], 128, "%s:%d", h->addr4[0] ? h->addr4 : "127.0.0.1",
			 qplab_host_port(p, hi, h->netns[0], h->topo_seq));
	else if (bufs[0])
		snprintf(bufs[0], 128, "[%s]:%d", h->addr6, qplab_host_port(p, hi, h->netns[0], h->topo_seq));
	argv[n++] = "--listen";
	argv[n++] = bufs[0] ? bufs[0] : "";
	bufs[1] = strdup(json_object_to_json_string_ext(cfg, JSON_C_TO_STRING_PLAIN));
	argv[n++] = "--config";
	argv[n++] = bufs[1] ? bufs[1] : "{}";
	argv[n] = NULL;
	json_object_put(cfg);
	return env;
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

/* A libibverbs config directory naming rxe alone (run_spawn.c says why),
 * made once per run in the lab's state directory; NULL when it cannot be (not root,
 * no rxe provider configured) or QPLAB_RUN_ALL_PROVIDERS is set. */
static const char *rxe_only_dir(void)
{
	static const char dir[] = QPLAB_LAB_STATE_DIR "/verbs-rxe.d";
	static int state; /* 0 unknown, 1 ready, -1 not available */
	char line[256] = "", tmp[sizeof(dir) + 32];
	FILE *in, *out;

	if (state)
		return state > 0 ? dir : NULL;
	state = -1;
	if (getenv("QPLAB_RUN_ALL_PROVIDERS") || geteuid() != 0)
		return NULL;
	in = fopen("/etc/libibverbs.d/rxe.driver", "re");
	if (!in)
		return NULL;
	if (!fgets(line, sizeof(line), in))
		line[0] = '\0';
	fclose(in);
	mkdir(QPLAB_LAB_STATE_DIR, 0755);
	mkdir(dir, 0755);
	/* Written aside and renamed: with --jobs another worker's agent may
	 * be reading the file this moment, and must never see it empty. */
	snprintf(tmp, sizeof(tmp), "%s/.rxe.driver.%d", dir, (int)getpid());
	out = fopen(tmp, "we");
	if (!out)
		return NULL;
	fputs(line, out);
	if (fclose(out) == 0 && line[0] && rename(tmp, QPLAB_LAB_STATE_DIR "/verbs-rxe.d/rxe.driver") == 0)
		state = 1;
	else
		unlink(tmp);
	return state > 0 ? dir : NULL;
}

static void trace_spawn(const struct run_agent *ag, const struct run_host *h, char **env,
			const char *const *argv)
{
	if (!getenv("QPLAB_RUN_TRACE"))
		return;
	fprintf(stderr, "qplab run: agent %s:%s%s", ag->name, h->netns[0] ? " netns " : "", h->netns);
	for (int i = 0; env && env[i]; i++)
		fprintf(stderr, " %s", env[i]);
	for (int i = 0; argv[i]; i++)
		fprintf(stderr, " %s", argv[i]);
	fputc('\n', stderr);
}

/* The ssh words that start the agent on h's machine: `env K=V... qplab
 * agent ...` (the MC_* variables, and MC_IB_PORT for the inventory's port
 * unless the scenario sets it), every word quoted there. */
static char **remote_argv(const struct run_host *h, char **env, const char *const *argv)
{
	const char *words[64];
	char port[32];
	size_t n = 0;
	bool has_port = false;

	words[n++] = "env";
	for (size_t i = 0; env[i] && n < 40; i++) {
		has_port |= !strncmp(env[i], "MC_IB_PORT=", 11);
		words[n++] = env[i];
	}
	if (!has_port && h->inv->port != 1) {
		snprintf(port, sizeof(port), "MC_IB_PORT=%d", h->inv->port);
		words[n++] = port;
	}
	for (size_t i = 0; argv[i] && n < 63; i++)
		words[n++] = argv[i];
	words[n] = NULL;
	return run_hosts_argv(h, words);
}

int run_agent_spawn(struct run_agent *ag, const struct qplab_plan *p, int hi,
		    const struct run_host *h, char *err, size_t errlen)
{
	const char *argv[16], *dir = getenv("QPLAB_RUN_LOGDIR");
	char *bufs[2] = {0}, exe[PATH_MAX], log[PATH_MAX + 64], **env;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct run_spawn sp = {.argv = (char *const *)argv, .err_path = log,
			       .netns = h->netns[0] ? h->netns : NULL, .with_stdin = true,
			       .own_group = true}; /* its own group: the runner decides when it dies */
	int rc;

	char **ssh = NULL;

	exe[n > 0 ? n : 0] = '\0';
	snprintf(ag->name, sizeof(ag->name), "%s", p->hosts[hi].name);
	ag->len = 0;
	ag->remote_pid = 0;
	env = build_argv(argv, bufs, p, hi, h, h->inv ? h->inv->qplab : exe);
	sp.env = env;
	snprintf(log, sizeof(log), "%s/agent-%s.log", dir ? dir : "/tmp", ag->name);
	trace_spawn(ag, h, env, argv);
	if (h->inv) {
		/* ssh runs it there; its stdin is the ssh session's, so a lost
		 * session ends the agent. */
		ssh = env ? remote_argv(h, env, argv) : NULL;
		sp.argv = ssh;
		sp.env = NULL;
		sp.netns = NULL;
	} else {
		sp.verbs_dir = rxe_only_dir();
	}
	rc = env && (!h->inv || ssh) ? run_spawn_start(&sp) : -1;
	qplab_inv_argv_free(ssh);
	for (int i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
	free(bufs[0]);
	free(bufs[1]);
	ag->pid = rc ? 0 : sp.pid;
	ag->to_fd = sp.to_fd;
	ag->from_fd = sp.from_fd;
	if (rc) {
		snprintf(err, errlen, "agent %s: cannot start: %s", ag->name, strerror(errno));
		return -1;
	}
	return 0;
}

const char *run_mooncake_agent(void)
{
	const char *p = getenv("QPLAB_MOONCAKE_AGENT");

	return p && *p ? p : "qplab-mooncake-agent";
}

/* "impl", and "mooncake": {"commit", "build"} of a Mooncake host. */
static void ready_impl(struct run_agent *ag, json_object *ready, struct jread *r)
{
	json_object *mc;

	ag->impl[0] = ag->mc_commit[0] = ag->mc_build[0] = '\0';
	jread_str_copy(r, ready, "impl", ag->impl, sizeof(ag->impl));
	if (jread_object(r, ready, "mooncake", &mc) != JREAD_OK)
		return;
	jread_str_copy(r, mc, "commit", ag->mc_commit, sizeof(ag->mc_commit));
	jread_str_copy(r, mc, "build", ag->mc_build, sizeof(ag->mc_build));
}

int run_agent_ready(struct run_agent *ag, double deadline, char *err, size_t errlen)
{
	struct qplab_agent_msg m;
	char *line = read_line(ag, deadline, err, errlen);
	double mono;
	int rc = -1;

	ag->fatal_code[0] = ag->fatal_text[0] = '\0';
	if (!line)
		return -1;
	if (qplab_agent_parse_line(line, strlen(line), &m, err, errlen) == 0) {
		if (m.type == QPLAB_AGENT_READY) {
			struct jread r = {.what = "agent ready line", .err = err, .errlen = errlen};

			jread_str_copy(&r, m.body, "nic_path", ag->nic_path, sizeof(ag->nic_path));
			jread_str_copy(&r, m.body, "listen", ag->listen, sizeof(ag->listen));
			ag->clock_known = jread_double(&r, m.body, "mono_ms", &mono) == JREAD_OK;
			ag->clock_offset_ms = ag->clock_known ? run_now_ms() - mono : 0;
			ready_impl(ag, m.body, &r);
			ag->proto = m.v;
			jread_long(&r, m.body, "pid", 1, LONG_MAX, &ag->remote_pid);
			ag->qp_per_ep = 0;
			if (json_object_object_get_ex(m.body, "qp_per_ep", NULL))
				jread_int(&r, m.body, "qp_per_ep", 1, QPHS_MAX_QPS, &ag->qp_per_ep);
			rc = r.errors ? -1 : 0;
		} else {
			snprintf(ag->fatal_code, sizeof(ag->fatal_code), "%s", m.code);
			snprintf(ag->fatal_text, sizeof(ag->fatal_text), "%s", m.error);
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
	size_t len, off = 0;

	line = qplab_agent_req_for_version(line, ag->proto);
	len = line ? strlen(line) : 0;

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

int run_agent_wait_any(struct run_agent *ag, int deadline_ms, struct qplab_agent_msg *m, char *err,
		       size_t errlen)
{
	char *line = read_line(ag, run_now_ms() + deadline_ms, err, errlen);
	int rc;

	if (!line)
		return -1;
	rc = qplab_agent_parse_line(line, strlen(line), m, err, errlen);
	free(line);
	return rc ? -1 : 0;
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
