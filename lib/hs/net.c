/* Socket helpers shared by the daemon and the client. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <time.h>

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
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
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
