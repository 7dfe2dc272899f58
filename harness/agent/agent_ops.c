/* The agent's requests: connect, datapath, disconnect, probe, exit (report
 * is agent_report.c, region agent_region.c).  Each returns one reply object. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "cli/hwc.h"
#include "cli/jread.h"
#include "cli/labwords.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

json_object *agent_ms(double ms)
{
	return ms < 0 ? NULL : json_object_new_int64((int64_t)(ms + 0.5));
}

json_object *agent_times(const struct agent *a)
{
	static const char *const tr[QPHS_TR_COUNT] = {"reset", "init", "rtr", "rts"};
	json_object *t = json_object_new_object();

	json_object_object_add(t, "tcp_connect", agent_ms(a->t_tcp));
	json_object_object_add(t, "handshake", agent_ms(a->t_handshake));
	for (int i = 0; i < QPHS_TR_COUNT; i++)
		json_object_object_add(t, tr[i], agent_ms(a->t_tr[i]));
	json_object_object_add(t, "ready_ack", agent_ms(a->t_ready_ack));
	json_object_object_add(t, "total", agent_ms(a->t_total));
	return t;
}

json_object *agent_reply(json_object *id, const char *op, int ok, int code, const char *error)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(AGENT_PROTO_VERSION));
	json_object_object_add(o, "type", json_object_new_string("reply"));
	json_object_object_add(o, "id", id && json_object_is_type(id, json_type_int) ? json_object_get(id) : NULL);
	json_object_object_add(o, "op", op ? json_object_new_string(op) : NULL);
	json_object_object_add(o, "ok", json_object_new_boolean(ok));
	json_object_object_add(o, "code", json_object_new_string(code ? qphs_errname(code) : "OK"));
	json_object_object_add(o, "error", json_object_new_string(error ? error : ""));
	return o;
}

/* A request's arguments go through the harness's JSON reader (cli/jread.h):
 * one of the wrong type or out of range is the request's error reply,
 * never a default. */
#define REQ_READER(buf) {.what = "request", .err = (buf), .errlen = sizeof(buf)}

static json_object *bad_args(json_object *id, const char *op, const char *err)
{
	return agent_reply(id, op, 0, QPHS_ERR_INVALID_ARGUMENT, err);
}

void agent_remember(struct agent *a, int rc, const char *text, struct qphs_endpoint *ep)
{
	snprintf(a->last_code, sizeof(a->last_code), "%s", rc ? qphs_errname(rc) : "OK");
	snprintf(a->last_error, sizeof(a->last_error), "%s", text ? text : "");
	a->last_sent[0] = a->last_recv[0] = '\0';
	if (ep) {
		struct qphs_endpoint_info *info = calloc(1, sizeof(*info));

		if (info && qphs_endpoint_info(ep, info) == 0) {
			agent_track_endpoint(a, info);
			snprintf(a->last_sent, sizeof(a->last_sent), "%s", info->reply_msg_sent);
			snprintf(a->last_recv, sizeof(a->last_recv), "%s", info->reply_msg_received);
			a->t_handshake = (long)(info->rpc_ms + 0.5);
			a->t_ready_ack = info->peer_ready_ack ? (long)(info->ack_ms + 0.5) : -1;
			a->t_tcp = info->tcp_connect_ms < 0 ? -1 : (long)(info->tcp_connect_ms + 0.5);
			for (int i = 0; i < QPHS_TR_COUNT; i++)
				a->t_tr[i] = info->transition_ms[i] < 0
						     ? -1
						     : (long)(info->transition_ms[i] + 0.5);
		}
		free(info);
	}
}

int64_t agent_barrier(int64_t at_ns)
{
	struct timespec ts = {.tv_sec = at_ns / 1000000000, .tv_nsec = at_ns % 1000000000}, now;

	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t late = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - at_ns;
	return late > 0 ? late : 0;
}

/* A failed connect's text: the endpoint's; without one, for a QP the
 * driver refused (the library frees that endpoint and keeps its text on
 * the context: lib/setup/endpoint.c), the context's; else the code's. */
static const char *connect_text(struct agent *a, int rc, struct qphs_endpoint *ep)
{
	const char *t = qphs_context_errstr(a->ctx);

	if (ep)
		return qphs_endpoint_errstr(ep);
	return rc == QPHS_ERR_CREATE_QP && t && t[0] ? t : qphs_strerror(rc);
}

static json_object *op_connect(struct agent *a, json_object *id, json_object *req)
{
	char err[160] = "";
	struct jread r = REQ_READER(err);
	const char *peer = NULL;
	int64_t at = -1, late = 0;
	struct qphs_endpoint *ep = NULL;
	json_object *o;
	double t0;
	int rc;

	jread_str(&r, req, "peer", &peer);
	jread_int64(&r, req, "at_realtime_ns", INT64_MIN, INT64_MAX, &at);
	if (r.errors)
		return bad_args(id, "connect", err);
	if (!peer)
		return agent_reply(id, "connect", 0, QPHS_ERR_INVALID_ARGUMENT, "connect: \"peer\" missing");
	if (at > 0)
		late = agent_barrier(at);
	t0 = now_ms();
	rc = qphs_connect(a->ctx, peer, &ep);
	a->t_total = (long)(now_ms() - t0 + 0.5);
	a->connects++;
	a->t_handshake = a->t_ready_ack = a->t_tcp = -1;
	for (int i = 0; i < QPHS_TR_COUNT; i++)
		a->t_tr[i] = -1;
	agent_remember(a, rc, rc ? connect_text(a, rc, ep) : "", ep);
	o = agent_reply(id, "connect", 1, rc, a->last_error);
	json_object_object_add(o, "reply_msg_sent", json_object_new_string(a->last_sent));
	json_object_object_add(o, "reply_msg_received", json_object_new_string(a->last_recv));
	json_object_object_add(o, "time_ms", agent_times(a));
	json_object_object_add(o, "late_ns", json_object_new_int64(late));
	if (ep) {
		struct qphs_endpoint_info *info = calloc(1, sizeof(*info));

		if (info && qphs_endpoint_info(ep, info) == 0)
			json_object_object_add(o, "attempts",
					       json_object_new_int64((int64_t)info->connect_attempts));
		free(info);
	}
	qphs_endpoint_put(ep);
	return o;
}

static const char *wc_word(const char *s)
{
	return !strncmp(s, "no completion", 13) || !strcmp(s, "not posted") || !s[0] ? "none" : s;
}

/* wait_connected_ms: the endpoint to peer, once it exists and is
 * CONNECTED (a passive one appears when the peer's request arrives), or
 * whatever there is when the wait ends: the check then says why it could
 * not post.  Polls: the passive setup runs on the library's workers. */
static struct qphs_endpoint *endpoint_when_connected(struct agent *a, const char *peer, int wait_ms)
{
	struct timespec nap = {0, 200000}, t0, now;
	struct qphs_endpoint *ep;
	long left;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = wait_ms - ((now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000L);
		ep = qphs_context_endpoint(a->ctx, peer);
		if (ep || left <= 0)
			break;
		nanosleep(&nap, NULL);
	}
	if (ep && left > 0)
		qphs_endpoint_wait_ready(ep, (int)left);
	return ep;
}

/* "qps": what each QP of the check did, in the endpoint's order. */
static json_object *datapath_qps(const struct qphs_data_result *res)
{
	json_object *arr = json_object_new_array();

	for (int i = 0; i < res->nqp && i < QPHS_EP_MAX_QPS; i++) {
		const struct qphs_data_qp_result *q = &res->qp[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "index", json_object_new_int(i));
		json_object_object_add(o, "qpn", json_object_new_int64(q->qpn));
		json_object_object_add(o, "peer_qpn", json_object_new_int64(q->peer_qpn));
		json_object_object_add(o, "datapath", json_object_new_string(
					       q->ok ? "ok" : q->ran ? "failed" : "not_run"));
		json_object_object_add(o, "write_wc", json_object_new_string(wc_word(q->write_status)));
		json_object_object_add(o, "read_wc", json_object_new_string(wc_word(q->read_status)));
		json_object_object_add(o, "ms", q->ran ? agent_ms(q->ms) : NULL);
		json_object_array_add(arr, o);
	}
	return arr;
}

static json_object *op_datapath(struct agent *a, json_object *id, json_object *req)
{
	char err[160] = "";
	struct jread r = REQ_READER(err);
	const char *peer = NULL, *rkey = NULL, *verb = NULL;
	int mode = 0, vb = 0;
	int64_t seed = 0;
	int64_t bytes = 4096;
	int deadline = 10000, wait_connected = 0, count = 0;
	bool read_only = false, notify_posted = false;
	struct qphs_data_opts opts;
	struct qphs_data_result res;
	struct qphs_endpoint *ep;
	const char *wc = "none", *word = "not_run";
	json_object *o;
	int rc, posted;

	jread_str(&r, req, "peer", &peer);
	jread_int64(&r, req, "bytes", 1, QPHS_CHECK_REGION_BYTES, &bytes);
	jread_int(&r, req, "deadline_ms", 1, INT_MAX, &deadline);
	jread_bool(&r, req, "read_only", &read_only);
	jread_str(&r, req, "rkey", &rkey);
	jread_str(&r, req, "verb", &verb);
	jread_int64(&r, req, "seed", 0, INT64_MAX, &seed);
	jread_int(&r, req, "wait_connected_ms", 0, INT_MAX, &wait_connected);
	jread_bool(&r, req, "notify_posted", &notify_posted);
	jread_int(&r, req, "count", 1, QPHS_BURST_MAX, &count);
	if (!r.errors && ((mode = rkey ? qplab_word_index(qplab_rkey_words, rkey) : 0) < 0 ||
			  (vb = verb ? qplab_word_index(qplab_verb_words, verb) : 0) < 0))
		snprintf(err, sizeof(err), "request: \"%s\" must be one of %s",
			 mode < 0 ? "rkey" : "verb",
			 mode < 0 ? "descriptor, bad, stale" : "check, write, send, burst");
	if (r.errors || mode < 0 || vb < 0)
		return bad_args(id, "datapath", err);
	if ((vb == QPHS_DATA_BURST) != (count > 0))
		return bad_args(id, "datapath", "request: \"count\" goes with \"verb\": \"burst\", "
				"and only with it");
	if (!peer)
		return agent_reply(id, "datapath", 0, QPHS_ERR_INVALID_ARGUMENT,
				   "datapath: needs \"peer\" and 1..1048576 \"bytes\"");
	memset(&res, 0, sizeof(res));
	ep = wait_connected > 0 ? endpoint_when_connected(a, peer, wait_connected)
				: qphs_context_endpoint(a->ctx, peer);
	if (!ep) {
		rc = QPHS_ERR_ENDPOINT;
		snprintf(res.text, sizeof(res.text), "no endpoint for %s", peer);
	} else {
		opts = (struct qphs_data_opts){.bytes = (size_t)bytes, .timeout_ms = deadline,
					       .read_only = read_only, .rkey_mode = mode, .verb = vb,
					       .seed = (uint64_t)seed, .count = count,
					       .on_posted = notify_posted ? agent_posted_notice : NULL,
					       .on_posted_arg = id};
		rc = qphs_endpoint_check_data_opts(ep, &opts, &res);
		/* Nothing posted (endpoint not connected) is "not_run", not a failure. */
		posted = strcmp(res.write_status, "not posted") || strcmp(res.read_status, "not posted");
		word = res.ok ? "ok" : posted ? "failed" : "not_run";
		/* The first posted WR that did not succeed, else success (a
		 * "write" or "send" verb posts no READ). */
		wc = strcmp(res.write_status, "IBV_WC_SUCCESS") && strcmp(res.write_status, "not posted")
		     ? wc_word(res.write_status)
		     : strcmp(res.read_status, "IBV_WC_SUCCESS") && strcmp(res.read_status, "not posted")
		     ? wc_word(res.read_status)
		     : posted ? "IBV_WC_SUCCESS" : "none";
	}
	agent_remember(a, rc, rc ? res.text : "", NULL);
	o = agent_reply(id, "datapath", 1, rc, a->last_error);
	json_object_object_add(o, "datapath", json_object_new_string(word));
	json_object_object_add(o, "wc_status", json_object_new_string(wc));
	json_object_object_add(o, "wc_waited_ms", agent_ms(ep ? res.total_ms : 0));
	json_object_object_add(o, "read_only", json_object_new_boolean(res.read_only));
	json_object_object_add(o, "restored", json_object_new_boolean(res.restored));
	json_object_object_add(o, "peer_checksum", json_object_new_boolean(res.peer_checksum));
	json_object_object_add(o, "peer_buffer", json_object_new_string(res.peer_buffer));
	json_object_object_add(o, "verb", json_object_new_string(qplab_verb_words[vb]));
	json_object_object_add(o, "rkey", res.rkey ? json_object_new_int64(res.rkey) : NULL);
	json_object_object_add(o, "descriptor_rkey",
			       res.descriptor_rkey ? json_object_new_int64(res.descriptor_rkey) : NULL);
	json_object_object_add(o, "qps", ep ? datapath_qps(&res) : NULL);
	json_object_object_add(o, "failed_qp", ep ? json_object_new_int(res.failed_qp) : NULL);
	qphs_endpoint_put(ep);
	return o;
}

static json_object *op_disconnect(struct agent *a, json_object *id, json_object *req)
{
	char err[160] = "";
	struct jread r = REQ_READER(err);
	const char *peer = NULL;
	struct qphs_endpoint *ep;
	int rc;

	if (jread_str(&r, req, "peer", &peer) == JREAD_ERROR)
		return bad_args(id, "disconnect", err);
	if (!peer)
		return agent_reply(id, "disconnect", 0, QPHS_ERR_INVALID_ARGUMENT,
				   "disconnect: \"peer\" missing");
	ep = qphs_context_endpoint(a->ctx, peer);
	rc = ep ? qphs_endpoint_disconnect(ep) : QPHS_ERR_ENDPOINT;
	agent_remember(a, rc, rc ? (ep ? qphs_endpoint_errstr(ep) : "no endpoint for that peer") : "", NULL);
	qphs_endpoint_put(ep);
	return agent_reply(id, "disconnect", 1, rc, a->last_error);
}

static json_object *op_probe(struct agent *a, json_object *id, json_object *req)
{
	char err[160] = "";
	struct jread r = REQ_READER(err);
	const char *addr = NULL;
	struct qphs_client_result res;
	struct qphs_config cfg = a->cfg;
	json_object *o;
	int rc;

	cfg.reply_timeout_ms = 2000;
	jread_str(&r, req, "address", &addr);
	jread_int(&r, req, "deadline_ms", 1, INT_MAX, &cfg.reply_timeout_ms);
	if (r.errors)
		return bad_args(id, "probe", err);
	cfg.connect_timeout_s = 1 + cfg.reply_timeout_ms / 1000;
	memset(&res, 0, sizeof(res));
	rc = qphs_client_request(&cfg, addr ? addr : qphs_daemon_address(a->d), QPHS_HS_PROBE, "{}", 2,
				 &res);
	o = agent_reply(id, "probe", 1, rc, rc ? res.errstr : "");
	json_object_object_add(o, "alive", json_object_new_boolean(rc == 0));
	json_object_object_add(o, "time_ms", agent_ms(res.total_ms));
	free(res.reply);
	return o;
}

/* The device port's hardware counters, absolute (the runner takes one
 * before and one after a step: the change is the step's).  Not part of
 * `last`: reading counters is no connect or datapath. */
static json_object *op_counters(struct agent *a, json_object *id)
{
	struct qplab_hwc h;
	char err[200];
	json_object *o, *c;

	if (qplab_hwc_read(a->device, a->cfg.ib_port, &h, err, sizeof(err)))
		return agent_reply(id, "counters", 1, QPHS_ERR_DEVICE_NOT_FOUND, err);
	o = agent_reply(id, "counters", 1, 0, "");
	c = json_object_new_object();
	for (int i = 0; i < h.n; i++)
		json_object_object_add(c, h.c[i].name, json_object_new_int64((int64_t)h.c[i].value));
	json_object_object_add(o, "hw_counters", c);
	return o;
}

json_object *agent_serve(struct agent *a, json_object *req, int *quit)
{
	char text[160] = "";
	struct jread r = REQ_READER(text);
	const char *op = NULL;
	json_object *id = NULL;

	jread_str(&r, req, "op", &op);
	if (jread_value(&r, req, "id", json_type_int, &id) != JREAD_OK)
		return bad_args(NULL, op, r.errors ? text : "request: integer \"id\" missing");
	if (r.errors)
		return bad_args(id, NULL, text);
	if (!op)
		return agent_reply(id, NULL, 0, QPHS_ERR_INVALID_ARGUMENT, "request: \"op\" missing");
	if (!a->ctx && (!strcmp(op, "connect") || !strcmp(op, "datapath") ||
			!strcmp(op, "disconnect") || !strcmp(op, "region") ||
			!strcmp(op, "verify") || !strcmp(op, "fan_in") ||
			!strcmp(op, "fan_in_check"))) {
		/* No context: every device request fails the way opening it did. */
		agent_remember(a, a->ctx_code, a->ctx_error, NULL);
		return agent_reply(id, op, 1, a->ctx_code, a->ctx_error);
	}
	if (!strcmp(op, "connect"))
		return op_connect(a, id, req);
	if (!strcmp(op, "report"))
		return agent_report(a, id);
	if (!strcmp(op, "datapath"))
		return op_datapath(a, id, req);
	if (!strcmp(op, "disconnect"))
		return op_disconnect(a, id, req);
	if (!strcmp(op, "probe"))
		return op_probe(a, id, req);
	if (!strcmp(op, "counters"))
		return op_counters(a, id);
	if (!strcmp(op, "region"))
		return agent_op_region(a, id, req);
	if (!strcmp(op, "verify"))
		return agent_op_verify(a, id, req);
	if (!strcmp(op, "fan_in"))
		return agent_op_fan_in(a, id, req);
	if (!strcmp(op, "fan_in_check"))
		return agent_op_fan_in_check(a, id, req);
	if (!strcmp(op, "raw_frame"))
		return agent_op_raw_frame(a, id, req);
	if (!strcmp(op, "daemon_refusal"))
		return agent_op_daemon_refusal(a, id, req);
	if (!strcmp(op, "exit")) {
		*quit = 1;
		return agent_reply(id, "exit", 1, 0, "");
	}
	snprintf(text, sizeof(text), "unknown op \"%.100s\"", op);
	return agent_reply(id, op, 0, QPHS_ERR_INVALID_ARGUMENT, text);
}
