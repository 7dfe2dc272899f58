/* Hex text to bytes: the form frames are written in by hand (qphs/frame.h,
 * qphs_hex_decode).  Pure. */
#include "qphs/error.h"
#include "qphs/frame.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int qphs_hex_decode(const char *text, size_t len, unsigned flags, uint8_t *out, size_t cap,
		    size_t *out_len, size_t *bad_at)
{
	size_t n = 0, i = 0;
	int rc = 0;

	while (i < len) {
		int hi, lo;

		if (is_space(text[i])) {
			i++;
			continue;
		}
		if (text[i] == '#' && (flags & QPHS_HEX_COMMENTS)) {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		hi = hexval(text[i]);
		lo = i + 1 < len ? hexval(text[i + 1]) : -1;
		if (hi < 0 || lo < 0) {
			rc = QPHS_ERR_INVALID_ARGUMENT;
			i += hi < 0 ? 0 : 1;
			break;
		}
		if (n == cap) {
			rc = QPHS_ERR_FRAME_TOO_LONG;
			break;
		}
		out[n++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	if (out_len)
		*out_len = n;
	if (rc && bad_at)
		*bad_at = i;
	return rc;
}
