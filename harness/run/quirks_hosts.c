/*
 * `qplab quirks --inventory FILE`: each machine of an inventory probes its
 * own device (`qplab quirks --device DEV --port N --json` there, over
 * ssh), and the documents become one matrix with a column per host, in
 * docs/quirks.md's format: a user with real NICs contributes a column.
 * Without --inventory it is harness/quirks' command.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/jread.h"
#include "quirks/quirks.h"
#include "run.h"

/* Host h's column: its document, or a column saying why there is none. */
static int probe_host(const struct qplab_inv_host *ih, struct quirks_column *col, json_object *all)
{
	struct run_host h = {.inv = ih};
	char port[8], err[256] = "", label[sizeof(col->label)];
	const char *remote[] = {ih->qplab, "quirks", "--device", ih->device, "--port", port, "--json", NULL};
	struct jread r = {.err = err, .errlen = sizeof(err)};
	json_object *doc = NULL;
	char *out = NULL;
	int st;

	snprintf(h.name, sizeof(h.name), "%s", ih->name);
	snprintf(port, sizeof(port), "%d", ih->port);
	fprintf(stderr, "qplab quirks: host %s: probing %s over ssh\n", ih->name, ih->device);
	st = run_hosts_exec(&h, remote, &out, false);
	if (out && out[0] && out[strlen(out) - 1] == '\n')
		out[strlen(out) - 1] = '\0';
	if (st == 0 && out && jread_parse(&r, out, strlen(out), &doc) == JREAD_OK &&
	    !quirks_from_json(doc, col, err, sizeof(err))) {
		snprintf(label, sizeof(label), "%.8s: %.180s", ih->name, col->label);
		snprintf(col->label, sizeof(col->label), "%s", label);
		json_object_object_add(doc, "host", json_object_new_string(ih->name));
		json_object_array_add(all, doc);
		free(out);
		return 0;
	}
	json_object_put(doc);
	free(out);
	memset(col, 0, sizeof(*col));
	snprintf(col->label, sizeof(col->label), "%s", ih->name);
	snprintf(col->failed, sizeof(col->failed), "qplab quirks there exited %d%s%.200s", st, err[0] ? ": " : "",
		 err);
	fprintf(stderr, "qplab quirks: host %s: %s\n", ih->name, col->failed);
	return -1;
}

int cmd_quirks_any(int argc, char **argv)
{
	static struct quirks_column cols[QUIRKS_MAX_COLUMNS];
	struct qplab_inventory *inv = NULL;
	struct qplab_errors errs = {0};
	const char *file = NULL;
	json_object *all;
	int json = 0, failed = 0;
	size_t n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--inventory") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--inventory"))
			return qplab_usage_error("quirks: --inventory needs a file");
	}
	if (!file)
		return cmd_quirks(argc, argv);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (strcmp(argv[i], "--inventory") && argv[i] != file)
			return qplab_usage_error("quirks: --inventory FILE takes only --json, not '%s'", argv[i]);
	if (qplab_inventory_load(file, &inv, &errs)) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msgs[i]);
		qplab_errors_free(&errs);
		return QPLAB_EXIT_USAGE;
	}
	all = json_object_new_array();
	n = inv->nhosts < QUIRKS_MAX_COLUMNS ? inv->nhosts : QUIRKS_MAX_COLUMNS;
	for (size_t i = 0; i < n; i++)
		failed |= probe_host(&inv->hosts[i], &cols[i], all) != 0;
	if (json)
		printf("%s\n", json_object_to_json_string_ext(all, JSON_C_TO_STRING_PRETTY));
	else
		quirks_matrix_print(stdout, cols, n);
	json_object_put(all);
	qplab_inventory_free(inv);
	return failed ? QPLAB_EXIT_FAIL : QPLAB_EXIT_OK;
}
