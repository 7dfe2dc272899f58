/* Which scenarios share a topology (run_topo_sig) and the order a run
 * takes so that each shared topology is built once (run_order_plans). */
#include <stdio.h>
#include <string.h>

#include "plan_testutil.h"
#include "run/run.h"
#include "unit.h"

static struct qplab_plan *plan_named(const char *id, const char *hosts, const char *steps)
{
	char text[4096];
	struct qplab_plan *p;

	snprintf(text, sizeof(text),
		 "{ \"description\": \"d\", \"source\": \"s\", \"hosts\": { %s },\n"
		 "  \"steps\": [ %s ], \"expect\": [ { \"hosts\": \"all\", \"daemon_alive\": true } ] }\n",
		 hosts, steps);
	p = plan_test_parse(text);
	snprintf(p->id, sizeof(p->id), "%s", id);
	return p;
}

#define TWO "\"a\": {}, \"b\": {}"
#define CONNECT "{ \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\" }"
#define DELETE "{ \"do\": \"delete_device\", \"host\": \"b\" }"

static const struct {
	const char *hosts_a, *hosts_b;
	int shared;
	const char *steps_b;  /* NULL: CONNECT */
} sigs[] = {
	{TWO, "\"a\": { \"mtu\": 9000 }, \"b\": { \"mtu\": 1500 }", 1, NULL},  /* MTUs are set in place */
	{TWO, "\"a\": { \"mtu\": 1280 }, \"b\": {}", 1, NULL},
	{TWO, "\"a\": { \"mtu\": 1200 }, \"b\": {}", 0, NULL},                 /* below IPv6's minimum: built */
	{TWO, "\"a\": {}, \"b\": {}, \"c\": {}", 0, NULL},
	/* host names are in the devices' names */
	{TWO, "\"a\": {}, \"c\": {}", 0, "{ \"do\": \"connect\", \"from\": \"a\", \"to\": \"c\" }"},
	{TWO, "\"a\": {}, \"b\": { \"ipv6\": true }", 0, NULL},
	{TWO, "\"a\": {}, \"b\": { \"addresses\": \"ipv6_only\" }", 0, NULL},
};

START_TEST(run_topo_sig_shares_only_what_can_be_set_in_place)
{
	struct qplab_plan *a = plan_named("x/a", sigs[_i].hosts_a, CONNECT);
	struct qplab_plan *b = plan_named("x/b", sigs[_i].hosts_b, sigs[_i].steps_b ? sigs[_i].steps_b : CONNECT);
	char sa[1024], sb[1024];

	run_topo_sig(a, "shared", sa, sizeof(sa));
	run_topo_sig(b, "shared", sb, sizeof(sb));
	ck_assert_msg((strcmp(sa, sb) == 0) == sigs[_i].shared, "'%s' vs '%s'", sa, sb);
	ck_assert_ptr_null(strstr(sa, "--name ID --hosts a,b --mtu"));
	qplab_plan_free(a);
	qplab_plan_free(b);
}
END_TEST

START_TEST(run_order_groups_by_topology_and_puts_device_deletion_last)
{
	/* catalogue order: 2 hosts, 3 hosts, 2 hosts deleting a device,
	 * 2 hosts at 9000, 3 hosts, 2 hosts */
	struct qplab_plan *p[] = {
		plan_named("a/two", TWO, CONNECT),
		plan_named("b/three", "\"a\": {}, \"b\": {}, \"c\": {}", CONNECT),
		plan_named("c/deletes", TWO, DELETE),
		plan_named("d/jumbo", "\"a\": { \"mtu\": 9000 }, \"b\": { \"mtu\": 9000 }", CONNECT),
		plan_named("e/three", "\"a\": {}, \"b\": {}, \"c\": {}", CONNECT),
		plan_named("f/two", TWO, CONNECT),
	};
	const char *want[] = {"a/two", "d/jumbo", "f/two", "c/deletes", "b/three", "e/three"};
	size_t n = sizeof(p) / sizeof(p[0]);

	run_order_plans(p, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(p[i]->id, want[i]);
	for (size_t i = 0; i < n; i++)
		qplab_plan_free(p[i]);
}
END_TEST

START_TEST(run_order_keeps_a_catalogue_of_one_shape_as_it_is)
{
	struct qplab_plan *p[] = {plan_named("z/1", TWO, CONNECT), plan_named("a/2", TWO, CONNECT),
				  plan_named("m/3", TWO, CONNECT)};

	run_order_plans(p, 3);
	ck_assert_str_eq(p[0]->id, "z/1");
	ck_assert_str_eq(p[1]->id, "a/2");
	ck_assert_str_eq(p[2]->id, "m/3");
	for (size_t i = 0; i < 3; i++)
		qplab_plan_free(p[i]);
	run_order_plans(NULL, 0);
}
END_TEST

Suite *suite_run_order(void)
{
	Suite *s = suite_create("run_order");
	TCase *tc = unit_tcase(s, "order", 5);

	tcase_add_loop_test(tc, run_topo_sig_shares_only_what_can_be_set_in_place, 0,
			    sizeof(sigs) / sizeof(sigs[0]));
	tcase_add_test(tc, run_order_groups_by_topology_and_puts_device_deletion_last);
	tcase_add_test(tc, run_order_keeps_a_catalogue_of_one_shape_as_it_is);
	return s;
}
