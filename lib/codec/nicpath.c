/* Nic paths "<server>@<device>" and "host:port" server names (Mooncake's
 * getServerNameFromNicPath, getNicNameFromNicPath and parseHostNameWithPort,
 * common.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/body.h"
#include "qphs/error.h"

int qphs_nic_path_split(const char *path, char **server, char **device)
{
	const char *at = path ? strchr(path, '@') : NULL;

	*server = *device = NULL;
	if (!at || at == path || !at[1])
		return QPHS_ERR_BAD_NIC_PATH;
	*server = strndup(path, (size_t)(at - path));
	*device = strdup(at + 1);
	if (!*server || !*device) {
		free(*server);
		free(*device);
		*server = *device = NULL;
		return QPHS_ERR_MEMORY;
	}
	return 0;
}

/* The whole string must be a decimal port 0..65535 (Mooncake's from_chars
 * into uint16_t: no sign, no spaces, nothing after). */
static int parse_port(const char *s, uint16_t *port)
{
	unsigned v = 0;

	if (!*s)
		return QPHS_ERR_BAD_ADDRESS;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return QPHS_ERR_BAD_ADDRESS;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > 65535)
			return QPHS_ERR_BAD_ADDRESS;
	}
	*port = (uint16_t)v;
	return 0;
}

/* A bare IPv6 address, optionally with %scope (Mooncake's isValidIpV6:
 * inet_pton on the part before '%'; a ':' after the '%' means a port). */
static int is_ipv6(const char *s, size_t n)
{
	char buf[INET6_ADDRSTRLEN + 1];
	struct in6_addr a;
	const char *pct = memchr(s, '%', n);
	size_t addr_len = pct ? (size_t)(pct - s) : n;

	if (addr_len >= sizeof(buf) || (pct && memchr(pct, ':', n - addr_len)))
		return 0;
	memcpy(buf, s, addr_len);
	buf[addr_len] = '\0';
	return inet_pton(AF_INET6, buf, &a) == 1;
}

static int put_host(const char *h, size_t n, char *hostbuf, size_t hostlen)
{
	if (!n || n >= hostlen)
		return QPHS_ERR_BAD_ADDRESS;
	memcpy(hostbuf, h, n);
	hostbuf[n] = '\0';
	return 0;
}

static int bracketed(const char *server, char *hostbuf, size_t hostlen, uint16_t *port)
{
	const char *close = strchr(server, ']');
	int rc;

	if (!close)
		return QPHS_ERR_BAD_ADDRESS;
	rc = put_host(server + 1, (size_t)(close - server - 1), hostbuf, hostlen);
	if (rc)
		return rc;
	if (!close[1])
		return 0;
	if (close[1] != ':')
		return QPHS_ERR_BAD_ADDRESS;
	return parse_port(close + 2, port);
}

int qphs_parse_host_port(const char *server, char *hostbuf, size_t hostlen, uint16_t *port,
			  uint16_t default_port)
{
	const char *colon;
	size_t n = server ? strlen(server) : 0;

	*port = default_port;
	if (!n)
		return QPHS_ERR_BAD_ADDRESS;
	if (server[0] == '[')
		return bracketed(server, hostbuf, hostlen, port);
	if (is_ipv6(server, n))
		return put_host(server, n, hostbuf, hostlen);
	/* Everything else, v6%scope:port included, splits at the last ':'
	 * (a scope holds no ':', so that is the one after the scope). */
	colon = strrchr(server, ':');
	if (!colon)
		return put_host(server, n, hostbuf, hostlen);
	if (put_host(server, (size_t)(colon - server), hostbuf, hostlen))
		return QPHS_ERR_BAD_ADDRESS;
	return parse_port(colon + 1, port);
}

int qphs_format_host_port(const char *host, uint16_t port, char *buf, size_t len)
{
	int n;

	if (!host || !*host)
		return QPHS_ERR_BAD_ADDRESS;
	if (strchr(host, ':'))
		n = snprintf(buf, len, "[%s]:%u", host, (unsigned)port);
	else
		n = snprintf(buf, len, "%s:%u", host, (unsigned)port);
	return n < 0 || (size_t)n >= len ? QPHS_ERR_BAD_ADDRESS : 0;
}
