/*
 * fan_in: many servers of this host connect to one peer at the same
 * moment (docs/agent-protocol.md "fan_in").  Each server is a qphs_rdma of
 * its own with a context on the agent's device and a distinct nic path
 * (this host's address, port 20000 + i, no daemon: a client needs none),
 * as bench/rdma_setup.c builds its clients; one thread per server calls
 * qphs_connect after a common barrier, then each checks its data path in
 * turn.  Everything is freed before the reply: the peer keeps its passive
 * endpoints, and what it holds is its own report's.
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "cli/jread.h"

#define FANIN_MAX 256
#define FANIN_PORT0 20000

/* The common start: every connect thread waits until open is set. */
struct fanin_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open;
};

struct fanin_one {
	struct qphs_rdma *r;
	struct qphs_context *ctx;
	struct qphs_endpoint *ep;
	const char *peer;
	struct fanin_gate *gate;
	int rc, data_rc;
	double connect_ms;
	char text[256];
};

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *fanin_connect(void *arg)
{
	struct fanin_one *f = arg;
	double t0;

	pthread_mutex_lock(&f->gate->lock);
	while (!f->gate->open)
		pthread_cond_wait(&f->gate->cond, &f->gate->lock);
	pthread_mutex_unlock(&f->gate->lock);
	if (!f->ctx)
		return NULL; /* the server did not come up: its rc says why */
	t0 = mono_ms();
	f->rc = qphs_connect(f->ctx, f->peer, &f->ep);
	f->connect_ms = mono_ms() - t0;
	if (f->rc)
		snprintf(f->text, sizeof(f->text), "%s",
			 f->ep ? qphs_endpoint_errstr(f->ep) : qphs_strerror(f->rc));
	return NULL;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The servers, each with its context; a failure is that server's result. */
static void fanin_up(struct agent *a, struct fanin_one *f, int n)
{
	struct qphs_config cfg = a->cfg;
	char name[300], err[200];

	cfg.worker_threads = 1; /* no daemon: no passive setups to run */
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s:%d", a->addr, FANIN_PORT0 + i);
		f[i].rc = qphs_rdma_new(&cfg, name, &f[i].r, err, sizeof(err));
		if (f[i].rc) {
			snprintf(f[i].text, sizeof(f[i].text), "server %d: %s", i, err);
			continue;
		}
		f[i].rc = qphs_rdma_open_device(f[i].r, a->device, &f[i].ctx);
		if (f[i].rc)
			snprintf(f[i].text, sizeof(f[i].text), "server %d: %s", i,
				 qphs_rdma_errstr(f[i].r));
		else if (a->hooks.sq_psn || a->hooks.rq_psn)
			qphs_context_set_hooks(f[i].ctx, &a->hooks);
	}
}

/* The servers of one fan_in, kept between fan_in and fan_in_check. */
struct agent_fanin {
	struct fanin_one *f;
	int n, nconn, ndata, rc;
	char peer[300], first[600];
	double t0, t_connected, t_end, median, max;
	int64_t late;
};

static void note_first(struct agent *a, struct agent_fanin *F, int i, int rc)
{
	if (F->rc || !rc)
		return;
	F->rc = rc;
	snprintf(F->first, sizeof(F->first), "server %d (%.64s:%d): %s", i, a->addr, FANIN_PORT0 + i,
		 F->f[i].text);
}

/* Every server up, and connected at one moment (at, CLOCK_REALTIME, when
 * above 0): 0, or the first failure's code. */
static int fanin_connect_all(struct agent *a, struct agent_fanin *F, int64_t at)
{
	struct fanin_one *f = F->f;
	int n = F->n;
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	struct fanin_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
	bool *joined = calloc((size_t)n, sizeof(*joined));
	double *cms = calloc((size_t)n, sizeof(*cms));

	if (!th || !joined || !cms) {
		free(th);
		free(joined);
		free(cms);
		return QPHS_ERR_MEMORY;
	}
	fanin_up(a, f, n);
	for (int i = 0; i < n; i++) {
		f[i].peer = F->peer;
		f[i].gate = &gate;
		if (pthread_create(&th[i], NULL, fanin_connect, &f[i]) == 0)
			joined[i] = true;
		else if (!f[i].rc) {
			f[i].rc = QPHS_ERR_THREAD;
			snprintf(f[i].text, sizeof(f[i].text), "its connect thread could not start");
		}
	}
	if (at > 0)
		F->late = agent_barrier(at);
	F->t0 = mono_ms();
	pthread_mutex_lock(&gate.lock);
	gate.open = 1;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	for (int i = 0; i < n; i++)
		if (joined[i])
			pthread_join(th[i], NULL);
	F->t_connected = F->t_end = mono_ms();
	for (int i = 0; i < n; i++) {
		cms[i] = f[i].connect_ms;
		F->nconn += f[i].rc == 0;
		note_first(a, F, i, f[i].rc);
	}
	qsort(cms, (size_t)n, sizeof(*cms), cmp_d);
	F->median = cms[n / 2];
	F->max = cms[n - 1];
	free(th);
	free(joined);
	free(cms);
	return F->rc;
}

/* Each connected server's data-path check, one after another. */
static int fanin_check_all(struct agent *a, struct agent_fanin *F, long bytes, int deadline)
{
	for (int i = 0; i < F->n; i++) {
		struct fanin_one *f = &F->f[i];
		struct qphs_data_result res;

		if (f->rc)
			continue;
		f->data_rc = qphs_endpoint_check_data(f->ep, (size_t)bytes, deadline, &res);
		if (f->data_rc)
			snprintf(f->text, sizeof(f->text), "data: %.240s", res.text);
		else
			F->ndata++;
		note_first(a, F, i, f->data_rc);
	}
	F->t_end = mono_ms();
	return F->rc;
}

static void fanin_free(struct agent_fanin *F)
{
	if (!F)
		return;
	for (int i = F->n - 1; i >= 0; i--) {
		qphs_endpoint_put(F->f[i].ep);
		qphs_rdma_free(F->f[i].r);
	}
	free(F->f);
	free(F);
}

/* The reply: the figures so far; checked says whether data was checked. */
static json_object *fanin_reply(struct agent *a, json_object *id, const char *op,
				struct agent_fanin *F, bool checked)
{
	char text[900], data[80] = "";
	json_object *o;

	if (checked)
		snprintf(data, sizeof(data), ", %d of %d carried data", F->ndata, F->n);
	snprintf(text, sizeof(text), "fan_in: %d of %d connected%s; connect ms median %.0f, max "
		 "%.0f; %.0f ms to the last connect, %.0f ms in all%s%s", F->nconn, F->n, data,
		 F->median, F->max, F->t_connected - F->t0, F->t_end - F->t0,
		 F->rc ? "; first failure: " : "", F->rc ? F->first : "");
	agent_remember(a, F->rc, text, NULL);
	o = agent_reply(id, op, 1, F->rc, text);
	json_object_object_add(o, "connected", json_object_new_int(F->nconn));
	json_object_object_add(o, "data_ok", checked ? json_object_new_int(F->ndata) : NULL);
	json_object_object_add(o, "connect_ms_median", agent_ms(F->median));
	json_object_object_add(o, "connect_ms_max", agent_ms(F->max));
	json_object_object_add(o, "connected_ms", agent_ms(F->t_connected - F->t0));
	json_object_object_add(o, "total_ms", agent_ms(F->t_end - F->t0));
	json_object_object_add(o, "late_ns", json_object_new_int64(F->late));
	return o;
}

json_object *agent_op_fan_in(struct agent *a, json_object *id, json_object *req)
{
	char err[160] = "";
	struct jread r = {.what = "request", .err = err, .errlen = sizeof(err)};
	const char *peer = NULL;
	int count = 0, deadline = 10000;
	int64_t bytes = 4096, at = -1;
	bool check = true;
	struct agent_fanin *F;
	json_object *o;

	jread_str(&r, req, "peer", &peer);
	jread_int(&r, req, "count", 1, FANIN_MAX, &count);
	jread_int64(&r, req, "bytes", 1, QPHS_CHECK_REGION_BYTES, &bytes);
	jread_int(&r, req, "deadline_ms", 1, INT_MAX, &deadline);
	jread_int64(&r, req, "at_realtime_ns", INT64_MIN, INT64_MAX, &at);
	jread_bool(&r, req, "check", &check);
	if (r.errors)
		return agent_reply(id, "fan_in", 0, QPHS_ERR_INVALID_ARGUMENT, err);
	if (!peer || !count)
		return agent_reply(id, "fan_in", 0, QPHS_ERR_INVALID_ARGUMENT,
				   "fan_in: needs \"peer\" and 1..256 \"count\"");
	/* A fan_in kept from before and never checked goes now. */
	fanin_free(a->fanin);
	a->fanin = NULL;
	F = calloc(1, sizeof(*F));
	if (!F || !(F->f = calloc((size_t)count, sizeof(*F->f)))) {
		free(F);
		return agent_reply(id, "fan_in", 1, QPHS_ERR_MEMORY, "fan_in: out of memory");
	}
	F->n = count;
	snprintf(F->peer, sizeof(F->peer), "%s", peer);
	fanin_connect_all(a, F, at);
	if (check)
		fanin_check_all(a, F, (long)bytes, deadline);
	o = fanin_reply(a, id, "fan_in", F, check);
	if (check)
		fanin_free(F);
	else
		a->fanin = F;
	return o;
}

json_object *agent_op_fan_in_check(struct agent *a, json_object *id, json_object *req)
{
	char err[160] = "";
	struct jread r = {.what = "request", .err = err, .errlen = sizeof(err)};
	int deadline = 10000;
	int64_t bytes = 4096;
	json_object *o;

	jread_int64(&r, req, "bytes", 1, QPHS_CHECK_REGION_BYTES, &bytes);
	jread_int(&r, req, "deadline_ms", 1, INT_MAX, &deadline);
	if (r.errors)
		return agent_reply(id, "fan_in_check", 0, QPHS_ERR_INVALID_ARGUMENT, err);
	if (!a->fanin)
		return agent_reply(id, "fan_in_check", 0, QPHS_ERR_ENDPOINT,
				   "fan_in_check: no fan_in with \"check\": false kept servers");
	fanin_check_all(a, a->fanin, (long)bytes, deadline);
	o = fanin_reply(a, id, "fan_in_check", a->fanin, true);
	fanin_free(a->fanin);
	a->fanin = NULL;
	return o;
}

void agent_fanin_free(struct agent *a)
{
	fanin_free(a->fanin);
	a->fanin = NULL;
}
