/* Helpers of `qplab hs encode` and `qplab hs decode`: stdin, stdout, options. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hs_codec.h"
#include "qphs.h"

int hs_read_stdin(size_t max, char **buf, size_t *len)
{
	size_t cap = 65536, have = 0;
	char *b = malloc(cap + 1);

	if (!b)
		return QPHS_ERR_MEMORY;
	for (;;) {
		ssize_t n;
		if (have == cap) {
			/* Grow by doubling, but never far past max: one byte
			 * more than max is enough to know it is too much. */
			size_t next = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *nb = next > cap ? realloc(b, next + 1) : NULL;
			if (!nb) {
				free(b);
				return next > cap ? QPHS_ERR_MEMORY : QPHS_ERR_FRAME_TOO_LONG;
			}
			b = nb;
			cap = next;
		}
		n = read(STDIN_FILENO, b + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;
			free(b);
			errno = saved;
			return QPHS_ERR_SOCKET;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (have > max) {
		free(b);
		return QPHS_ERR_FRAME_TOO_LONG;
	}
	b[have] = '\0';
	*buf = b;
	*len = have;
	return 0;
}

int hs_write_stdout(const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(STDOUT_FILENO, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int hs_opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);

	if (strncmp(arg, name, n) != 0)
		return 0;
	if (arg[n] == '=') {
		*value = arg + n + 1;
		return 1;
	}
	if (arg[n] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 1;
}

void hs_print_error(const char *cmd, int code, const char *detail)
{
	fprintf(stderr, "qplab hs %s: %s: %s%s%s\n", cmd, qphs_errname(code),
		qphs_strerror(code), detail && *detail ? ": " : "", detail ? detail : "");
}
