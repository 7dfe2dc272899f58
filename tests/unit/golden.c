/* Reads the hex golden frames of tests/golden/ (see golden.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "qphs/error.h"
#include "qphs/frame.h"

void golden_path(const char *name, char *out, size_t len)
{
	const char *root = getenv("QPLAB_SRCDIR");

	snprintf(out, len, "%s/tests/golden/%s", root && *root ? root : ".", name);
}

int golden_load(const char *name, uint8_t **buf, size_t *len)
{
	char path[4096];
	FILE *f;
	long size;
	size_t got, at = 0;
	char *text;
	uint8_t *b;
	int rc;

	golden_path(name, path, sizeof(path));
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return -1;
	}
	/* The text is at least twice the bytes, so its size bounds the buffer. */
	text = malloc((size_t)size + 1);
	b = malloc((size_t)size / 2 + 1);
	got = text ? fread(text, 1, (size_t)size, f) : 0;
	fclose(f);
	if (!text || !b || got != (size_t)size) {
		fprintf(stderr, "golden: %s: cannot read it\n", path);
		rc = -1;
	} else if ((rc = qphs_hex_decode(text, got, QPHS_HEX_COMMENTS, b, (size_t)size / 2 + 1,
					 len, &at))) {
		fprintf(stderr, "golden: %s: byte %zu: not pairs of hex digits (%s)\n", path, at,
			qphs_errname(rc));
	}
	free(text);
	if (rc) {
		free(b);
		return -1;
	}
	*buf = b;
	return 0;
}
