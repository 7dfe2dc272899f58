/* `qplab quirks`: probe the local RDMA driver directly, or (--kernel) the
 * lab VM's rxe on each kernel, one boot per kernel. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli/cli.h"
#include "qphs/config.h"
#include "quirks.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: qplab quirks [--device DEV] [--peer-device DEV] [--port N] [--gid-index N]\n"
		"                    [--peer-gid-index N] [--quirk NAME] [--qp-timeout N]\n"
		"                    [--deadline-ms MS] [--json] [--lab] [--kernel K]... [--out FILE]\n"
		"       qplab quirks --from FILE [--json]\n"
		"       qplab quirks --list-profiles\n"
		"\n"
		"Probes the RDMA driver directly (no handshake): one row per probe with the\n"
		"return value, errno name, QP state read back (ibv_query_qp), completion status\n"
		"(or none within the deadline) and time.  Every probe starts from fresh QPs.\n"
		"\n"
		"  --device DEV        the probed device (default: the first rxe device)\n"
		"  --peer-device DEV   where the peer QPs live (default: DEV; rxe loops back)\n"
		"  --port N            port (1)\n"
		"  --gid-index N       sgid index (default: automatic, the library's ranking)\n"
		"  --peer-gid-index N  the peer's (default: automatic)\n"
		"  --quirk NAME        probe through a quirk profile: shows what it fakes on top\n"
		"                      of the real driver; repeatable, 'none' = the real driver\n"
		"                      (one run, table or JSON line, each).  Profiles:");
	for (const char *const *p = qphs_quirk_profiles(); *p; p++)
		fprintf(out, " %s", *p);
	fprintf(out,
		"\n"
		"  --qp-timeout N      ACK timeout exponent of the unknown-QPN probes (14 = 67 ms,\n"
		"                      Mooncake's); retry_cnt 6 then ends after ~7 timeouts\n"
		"  --deadline-ms MS    longest wait for one completion (3000)\n"
		"  --json              one JSON line per run instead of the table (with --kernel:\n"
		"                      one JSON array of every run)\n"
		"  --lab               first build the lab's two-host topology (netns/topo, shared\n"
		"                      mode: two rxe devices on a veth pair), probe device a with\n"
		"                      its peer on b, tear it down; for inside the lab VM\n"
		"  --kernel K          run in the lab VM on kernel K (repeatable, or 'all'; 6.1,\n"
		"                      6.12, 7): one boot per kernel, implies --lab, prints one\n"
		"                      markdown matrix with a column per kernel/driver\n"
		"  --out FILE          with --kernel: also write every run's JSON (times\n"
		"                      included) to FILE, as one array\n"
		"  --from FILE         print the matrix of a FILE --out wrote; runs nothing\n"
		"\n"
		"Probes, in run order:");
	for (const char *const *p = qphs_probe_names(); *p; p++)
		fprintf(out, "%s%s", (p - qphs_probe_names()) % 4 ? " " : "\n  ", *p);
	fprintf(out, "\nExit: 0 the probes ran (refusals are results), 1 they could not run,\n"
		     "2 usage.  See docs/quirks.md.\n");
}

static int int_arg(const char *name, const char *v, int lo, int hi, int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi)
		return qplab_usage_error("quirks: %s wants an integer %d-%d, got '%s'", name, lo, hi, v);
	*out = (int)n;
	return 0;
}

static int parse(int argc, char **argv, struct quirks_args *a)
{
	memset(a, 0, sizeof(*a));
	qphs_probe_opts_init(&a->o);
	for (int i = 1; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0, takes = 1;

		if (!strcmp(k, "--json") || !strcmp(k, "--lab")) {
			*(k[2] == 'j' ? &a->json : &a->lab) = 1;
			continue;
		}
		if (!v)
			return qplab_usage_error("quirks: unknown option or missing value: '%s'", k);
		if (!strcmp(k, "--device"))
			a->o.device = v;
		else if (!strcmp(k, "--peer-device"))
			a->o.peer_device = v;
		else if (!strcmp(k, "--out"))
			a->out = v;
		else if (!strcmp(k, "--from"))
			a->from = v;
		else if (!strcmp(k, "--quirk") && a->nquirks < QUIRKS_MAX_COLUMNS)
			a->quirks[a->nquirks++] = strcmp(v, "none") ? v : "";
		else if (!strcmp(k, "--port"))
			rc = int_arg(k, v, 1, 255, &a->o.port);
		else if (!strcmp(k, "--gid-index"))
			rc = int_arg(k, v, 0, 255, &a->o.gid_index);
		else if (!strcmp(k, "--peer-gid-index"))
			rc = int_arg(k, v, 0, 255, &a->o.peer_gid_index);
		else if (!strcmp(k, "--qp-timeout"))
			rc = int_arg(k, v, 1, 31, &a->o.qp_timeout);
		else if (!strcmp(k, "--deadline-ms"))
			rc = int_arg(k, v, 1, 600000, &a->o.deadline_ms);
		else if (!strcmp(k, "--kernel") && a->nkernels < QUIRKS_MAX_COLUMNS)
			a->kernels[a->nkernels++] = (char *)v;
		else
			takes = 0;
		if (!takes)
			return qplab_usage_error("quirks: unknown option '%s' (or too many --kernel)", k);
		if (rc)
			return rc;
		i++;
	}
	return 0;
}

static int known_quirk(const char *q)
{
	if (!q[0])
		return 1;
	for (const char *const *p = qphs_quirk_profiles(); *p; p++)
		if (!strcmp(*p, q))
			return 1;
	return 0;
}

/* One run, printed as one JSON line or as the table. */
static int probe_one(const struct quirks_args *a)
{
	struct qphs_probe_info info;
	struct qphs_probe_row rows[QPHS_PROBE_MAX_ROWS];
	size_t n = 0;
	char err[512] = "";
	struct utsname u;
	int rc = qphs_probe_run(&a->o, &info, rows, QPHS_PROBE_MAX_ROWS, &n, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "qplab quirks: %s\n", err);
		return QPLAB_EXIT_FAIL;
	}
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	if (a->json) {
		json_object *doc = quirks_to_json(u.release, &info, rows, n);

		printf("%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
		json_object_put(doc);
	} else {
		quirks_table_print(stdout, u.release, &info, rows, n);
	}
	return QPLAB_EXIT_OK;
}

/* A run per --quirk (the real driver when none was given). */
static int probe_and_print(const struct quirks_args *a)
{
	struct quirks_args one = *a;
	int worst = QPLAB_EXIT_OK;

	for (size_t i = 0; i < (a->nquirks ? a->nquirks : 1); i++) {
		int rc;

		one.o.quirk = a->nquirks ? a->quirks[i] : NULL;
		if (i && !a->json)
			putchar('\n');
		rc = probe_one(&one);
		worst = rc > worst ? rc : worst;
	}
	return worst;
}

int cmd_quirks(int argc, char **argv)
{
	struct quirks_args a;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return QPLAB_EXIT_OK;
		}
		if (!strcmp(argv[i], "--list-profiles")) {
			for (const char *const *p = qphs_quirk_profiles(); *p; p++)
				puts(*p);
			return QPLAB_EXIT_OK;
		}
	}
	if ((rc = parse(argc, argv, &a)))
		return rc;
	for (size_t i = 0; i < a.nquirks; i++)
		if (!known_quirk(a.quirks[i]))
			return qplab_usage_error("quirks: unknown quirk profile '%s' (see --help)",
						 a.quirks[i]);
	if (a.from)
		return quirks_from_file(a.from, a.json);
	if (a.nkernels)
		return quirks_in_vms(argc, argv, &a);
	if (a.out)
		return qplab_usage_error("quirks: --out goes with --kernel");
	if (a.lab)
		return quirks_lab(&a, probe_and_print);
	return probe_and_print(&a);
}
