/* quirks.h — `qplab quirks`: the probe results as JSON (one document per
 * kernel, the format that crosses the VM boundary), as a text table, and
 * as the markdown matrix with a column per kernel/driver.  The encoding,
 * decoding and formatting are pure (harness/quirks/quirks_fmt.c) and unit-tested;
 * harness/quirks/quirks.c is the command, harness/quirks/quirks_vm.c the per-kernel VM
 * runs. */
#ifndef QPLAB_QUIRKS_H
#define QPLAB_QUIRKS_H

#include <json-c/json.h>
#include <stdio.h>

#include "qphs/probe.h"

#define QUIRKS_SCHEMA_VERSION 1
#define QUIRKS_MAX_COLUMNS 8

/* One column of the matrix: one kernel's run (or its failure). */
struct quirks_column {
	char kernel[64];
	char label[192];        /* header: "KERNEL driver[+quirk]" */
	char failed[256];       /* non-empty: the run failed, why */
	struct qphs_probe_info info;
	size_t nrows;
	struct qphs_probe_row rows[QPHS_PROBE_MAX_ROWS];
};

/* The JSON document of one run.  Returns a new object (caller puts it). */
json_object *quirks_to_json(const char *kernel, const struct qphs_probe_info *info,
			    const struct qphs_probe_row *rows, size_t n);
/* Decodes a document made by quirks_to_json into col (strict: every key
 * present and of its type, strings that fit).  Returns 0, or -1 with the
 * reason in err. */
int quirks_from_json(json_object *doc, struct quirks_column *col, char *err, size_t len);

/* The matrix cell of one row: "ok -> RESET", "EINVAL -> INIT",
 * "ok -> ERR; IBV_WC_RETRY_EXC_ERR", "skip".  Never contains '|'. */
void quirks_cell(const struct qphs_probe_row *r, char *out, size_t len);

/* The markdown matrix: a row per probe (qphs_probe_names order, then any
 * other names the columns have), a column per column.  A probe whose cells
 * differ between columns is printed in bold. */
void quirks_matrix_print(FILE *out, const struct quirks_column *cols, size_t ncols);

/* One run as an aligned text table, with a header line about the device. */
void quirks_table_print(FILE *out, const char *kernel, const struct qphs_probe_info *info,
			const struct qphs_probe_row *rows, size_t n);

/* The command line of `qplab quirks`, parsed. */
struct quirks_args {
	struct qphs_probe_opts o;  /* strings borrowed from argv */
	const char *quirks[QUIRKS_MAX_COLUMNS]; /* --quirk, in order ("" = none) */
	size_t nquirks;
	int json, lab;
	const char *out;           /* --out: the JSON array of the VM runs */
	const char *from;          /* --from: render that array, run nothing */
	char *kernels[QUIRKS_MAX_COLUMNS];
	size_t nkernels;
};

/* --lab: brings up the lab topology (netns/topo, two hosts, shared mode),
 * points a's devices and GID indexes at it where the user gave none, calls
 * run(a), and tears the topology down whatever run returned.  Returns run's
 * exit code, or QPLAB_EXIT_FAIL when the topology failed. */
int quirks_lab(struct quirks_args *a, int (*run)(const struct quirks_args *));

/* --from FILE: the matrix (or with json, the array again) of a file that
 * --out wrote, without running anything.  Returns an exit code. */
int quirks_from_file(const char *path, int json);

/* Runs argv with its stdout captured into *out (malloc'd, NUL-terminated,
 * at most 1 MiB; caller frees); stderr passes through.  Returns the exit
 * status (128 + signal), or -1 when it could not start. */
int quirks_capture(char *const argv[], char **out);

/* `qplab quirks --kernel K...`: argv is the command's own (passed on to
 * the inner run without --kernel, --out, --json and --lab), a the parsed
 * arguments.  Prints the matrix (or, with a->json, the JSON array of the
 * documents) and writes that array to a->out when set.  Returns an exit
 * code. */
int quirks_in_vms(int argc, char **argv, const struct quirks_args *a);

#endif
