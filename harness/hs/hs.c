/* `qplab hs SUBCOMMAND`: the handshake tools. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} hs_commands[] = {
	{"encode", hs_encode_main, "JSON body on stdin -> one frame on stdout"},
	{"decode", hs_decode_main, "frames on stdin -> type and JSON per frame"},
	{"send", hs_send_main, "send one request to a handshake daemon, print the reply"},
	{"serve", hs_serve_main, "a standalone Mooncake-compatible handshake peer"},
};

static void hs_usage(FILE *out)
{
	fprintf(out, "usage: qplab hs COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(hs_commands) / sizeof(hs_commands[0]); i++)
		fprintf(out, "  %-7s %s\n", hs_commands[i].name, hs_commands[i].summary);
}

int cmd_hs(int argc, char **argv)
{
	if (argc < 2) {
		hs_usage(stderr);
		return QPLAB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		hs_usage(stdout);
		return QPLAB_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(hs_commands) / sizeof(hs_commands[0]); i++)
		if (!strcmp(argv[1], hs_commands[i].name))
			return hs_commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "qplab hs: unknown command '%s'\n", argv[1]);
	hs_usage(stderr);
	return QPLAB_EXIT_USAGE;
}
