/* `qplab run --jobs N`: N worker processes run the scenarios, the runner
 * prints and collects what they send (run_jobs.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/jread.h"
#include "qphs/error.h"
#include "registry.h"
#include "run_jobs.h"

/* The runner's view of one worker. */
struct worker {
	pid_t pid;                 /* 0: reaped */
	int fd;                    /* its pipe, -1 once at EOF */
	int inflight;              /* the scenario it took and has not reported, or -1 */
	bool done;                 /* it sent DONE */
	struct run_job_reader rd;
};

/* What workers share: the next position in order (atomic), and the
 * order (filled before the fork, read-only after). */
struct shared {
	atomic_size_t next;
};

struct collect {
	const struct qplab_catalogue *cat;
	const struct qplab_runinfo *ri;
	struct qplab_tap *tap;
	json_object **res;         /* by catalogue index */
	struct run_totals *tot;
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int send_msg(int fd, const struct run_job_msg *m, const char *json)
{
	char *frame;
	size_t len;
	int rc;

	if (run_job_encode(m, json, &frame, &len))
		return -1;
	rc = write_all(fd, frame, len);
	free(frame);
	return rc;
}

/* One scenario in a worker: run, evaluate, send.  The outcome's facts are
 * the worker's; only the numbers travel.  Returns send_msg's result. */
static int work_one(struct run_ctx *c, const struct qplab_catalogue *cat, size_t i,
		     const struct qplab_runinfo *ri, int fd)
{
	struct run_job_msg m = {.kind = RUN_JOB_RESULT, .index = (int32_t)i};
	json_object *j;
	int rc;

	bool last = c->last;

	c->last = last && !run_ablate_wants_twin(c, cat->plans[i]);
	run_scenario(c, cat->plans[i], &m.out);
	j = run_scenario_json(cat->plans[i], &m.out, ri);
	run_ablate(c, cat->plans[i], last, j, ri);
	if (m.out.have_facts)
		qplab_scenario_facts_free(&m.out.facts);
	memset(&m.out.facts, 0, sizeof(m.out.facts));
	m.out.have_facts = false;
	rc = send_msg(fd, &m, j ? json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN) : NULL);
	json_object_put(j);
	return rc;
}

/* A worker's life: take indices until none are left, the run is
 * interrupted or the runner is gone; tear down, say so, exit (never
 * returns). */
static void worker_main(const struct run_ctx *proto, int w, int jobs, const struct qplab_catalogue *cat,
			const struct qplab_runinfo *ri, const char *logdir, struct shared *sh, int fd)
{
	struct run_ctx c = *proto;
	struct run_job_msg m = {.kind = RUN_JOB_DONE};
	char dir[4300];

	memset(&c.topo, 0, sizeof(c.topo));
	c.sig[0] = '\0';
	c.seq = c.built = 0;
	c.job = w;
	c.jobs = jobs;
	/* Agents' logs are named by host: one directory per worker keeps two
	 * workers' host "a" apart. */
	snprintf(dir, sizeof(dir), "%s/job-%d", logdir, w);
	qplab_report_mkdir(dir);
	setenv("QPLAB_RUN_LOGDIR", dir, 1);
	while (!qplab_run_interrupted) {
		size_t k = atomic_fetch_add(&sh->next, 1), i = k < cat->n ? k : cat->n;
		struct run_job_msg st = {.kind = RUN_JOB_START, .index = (int32_t)i};

		/* A runner that cannot be told (it is gone) wants no more. */
		c.last = k + 1 >= cat->n; /* no worker takes another: nothing reuses it */
		if (i >= cat->n || send_msg(fd, &st, NULL) || work_one(&c, cat, i, ri, fd))
			break;
	}
	m.left = run_ctx_finish(&c);
	run_tshark_stop(&c.tshark);
	m.built = c.built;
	send_msg(fd, &m, NULL);
	close(fd);
	_exit(0); /* the runner's stdio buffers are not this process's to flush */
}

/* Forks worker w with its pipe; returns its pid and read end, or -1. */
static int start_worker(const struct run_ctx *proto, int w, int jobs, const struct qplab_catalogue *cat,
			const struct qplab_runinfo *ri, const char *logdir, struct shared *sh,
			struct worker *ws)
{
	int p[2];

	/* CLOEXEC: agents and topo never hold a worker's pipe open, so the
	 * runner sees EOF exactly when the worker is gone. */
	if (pipe2(p, O_CLOEXEC))
		return -1;
	fflush(stdout);
	fflush(stderr);
	ws[w].pid = fork();
	if (ws[w].pid < 0) {
		ws[w].pid = 0; /* never kill(-1, ...) */
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (ws[w].pid == 0) {
		close(p[0]);
		for (int k = 0; k < w; k++)
			if (ws[k].fd >= 0)
				close(ws[k].fd);
		worker_main(proto, w, jobs, cat, ri, logdir, sh, p[1]);
	}
	close(p[1]);
	ws[w].fd = p[0];
	ws[w].inflight = -1;
	return 0;
}

/* A scenario's result arrived (or was made up for a dead worker): TAP
 * now, results.json later in catalogue order. */
static void record(struct collect *co, size_t i, json_object *j, const struct run_outcome *out)
{
	if (i >= co->cat->n || co->res[i] || !j) {
		json_object_put(j);
		return;
	}
	qplab_tap_result(co->tap, j);
	fflush(co->tap->out);
	co->res[i] = j;
	if (out && out->status != QPLAB_SKIP && co->tot->over)
		co->tot->over[co->tot->nover++] = *out;
}

static void handle(struct collect *co, struct worker *w, const struct run_job_msg *m, char *json)
{
	if (m->kind == RUN_JOB_START) {
		w->inflight = m->index;
	} else if (m->kind == RUN_JOB_RESULT) {
		struct jread jr = {0}; /* a result that does not read is an error result */
		json_object *j = NULL;

		if (json && jread_parse_object(&jr, json, strlen(json), &j) != JREAD_OK)
			j = NULL;
		if (!j) {
			struct qplab_scenario_result r = {.plan = co->cat->plans[m->index], .status = QPLAB_ERROR,
							  .reason = "the worker's result could not be read"};

			j = (size_t)m->index < co->cat->n ? qplab_result_json(&r) : NULL;
		}
		record(co, (size_t)m->index, j, &m->out);
		w->inflight = -1;
	} else {
		co->tot->built += m->built;
		co->tot->left += m->left;
		w->done = true;
	}
}

/* The registries a dead worker's topo processes wrote (owner = its pid). */
struct owned {
	long owner;
	char names[32][16];
	long pids[32];
	int n;
};

static int owned_by(const char *name, const struct run_reg *r, void *arg)
{
	struct owned *o = arg;

	if (r->owner != o->owner || o->n == 32 || strlen(name) >= sizeof(o->names[0]))
		return 0;
	snprintf(o->names[o->n], sizeof(o->names[0]), "%s", name);
	o->pids[o->n++] = r->pid;
	return 0;
}

static bool gone(long pid)
{
	return pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH);
}

/* A worker that died could not tear down: its topologies (the undo
 * registries its topo processes wrote, which name it as their owner; its
 * agents exit when their stdin, the worker's pipe, closes) go here.  A
 * topo up it started may still be running: it is left to finish (or to
 * unwind) first.  Returns what is left of them. */
static int down_worker_topos(pid_t worker)
{
	struct owned o = {.owner = worker};
	int left = 0;

	run_reg_each(owned_by, &o);
	for (int i = 0; i < o.n; i++) {
		struct run_topo t;
		double end = run_now_ms() + 60000 * run_mult();

		while (!gone(o.pids[i]) && run_now_ms() < end)
			usleep(100000);
		memset(&t, 0, sizeof(t));
		snprintf(t.id, sizeof(t.id), "%s", o.names[i]);
		t.up = true;
		left += run_topo_down(&t);
	}
	return left;
}

/* The worker's pipe is at EOF: reap it; a scenario it took and did not
 * report is an error, not a wait. */
static void worker_gone(struct collect *co, struct worker *w, int num)
{
	int st = 0;
	char why[200];
	pid_t pid = w->pid;

	close(w->fd);
	w->fd = -1;
	while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
		;
	w->pid = 0;
	if (w->done && w->inflight < 0)
		return;
	if (WIFSIGNALED(st))
		snprintf(why, sizeof(why), "job %d died (signal %d) while running this scenario", num,
			 WTERMSIG(st));
	else
		snprintf(why, sizeof(why), "job %d ended (exit %d) while running this scenario", num,
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	fprintf(stderr, "qplab run: %s; its topologies are removed here\n", why);
	if (w->inflight >= 0) {
		struct qplab_scenario_result r = {.plan = co->cat->plans[w->inflight], .status = QPLAB_ERROR,
						  .reason = why};

		record(co, (size_t)w->inflight, qplab_result_json(&r), NULL);
	}
	if (!w->done)
		co->tot->left += down_worker_topos(pid);
}

/* Reads what worker w has; at EOF (or garbage) it is gone. */
static void drain(struct collect *co, struct worker *w, int num)
{
	char buf[65536];
	ssize_t n = read(w->fd, buf, sizeof(buf));
	struct run_job_msg m;
	char *json;
	int rc;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0 || run_job_feed(&w->rd, buf, (size_t)n)) {
		worker_gone(co, w, num);
		return;
	}
	while ((rc = run_job_take(&w->rd, &m, &json)) == 1) {
		if (m.kind == RUN_JOB_DONE || (size_t)m.index < co->cat->n)
			handle(co, w, &m, json);
		free(json);
	}
	if (rc < 0) {
		kill(w->pid, SIGKILL); /* it speaks garbage: it is dead to the run */
		worker_gone(co, w, num);
	}
}

/* Until every worker's pipe is closed; signals to the runner are passed
 * on to every live worker (each tears its scenario down). */
static void collect_all(struct collect *co, struct worker *ws, int nw)
{
	sig_atomic_t forwarded = 0;

	for (;;) {
		struct pollfd pf[64];
		int live = 0;

		if (qplab_run_interrupted && qplab_run_interrupted != forwarded) {
			forwarded = qplab_run_interrupted;
			for (int w = 0; w < nw; w++)
				if (ws[w].pid > 0)
					kill(ws[w].pid, (int)forwarded);
		}
		for (int w = 0; w < nw; w++) {
			pf[w].fd = ws[w].fd;
			pf[w].events = POLLIN;
			pf[w].revents = 0;
			live += ws[w].fd >= 0;
		}
		if (!live)
			return;
		if (poll(pf, (nfds_t)nw, 1000) <= 0)
			continue; /* EINTR: a signal, forwarded above */
		for (int w = 0; w < nw; w++)
			if (ws[w].fd >= 0 && pf[w].revents)
				drain(co, &ws[w], w);
	}
}

/* Scenarios no worker reported although the run was not interrupted (a
 * worker died between taking an index and saying so) are errors too. */
static void missing_as_errors(struct collect *co)
{
	for (size_t i = 0; i < co->cat->n && !qplab_run_interrupted; i++) {
		struct qplab_scenario_result r = {.plan = co->cat->plans[i], .status = QPLAB_ERROR,
						  .reason = "no job reported this scenario (a job died)"};

		if (!co->res[i])
			record(co, i, qplab_result_json(&r), NULL);
	}
}

/* The shared counter, in memory every worker sees.  Workers take the
 * plans in the runner's order: run_order_plans put the scenarios sharing
 * a topology next to each other, so a worker's next one often reuses the
 * topology it built. */
static struct shared *shared_new(size_t *size)
{
	struct shared *sh;

	*size = sizeof(*sh);
	sh = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return NULL;
	atomic_init(&sh->next, 0);
	return sh;
}

int run_jobs(const struct run_ctx *proto, const struct qplab_catalogue *cat,
	     const struct qplab_runinfo *ri, int jobs, const char *logdir, struct qplab_tap *tap,
	     json_object *run, struct run_totals *tot)
{
	int nw = run_jobs_workers(jobs, cat->n), started = 0;
	struct worker ws[64];
	size_t size;
	struct shared *sh = shared_new(&size);
	struct collect co = {.cat = cat, .ri = ri, .tap = tap, .tot = tot, .res = calloc(cat->n, sizeof(json_object *))};

	if (!sh || !co.res) {
		free(co.res);
		if (sh)
			munmap(sh, size);
		return -1;
	}
	memset(ws, 0, sizeof(ws));
	for (int w = 0; w < nw && w < 64; w++) {
		ws[w].fd = -1;
		if (start_worker(proto, w, nw, cat, ri, logdir, sh, ws) == 0)
			started++;
	}
	if (started) {
		fprintf(tap->out, "# %d jobs: scenarios run in parallel, TAP numbers in completion order\n",
			started);
		fflush(tap->out);
	}
	collect_all(&co, ws, nw);
	if (started)
		missing_as_errors(&co);
	run_jobs_assemble(run, co.res, cat->n);
	for (size_t i = 0; i < cat->n; i++)
		json_object_put(co.res[i]);
	for (int w = 0; w < nw; w++)
		run_job_reader_free(&ws[w].rd);
	free(co.res);
	munmap(sh, size);
	return started ? 0 : -1;
}
