/* The rdma test runner: sets up two lab hosts in shared mode (or uses the
 * ones named in QPLAB_RDMA_DEVS / QPLAB_RDMA_ADDRS), runs every suite, one
 * process per test, and tears the topology down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdmatest.h"

#define SUITE(name) {#name, suite_##name},
static const struct {
	const char *name;
	Suite *(*make)(void);
} suites[] = {
#include "rdma_suites.h"
};

int rdma_ms(int ms)
{
	return (int)unit_timeout(ms);
}

static double t_start;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void timing_start(void)
{
	t_start = now_s();
}

static void timing_end(void)
{
	printf("# took %.2f s\n", now_s() - t_start);
	fflush(stdout);
}

TCase *unit_tcase(Suite *s, const char *name, double seconds)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, timing_start, timing_end);
	tcase_set_timeout(tc, unit_timeout(seconds));
	suite_add_tcase(s, tc);
	return tc;
}

TCase *rdma_smoke_tcase(Suite *s, const char *name, double seconds)
{
	TCase *tc = unit_tcase(s, name, seconds);

	tcase_set_tags(tc, "smoke");
	return tc;
}

int rdma_smoke(void)
{
	const char *s = getenv("QPLAB_RDMA_SMOKE");

	return s && strcmp(s, "0");
}

/* Runs topo-shared.sh up and exports what it printed. */
static int topology_up(const char *script)
{
	char cmd[512], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s up", script);
	if (!(p = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *tok = strtok(line, " \n");

		for (; tok; tok = strtok(NULL, " \n")) {
			char *eq = strchr(tok, '=');
			if (eq) {
				*eq = '\0';
				setenv(tok, eq + 1, 1);
			}
		}
	}
	return pclose(p) == 0 && getenv("QPLAB_RDMA_DEVS") ? 0 : -1;
}

static void topology_down(const char *script)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s down", script);
	if (system(cmd) != 0)
		fprintf(stderr, "# rdma: topology teardown reported an error\n");
}

int main(int argc, char **argv)
{
	const char *script = getenv("QPLAB_RDMA_TOPO");
	SRunner *sr = NULL;
	int own_topo = 0, failed;

	if (!script)
		script = "tests/rdma/topo-shared.sh";
	setvbuf(stdout, NULL, _IOLBF, 0);
	double t0 = now_s();

	if (!getenv("QPLAB_RDMA_DEVS")) {
		if (topology_up(script)) {
			printf("Bail out! could not set up the two-host shared topology (%s)\n", script);
			topology_down(script);
			return 1;
		}
		own_topo = 1;
	}
	printf("# devices %s addresses %s%s; topology up in %.2f s\n", getenv("QPLAB_RDMA_DEVS"),
	       getenv("QPLAB_RDMA_ADDRS"), rdma_smoke() ? " (smoke subset)" : "", now_s() - t0);
	t0 = now_s();
	if (rdma_smoke())
		setenv("CK_INCLUDE_TAGS", "smoke", 1);
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
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
		fprintf(stderr, "rdma: no such suite\n");
		return 2;
	}
	srunner_set_tap(sr, "-");
	srunner_run_all(sr, CK_SILENT);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	printf("# suites took %.2f s\n", now_s() - t0);
	t0 = now_s();
	if (own_topo)
		topology_down(script);
	printf("# topology down in %.2f s\n", now_s() - t0);
	return failed ? 1 : 0;
}
