/* The log sink: one handler for the whole process, off by default. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static qphs_log_fn log_fn;
static void *log_user;
static enum qphs_log_level log_max = QPHS_LOG_ERROR;

void qphs_log_set_handler(enum qphs_log_level max_level, qphs_log_fn fn,
			  void *user)
{
	log_max = max_level;
	log_user = user;
	log_fn = fn;
}

const char *qphs_log_level_name(enum qphs_log_level level)
{
	switch (level) {
	case QPHS_LOG_ERROR: return "error";
	case QPHS_LOG_WARN: return "warn";
	case QPHS_LOG_INFO: return "info";
	case QPHS_LOG_DEBUG: return "debug";
	}
	return "?";
}

int qphs__log_enabled(enum qphs_log_level level)
{
	return log_fn != NULL && level <= log_max;
}

void qphs__log(enum qphs_log_level level, const char *func, int line,
	       const char *fmt, ...)
{
	int saved = errno;
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Debug lines carry where they came from; the others read as prose. */
	if (level == QPHS_LOG_DEBUG) {
		char full[1200];
		snprintf(full, sizeof(full), "%s (%s:%d)", buf, func, line);
		log_fn(level, full, log_user);
	} else {
		log_fn(level, buf, log_user);
	}
	errno = saved;
}
