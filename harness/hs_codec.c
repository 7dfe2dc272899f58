/* `qplab hs encode|decode` (placeholder until lib/wire lands). */
#include <stdio.h>

#include "cli.h"

int hs_encode_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "qplab hs encode: not implemented yet\n");
	return QPLAB_EXIT_USAGE;
}

int hs_decode_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "qplab hs decode: not implemented yet\n");
	return QPLAB_EXIT_USAGE;
}
