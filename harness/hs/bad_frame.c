/* Named bad frames (the frame layout of qphs/frame.h, encoded by hand). */
#include <string.h>

#include "bad_frame.h"
#include "qphs/error.h"

/* length (u64 little-endian), then an optional type byte, then body. */
static size_t frame(uint8_t *buf, uint64_t length, int type, const char *body)
{
	size_t n = 0, blen = strlen(body);

	for (int i = 0; i < 8; i++)
		buf[n++] = (uint8_t)(length >> (8 * i));
	if (type >= 0)
		buf[n++] = (uint8_t)type;
	memcpy(buf + n, body, blen);
	return n + blen;
}

int qplab_bad_frame(const char *kind, uint8_t buf[QPLAB_BAD_FRAME_MAX], size_t *len)
{
	static const int probe = 3;

	if (!strcmp(kind, "zero-length"))
		*len = frame(buf, 0, -1, "");
	else if (!strcmp(kind, "oversize")) /* above the largest limit there is */
		*len = frame(buf, ((uint64_t)128 << 20) + 1, probe, "");
	else if (!strcmp(kind, "truncate")) /* promises 100 bytes, sends 3, closes */
		*len = frame(buf, 100, probe, "{\"");
	else if (!strcmp(kind, "garbage")) /* type byte in 0x80-0xff */
		*len = frame(buf, 3, 0x80, "{}");
	else if (!strcmp(kind, "empty-body")) /* a type byte and no JSON */
		*len = frame(buf, 1, probe, "");
	else if (!strcmp(kind, "not-json"))
		*len = frame(buf, 9, probe, "not json");
	else if (!strcmp(kind, "trailing")) /* whitespace after JSON is fine; "x" is not */
		*len = frame(buf, 5, probe, "{} x");
	else
		return QPHS_ERR_INVALID_ARGUMENT;
	return 0;
}
