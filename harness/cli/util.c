/* Helpers every subcommand shares: paths, usage errors, logging. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "qphs.h"

static char root_dir[PATH_MAX];
static char script_dir[PATH_MAX + 32];

static void find_dirs(void)
{
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (root_dir[0])
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(root_dir, sizeof(root_dir), ".");
	} else {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		/* <root>/build/qplab in a checkout, <root>/bin/qplab installed. */
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(root_dir, sizeof(root_dir), "%s", exe[0] ? exe : "/");
	}
	snprintf(script_dir, sizeof(script_dir), "%s/netns", root_dir);
	if (access(script_dir, X_OK) != 0)
		snprintf(script_dir, sizeof(script_dir), "%s/libexec/qplab", root_dir);
}

const char *qplab_root(void)
{
	find_dirs();
	return root_dir;
}

const char *qplab_script_dir(void)
{
	find_dirs();
	return script_dir;
}

int qplab_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("qplab: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return QPLAB_EXIT_USAGE;
}

static void log_stderr(enum qphs_log_level level, const char *line, void *user)
{
	(void)user;
	fprintf(stderr, "%s: %s\n", qphs_log_level_name(level), line);
}

void qplab_log_to_stderr(int verbose)
{
	qphs_log_set_handler(verbose ? QPHS_LOG_DEBUG : QPHS_LOG_INFO, log_stderr, NULL);
}
