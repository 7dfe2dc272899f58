/* Whole-file reads with a limit, for the files and pipes users name on the
 * command line (--body, --reply, --from): a directory, a file past the
 * limit and an endless stream are errors that say so. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int fail(char *err, size_t errlen, const char *fmt, const char *a)
{
	snprintf(err, errlen, fmt, a);
	return -1;
}

int qplab_read_file(const char *path, size_t max, char **out, size_t *len, char *err,
		    size_t errlen)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	size_t cap = 0, n = 0;
	char *buf = NULL, msg[96];
	struct stat st;

	*out = NULL;
	*len = 0;
	if (fd < 0)
		return fail(err, errlen, "cannot open it: %s", strerror(errno));
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return fail(err, errlen, "%s", "is a directory, not a file");
	}
	for (;;) {
		ssize_t got;

		if (n == cap) {
			/* One byte more than max is room enough to see it is too long. */
			size_t want = cap ? cap * 2 : 4096;
			char *bigger;

			if (cap > max)
				break;
			if (want > max + 1)
				want = max + 1;
			if (!(bigger = realloc(buf, want + 1))) {
				snprintf(msg, sizeof(msg), "out of memory after %zu bytes", n);
				free(buf);
				if (fd)
					close(fd);
				return fail(err, errlen, "%s", msg);
			}
			buf = bigger;
			cap = want;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(msg, sizeof(msg), "read error after %zu bytes: %s", n, strerror(errno));
			free(buf);
			if (fd)
				close(fd);
			return fail(err, errlen, "%s", msg);
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > max)
			break;
	}
	if (fd)
		close(fd);
	if (n > max) {
		free(buf);
		snprintf(msg, sizeof(msg), "is longer than %zu bytes, the most this reads", max);
		return fail(err, errlen, "%s", msg);
	}
	if (!buf && !(buf = malloc(1)))
		return fail(err, errlen, "%s", "out of memory");
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}
