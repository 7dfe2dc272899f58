/* `qplab run`'s command line and the scenario list it names. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan_testutil.h"
#include "qphs.h"
#include "cli/cli.h"
#include "run/run_args.h"
#include "unit.h"

START_TEST(run_args_defaults)
{
	struct qplab_run_opts o;
	char err[256];

	ck_assert_int_eq(plan_test_run_args("", &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.backend, QPLAB_BACKEND_AUTO);
	ck_assert_int_eq(o.jobs, 1);
	ck_assert_str_eq(o.out, "build/lab");
	ck_assert_uint_eq(o.npaths + o.nkernels + o.ntags, 0);
	ck_assert(!o.keep && !o.help);
}
END_TEST

START_TEST(run_args_every_option)
{
	struct qplab_run_opts o;
	char err[256];

	ck_assert_int_eq(plan_test_run_args("scenarios/mtu --backend vm --kernel 6.1 --kernel=6.12 --tag smoke "
			       "--jobs=2 --out /tmp/x --keep a.json -- --odd.json",
			       &o, err, sizeof(err)),
			 0);
	ck_assert_int_eq(o.backend, QPLAB_BACKEND_VM);
	ck_assert_uint_eq(o.nkernels, 2);
	ck_assert_str_eq(o.kernels[1], "6.12");
	ck_assert_str_eq(o.tags[0], "smoke");
	ck_assert_int_eq(o.jobs, 2);
	ck_assert_str_eq(o.out, "/tmp/x");
	ck_assert(o.keep);
	ck_assert_uint_eq(o.npaths, 3);
	ck_assert_str_eq(o.paths[2], "--odd.json");
	ck_assert_ptr_null(o.inventory);
	ck_assert_int_eq(plan_test_run_args("--backend hosts --inventory=/x/inv.json", &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.backend, QPLAB_BACKEND_HOSTS);
	ck_assert_str_eq(o.inventory, "/x/inv.json");
	ck_assert_int_eq(plan_test_run_args("--backend hosts-vm --kernel a=6.1 --kernel=b2=7.2.13+deb14-amd64",
					    &o, err, sizeof(err)), 0);
	ck_assert_int_eq(o.backend, QPLAB_BACKEND_HOSTS_VM);
	ck_assert_str_eq(qplab_backend_name(o.backend), "hosts-vm");
	ck_assert_uint_eq(o.nkernels, 2);
	ck_assert_str_eq(o.kernels[1], "b2=7.2.13+deb14-amd64");
	ck_assert_ptr_null(o.inventory);
}
END_TEST

static const struct {
	const char *line, *says;
} bad_args[] = {
	{"--backend hosts", "needs --inventory FILE"},
	{"--inventory inv.json", "goes with --backend hosts"},
	{"--backend hosts --inventory i.json --kernel 7", "--kernel is the vm backend's"},
	{"--backend hosts --inventory i.json --jobs 2", "one scenario at a time"},
	{"--backend hosts --inventory=", "--inventory needs a file"},
	{"--backend cloud", "one of auto, netns, shared, vm, hosts, hosts-vm"},
	{"--backend hosts-vm", "needs two --kernel NAME=K"},
	{"--backend hosts-vm --kernel a=6.1", "needs two --kernel NAME=K"},
	{"--backend hosts-vm --kernel a=6.1 --kernel b=7 --kernel c=7", "needs two --kernel NAME=K"},
	{"--backend hosts-vm --kernel 6.1 --kernel b=7", "--kernel '6.1': hosts-vm wants NAME=K"},
	{"--backend hosts-vm --kernel a=6.1 --kernel B=7", "--kernel 'B=7': hosts-vm wants NAME=K"},
	{"--backend hosts-vm --kernel a=6.1 --kernel b=", "--kernel 'b=': hosts-vm wants NAME=K"},
	{"--backend hosts-vm --kernel a=6.1 --kernel toolongname=7", "hosts-vm wants NAME=K"},
	{"--backend hosts-vm --kernel a=6.1 --kernel a=7", "two guests of one name"},
	{"--backend hosts-vm --kernel a=6.1 --kernel b=7 --jobs 2", "one scenario at a time"},
	{"--backend hosts-vm --kernel a=6.1 --kernel b=7 --inventory i.json", "goes with --backend hosts"},
	{"--jobs 0", "1 to 64"},
	{"--jobs two", "1 to 64"},
	{"--out", "needs a value"},
	{"--frobnicate", "unknown option '--frobnicate'"},
	{"--keep=yes", "unknown option"},
};

START_TEST(run_args_rejects_bad_options)
{
	struct qplab_run_opts o;
	char err[256] = "";

	ck_assert_int_eq(plan_test_run_args(bad_args[_i].line, &o, err, sizeof(err)), QPHS_ERR_INVALID_ARGUMENT);
	unit_hit(QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_msg(strstr(err, bad_args[_i].says), "%s: '%s'", bad_args[_i].line, err);
}
END_TEST

static const struct {
	const char *in;
	double want; /* < 0: refused */
	const char *says;
} time_mults[] = {
	{NULL, 1, NULL},
	{"1", 1, NULL},
	{"2.5", 2.5, NULL},
	{"100", 100, NULL},
	{"", -1, "is not a number"},
	{"ten", -1, "is not a number"},
	{"3x", -1, "is not a number"},
	{"nan", -1, "is not a number"},
	{"0", -1, "is out of range (accepted: 1 to 100)"},
	{"0.5", -1, "is out of range"},
	{"-4", -1, "is out of range"},
	{"100.5", -1, "is out of range"},
	{"inf", -1, "is out of range"},
	{"1e999", -1, "is out of range"},
};

START_TEST(time_multiplier_is_checked)
{
	char err[256] = "";
	double v = -7;
	int rc = qplab_time_multiplier_parse(time_mults[_i].in, &v, err, sizeof(err));

	if (time_mults[_i].want < 0) {
		ck_assert_int_eq(rc, -1);
		ck_assert_msg(strstr(err, time_mults[_i].says), "%s: '%s'", time_mults[_i].in, err);
		ck_assert_msg(strstr(err, "QPLAB_TIME_MULTIPLIER="), "%s", err);
		ck_assert(v == 1);
	} else {
		ck_assert_int_eq(rc, 0);
		ck_assert(v == time_mults[_i].want);
	}
}
END_TEST

START_TEST(scaled_deadlines_never_wrap)
{
	ck_assert_int_eq(qplab_scaled_ms(1500, 1), 1500);
	ck_assert_int_eq(qplab_scaled_ms(1500, 2.5), 3750);
	ck_assert_int_eq(qplab_scaled_ms(0, 100), 0);
	ck_assert_int_eq(qplab_scaled_ms(-5, 3), 0);
	ck_assert_int_eq(qplab_scaled_ms(1999999999L, 100), QPLAB_MAX_DEADLINE_MS);
	ck_assert_int_eq(qplab_scaled_ms(20000000L, 100), QPLAB_MAX_DEADLINE_MS);
	ck_assert_int_eq(qplab_scaled_ms(19999999L, 100), 1999999900L);
}
END_TEST

START_TEST(run_jobs_refused_in_shared_mode_only)
{
	struct qplab_run_opts o;
	char err[256];

	ck_assert_int_eq(plan_test_run_args("--jobs 4", &o, err, sizeof(err)), 0);
	err[0] = '\0';
	ck_assert_int_eq(qplab_run_check_jobs(&o, "netns", err, sizeof(err)), 0);
	/* Not known yet (vm backend, before the boot): the VM decides. */
	ck_assert_int_eq(qplab_run_check_jobs(&o, NULL, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(qplab_run_check_jobs(&o, "shared", err, sizeof(err)), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(err, "--jobs 4"));
	ck_assert_ptr_nonnull(strstr(err, "one routing table"));
	o.jobs = 1;
	ck_assert_int_eq(qplab_run_check_jobs(&o, "shared", err, sizeof(err)), 0);
}
END_TEST

static const char GOOD[] = "{ \"description\": \"d\", \"source\": \"s\", \"tags\": [%s],\n"
			   "  \"hosts\": { \"a\": {} }, \"steps\": [ { \"do\": \"link_up\", \"host\": \"a\" } ],\n"
			   "  \"expect\": [ { \"host\": \"a\", \"daemon_alive\": true } ] }\n";

static void write_file(const char *path, const char *tags)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fprintf(f, GOOD, tags);
	fclose(f);
}

START_TEST(catalogue_walks_directories_sorted_and_filters_tags)
{
	char dir[128], p[256];
	struct qplab_catalogue cat;
	struct qplab_errors errs = {0};
	const char *paths[1], *tags[] = {"smoke"};

	snprintf(dir, sizeof(dir), "/tmp/qplab-unit-cat-%d", (int)getpid());
	mkdir(dir, 0755);
	snprintf(p, sizeof(p), "%s/mtu", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/basic", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/mtu/peer-smaller.json", dir);
	write_file(p, "\"smoke\"");
	snprintf(p, sizeof(p), "%s/basic/connect.json", dir);
	write_file(p, "");
	snprintf(p, sizeof(p), "%s/basic/.hidden.json", dir);
	write_file(p, "\"smoke\"");
	snprintf(p, sizeof(p), "%s/basic/notes.txt", dir);
	write_file(p, "");
	paths[0] = dir;

	ck_assert_int_eq(qplab_catalogue_load(paths, 1, NULL, 0, &cat, &errs), 0);
	ck_assert_uint_eq(cat.n, 2);
	ck_assert_str_eq(cat.plans[0]->id, "basic/connect");
	ck_assert_str_eq(cat.plans[1]->id, "mtu/peer-smaller");
	qplab_catalogue_free(&cat);

	ck_assert_int_eq(qplab_catalogue_load(paths, 1, tags, 1, &cat, &errs), 0);
	ck_assert_uint_eq(cat.n, 1);
	ck_assert_uint_eq(cat.filtered, 1);
	ck_assert_str_eq(cat.plans[0]->id, "mtu/peer-smaller");
	qplab_catalogue_free(&cat);
	ck_assert_uint_eq(errs.n, 0);

	/* A directory given with a trailing slash names its topic all the
	 * same (it once gave the id "/peer-smaller"). */
	snprintf(p, sizeof(p), "%s/mtu/", dir);
	paths[0] = p;
	ck_assert_int_eq(qplab_catalogue_load(paths, 1, NULL, 0, &cat, &errs), 0);
	ck_assert_uint_eq(cat.n, 1);
	ck_assert_str_eq(cat.plans[0]->id, "mtu/peer-smaller");
	qplab_catalogue_free(&cat);
	ck_assert_uint_eq(errs.n, 0);

	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* *.json files directly in dir. */
static size_t json_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		n += e->d_name[0] != '.' && len > 5 && !strcmp(e->d_name + len - 5, ".json");
	}
	closedir(d);
	return n;
}

START_TEST(catalogue_reports_every_bad_file_and_runs_nothing)
{
	struct qplab_catalogue cat;
	struct qplab_errors errs = {0};
	const char *paths[] = {"tests/lab", "tests/lab/no-such.json"};

	ck_assert_int_eq(qplab_catalogue_load(paths, 2, NULL, 0, &cat, &errs), QPHS_ERR_INVALID_ARGUMENT);
	/* every other file of tests/lab parses (helpers add self-tests there) */
	ck_assert_uint_eq(cat.n, json_files("tests/lab") - 4);
	ck_assert_uint_eq(errs.n, 5);
	ck_assert_str_eq(errs.msgs[0], "tests/lab/no-such.json: No such file or directory");
	ck_assert_ptr_nonnull(strstr(errs.msgs[1], "tests/lab/ablate-false-no-fault.json:"));
	ck_assert_ptr_nonnull(strstr(errs.msgs[2], "tests/lab/bad-syntax.json:"));
	ck_assert_ptr_nonnull(strstr(errs.msgs[3], "tests/lab/duplicate-key.json:"));
	ck_assert_ptr_nonnull(strstr(errs.msgs[4], "tests/lab/unknown-key.json:"));
	qplab_catalogue_free(&cat);
	qplab_errors_free(&errs);
}
END_TEST

START_TEST(catalogue_refuses_one_id_twice)
{
	struct qplab_catalogue cat;
	struct qplab_errors errs = {0};
	const char *paths[] = {"tests/lab/wrong-expectation.json", "tests/lab/wrong-expectation.json"};

	ck_assert_int_eq(qplab_catalogue_load(paths, 2, NULL, 0, &cat, &errs), QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_ptr_nonnull(strstr(errs.msgs[0], "scenario id lab/wrong-expectation is also"));
	qplab_catalogue_free(&cat);
	qplab_errors_free(&errs);
}
END_TEST

Suite *suite_run_args(void)
{
	Suite *s = suite_create("run_args");
	TCase *tc = unit_tcase(s, "args", 10);

	tcase_add_test(tc, run_args_defaults);
	tcase_add_test(tc, run_args_every_option);
	tcase_add_loop_test(tc, run_args_rejects_bad_options, 0, sizeof(bad_args) / sizeof(bad_args[0]));
	tcase_add_test(tc, run_jobs_refused_in_shared_mode_only);
	tcase_add_loop_test(tc, time_multiplier_is_checked, 0, sizeof(time_mults) / sizeof(time_mults[0]));
	tcase_add_test(tc, scaled_deadlines_never_wrap);
	tc = unit_tcase(s, "catalogue", 10);
	tcase_add_test(tc, catalogue_walks_directories_sorted_and_filters_tags);
	tcase_add_test(tc, catalogue_reports_every_bad_file_and_runs_nothing);
	tcase_add_test(tc, catalogue_refuses_one_id_twice);
	return s;
}
