/* The words of the lab's data-path options (labwords.h). */
#include <stdio.h>
#include <string.h>

#include "labwords.h"
#include "qphs/rdma.h"

const char *const qplab_rkey_words[] = {
	[QPHS_RKEY_DESCRIPTOR] = "descriptor", [QPHS_RKEY_BAD] = "bad",
	[QPHS_RKEY_STALE] = "stale", NULL,
};
const char *const qplab_verb_words[] = {
	[QPHS_DATA_CHECK] = "check", [QPHS_DATA_WRITE] = "write", [QPHS_DATA_SEND] = "send",
	[QPHS_DATA_BURST] = "burst", NULL,
};
const char *const qplab_access_words[] = {"local_write", "remote_write", "remote_read", NULL};

_Static_assert(QPHS_ACCESS_LOCAL_WRITE == 1 && QPHS_ACCESS_REMOTE_WRITE == 2 &&
		       QPHS_ACCESS_REMOTE_READ == 4,
	       "qplab_access_words[i] is the bit 1 << i");

int qplab_word_index(const char *const *words, const char *w)
{
	for (int i = 0; w && words[i]; i++)
		if (!strcmp(words[i], w))
			return i;
	return -1;
}

const char *qplab_access_text(int bits, char *buf, size_t len)
{
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; qplab_access_words[i]; i++)
		if ((bits & (1 << i)) && at < len) {
			int n = snprintf(buf + at, len - at, "%s%s", at ? "," : "",
					 qplab_access_words[i]);
			at += n > 0 ? (size_t)n : 0;
		}
	if (!bits && len)
		snprintf(buf, len, "none");
	return buf;
}
