/* Fuzz the Connection body reader; whatever it accepts must encode, read
 * back, and encode to the same bytes (encode(parse(encode(x))) == encode(x)). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qphs_hs_desc d, again;
	char *e1, *e2, err[256];
	size_t n1, n2;

	if (qphs_hs_desc_parse((const char *)data, size, &d, err, sizeof(err)))
		return 0;
	if (qphs_hs_desc_encode(&d, &e1, &n1))
		abort();
	qphs_hs_desc_clear(&d);
	if (qphs_hs_desc_parse(e1, n1, &again, err, sizeof(err)))
		abort(); /* we wrote something we refuse to read */
	if (qphs_hs_desc_encode(&again, &e2, &n2))
		abort();
	if (n1 != n2 || memcmp(e1, e2, n1))
		abort();
	qphs_hs_desc_clear(&again);
	free(e1);
	free(e2);
	return 0;
}
