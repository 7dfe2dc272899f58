/* `qplab hs serve` (placeholder until lib/daemon and lib/client land). */
#include <stdio.h>

#include "cli.h"

int hs_serve_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "qplab hs serve: not implemented yet\n");
	return QPLAB_EXIT_USAGE;
}
