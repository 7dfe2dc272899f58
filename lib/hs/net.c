/* Socket helpers shared by the daemon and the client. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "codec/jsonw.h"
#include "net.h"
#include "qphs/error.h"

int64_t qphs__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void qphs__sockaddr_format(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		/* What inet_ntop and "%s:%u" write (cut to len as snprintf
		 * cuts), by hand: the daemon formats every accepted peer, and
		 * printf was a tenth of its work per handshake (test_client
		 * checks the text). */
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		const unsigned char *a = (const unsigned char *)&in->sin_addr;
		char text[sizeof("255.255.255.255:65535")], *p = text;
		size_t n;

		for (int i = 0; i < 4; i++) {
			p = qphs__put_u64(p, a[i]);
			*p++ = i < 3 ? '.' : ':';
		}
		p = qphs__put_u64(p, ntohs(in->sin_port));
		n = (size_t)(p - text);
		if (!len)
			return;
		if (n > len - 1)
			n = len - 1;
		memcpy(buf, text, n);
		buf[n] = '\0';
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
}

int qphs__errno_code(int err)
{
	switch (err) {
	case ECONNREFUSED:
		return QPHS_ERR_CONNECT_REFUSED;
	case ETIMEDOUT:
		return QPHS_ERR_CONNECT_TIMEOUT;
	case ENETUNREACH:
	case EHOSTUNREACH:
	case ENETDOWN:
	case EHOSTDOWN:
		return QPHS_ERR_UNREACHABLE;
	case ENOMEM:
	case ENOBUFS:
		return QPHS_ERR_MEMORY;
	default:
		return QPHS_ERR_SOCKET;
	}
}
