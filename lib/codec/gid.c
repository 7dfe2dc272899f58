/* GID strings: Mooncake's parseGidString rules, and the 47-char format. */
#include <stdio.h>

#include "qphs/body.h"
#include "qphs/error.h"

/* C-locale classes, without the locale tables' calls: a GID is parsed
 * twice in every setup. */
static int is_space(int c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* A hex digit's value, or -1. */
static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20; /* 'A'-'F' to 'a'-'f' */
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One field: optional whitespace, optional 0x, one or more hex digits,
 * value <= 0xff.  Returns the position after it, or NULL. */
static const char *gid_field(const char *p, uint8_t *out)
{
	unsigned v = 0;
	const char *digits;
	int d;

	while (is_space((unsigned char)*p))
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && hex_value((unsigned char)p[2]) >= 0)
		p += 2;
	digits = p;
	while ((d = hex_value((unsigned char)*p)) >= 0) {
		p++;
		v = v * 16 + (unsigned)d;
		if (v > 0xff)
			return NULL;
	}
	if (p == digits)
		return NULL;
	*out = (uint8_t)v;
	return p;
}

int qphs_gid_parse(const char *s, uint8_t gid[16])
{
	const char *p = s;
	uint8_t tmp[16];

	if (!s)
		return QPHS_ERR_BAD_GID;
	for (int i = 0; i < 16; i++) {
		if (i > 0 && *p++ != ':')
			return QPHS_ERR_BAD_GID;
		p = gid_field(p, &tmp[i]);
		if (!p)
			return QPHS_ERR_BAD_GID;
	}
	if (*p)
		return QPHS_ERR_BAD_GID;
	for (int i = 0; i < 16; i++)
		gid[i] = tmp[i];
	return 0;
}

void qphs_gid_format(const uint8_t gid[16], char out[QPHS_GID_STR_LEN + 1])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 3 * i, 4, i < 15 ? "%02x:" : "%02x", gid[i]);
}
