/* A host's `addresses` ("default", "ipv6_only", "none"): parsed strictly,
 * passed to netns/topo as --addrs, and skipped where only the shared
 * topology runs (it routes each pair by IPv4 source). */
#include <stdio.h>
#include <string.h>

#include "qphs.h"
#include "run/realise.h"
#include "unit.h"

static int parse_hosts(const char *hosts, struct qplab_plan **p, struct qplab_errors *errs)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{ \"description\": \"d\", \"source\": \"s\", \"hosts\": { %s },\n"
		 "  \"steps\": [ { \"do\": \"link_up\", \"host\": \"a\" } ],\n"
		 "  \"expect\": [ { \"hosts\": \"all\", \"daemon_alive\": true } ] }\n",
		 hosts);
	return qplab_scenario_parse("t.json", text, strlen(text), p, errs);
}

START_TEST(addresses_go_to_topo_as_addrs_words)
{
	static const char *const caps[] = {"rxe_netns", "ipv6", NULL};
	const char *argv[QPLAB_TOPO_ARGV_MAX];
	struct qplab_plan *p = NULL;
	char buf[1024], why[256];
	int n, found = 0;

	ck_assert_int_eq(parse_hosts("\"a\": { \"addresses\": \"default\" }, \"b\": { \"addresses\": "
				     "\"ipv6_only\" }, \"c\": { \"addresses\": \"none\" }",
				     &p, NULL),
			 0);
	ck_assert_str_eq(p->hosts[0].addresses, ""); /* "default" is no word at all */
	n = qplab_topo_up_args(p, "t1", "netns", argv, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	for (int i = 0; i + 1 < n; i++) {
		if (strcmp(argv[i], "--addrs"))
			continue;
		found++;
		ck_assert(!strcmp(argv[i + 1], "b=ipv6_only") || !strcmp(argv[i + 1], "c=none"));
	}
	ck_assert_int_eq(found, 2);
	ck_assert_ptr_null(qplab_plan_skip_reason(p, caps, why, sizeof(why)));
	qplab_plan_free(p);
}
END_TEST

static const struct {
	const char *hosts;
	const char *const *caps;
	const char *why; /* NULL: runs */
} skips[] = {
	{"\"a\": {}, \"b\": { \"addresses\": \"none\" }", (const char *const[]){"ipv6", NULL},
	 "host b: addresses \"none\" needs the netns topology"},
	{"\"a\": {}, \"b\": { \"addresses\": \"ipv6_only\" }", (const char *const[]){"netem", NULL},
	 "host b: addresses \"ipv6_only\" needs the netns topology"},
	{"\"a\": {}, \"b\": { \"addresses\": \"ipv6_only\" }", (const char *const[]){"rxe_netns", NULL}, NULL},
	{"\"a\": {}, \"b\": { \"addresses\": \"none\" }", (const char *const[]){"rxe_netns", NULL}, NULL},
};

START_TEST(addresses_skip_where_the_topology_cannot_build_them)
{
	struct qplab_plan *p = NULL;
	char why[256];
	const char *r;

	ck_assert_int_eq(parse_hosts(skips[_i].hosts, &p, NULL), 0);
	r = qplab_plan_skip_reason(p, skips[_i].caps, why, sizeof(why));
	if (skips[_i].why)
		ck_assert_str_eq(r ? r : "(runs)", skips[_i].why);
	else
		ck_assert_ptr_null(r);
	qplab_plan_free(p);
}
END_TEST

START_TEST(addresses_refuses_other_words)
{
	struct qplab_plan *p = NULL;
	struct qplab_errors errs = {0};

	ck_assert_int_eq(parse_hosts("\"a\": { \"addresses\": \"ipv4_only\" }", &p, &errs),
			 QPHS_ERR_INVALID_ARGUMENT);
	ck_assert_ptr_null(p);
	ck_assert_uint_ge(errs.n, 1);
	ck_assert_ptr_nonnull(strstr(errs.msgs[0], "t.json:1: addresses is \"default\", \"ipv6_only\" or \"none\""));
	unit_hit(QPHS_ERR_INVALID_ARGUMENT);
	qplab_errors_free(&errs);
}
END_TEST

Suite *suite_addresses(void)
{
	Suite *s = suite_create("addresses");
	TCase *tc = unit_tcase(s, "hosts", 10);

	tcase_add_test(tc, addresses_go_to_topo_as_addrs_words);
	tcase_add_loop_test(tc, addresses_skip_where_the_topology_cannot_build_them, 0,
			    (int)(sizeof(skips) / sizeof(skips[0])));
	tcase_add_test(tc, addresses_refuses_other_words);
	return s;
}
