/*
 * The agent's `raw_frame` request: exact bytes (hex, a named bad frame, or
 * a stale ready-ACK) to a daemon on a fresh TCP connection, what the daemon
 * did with them (closed / replied / silent), whether it still answers a
 * Probe, and — when the daemon is this agent's own — the reason it logged
 * (qphs_daemon_last_refusal).  docs/agent-protocol.md "raw_frame".
 * And `daemon_refusal`: the reason this host's daemon logged for a frame
 * another host's agent sent it (docs/agent-protocol.md "daemon_refusal").
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "cli/jread.h"
#include "hs/raw_frame.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The refusal the own daemon logged for our frame: it is written before
 * the close we saw, so a short grace suffices (a "silent" frame has none). */
static int own_refusal(struct agent *a, uint64_t before, int grace_ms, struct qphs_daemon_refusal *r)
{
	double end = now_ms() + grace_ms;

	do {
		struct timespec ts = {0, 5 * 1000 * 1000};

		qphs_daemon_last_refusal(a->d, r);
		if (r->count > before)
			return 1;
		nanosleep(&ts, NULL);
	} while (now_ms() < end);
	return 0;
}

static json_object *frame_reply(json_object *id, int rc, const char *text, const struct qplab_raw_outcome *o,
				int alive, const struct qphs_daemon_refusal *r)
{
	json_object *out = agent_reply(id, "raw_frame", 1, rc, text), *de = NULL;

	json_object_object_add(out, "frame_outcome", json_object_new_string(o->word));
	json_object_object_add(out, "reply_hex", json_object_new_string(o->hex));
	json_object_object_add(out, "waited_ms", agent_ms(o->waited_ms));
	json_object_object_add(out, "daemon_alive", json_object_new_boolean(alive));
	if (r) {
		de = json_object_new_object();
		json_object_object_add(de, "code", json_object_new_string(qphs_errname(r->code)));
		json_object_object_add(de, "text", json_object_new_string(r->text));
	}
	json_object_object_add(out, "daemon_error", de);
	return out;
}

json_object *agent_op_raw_frame(struct agent *a, json_object *id, json_object *req)
{
	const char *addr = qphs_daemon_address(a->d), *kind = NULL, *hex = NULL;
	int ms = 2000, own, fd, alive, got = 0;
	struct qphs_daemon_refusal before, r;
	struct qplab_raw_outcome o = {.word = "silent"};
	uint8_t *bytes = NULL;
	char err[300] = "";
	struct jread jr = {.what = "request", .err = err, .errlen = sizeof(err)};
	long len;

	if (jread_str(&jr, req, "kind", &kind) == JREAD_OK && !strcmp(kind, "stale_ack"))
		return agent_op_stale_ack(a, id, req);
	jread_str(&jr, req, "hex", &hex);
	jread_str(&jr, req, "address", &addr);
	jread_int(&jr, req, "deadline_ms", 1, INT_MAX, &ms);
	if (jr.errors)
		return agent_reply(id, "raw_frame", 0, QPHS_ERR_INVALID_ARGUMENT, err);
	own = !strcmp(addr, qphs_daemon_address(a->d));
	if ((len = qplab_raw_request_bytes(hex, kind, &bytes, err, sizeof(err))) < 0) {
		free(bytes);
		return agent_reply(id, "raw_frame", 0, QPHS_ERR_INVALID_ARGUMENT, err);
	}
	qphs_daemon_last_refusal(a->d, &before);
	fd = qplab_raw_dial(addr, ms, err, sizeof(err));
	if (fd < 0) {
		free(bytes);
		return agent_reply(id, "raw_frame", 0, QPHS_ERR_CONNECT_REFUSED, err);
	}
	qplab_raw_exchange(fd, bytes, (size_t)len, ms, &o);
	close(fd);
	free(bytes);
	if (own)
		got = own_refusal(a, before.count, 200, &r);
	alive = qplab_raw_probe(&a->cfg, addr, ms);
	/* Its own daemon's refusal becomes this host's last outcome, so the
	 * report after the step carries the reason as code and error. */
	if (own)
		agent_remember(a, got ? r.code : 0, got ? r.text : "", NULL);
	return frame_reply(id, got ? r.code : 0, got ? r.text : "", &o, alive, got ? &r : NULL);
}

json_object *agent_op_daemon_refusal(struct agent *a, json_object *id, json_object *req)
{
	struct qphs_daemon_refusal r;
	char err[300] = "";
	struct jread jr = {.what = "request", .err = err, .errlen = sizeof(err)};
	bool mark = false;
	int ms = 200, got;
	json_object *out, *de = NULL;

	jread_bool(&jr, req, "mark", &mark);
	jread_int(&jr, req, "deadline_ms", 0, INT_MAX, &ms);
	if (jr.errors)
		return agent_reply(id, "daemon_refusal", 0, QPHS_ERR_INVALID_ARGUMENT, err);
	if (mark) {
		qphs_daemon_last_refusal(a->d, &r);
		a->refusal_mark = r.count;
		out = agent_reply(id, "daemon_refusal", 1, 0, "");
		json_object_object_add(out, "count", json_object_new_int64((int64_t)r.count));
		return out;
	}
	/* The sender saw the close, which the refusal's log line precedes:
	 * a short grace suffices; none within it is "refused nothing". */
	got = own_refusal(a, a->refusal_mark, ms, &r);
	a->refusal_mark = r.count;
	agent_remember(a, got ? r.code : 0, got ? r.text : "", NULL);
	out = agent_reply(id, "daemon_refusal", 1, got ? r.code : 0, got ? r.text : "");
	if (got) {
		de = json_object_new_object();
		json_object_object_add(de, "code", json_object_new_string(qphs_errname(r.code)));
		json_object_object_add(de, "text", json_object_new_string(r.text));
	}
	json_object_object_add(out, "daemon_error", de);
	json_object_object_add(out, "count", json_object_new_int64((int64_t)r.count));
	return out;
}
