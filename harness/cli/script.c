/* `qplab vm|topo|doctor`: these live as shell scripts under netns/ (or
 * libexec/qplab when installed); exec them with QPLAB_ROOT set. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cmd_script(int argc, char **argv)
{
	char path[PATH_MAX + 64];

	(void)argc;
	snprintf(path, sizeof(path), "%s/%s", qplab_script_dir(), argv[0]);
	if (access(path, X_OK) != 0) {
		fprintf(stderr, "qplab %s: %s is missing (%s); is the checkout or install complete?\n",
			argv[0], path, strerror(errno));
		return QPLAB_EXIT_USAGE;
	}
	setenv("QPLAB_ROOT", qplab_root(), 1);
	argv[0] = path;
	execv(path, argv);
	fprintf(stderr, "qplab %s: cannot run %s: %s\n", argv[0], path, strerror(errno));
	return QPLAB_EXIT_FAIL;
}
