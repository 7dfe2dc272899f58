/* Fuzz the GID, nic path and host:port parsers.  A parsed GID must format
 * to 47 characters that parse to the same bytes; a parsed host:port must
 * format to a name that parses back to the same host and port. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_host_port(const char *s)
{
	char host[256], host2[256], name[300];
	uint16_t port, port2;

	if (qphs_parse_host_port(s, host, sizeof(host), &port, 12001))
		return;
	if (qphs_format_host_port(host, port, name, sizeof(name)))
		return; /* e.g. a host with '%' but no ':' that is not IPv6 */
	if (qphs_parse_host_port(name, host2, sizeof(host2), &port2, 1))
		return; /* hosts like "a]b" have no round trip; not a crash */
	if (port != port2 || strcmp(host, host2))
		if (strchr(host, ':')) /* bracketed IPv6 must come back */
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *server, *device, text[QPHS_GID_STR_LEN + 1];
	uint8_t gid[16], back[16];

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (qphs_gid_parse(s, gid) == 0) {
		qphs_gid_format(gid, text);
		if (strlen(text) != QPHS_GID_STR_LEN || qphs_gid_parse(text, back) ||
		    memcmp(gid, back, 16))
			abort();
	}
	if (qphs_nic_path_split(s, &server, &device) == 0) {
		check_host_port(server);
		free(server);
		free(device);
	}
	check_host_port(s);
	free(s);
	return 0;
}
