/* `qplab report results.json [--out FILE]`: report.html again from a
 * results file (one from another machine, or a merged one). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "report/report.h"

static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: qplab report RESULTS.json [--out FILE]\n\n"
		"Writes the HTML report of a results file (docs/results.md): the page `qplab run`\n"
		"leaves as report.html beside results.json, self-contained (no network, no\n"
		"external files), failures first.  Links to logs and captures are relative to\n"
		"the results file's directory.\n"
		"  --out FILE    where to write it (default: report.html beside RESULTS.json)\n"
		"Exit: 0 written, 1 the results file cannot be read or the page written, 2 usage error.\n");
}

/* FILE's directory + "/report.html". */
static void default_out(const char *results, char *out, size_t len)
{
	const char *slash = strrchr(results, '/');

	if (slash)
		snprintf(out, len, "%.*s/report.html", (int)(slash - results), results);
	else
		snprintf(out, len, "report.html");
}

int cmd_report(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	char dflt[4200], err[4400];
	json_object *doc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			report_usage(stdout);
			return QPLAB_EXIT_OK;
		} else if (!strcmp(argv[i], "--out")) {
			if (++i >= argc || !argv[i][0])
				return qplab_usage_error("report: --out needs a file name");
			out = argv[i];
		} else if (!strncmp(argv[i], "--out=", 6) && argv[i][6]) {
			out = argv[i] + 6;
		} else if (argv[i][0] == '-') {
			return qplab_usage_error("report: unknown option '%s' (try --help)", argv[i]);
		} else if (in) {
			return qplab_usage_error("report: one results file, not '%s' too", argv[i]);
		} else {
			in = argv[i];
		}
	}
	if (!in)
		return qplab_usage_error("report: which results file? (qplab report RESULTS.json)");
	if (strlen(in) >= 4096 || (out && strlen(out) >= 4096))
		return qplab_usage_error("report: path too long");
	if (!out) {
		default_out(in, dflt, sizeof(dflt));
		out = dflt;
	}
	if (qplab_results_load(in, &doc, err, sizeof(err))) {
		fprintf(stderr, "qplab report: %s\n", err);
		return QPLAB_EXIT_FAIL;
	}
	if (qplab_html_save(out, doc)) {
		fprintf(stderr, "qplab report: %s: %s\n", out, strerror(errno));
		json_object_put(doc);
		return QPLAB_EXIT_FAIL;
	}
	json_object_put(doc);
	printf("%s\n", out);
	return QPLAB_EXIT_OK;
}
