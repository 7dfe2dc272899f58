/* cli.h — the qplab subcommands and the helpers they share. */
#ifndef QPLAB_CLI_H
#define QPLAB_CLI_H

#include <stdio.h>

/* Exit codes shared by every subcommand: 0 success, 1 failure, 2 usage. */
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
/* `qplab quirks` (harness/quirks/quirks.c); with --inventory FILE the
 * hosts of an inventory, one column each (harness/run/quirks_hosts.c). */
int cmd_quirks(int argc, char **argv);
int cmd_quirks_any(int argc, char **argv);
/* `qplab doctor`: netns/doctor, or with --inventory FILE the hosts of an
 * inventory, checked over ssh (harness/run/doctor_hosts.c). */
int cmd_doctor(int argc, char **argv);
/* `qplab build-id` (buildid.c): this binary's GNU build ID, hex ("none"
 * without one); static storage. */
int cmd_build_id(int argc, char **argv);
const char *qplab_build_id(void);

/* The checkout or install root qplab runs from ("<dir of qplab>/.."), and
 * the directory holding the netns/ scripts (<root>/netns in a checkout,
 * <root>/libexec/qplab when installed).  Static storage. */
const char *qplab_root(void);
const char *qplab_script_dir(void);

/* Prints "qplab: " + message to stderr; returns QPLAB_EXIT_USAGE. */
int qplab_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* QPLAB_TIME_MULTIPLIER: how much longer every deadline and upper time
 * bound of the lab may be (TCG, sanitizers, valgrind).  A decimal number
 * from QPLAB_TIME_MULT_MIN to QPLAB_TIME_MULT_MAX; unset is 1.  _parse
 * reads s (NULL = unset); the other reads the environment.  Both return 0
 * with *out set, or -1 with "QPLAB_TIME_MULTIPLIER=... is not a number /
 * out of range (accepted: 1 to 100)" in err. */
#define QPLAB_TIME_MULT_MIN 1
#define QPLAB_TIME_MULT_MAX 100
int qplab_time_multiplier_parse(const char *s, double *out, char *err, size_t errlen);
int qplab_time_multiplier(double *out, char *err, size_t errlen);
/* ms * mult, clamped to 0..QPLAB_MAX_DEADLINE_MS: every scaled deadline
 * fits an int of milliseconds (poll, the agent protocol). */
#define QPLAB_MAX_DEADLINE_MS 2000000000L
long qplab_scaled_ms(long ms, double mult);

/* Reads the whole of path ("-" = stdin) into *out (malloc'd, NUL after
 * the *len bytes; the caller frees it).  Returns 0, or -1 with err saying
 * why ("is a directory, not a file", "is longer than N bytes, the most
 * this reads", "cannot open it: ..."): an endless stream stops at max+1. */
int qplab_read_file(const char *path, size_t max, char **out, size_t *len, char *err,
		    size_t errlen);

/* Installs the log handler that writes library lines to stderr. */
void qplab_log_to_stderr(int verbose);

#endif
