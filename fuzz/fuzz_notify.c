/* Fuzz the Notify and Probe body readers; an accepted Notify must encode,
 * read back, and encode to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/body.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qphs_notify n, again;
	char *e1, *e2, err[256];
	size_t n1, n2;

	(void)qphs_probe_parse((const char *)data, size, err, sizeof(err));
	if (qphs_notify_parse((const char *)data, size, &n, err, sizeof(err)))
		return 0;
	if (qphs_notify_encode(&n, &e1, &n1))
		abort();
	qphs_notify_clear(&n);
	if (qphs_notify_parse(e1, n1, &again, err, sizeof(err)))
		abort();
	if (qphs_notify_encode(&again, &e2, &n2))
		abort();
	if (n1 != n2 || memcmp(e1, e2, n1))
		abort();
	qphs_notify_clear(&again);
	free(e1);
	free(e2);
	return 0;
}
