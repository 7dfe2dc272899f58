/* A host's `device` ("first", "second"): parsed strictly, passed to
 * netns/topo as --second, refused under "ablate": [], and skipped where
 * only the shared topology runs (one routing table for every host). */
#include <stdio.h>
#include <string.h>

#include "qphs.h"
#include "run/realise.h"
#include "unit.h"

static int parse_hosts(const char *hosts, const char *ablate, struct qplab_plan **p,
		       struct qplab_errors *errs)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{ \"description\": \"d\", \"source\": \"s\", %s \"hosts\": { %s },\n"
		 "  \"steps\": [ { \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\" } ],\n"
		 "  \"expect\": [ { \"hosts\": \"all\", \"daemon_alive\": true } ] }\n",
		 ablate, hosts);
	return qplab_scenario_parse("t.json", text, strlen(text), p, errs);
}

START_TEST(second_device_goes_to_topo_as_second_words)
{
	static const char *const netns[] = {"rxe_netns", NULL}, *const shared[] = {"netem", NULL};
	const char *argv[QPLAB_TOPO_ARGV_MAX];
	struct qplab_plan *p = NULL;
	char buf[1024], why[256];
	int n, found = 0;

	ck_assert_int_eq(parse_hosts("\"a\": { \"device\": \"first\" }, \"b\": { \"device\": \"second\" }",
				     "", &p, NULL),
			 0);
	ck_assert(!p->hosts[0].second_device);
	ck_assert(p->hosts[1].second_device);
	n = qplab_topo_up_args(p, "t1", "netns", argv, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	for (int i = 0; i + 1 < n; i++)
		if (!strcmp(argv[i], "--second")) {
			found++;
			ck_assert_str_eq(argv[i + 1], "b");
		}
	ck_assert_int_eq(found, 1);
	ck_assert_ptr_null(qplab_plan_skip_reason(p, netns, why, sizeof(why)));
	ck_assert_str_eq(qplab_plan_skip_reason(p, shared, why, sizeof(why)),
			 "host b: device \"second\" needs the netns topology (shared mode routes every "
			 "host with one table: its second subnet would be everyone's)");
	qplab_plan_free(p);
}
END_TEST

static const struct {
	const char *hosts, *ablate, *want;
} refused[] = {
	{"\"a\": {}, \"b\": { \"device\": \"third\" }", "", "t.json:1: device is \"first\" or \"second\""},
	{"\"a\": {}, \"b\": { \"device\": 2 }", "", "t.json:1: "},
	{"\"a\": {}, \"b\": { \"device\": \"second\" }", "\"ablate\": [],",
	 "declares that the scenario has no fault, but host b opens its second device"},
};

START_TEST(second_device_refuses_other_words_and_an_empty_ablate)
{
	struct qplab_plan *p = NULL;
	struct qplab_errors errs = {0};

	ck_assert_int_eq(parse_hosts(refused[_i].hosts, refused[_i].ablate, &p, &errs),
			 QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_null(p);
	ck_assert_uint_ge(errs.n, 1);
	ck_assert_msg(strstr(errs.msgs[0], refused[_i].want), "%s", errs.msgs[0]);
	unit_hit(QPHS_ERR_INVALID_ARGUMENT);
	qplab_errors_free(&errs);
}
END_TEST

Suite *suite_second_device(void)
{
	Suite *s = suite_create("second_device");
	TCase *tc = unit_tcase(s, "hosts", 10);

	tcase_add_test(tc, second_device_goes_to_topo_as_second_words);
	tcase_add_loop_test(tc, second_device_refuses_other_words_and_an_empty_ablate, 0,
			    (int)(sizeof(refused) / sizeof(refused[0])));
	return s;
}
