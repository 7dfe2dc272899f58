/* The rdma test runner: sets up two lab hosts in shared mode with
 * netns/topo (or uses the ones named in QPLAB_RDMA_DEVS / QPLAB_RDMA_ADDRS /
 * QPLAB_RDMA_NETDEVS, as phase 60-rdma does), runs every suite, one
 * process per test, and tears the topology down. */
#include <json-c/json.h>
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

/* The topology comes from netns/topo (QPLAB_RDMA_TOPO, default
 * netns/topo from the checkout), in shared mode, with the ID TOPO_ID (topo
 * names it TOPO_ID plus a unique suffix: topo_name).  Its JSON gives the
 * devices, addresses and netdevs the suites read. */
#define TOPO_ID "rdma"
static char topo_name[32];

static void export_hosts(struct json_object *hosts)
{
	static const char *const keys[][2] = {{"rxe", "QPLAB_RDMA_DEVS"},
					      {"addr4", "QPLAB_RDMA_ADDRS"},
					      {"ifname", "QPLAB_RDMA_NETDEVS"}};

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		char val[256] = "";
		size_t used = 0;

		for (size_t i = 0; i < json_object_array_length(hosts); i++) {
			struct json_object *v;

			if (!json_object_object_get_ex(json_object_array_get_idx(hosts, i),
						       keys[k][0], &v))
				continue;
			used += (size_t)snprintf(val + used, sizeof(val) - used, "%s%s",
						 i ? "," : "", json_object_get_string(v));
			if (used >= sizeof(val))
				break;
		}
		setenv(keys[k][1], val, 1);
	}
}

/* `topo up` for two hosts in shared mode; exports what the suites read. */
static int topology_up(const char *topo)
{
	char cmd[512], *buf = calloc(1, 1 << 16);
	size_t n = 0, r;
	struct json_object *t, *hosts, *name;
	FILE *p;
	int ok;

	snprintf(cmd, sizeof(cmd), "%s up --name %s --hosts a,b --mode shared%s", topo, TOPO_ID,
		 getenv("QPLAB_ALLOW_HOST_ROUTING") && !strcmp(getenv("QPLAB_ALLOW_HOST_ROUTING"), "1")
			 ? " --allow-host-routing-changes" : "");
	if (!buf || !(p = popen(cmd, "r"))) {
		free(buf);
		return -1;
	}
	while (n < (1 << 16) - 1 && (r = fread(buf + n, 1, (1 << 16) - 1 - n, p)) > 0)
		n += r;
	ok = pclose(p) == 0;
	t = json_tokener_parse(buf);
	free(buf);
	ok = ok && t && json_object_object_get_ex(t, "name", &name) &&
	     json_object_object_get_ex(t, "hosts", &hosts) && json_object_array_length(hosts) == 2;
	if (ok) {
		snprintf(topo_name, sizeof(topo_name), "%s", json_object_get_string(name));
		export_hosts(hosts);
		setenv("QPLAB_RDMA_TOPO", topo, 1);
		setenv("QPLAB_RDMA_TOPO_NAME", topo_name, 1);
	}
	json_object_put(t);
	return ok ? 0 : -1;
}

/* A failed up has unwound itself: only a topology topo named goes. */
static void topology_down(const char *topo)
{
	char cmd[512];

	if (!topo_name[0])
		return;
	snprintf(cmd, sizeof(cmd), "%s down --name %s", topo, topo_name);
	if (system(cmd) != 0)
		fprintf(stderr, "# rdma: topology teardown reported an error\n");
}

int main(int argc, char **argv)
{
	const char *topo = getenv("QPLAB_RDMA_TOPO");
	SRunner *sr = NULL;
	int own_topo = 0, failed;

	if (!topo)
		topo = "netns/topo";
	setvbuf(stdout, NULL, _IOLBF, 0);
	double t0 = now_s();

	if (!getenv("QPLAB_RDMA_DEVS")) {
		if (topology_up(topo)) {
			printf("Bail out! could not set up the two-host shared topology (%s)\n", topo);
			topology_down(topo);
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
		topology_down(topo);
	printf("# topology down in %.2f s\n", now_s() - t0);
	return failed ? 1 : 0;
}
