/* net.h — small socket helpers shared by the daemon and the client. */
#ifndef QPHS__NET_H
#define QPHS__NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Monotonic clock in milliseconds. */
int64_t qphs__now_ms(void);

/* Formats a socket address as "ADDR:PORT" ("[v6]:PORT"); "?" when the
 * family is unknown.  Always NUL-terminates buf. */
void qphs__sockaddr_format(const struct sockaddr *sa, char *buf, size_t len);

/* Maps an errno from connect/send/recv to the table's code. */
int qphs__errno_code(int err);

#endif
