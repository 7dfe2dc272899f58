/* cli.h — the qplab subcommands and the helpers they share. */
#ifndef QPLAB_CLI_H
#define QPLAB_CLI_H

#include <stdio.h>

/* Exit codes shared by every subcommand (DESIGN.md). */
enum {
	QPLAB_EXIT_OK = 0,
	QPLAB_EXIT_FAIL = 1,
	QPLAB_EXIT_USAGE = 2,
};

/* Subcommands: argv[0] is the subcommand's own name. */
int cmd_hs(int argc, char **argv);
int hs_encode_main(int argc, char **argv);
int hs_decode_main(int argc, char **argv);
int hs_send_main(int argc, char **argv);
int hs_serve_main(int argc, char **argv);
/* `qplab hs send`'s exit status for a lib/client error code (10 + k), and
 * the table as --help prints it (harness/hs/hs_exit.c). */
int hs_exit_code(int err);
void hs_exit_table_print(FILE *out);

/* vm, doctor and topo are shell scripts under netns/: exec them. */
int cmd_script(int argc, char **argv);
/* `qplab agent` (harness/agent/agent.c) and `qplab run` (harness/run/run.c). */
int cmd_agent(int argc, char **argv);
int cmd_run(int argc, char **argv);
/* `qplab report` (harness/run/report_cmd.c): report.html from a results file. */
int cmd_report(int argc, char **argv);
/* `qplab quirks` (harness/quirks/quirks.c). */
int cmd_quirks(int argc, char **argv);

/* The checkout or install root qplab runs from ("<dir of qplab>/.."), and
 * the directory holding the netns/ scripts (<root>/netns in a checkout,
 * <root>/libexec/qplab when installed).  Static storage. */
const char *qplab_root(void);
const char *qplab_script_dir(void);

/* Prints "qplab: " + message to stderr; returns QPLAB_EXIT_USAGE. */
int qplab_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Installs the log handler that writes library lines to stderr. */
void qplab_log_to_stderr(int verbose);

#endif
