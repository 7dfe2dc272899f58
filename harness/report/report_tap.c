/*
 * TAP 13 on stdout, printed from the result model as scenarios complete.
 * Everything that is not a test line is a "# " line, so prove and other
 * TAP consumers accept the stream.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/jread.h"
#include "report.h"

struct qplab_tap_row {
	char id[96];
	char topic[48];
	int status;
	double elapsed_s;
	char reason[160];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Appends one formatted line to a growing buffer. */
static void append(char **buf, size_t *len, const char *line)
{
	size_t n = strlen(line);
	char *b = realloc(*buf, *len + n + 2);

	if (!b)
		return;
	memcpy(b + *len, line, n);
	*len += n;
	b[(*len)++] = '\n';
	b[*len] = '\0';
	*buf = b;
}

static void host_lines(char **buf, size_t *len, json_object *hv)
{
	char line[900], who[200];
	const char *key = jread_str_or(hv, "key", NULL);
	json_object *checks = jread_array_or_null(hv, "checks");
	size_t shown = 0;

	if (key)
		snprintf(who, sizeof(who), "host %s [key \"%s\", line %d]", jread_str_or(hv, "host", NULL), key,
			 (int)jread_int_or(hv, "key_line", 0));
	else
		snprintf(who, sizeof(who), "host %s", jread_str_or(hv, "host", NULL));
	for (size_t c = 0; checks && c < json_object_array_length(checks); c++) {
		json_object *k = jread_object_at(checks, c);
		if (jread_bool_or(k, "ok", false))
			continue;
		snprintf(line, sizeof(line), "  %s: %s: expected %s, observed %s", who,
			 jread_str_or(k, "what", NULL), jread_str_or(k, "expected", NULL), jread_str_or(k, "observed", NULL));
		append(buf, len, line);
		shown++;
	}
	if (!shown) {
		snprintf(line, sizeof(line), "  %s: as expected", who);
		append(buf, len, line);
	}
}

char *qplab_result_diagnostic(json_object *sc)
{
	char *buf = NULL, line[1024];
	size_t len = 0;
	const char *file = jread_str_or(sc, "file", NULL), *reason = jread_str_or(sc, "reason", NULL);
	json_object *exps = jread_array_or_null(sc, "expectations");

	if (reason) {
		snprintf(line, sizeof(line), "%s: %s", jread_str_or(sc, "status", NULL), reason);
		append(&buf, &len, line);
	}
	for (size_t i = 0; exps && i < json_object_array_length(exps); i++) {
		json_object *e = jread_object_at(exps, i), *hosts = jread_array_or_null(e, "hosts");
		const char *label = jread_str_or(e, "label", NULL), *step = jread_str_or(e, "step", NULL);
		if (jread_bool_or(e, "ok", false))
			continue;
		snprintf(line, sizeof(line), "%s:%d: expectation%s%s%s%s%s failed", file ? file : "?",
			 (int)jread_int_or(e, "line", 0), label ? " \"" : "", label ? label : "", label ? "\"" : "",
			 step ? " after step " : "", step ? step : "");
		append(&buf, &len, line);
		for (size_t h = 0; hosts && h < json_object_array_length(hosts); h++)
			host_lines(&buf, &len, jread_object_at(hosts, h));
	}
	return buf ? buf : calloc(1, 1);
}

void qplab_tap_begin(struct qplab_tap *t, FILE *out, int planned)
{
	memset(t, 0, sizeof(*t));
	t->out = out;
	t->planned = planned;
	t->t0 = now_s();
	fprintf(out, "TAP version 13\n1..%d\n", planned);
	fflush(out);
}

/* Prints text's lines, each prefixed with "# ". */
static void comment_lines(FILE *out, const char *text)
{
	while (text && *text) {
		size_t n = strcspn(text, "\n");
		fprintf(out, "# %.*s\n", (int)n, text);
		text += n + (text[n] == '\n');
	}
}

/* Which keyed row applied, for every keyed expectation (the report says). */
static void key_lines(FILE *out, json_object *sc)
{
	json_object *exps = jread_array_or_null(sc, "expectations");

	for (size_t i = 0; exps && i < json_object_array_length(exps); i++) {
		json_object *e = jread_object_at(exps, i), *hosts = jread_array_or_null(e, "hosts");
		for (size_t h = 0; hosts && h < json_object_array_length(hosts); h++) {
			json_object *hv = jread_object_at(hosts, h);
			if (jread_bool_or(hv, "keyed", false) && jread_str_or(hv, "key", NULL))
				fprintf(out, "#   line %d, host %s: key \"%s\" applied\n", (int)jread_int_or(e, "line", 0),
					jread_str_or(hv, "host", NULL), jread_str_or(hv, "key", NULL));
		}
	}
}

static void remember(struct qplab_tap *t, json_object *sc, int status)
{
	struct qplab_tap_row *rows = realloc(t->rows, (t->nrows + 1) * sizeof(*rows));
	const char *id = jread_str_or(sc, "name", NULL), *reason = jread_str_or(sc, "reason", NULL);

	if (!rows)
		return;
	t->rows = rows;
	struct qplab_tap_row *r = &rows[t->nrows++];
	snprintf(r->id, sizeof(r->id), "%s", id ? id : "?");
	snprintf(r->topic, sizeof(r->topic), "%.*s", (int)strcspn(r->id, "/"), r->id);
	r->status = status;
	r->elapsed_s = (int)jread_int_or(sc, "elapsed_ms", 0) / 1000.0;
	snprintf(r->reason, sizeof(r->reason), "%s", reason ? reason : "");
}

static int status_of(json_object *sc)
{
	const char *s = jread_str_or(sc, "status", NULL);

	for (int i = 0; i < 4; i++)
		if (s && !strcmp(s, qplab_status_name((enum qplab_status)i)))
			return i;
	return QPLAB_ERROR;
}

/* A test name with '#' escaped as TAP asks ("\#"), so a file name can
 * never turn into a directive. */
static void tap_name(char *out, size_t len, const char *name)
{
	size_t n = 0;

	for (; name && *name && n + 3 < len; name++) {
		if (*name == '#')
			out[n++] = '\\';
		out[n++] = *name == '\n' ? ' ' : *name;
	}
	out[n] = '\0';
}

/* --ablate: the verdict of sc's "ablation" object (-1: none). */
static int ablation_of(json_object *sc)
{
	json_object *a;

	if (!json_object_object_get_ex(sc, "ablation", &a) || !json_object_is_type(a, json_type_object))
		return -1;
	return qplab_ablation_by_name(jread_str_or(a, "verdict", NULL));
}

/* Why the verdict is what it is, under the scenario's line. */
static void ablation_lines(FILE *out, json_object *sc, int v)
{
	json_object *a, *failed;
	const char *reason;

	json_object_object_get_ex(sc, "ablation", &a);
	failed = jread_array_or_null(a, "failed");
	reason = jread_str_or(a, "reason", NULL);
	if (v == QPLAB_ABL_INSENSITIVE)
		fprintf(out, "#   ablation: every expectation still holds without the fault: the scenario does "
			     "not depend on it\n");
	if (v == QPLAB_ABL_ERROR && reason)
		fprintf(out, "#   ablation: the twin errored: %s\n", reason);
	for (size_t i = 0; v == QPLAB_ABL_SENSITIVE && failed && i < json_object_array_length(failed); i++) {
		json_object *f = jread_object_at(failed, i);

		fprintf(out, "#   ablation: without the fault, line %d host %s: %s\n", (int)jread_int_or(f, "line", 0),
			jread_str_or(f, "host", "?"), jread_str_or(f, "why", "?"));
	}
}

void qplab_tap_result(struct qplab_tap *t, json_object *sc)
{
	int status = status_of(sc), abl = t->ablate ? ablation_of(sc) : -1;
	const char *reason = jread_str_or(sc, "reason", NULL);
	char name[200], *diag, word[40] = "";

	tap_name(name, sizeof(name), jread_str_or(sc, "name", NULL));
	if (abl >= 0) {
		snprintf(word, sizeof(word), " [ablation: %s]", qplab_ablation_name(abl));
		t->ablation[abl]++;
	}

	t->done++;
	t->counts[status]++;
	if (status == QPLAB_SKIP) {
		/* "#" inside a reason would end the directive early. */
		char why[200];
		snprintf(why, sizeof(why), "%s", reason ? reason : "no reason given");
		for (char *p = why; *p; p++)
			*p = *p == '#' || *p == '\n' ? ' ' : *p;
		fprintf(t->out, "ok %d - %s%s # SKIP %s\n", t->done, name, word, why);
	} else {
		fprintf(t->out, "%s %d - %s%s\n", status == QPLAB_PASS && abl != QPLAB_ABL_INSENSITIVE ? "ok" : "not ok",
			t->done, name, word);
	}
	if (abl >= 0)
		ablation_lines(t->out, sc, abl);
	if (status == QPLAB_FAIL || status == QPLAB_ERROR) {
		diag = qplab_result_diagnostic(sc);
		comment_lines(t->out, diag);
		free(diag);
	}
	key_lines(t->out, sc);
	fprintf(t->out, "# [%d/%d] %s %s in %.1f s, %.1f s elapsed\n", t->done, t->planned, name,
		qplab_status_name((enum qplab_status)status), (int)jread_int_or(sc, "elapsed_ms", 0) / 1000.0,
		now_s() - t->t0);
	fflush(t->out);
	remember(t, sc, status);
}

void qplab_tap_bail(struct qplab_tap *t, const char *reason)
{
	fprintf(t->out, "Bail out! %s\n", reason);
	fflush(t->out);
}

static void summary_table(struct qplab_tap *t)
{
	fprintf(t->out, "# %-20s %5s %5s %5s %5s %8s\n", "topic", "pass", "fail", "skip", "error", "time");
	for (size_t i = 0; i < t->nrows; i++) {
		int c[4] = {0};
		double secs = 0;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(t->rows[j].topic, t->rows[i].topic);
		if (seen)
			continue;
		for (size_t j = i; j < t->nrows; j++) {
			if (strcmp(t->rows[j].topic, t->rows[i].topic))
				continue;
			c[t->rows[j].status]++;
			secs += t->rows[j].elapsed_s;
		}
		fprintf(t->out, "# %-20s %5d %5d %5d %5d %6.1f s\n", t->rows[i].topic, c[0], c[1], c[2], c[3],
			secs);
	}
}

int qplab_tap_end(struct qplab_tap *t)
{
	static const char *const verbs[] = {NULL, "failed", "skipped", "error"};

	fprintf(t->out, "# summary: %d of %d scenarios in %.1f s: %d pass, %d fail, %d skip, %d error\n",
		t->done, t->planned, now_s() - t->t0, t->counts[QPLAB_PASS], t->counts[QPLAB_FAIL],
		t->counts[QPLAB_SKIP], t->counts[QPLAB_ERROR]);
	if (t->ablate)
		fprintf(t->out, "# ablation: %d sensitive, %d insensitive, %d error, %d no fault, %d unmarked, "
			"%d not run\n", t->ablation[QPLAB_ABL_SENSITIVE], t->ablation[QPLAB_ABL_INSENSITIVE],
			t->ablation[QPLAB_ABL_ERROR], t->ablation[QPLAB_ABL_NO_FAULT],
			t->ablation[QPLAB_ABL_UNMARKED], t->ablation[QPLAB_ABL_NOT_RUN]);
	summary_table(t);
	for (int s = QPLAB_FAIL; s <= QPLAB_ERROR; s++)
		for (size_t i = 0; i < t->nrows; i++)
			if (t->rows[i].status == s)
				fprintf(t->out, "# %s: %s%s%s%s\n", verbs[s], t->rows[i].id,
					t->rows[i].reason[0] ? " (" : "", t->rows[i].reason,
					t->rows[i].reason[0] ? ")" : "");
	fflush(t->out);
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
	return t->counts[QPLAB_FAIL] || t->counts[QPLAB_ERROR] || t->done < t->planned ||
	       t->ablation[QPLAB_ABL_INSENSITIVE] ? 1 : 0;
}
