/* Reads the hex golden frames of tests/golden/ (see golden.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"

void golden_path(const char *name, char *out, size_t len)
{
	const char *root = getenv("QPLAB_SRCDIR");

	snprintf(out, len, "%s/tests/golden/%s", root && *root ? root : ".", name);
}

static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes the hex text of f into buf (cap bytes); returns the byte count or
 * -1 on a character that is neither hex, whitespace nor a comment. */
static long parse_hex(FILE *f, uint8_t *buf, size_t cap, const char *path)
{
	int c, hi = -1;
	size_t n = 0;

	while ((c = getc(f)) != EOF) {
		if (c == '#') {
			while ((c = getc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (hex_value(c) < 0 || n >= cap) {
			fprintf(stderr, "golden: %s: bad character '%c'\n", path, c);
			return -1;
		}
		if (hi < 0) {
			hi = hex_value(c);
		} else {
			buf[n++] = (uint8_t)(hi << 4 | hex_value(c));
			hi = -1;
		}
	}
	if (hi >= 0) {
		fprintf(stderr, "golden: %s: odd number of hex digits\n", path);
		return -1;
	}
	return (long)n;
}

int golden_load(const char *name, uint8_t **buf, size_t *len)
{
	char path[4096];
	FILE *f;
	long size, n;
	uint8_t *b;

	golden_path(name, path, sizeof(path));
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	/* The text is at least twice the bytes, so its size bounds the buffer. */
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return -1;
	}
	b = malloc((size_t)size / 2 + 1);
	n = b ? parse_hex(f, b, (size_t)size / 2 + 1, path) : -1;
	fclose(f);
	if (n < 0) {
		free(b);
		return -1;
	}
	*buf = b;
	*len = (size_t)n;
	return 0;
}
