/* A scenario's capture in results.json ("pcaps") and its wire
 * expectations checked over tshark's records ("expectations", one entry
 * each, host "wire"). */
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "run.h"
#include "run_wire.h"

static const char *const kind_names[] = {"wire.handshake", "wire.reply_msg", "wire.roce_nak",
					 "wire.roce_payload", "wire.roce_sends", "wire.roce_packets",
					 "wire.bad_frame"};

static json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *pcaps_json(const struct run_cap_result *r, const char *rel)
{
	json_object *arr = json_object_new_array(), *o = json_object_new_object();
	const char *base = strrchr(r->path, '/');
	char path[4600];

	snprintf(path, sizeof(path), "%s%s%s", rel && *rel ? rel : "", rel && *rel ? "/" : "",
		 base ? base + 1 : r->path);
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "host", r->host[0] ? json_object_new_string(r->host) : NULL);
	json_object_object_add(o, "point", json_object_new_string(r->point));
	json_object_object_add(o, "packets", json_object_new_int64(r->packets));
	json_object_object_add(o, "bytes", json_object_new_int64(r->bytes));
	json_object_object_add(o, "limit_bytes", json_object_new_int64(RUN_CAPTURE_MAX_BYTES));
	json_object_object_add(o, "truncated", json_object_new_boolean(r->truncated));
	json_object_object_add(o, "dropped", json_object_new_int64(r->dropped));
	json_object_array_add(arr, o);
	return arr;
}

/* One VERDICT for expectation e (docs/results.md), host "wire". */
static json_object *verdict(const struct qplab_wire_expect *e, const struct run_cap_result *r, bool *ok)
{
	json_object *v = json_object_new_object(), *hosts = json_object_new_array();
	json_object *h = json_object_new_object(), *checks = json_object_new_array();
	json_object *k = json_object_new_object();
	char expected[256] = "", observed[256] = "";
	struct qplab_wire_hosts wh = {.n = r->nhosts};

	for (size_t i = 0; i < r->nhosts && i < QPLAB_MAX_HOSTS; i++) {
		wh.addr[i][0] = r->addr[i][0];
		wh.addr[i][1] = r->addr[i][1];
	}
	if (!r->decoded) {
		*ok = false;
		qplab_wire_eval(e, NULL, 0, &wh, expected, sizeof(expected), observed, sizeof(observed));
		snprintf(observed, sizeof(observed), "(not collected: %.200s)",
			 r->error[0] ? r->error : "no capture");
	} else {
		*ok = qplab_wire_eval(e, r->pkts, r->npkts, &wh, expected, sizeof(expected), observed,
				      sizeof(observed));
	}
	json_object_object_add(k, "what", json_object_new_string(kind_names[e->kind]));
	json_object_object_add(k, "expected", json_object_new_string(expected));
	json_object_object_add(k, "observed", json_object_new_string(observed));
	json_object_object_add(k, "ok", json_object_new_boolean(*ok));
	json_object_array_add(checks, k);
	json_object_object_add(h, "host", json_object_new_string("wire"));
	json_object_object_add(h, "ok", json_object_new_boolean(*ok));
	json_object_object_add(h, "keyed", json_object_new_boolean(false));
	json_object_object_add(h, "key", NULL);
	json_object_object_add(h, "why", str_or_null(e->why));
	json_object_object_add(h, "key_line", NULL);
	json_object_object_add(h, "checks", checks);
	json_object_array_add(hosts, h);
	json_object_object_add(v, "line", json_object_new_int(e->line));
	json_object_object_add(v, "label", str_or_null(e->label));
	json_object_object_add(v, "step", NULL);
	json_object_object_add(v, "ok", json_object_new_boolean(*ok));
	json_object_object_add(v, "wire", json_object_new_boolean(true));
	json_object_object_add(v, "hosts", hosts);
	return v;
}

int run_wire_json(json_object *j, const struct qplab_plan *p, struct run_outcome *o, const char *rel)
{
	json_object *exps;
	int failed = 0;

	if (o->cap.captured)
		json_object_object_add(j, "pcaps", pcaps_json(&o->cap, rel));
	else if (o->cap.error[0])
		json_object_object_add(j, "capture_error", json_object_new_string(o->cap.error));
	if (o->status != QPLAB_PASS || !p->nwire || !json_object_object_get_ex(j, "expectations", &exps) ||
	    !json_object_is_type(exps, json_type_array)) {
		run_cap_result_free(&o->cap);
		return 0;
	}
	for (size_t i = 0; i < p->nwire; i++) {
		bool ok;

		json_object_array_add(exps, verdict(&p->wire[i], &o->cap, &ok));
		failed += !ok;
	}
	run_cap_result_free(&o->cap);
	return failed;
}
