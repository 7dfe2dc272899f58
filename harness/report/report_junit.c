/*
 * junit.xml from the results document: one <testsuite> per run (kernel),
 * one <testcase> per scenario.  Text from the outside world (reply_msg,
 * error texts) reaches the XML, so every string goes through xml_text().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jread.h"
#include "qphs/error.h"
#include "report.h"

/* Writes s escaped for XML 1.0 text and attributes.  Control characters
 * XML 1.0 cannot carry at all are written as "\xNN". */
static void xml_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		case '\n':
			fputs("&#10;", out);
			break;
		case '\t':
			fputs("&#9;", out);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(out, "\\x%02x", c);
			else
				fputc(c, out);
		}
	}
}

static void attr(FILE *out, const char *name, const char *value)
{
	fprintf(out, " %s=\"", name);
	xml_text(out, value);
	fputc('"', out);
}

/* --ablate: the verdict as a property, and what the twin showed as
 * system-out (docs/results.md "ablation"). */
static void ablation(FILE *out, json_object *sc)
{
	json_object *a = jread_object_or_null(sc, "ablation"), *failed;
	const char *v = jread_str_or(a, "verdict", NULL), *reason = jread_str_or(a, "reason", NULL);

	if (!v)
		return;
	fputs("      <properties>\n        <property name=\"ablation\"", out);
	attr(out, "value", v);
	fputs("/>\n      </properties>\n", out);
	failed = jread_array_or_null(a, "failed");
	if (!reason && !(failed && json_object_array_length(failed)) && strcmp(v, "insensitive"))
		return;
	fputs("      <system-out>", out);
	if (!strcmp(v, "insensitive"))
		xml_text(out, "ablation: insensitive: every expectation still holds without the fault\n");
	if (reason) {
		xml_text(out, "ablation: ");
		xml_text(out, reason);
		xml_text(out, "\n");
	}
	for (size_t i = 0; failed && i < json_object_array_length(failed); i++) {
		json_object *f = jread_object_at(failed, i);
		char line[900];

		snprintf(line, sizeof(line), "ablation: without the fault, line %d host %s: %s\n",
			 (int)jread_int_or(f, "line", 0), jread_str_or(f, "host", "?"), jread_str_or(f, "why", "?"));
		xml_text(out, line);
	}
	fputs("</system-out>\n", out);
}

static void testcase(FILE *out, json_object *sc)
{
	const char *status = jread_str_or(sc, "status", ""), *name = jread_str_or(sc, "name", "");
	const char *slash = strchr(name, '/');
	char classname[96];

	snprintf(classname, sizeof(classname), "qplab.%.*s", slash ? (int)(slash - name) : 0, name);
	fputs("    <testcase", out);
	attr(out, "classname", classname);
	attr(out, "name", slash ? slash + 1 : name);
	attr(out, "file", jread_str_or(sc, "file", ""));
	fprintf(out, " time=\"%.3f\">\n", (int)jread_int_or(sc, "elapsed_ms", 0) / 1000.0);
	ablation(out, sc);
	if (!strcmp(status, "skip")) {
		fputs("      <skipped", out);
		attr(out, "message", jread_str_or(sc, "reason", ""));
		fputs("/>\n", out);
	} else if (!strcmp(status, "fail") || !strcmp(status, "error")) {
		char *diag = qplab_result_diagnostic(sc);
		const char *tag = !strcmp(status, "fail") ? "failure" : "error";
		fprintf(out, "      <%s", tag);
		attr(out, "message", !strcmp(status, "fail") ? "an expectation did not hold"
							     : jread_str_or(sc, "reason", ""));
		attr(out, "type", status);
		fputs(">", out);
		xml_text(out, diag);
		fprintf(out, "</%s>\n", tag);
		free(diag);
	}
	fputs("    </testcase>\n", out);
}

static void testsuite(FILE *out, json_object *run)
{
	json_object *scs, *summary = jread_object_or_null(run, "summary");
	char name[256];

	snprintf(name, sizeof(name), "qplab %s %s", jread_str_or(run, "backend", ""), jread_str_or(run, "kernel", ""));
	fputs("  <testsuite", out);
	attr(out, "name", name);
	fprintf(out, " tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\"",
		(int)jread_int_or(summary, "total", 0), (int)jread_int_or(summary, "fail", 0), (int)jread_int_or(summary, "error", 0),
		(int)jread_int_or(summary, "skip", 0), (int)jread_int_or(run, "elapsed_ms", 0) / 1000.0);
	attr(out, "timestamp", jread_str_or(run, "started", ""));
	fputs(">\n    <properties>\n", out);
	static const char *const props[] = {"backend", "kernel", "driver", NULL};
	for (size_t i = 0; props[i]; i++) {
		fputs("      <property", out);
		attr(out, "name", props[i]);
		attr(out, "value", jread_str_or(run, props[i], ""));
		fputs("/>\n", out);
	}
	fputs("    </properties>\n", out);
	if ((scs = jread_array_or_null(run, "scenarios")))
		for (size_t i = 0; i < json_object_array_length(scs); i++)
			if (jread_object_at(scs, i))
				testcase(out, jread_object_at(scs, i));
	fputs("  </testsuite>\n", out);
}

int qplab_junit_write(FILE *out, json_object *doc)
{
	json_object *runs = jread_array_or_null(doc, "runs"), *summary;
	int totals[4] = {0};
	static const char *const keys[] = {"total", "fail", "error", "skip"};

	if (!runs)
		return QPHS_ERR_INVALID_ARGUMENT;
	for (size_t i = 0; i < json_object_array_length(runs); i++)
		if ((summary = jread_object_or_null(jread_object_at(runs, i), "summary")))
			for (int k = 0; k < 4; k++)
				totals[k] += (int)jread_int_or(summary, keys[k], 0);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"qplab\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\">\n",
		totals[0], totals[1], totals[2], totals[3]);
	for (size_t i = 0; i < json_object_array_length(runs); i++)
		if (jread_object_at(runs, i))
			testsuite(out, jread_object_at(runs, i));
	fputs("</testsuites>\n", out);
	return ferror(out) ? QPHS_ERR_INVALID_ARGUMENT : 0;
}

int qplab_report_save_with(const char *path, json_object *doc, int (*write)(FILE *, json_object *))
{
	char tmp[4096];
	FILE *f;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return QPHS_ERR_INVALID_ARGUMENT;
	rc = write(f, doc);
	if (fclose(f) != 0 && rc == 0)
		rc = QPHS_ERR_INVALID_ARGUMENT;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = QPHS_ERR_INVALID_ARGUMENT;
	if (rc) {
		int saved = errno;

		remove(tmp);
		errno = saved;
	}
	return rc;
}

int qplab_junit_save(const char *path, json_object *doc)
{
	return qplab_report_save_with(path, doc, qplab_junit_write);
}

int qplab_report_write_outputs(const char *dir, json_object *doc, char *err, size_t errlen)
{
	char path[4096];

	if (qplab_report_mkdir(dir) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	snprintf(path, sizeof(path), "%s/results.json", dir);
	if (qplab_results_save(path, doc) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	if (qplab_junit_save(path, doc) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	snprintf(path, sizeof(path), "%s/report.html", dir);
	if (qplab_html_save(path, doc) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	return 0;
}
