/*
 * The ablation verdict of a scenario (`qplab run --ablate`): what its
 * ablated twin's result says about it, and the scenario entry's
 * "ablation" object (docs/results.md).  Pure: no I/O.
 */
#include <stdio.h>
#include <string.h>

#include "cli/jread.h"
#include "report.h"

static const char *const names[QPLAB_ABL_COUNT] = {
	[QPLAB_ABL_SENSITIVE] = "sensitive", [QPLAB_ABL_INSENSITIVE] = "insensitive",
	[QPLAB_ABL_ERROR] = "error",         [QPLAB_ABL_NO_FAULT] = "no fault",
	[QPLAB_ABL_UNMARKED] = "unmarked",   [QPLAB_ABL_NOT_RUN] = "not run",
};

const char *qplab_ablation_name(int v)
{
	return v >= 0 && v < QPLAB_ABL_COUNT ? names[v] : NULL;
}

int qplab_ablation_by_name(const char *s)
{
	for (int v = 0; s && v < QPLAB_ABL_COUNT; v++)
		if (!strcmp(names[v], s))
			return v;
	return -1;
}

enum qplab_ablation qplab_ablation_verdict(int mode, int status, int twin_status)
{
	if (mode == QPLAB_ABLATE_UNMARKED)
		return QPLAB_ABL_UNMARKED;
	if (mode == QPLAB_ABLATE_NONE)
		return QPLAB_ABL_NO_FAULT;
	if (status != QPLAB_PASS || twin_status < 0)
		return QPLAB_ABL_NOT_RUN;
	switch (twin_status) {
	case QPLAB_FAIL:
		return QPLAB_ABL_SENSITIVE;
	case QPLAB_PASS:
		return QPLAB_ABL_INSENSITIVE;
	default: /* error, or skipped: the twin could not say */
		return QPLAB_ABL_ERROR;
	}
}

/* The twin's failed expectations, one entry per host that failed:
 * {line, label, step, host, why}. */
static json_object *failed_list(json_object *twin)
{
	json_object *out = json_object_new_array(), *exps = jread_array_or_null(twin, "expectations");

	for (size_t i = 0; exps && i < json_object_array_length(exps); i++) {
		json_object *e = jread_object_at(exps, i), *hosts = jread_array_or_null(e, "hosts");

		if (jread_bool_or(e, "ok", true))
			continue;
		for (size_t h = 0; hosts && h < json_object_array_length(hosts); h++) {
			json_object *hv = jread_object_at(hosts, h), *checks = jread_array_or_null(hv, "checks");
			json_object *f;
			char why[600] = "";
			size_t n = 0;

			if (jread_bool_or(hv, "ok", false))
				continue;
			for (size_t c = 0; checks && c < json_object_array_length(checks); c++) {
				json_object *k = jread_object_at(checks, c);

				if (jread_bool_or(k, "ok", false) || n >= sizeof(why) - 1)
					continue;
				n += (size_t)snprintf(why + n, sizeof(why) - n, "%s%s: expected %s, observed %s",
						      n ? "; " : "", jread_str_or(k, "what", "?"),
						      jread_str_or(k, "expected", "?"), jread_str_or(k, "observed", "?"));
			}
			f = json_object_new_object();
			json_object_object_add(f, "line", json_object_new_int((int)jread_int_or(e, "line", 0)));
			json_object_object_add(f, "label", jread_str_or(e, "label", NULL)
				? json_object_new_string(jread_str_or(e, "label", NULL)) : NULL);
			json_object_object_add(f, "step", jread_str_or(e, "step", NULL)
				? json_object_new_string(jread_str_or(e, "step", NULL)) : NULL);
			json_object_object_add(f, "host", json_object_new_string(jread_str_or(hv, "host", "?")));
			json_object_object_add(f, "why", json_object_new_string(n ? why : "failed"));
			json_object_array_add(out, f);
		}
	}
	return out;
}

json_object *qplab_ablation_json(const struct qplab_plan *p, enum qplab_ablation v, json_object *twin)
{
	json_object *j = json_object_new_object(), *removed = json_object_new_array();

	json_object_object_add(j, "verdict", json_object_new_string(qplab_ablation_name(v)));
	for (size_t i = 0; i < p->nablate; i++) {
		const struct qplab_ablate *a = &p->ablate[i];
		json_object *e;

		if (!a->to) {
			json_object_array_add(removed, json_object_new_string(a->pointer));
			continue;
		}
		e = json_object_new_object();
		json_object_object_add(e, "set", json_object_new_string(a->pointer));
		json_object_object_add(e, "to", json_tokener_parse(a->to));
		json_object_array_add(removed, e);
	}
	json_object_object_add(j, "removed", removed);
	if (!twin)
		return j;
	json_object_object_add(j, "failed", failed_list(twin));
	if (jread_str_or(twin, "reason", NULL))
		json_object_object_add(j, "reason", json_object_new_string(jread_str_or(twin, "reason", NULL)));
	else if (v == QPLAB_ABL_SENSITIVE && !json_object_array_length(jread_array_or_null(j, "failed")))
		json_object_object_add(j, "reason", json_object_new_string("the twin's wire expectations failed"));
	json_object_object_add(j, "twin_status", json_object_new_string(jread_str_or(twin, "status", "?")));
	json_object_object_add(j, "twin_ms", json_object_new_int64(jread_int_or(twin, "elapsed_ms", 0)));
	return j;
}
