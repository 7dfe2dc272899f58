/* netns/topo's undo registries as the runner reads them (run/registry.h),
 * and the constants the C side takes from netns/lab.conf. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_conf.h"
#include "run/registry.h"
#include "scenario/scenario.h"
#include "unit.h"

/* What topo up writes for two shared-mode hosts (abridged). */
static const char shared_reg[] =
	"# qplab undo registry t1jws\n"
	"owner 148\n"
	"pid 388\n"
	"undo rm -f /run/qplab/t1jws.state /run/qplab/t1jws.json\n"
	"obj link qlt1jws-1\n"
	"obj link qlt1jws-2\n"
	"undo ip link del qlt1jws-1\n"
	"commit\n"
	"undo lab_sysctl net.ipv4.conf.all.accept_local 0\n"
	"commit\n"
	"obj localrule4 100\n"
	"undo ip -4 rule del pref 100 lookup local\n"
	"obj table4 19901\n"
	"undo ip -4 route flush table 19901\n"
	"commit\n"
	"obj rxe qlt1jws-a\n"
	"undo rdma link del qlt1jws-a\n"
	"done rdma link del qlt1jws-a\n"
	"commit\n";

START_TEST(registry_objects_and_owner_are_read_in_order)
{
	struct run_reg *r = malloc(sizeof(*r));
	static const char *const want[][2] = {{"link", "qlt1jws-1"}, {"link", "qlt1jws-2"},
					      {"localrule4", "100"}, {"table4", "19901"},
					      {"rxe", "qlt1jws-a"}};

	ck_assert_int_eq(run_reg_parse(shared_reg, r), 0);
	ck_assert_int_eq(r->owner, 148);
	ck_assert_int_eq(r->pid, 388);
	ck_assert_uint_eq(r->nobjs, 5);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_str_eq(r->objs[i].kind, want[i][0]);
		ck_assert_str_eq(r->objs[i].name, want[i][1]);
	}
	ck_assert(!r->truncated);
	ck_assert(run_reg_names(r, "table4", "19901"));
	ck_assert(!run_reg_names(r, "table6", "19901"));
	ck_assert(!run_reg_names(r, "link", "qlt1jws"));
	free(r);
}
END_TEST

/* Not a registry, and obj lines the runner cannot hold: refused, not
 * half read. */
static const char *const bad[] = {
	"",
	"owner 1\nobj netns qlx-a\n",
	"# qplab undo registry x\nobj netns\n",
	"# qplab undo registry x\nobj netns qlx a\n",
	"# qplab undo registry x\nobj netns " "qlxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
	"# qplab undo registry x\nobj averyveryverylongkind qlx-a\n",
};

START_TEST(registry_refuses_what_is_not_one)
{
	struct run_reg *r = malloc(sizeof(*r));

	ck_assert_int_eq(run_reg_parse(bad[_i], r), -1);
	free(r);
}
END_TEST

START_TEST(registry_without_owner_or_end_of_line_still_reads)
{
	struct run_reg *r = malloc(sizeof(*r));

	ck_assert_int_eq(run_reg_parse("# qplab undo registry p\npid x\nobj netns ql0probeabc-ns", r), 0);
	ck_assert_int_eq(r->owner, -1);
	ck_assert_int_eq(r->pid, -1);
	ck_assert_uint_eq(r->nobjs, 1);
	ck_assert_str_eq(r->objs[0].name, "ql0probeabc-ns");
	free(r);
}
END_TEST

START_TEST(registry_with_more_objects_than_it_holds_says_so)
{
	struct run_reg *r = malloc(sizeof(*r));
	size_t len = 64 + (RUN_REG_MAX_OBJS + 2) * 32;
	char *text = malloc(len), *p = text;

	p += sprintf(p, "# qplab undo registry big\n");
	for (int i = 0; i < RUN_REG_MAX_OBJS + 2; i++)
		p += sprintf(p, "obj link qlbig-%d\n", i);
	ck_assert_int_eq(run_reg_parse(text, r), 0);
	ck_assert_uint_eq(r->nobjs, RUN_REG_MAX_OBJS);
	ck_assert(r->truncated);
	free(text);
	free(r);
}
END_TEST

/* The names are looked up where `ip` would: lo is a link here, a
 * namespace of that name is not. */
START_TEST(registry_counts_present_objects_and_reports_unregistered_ones)
{
	struct run_reg *r = malloc(sizeof(*r));
	char list[4096];

	ck_assert_int_eq(run_reg_parse("# qplab undo registry t\nobj link lo\nobj netns qlnosuch-a\n"
				       "obj rxe qlnosuch-a\nobj table4 19901\n", r), 0);
	ck_assert_int_eq(run_reg_present(r), 1);
	ck_assert_int_ge(run_reg_foreign("lo", list, sizeof(list)), 1);
	ck_assert_ptr_nonnull(strstr(list, "link lo"));
	ck_assert_int_eq(run_reg_foreign("qlnosuchprefix", list, sizeof(list)), 0);
	ck_assert_str_eq(list, "");
	free(r);
}
END_TEST

/* The generated header says what netns/lab.conf says, as the shell reads
 * it (the scripts source the file). */
START_TEST(lab_conf_header_matches_the_shell)
{
	char want[512], got[512] = "";
	FILE *p = popen("bash -c '. netns/lab.conf && printf \"%s %s %s %s %s %s\" \"$QPLAB_NET4\" "
			"\"$QPLAB_NET6\" \"$QPLAB_TABLE_BASE\" \"$QPLAB_MAX_HOSTS\" \"$QPLAB_PREFIX\" "
			"\"$QPLAB_STATE_DIR\"'", "r");

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(fgets(got, sizeof(got), p));
	ck_assert_int_eq(pclose(p), 0);
	snprintf(want, sizeof(want), "%s %s %d %d %s %s", QPLAB_LAB_NET4, QPLAB_LAB_NET6, QPLAB_LAB_TABLE_BASE,
		 QPLAB_LAB_MAX_HOSTS, QPLAB_LAB_PREFIX, QPLAB_LAB_STATE_DIR);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(QPLAB_MAX_HOSTS, QPLAB_LAB_MAX_HOSTS);
}
END_TEST

Suite *suite_registry(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = unit_tcase(s, "registry", 5);

	tcase_add_test(tc, registry_objects_and_owner_are_read_in_order);
	tcase_add_loop_test(tc, registry_refuses_what_is_not_one, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, registry_without_owner_or_end_of_line_still_reads);
	tcase_add_test(tc, registry_with_more_objects_than_it_holds_says_so);
	tcase_add_test(tc, registry_counts_present_objects_and_reports_unregistered_ones);
	tcase_add_test(tc, lab_conf_header_matches_the_shell);
	return s;
}
