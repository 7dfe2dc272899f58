/* Fuzz the segment descriptor (Metadata) reader; an accepted descriptor must
 * encode, read back, and encode to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qphs_segment_desc s, again;
	char *e1, *e2, err[256];
	size_t n1, n2;

	if (qphs_segment_desc_parse((const char *)data, size, &s, err, sizeof(err)))
		return 0;
	if (qphs_segment_desc_encode(&s, &e1, &n1))
		abort();
	qphs_segment_desc_clear(&s);
	if (qphs_segment_desc_parse(e1, n1, &again, err, sizeof(err)))
		abort();
	if (qphs_segment_desc_encode(&again, &e2, &n2))
		abort();
	if (n1 != n2 || memcmp(e1, e2, n1))
		abort();
	qphs_segment_desc_clear(&again);
	free(e1);
	free(e2);
	return 0;
}
