/* Internal logging: QPHS_LOG(level, "fmt", ...) formats only when a handler
 * wants the level.  Use the "[Handshake] " prefix for handshake messages. */
#ifndef QPHS__LOG_H
#define QPHS__LOG_H

#include "qphs/log.h"

int qphs__log_enabled(enum qphs_log_level level);
void qphs__log(enum qphs_log_level level, const char *func, int line,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define QPHS_LOG(level, ...)                                                   \
	do {                                                                   \
		if (qphs__log_enabled(level))                                  \
			qphs__log((level), __func__, __LINE__, __VA_ARGS__);   \
	} while (0)
#define QPHS_ERR(...) QPHS_LOG(QPHS_LOG_ERROR, __VA_ARGS__)
#define QPHS_WARN(...) QPHS_LOG(QPHS_LOG_WARN, __VA_ARGS__)
#define QPHS_INFO(...) QPHS_LOG(QPHS_LOG_INFO, __VA_ARGS__)
#define QPHS_DEBUG(...) QPHS_LOG(QPHS_LOG_DEBUG, __VA_ARGS__)

#endif
