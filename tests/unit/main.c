/* The unit test runner: every suite, one process per test (CK_FORK). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qphs.h"
#include "unit.h"

#define SUITE(name) {#name, suite_##name},
static const struct {
	const char *name;
	Suite *(*make)(void);
} suites[] = {
#include "unit_suites.h"
};

TCase *unit_tcase(Suite *s, const char *name, double seconds)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, unit_timeout(seconds));
	suite_add_tcase(s, tc);
	return tc;
}

/* Prints which named errors of the table the suites produced, and which
 * of the codec and config ranges they did not. */
static int print_hits(const char *path)
{
	char line[128];
	FILE *f = fopen(path, "r");
	int missing = 0;

	static const int ranges[][2] = {{-1006, -1000}, {-1028, -1020}, {-1041, -1040}};
	char seen[4096] = "";

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			char key[140];
			snprintf(key, sizeof(key), " %s ", line);
			if (!strstr(seen, key) && strlen(seen) + strlen(key) < sizeof(seen))
				strcat(seen, key);
		}
		fclose(f);
	}
	printf("# named errors produced by the unit tests:%s\n", seen);
	for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
		for (int c = ranges[r][0]; c <= ranges[r][1]; c++) {
			char key[140];
			if (!strcmp(qphs_errname(c), "UNKNOWN"))
				continue;
			snprintf(key, sizeof(key), " %s ", qphs_errname(c));
			if (!strstr(seen, key)) {
				printf("# not produced by any unit test: %s\n", qphs_errname(c));
				missing++;
			}
		}
	}
	if (!missing)
		printf("# every named error of wire, desc and config was produced\n");
	return missing;
}

int main(int argc, char **argv)
{
	SRunner *sr = NULL;
	char hits[] = "/tmp/qplab-unit-hits.XXXXXX";
	int fd = mkstemp(hits);
	int failed;

	if (fd >= 0) {
		close(fd);
		setenv("QPLAB_UNIT_HITS", hits, 1);
	}
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		/* `build/tests/unit NAME...` runs only the named suites. */
		int wanted = argc < 2;
		for (int a = 1; a < argc; a++)
			wanted |= !strcmp(argv[a], suites[i].name);
		if (!wanted)
			continue;
		if (!sr)
			sr = srunner_create(suites[i].make());
		else
			srunner_add_suite(sr, suites[i].make());
	}
	if (!sr) {
		fprintf(stderr, "unit: no such suite\n");
		return 2;
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (fd >= 0) {
		/* A named error no test produces is untested: fail the run. */
		if (argc < 2 && print_hits(hits) > 0)
			failed++;
		unlink(hits);
	}
	return failed ? 1 : 0;
}
