/*
 * libFuzzer: the inventory parser (strict json-c, the line pre-scan, the
 * plain-string rules).  An inventory is input from outside: whatever the
 * bytes, the parser returns an inventory or errors, never crashes, never
 * leaks, every error names the file, and no stored string holds a byte
 * a shell or ssh would read as syntax.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/inventory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void plain(const char *s)
{
	if (s[0] == '-' || strpbrk(s, " \t\n'\"`$;&|<>()*?[]{}\\!#~"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qplab_inventory *inv = NULL;
	struct qplab_errors errs = {0};
	int rc = qplab_inventory_parse("f.json", (const char *)data, size, &inv, &errs);

	if ((rc == 0) != (inv != NULL) || (rc == 0 && errs.n) || (rc != 0 && !errs.n))
		abort();
	for (size_t i = 0; i < errs.n; i++)
		if (strncmp(errs.msgs[i], "f.json", 6))
			abort();
	for (size_t i = 0; inv && i < inv->nhosts; i++) {
		const struct qplab_inv_host *h = &inv->hosts[i];

		plain(h->qplab);
		plain(h->device);
		plain(h->netdev);
		plain(h->address);
		plain(h->ssh.destination[0] ? h->ssh.destination : h->ssh.alias);
		for (size_t k = 0; k < h->ssh.noptions; k++) {
			plain(h->ssh.options[k].name);
			plain(h->ssh.options[k].value);
		}
	}
	qplab_inventory_free(inv);
	qplab_errors_free(&errs);
	return 0;
}
