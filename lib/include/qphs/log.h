/*
 * qphs/log.h — the library is silent unless asked.
 *
 * Install a handler to receive log lines.  The library formats each line
 * (without a trailing newline) and calls the handler from whatever thread
 * logged it, so the handler must be thread-safe.  Handshake lines start with
 * the "[Handshake]" tag.  errno is preserved across logging.
 */
#ifndef QPHS_LOG_H
#define QPHS_LOG_H

#include "qphs/export.h"

enum qphs_log_level {
	QPHS_LOG_ERROR = 0,
	QPHS_LOG_WARN = 1,
	QPHS_LOG_INFO = 2,
	QPHS_LOG_DEBUG = 3,
};

/* level: the level of the message; line: the formatted text (borrowed, valid
 * only during the call); user: the pointer given to qphs_log_set_handler. */
typedef void (*qphs_log_fn)(enum qphs_log_level level, const char *line,
			    void *user);

/* Sends messages at `max_level` and more severe to fn.  fn NULL turns logging
 * off (the default).  Not thread-safe against concurrent logging: call it
 * before starting daemons. */
QPHS_EXPORT void qphs_log_set_handler(enum qphs_log_level max_level,
				      qphs_log_fn fn, void *user);

/* "error", "warn", "info", "debug". */
QPHS_EXPORT const char *qphs_log_level_name(enum qphs_log_level level);

#endif
