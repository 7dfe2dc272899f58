/* qplab — one binary, many subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{"hs", cmd_hs, "talk the Mooncake handshake: encode, decode, send, serve"},
	{"vm", cmd_script, "run a command in a throwaway VM with rdma_rxe"},
	{"topo", cmd_script, "build and tear down lab topologies (netns, veth, rxe)"},
	{"doctor", cmd_doctor, "what this machine (or an inventory's hosts) can run, and why not"},
	{"run", cmd_run, "run lab scenarios: TAP, results.json, junit.xml, report.html"},
	{"report", cmd_report, "the HTML report of a results.json (from any machine)"},
	{"agent", cmd_agent, "one lab host: device, daemon, JSON-line requests"},
	{"quirks", cmd_quirks_any, "probe what the RDMA driver does with QP transitions"},
	{"build-id", cmd_build_id, "this binary's build ID (the hosts backend compares them)"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: qplab COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(out, "\n'qplab COMMAND --help' describes each command.\n"
		     "Exit codes: 0 success, 1 failure, 2 usage error; some commands "
		     "add their own (see their --help).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return QPLAB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return QPLAB_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "qplab: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return QPLAB_EXIT_USAGE;
}
