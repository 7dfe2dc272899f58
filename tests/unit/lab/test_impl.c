/* Mooncake hosts in the runner: "placements" and "impl": "mooncake" in
 * scenario files, `--impl` and `--placements`, the plans a run makes of
 * them, the SKIP reasons of what a Mooncake host cannot do, its port, and
 * the `log` fact of a Mooncake report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan_testutil.h"
#include "qphs.h"
#include "run/agent_msg.h"
#include "run/impl.h"
#include "run/run_args.h"
#include "unit.h"

static const char BASE[] =
	"{ \"description\": \"d\", \"source\": \"s\", %s\n"
	"  \"hosts\": { \"a\": {}, \"b\": { %s } },\n"
	"  \"steps\": [ { \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\" } %s ],\n"
	"  \"expect\": [ { \"host\": \"a\", \"code\": \"OK\" } ] }\n";

static char *text_of(const char *top, const char *b, const char *steps)
{
	static char t[4096];

	snprintf(t, sizeof(t), BASE, top, b, steps);
	return t;
}

START_TEST(impl_placements_are_host_sets)
{
	struct qplab_plan *p = plan_test_parse(text_of("\"placements\": [[\"b\"], [\"a\"], [\"a\", \"b\"]],",
						       "\"impl\": \"mooncake\"", ""));

	ck_assert_uint_eq(p->nplacements, 3);
	ck_assert_uint_eq(p->placements[0], 2u);
	ck_assert_uint_eq(p->placements[1], 1u);
	ck_assert_uint_eq(p->placements[2], 3u);
	ck_assert_str_eq(p->hosts[1].impl, "mooncake");
	ck_assert_str_eq(p->hosts[1].impl_from, "");
	qplab_plan_free(p);
}
END_TEST

static const struct {
	const char *top, *says;
} bad_placements[] = {
	{"\"placements\": [[\"c\"]],", "unknown host \"c\""},
	{"\"placements\": [[]],", "a placement is a non-empty array"},
	{"\"placements\": [\"b\"],", "a placement is a non-empty array"},
	{"\"placements\": [[\"b\", \"b\"]],", "host \"b\" twice in one placement"},
	{"\"placements\": [[\"a\", \"b\"], [\"b\", \"a\"]],", "the same placement twice"},
	{"\"placements\": [[1]],", "a placement lists host names"},
	{"\"placements\": {\"b\": 1},", "must be an array"},
};

START_TEST(impl_bad_placements_are_errors_at_their_line)
{
	struct qplab_plan *p = NULL;
	struct qplab_errors errs = {0};
	const char *t = text_of(bad_placements[_i].top, "", "");

	ck_assert_int_lt(qplab_scenario_parse("t.json", t, strlen(t), &p, &errs), 0);
	ck_assert_ptr_null(p);
	ck_assert_uint_ge(errs.n, 1);
	ck_assert_msg(strstr(errs.msgs[0], bad_placements[_i].says), "%s", errs.msgs[0]);
	ck_assert_msg(!strncmp(errs.msgs[0], "t.json:1: ", 10), "%s", errs.msgs[0]);
	qplab_errors_free(&errs);
}
END_TEST

START_TEST(impl_log_assertion_matches_the_joined_lines)
{
	const char *t = "{ \"description\": \"d\", \"source\": \"s\", \"hosts\": { \"a\": {} },\n"
			"  \"steps\": [ { \"do\": \"snapshot\", \"name\": \"s\" } ],\n"
			"  \"expect\": [ { \"host\": \"a\", \"log\": { \"contains\": \"Handshake rejected by\","
			" \"regex\": \"^E.*\\nW\" } } ] }\n";
	struct qplab_plan *p = plan_test_parse(t);
	struct qplab_facts f;

	qplab_facts_init(&f);
	ck_assert(!qplab_assert_eval(&p->expect[0].a, &f, 1, NULL, NULL)); /* not collected */
	qplab_facts_set(&f.log, "E1 Handshake rejected by x: y\nW2 later");
	ck_assert(qplab_assert_eval(&p->expect[0].a, &f, 1, NULL, NULL));
	qplab_facts_set(&f.log, "W2 later\nE1 Handshake rejected by x: y");
	ck_assert(!qplab_assert_eval(&p->expect[0].a, &f, 1, NULL, NULL));
	qplab_facts_free(&f);
	qplab_plan_free(p);
}
END_TEST

START_TEST(impl_run_flags)
{
	struct qplab_run_opts o;
	char err[256];

	ck_assert_int_eq(plan_test_run_args("--impl b=mooncake --impl=a=mooncake-compat --placements "
				    "--mooncake-agent /x/agent", &o, err, sizeof(err)), 0);
	ck_assert_uint_eq(o.nimpls, 2);
	ck_assert_str_eq(o.impls[0].host, "b");
	ck_assert_str_eq(o.impls[0].name, "mooncake");
	ck_assert_str_eq(o.impls[1].host, "a");
	ck_assert_str_eq(o.impls[1].name, "mooncake-compat");
	ck_assert(o.placements);
	ck_assert_str_eq(o.mooncake_agent, "/x/agent");
	ck_assert_int_ne(plan_test_run_args("--impl b", &o, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "--impl 'b': HOST=NAME, NAME one of qplab, mooncake-compat, mooncake");
	ck_assert_int_ne(plan_test_run_args("--impl b=moon", &o, err, sizeof(err)), 0);
	ck_assert_int_ne(plan_test_run_args("--impl =mooncake", &o, err, sizeof(err)), 0);
	ck_assert_int_ne(plan_test_run_args("--mooncake-agent=", &o, err, sizeof(err)), 0);
}
END_TEST

static void write_scenario(const char *path, const char *top)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text_of(top, "", ""), f);
	fclose(f);
}

/* Loads dir's two scenarios (basic/p with placements, basic/q without)
 * and applies the run's implementation settings. */
static int load(const char *dir, const char *args, struct qplab_catalogue *cat, struct qplab_errors *errs)
{
	struct qplab_run_opts o;
	const char *paths[1] = {dir};
	char err[256];

	ck_assert_int_eq(plan_test_run_args(args, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(qplab_catalogue_load(paths, 1, NULL, 0, cat, errs), 0);
	return qplab_catalogue_impls(cat, &o, errs);
}

START_TEST(impl_a_run_makes_one_plan_per_placement)
{
	char dir[128], p[256], cmd[200];
	struct qplab_catalogue cat;
	struct qplab_errors errs = {0};

	snprintf(dir, sizeof(dir), "/tmp/qplab-unit-impl-%d", (int)getpid());
	snprintf(p, sizeof(p), "%s/basic", dir);
	mkdir(dir, 0755);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/basic/p.json", dir);
	write_scenario(p, "\"placements\": [[\"b\"], [\"a\", \"b\"]],");
	snprintf(p, sizeof(p), "%s/basic/q.json", dir);
	write_scenario(p, "");

	/* Without --placements the file's implementations run. */
	ck_assert_int_eq(load(dir, "", &cat, &errs), 0);
	ck_assert_uint_eq(cat.n, 2);
	ck_assert_str_eq(cat.plans[0]->id, "basic/p");
	ck_assert_str_eq(cat.plans[0]->hosts[1].impl, "qplab");
	qplab_catalogue_free(&cat);

	ck_assert_int_eq(load(dir, "--placements", &cat, &errs), 0);
	ck_assert_uint_eq(cat.n, 3);
	ck_assert_str_eq(cat.plans[0]->id, "basic/p@mooncake=a,b");
	ck_assert_str_eq(cat.plans[0]->hosts[0].impl, "mooncake");
	ck_assert_str_eq(cat.plans[0]->hosts[1].impl, "mooncake");
	ck_assert_str_eq(cat.plans[1]->id, "basic/p@mooncake=b");
	ck_assert_str_eq(cat.plans[1]->hosts[0].impl, "qplab");
	ck_assert_str_eq(cat.plans[1]->hosts[1].impl, "mooncake");
	ck_assert_str_eq(cat.plans[2]->id, "basic/q");
	qplab_catalogue_free(&cat);

	/* --impl overrides every plan that has the host, on top. */
	ck_assert_int_eq(load(dir, "--placements --impl a=mooncake-compat", &cat, &errs), 0);
	ck_assert_uint_eq(cat.n, 3);
	ck_assert_str_eq(cat.plans[0]->id, "basic/p@mooncake-compat=a@mooncake=b");
	ck_assert_str_eq(cat.plans[2]->id, "basic/q@mooncake-compat=a");
	qplab_catalogue_free(&cat);

	ck_assert_int_ne(load(dir, "--impl z=mooncake", &cat, &errs), 0);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msgs[0], "--impl z=mooncake: no scenario of this run has a host z");
	qplab_catalogue_free(&cat);
	qplab_errors_free(&errs);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static const struct {
	const char *b, *steps, *says; /* says NULL: it runs */
} skips[] = {
	{"\"impl\": \"mooncake\"", "", NULL},
	{"\"impl\": \"mooncake\", \"env\": { \"MC_MTU\": 1024 }", "", NULL},
	{"\"impl\": \"mooncake\", \"agent\": { \"ready_ack\": false }", "",
	 "host b runs Mooncake, which has no agent option ready_ack"},
	{"\"impl\": \"mooncake\", \"fault\": { \"name\": \"stall\" }", "", "which has no daemon fault stall"},
	{"\"impl\": \"mooncake\", \"ipv6\": true", "", "over IPv6"},
	{"\"impl\": \"mooncake\"", ", { \"do\": \"disconnect\", \"from\": \"b\", \"to\": \"a\" }",
	 "line 3: disconnect step on a Mooncake host"},
	{"\"impl\": \"mooncake\"", ", { \"do\": \"disconnect\", \"from\": \"a\", \"to\": \"b\" }", NULL},
	{"\"impl\": \"mooncake\"", ", { \"do\": \"connect\", \"from\": \"b\", \"to\": \"a\", \"to_device\": \"mlx5_9\" }",
	 "to_device"},
	{"\"impl\": \"mooncake\"", ", { \"do\": \"raw_frame\", \"from\": \"b\", \"to\": \"a\", \"kind\": \"stale_ack\" }",
	 "stale_ack"},
	{"\"impl\": \"mooncake\"", ", { \"do\": \"raw_frame\", \"to\": \"b\", \"kind\": \"zero-length\" }", NULL},
	/* a named bad frame from a Mooncake host: its adapter sends the bytes */
	{"\"impl\": \"mooncake\"", ", { \"do\": \"raw_frame\", \"from\": \"b\", \"to\": \"a\", \"kind\": \"garbage\" }", NULL},
	{"\"impl\": \"mooncake\"",
	 ", { \"do\": \"wait\", \"host\": \"b\", \"until\": { \"endpoint\": \"NONE\" }, \"deadline_ms\": 10 }",
	 "its endpoint status"},
	{"\"impl\": \"mooncake\"",
	 ", { \"do\": \"wait\", \"host\": \"b\", \"until\": { \"daemon_alive\": true }, \"deadline_ms\": 10 }", NULL},
	{"\"impl\": \"mooncake-compat\", \"agent\": { \"ready_ack\": false }",
	 ", { \"do\": \"disconnect\", \"from\": \"b\", \"to\": \"a\" }", NULL},
};

START_TEST(impl_what_a_mooncake_host_cannot_do_is_a_skip)
{
	struct qplab_plan *p = plan_test_parse(text_of("", skips[_i].b, skips[_i].steps));
	char buf[300];
	const char *why = qplab_impl_skip_reason(p, buf, sizeof(buf));

	if (!skips[_i].says)
		ck_assert_msg(!why, "%s", why);
	else
		ck_assert_msg(why && strstr(why, skips[_i].says), "%s", why ? why : "(runs)");
	qplab_plan_free(p);
}
END_TEST

START_TEST(impl_mooncake_ports_differ_only_in_a_shared_namespace_and_move_on)
{
	struct qplab_plan *p = plan_test_parse(text_of("", "\"impl\": \"mooncake\"", ""));

	ck_assert(qplab_host_is_mooncake(p, 1));
	ck_assert(!qplab_host_is_mooncake(p, 0));
	ck_assert(!qplab_host_is_mooncake(p, 5));
	ck_assert_int_eq(qplab_host_port(p, 0, true, 0), 12001);
	ck_assert_int_eq(qplab_host_port(p, 1, true, 3), 12001);
	ck_assert_int_eq(qplab_host_port(p, 0, false, 0), 12001);
	ck_assert_int_eq(qplab_host_port(p, 1, false, 0), 12102);
	/* The next scenario's topology: another port (TIME_WAIT holds the
	 * last one), the same for every start within it; after 100 back. */
	ck_assert_int_eq(qplab_host_port(p, 1, false, 1), 12102 + QPLAB_MAX_HOSTS);
	ck_assert_int_eq(qplab_host_port(p, 1, false, 1), qplab_host_port(p, 1, false, 1));
	ck_assert_int_eq(qplab_host_port(p, 1, false, 99), 12102 + 99 * QPLAB_MAX_HOSTS);
	ck_assert_int_eq(qplab_host_port(p, 1, false, 100), 12102);
	qplab_plan_free(p);
}
END_TEST

START_TEST(impl_a_mooncake_report_maps_onto_facts)
{
	static const char line[] =
		"{\"v\":2,\"type\":\"reply\",\"id\":4,\"op\":\"report\",\"ok\":true,\"code\":\"OK\",\"error\":\"\","
		"\"device_qps\":[{\"qpn\":17,\"state\":\"RTS\"},{\"qpn\":18,\"state\":\"RTS\"}],\"gid_index\":1,"
		"\"last\":{\"code\":\"ERR_METADATA\",\"error\":\"Handshake rejected by x: y\",\"where\":null},"
		"\"transfer\":{\"op\":\"READ\",\"status\":\"FAILED\"},\"time_ms\":{\"total\":9},"
		"\"log\":[\"E1 one\",\"W2 two\"],\"log_lost\":0,\"counters\":{\"connects\":1},"
		"\"not_reported\":{\"endpoints\":\"n\"}}";
	struct qplab_agent_msg m;
	struct qplab_facts f;
	char err[200];

	qplab_facts_init(&f);
	ck_assert_int_eq(qplab_agent_parse_line(line, strlen(line), &m, err, sizeof(err)), 0);
	ck_assert_int_eq(qplab_facts_from_reply(&m, "p", &f, err, sizeof(err)), 0);
	ck_assert_str_eq(f.log, "E1 one\nW2 two");
	ck_assert_int_eq(f.nqp, 2);
	ck_assert_str_eq(f.code, "ERR_METADATA");
	ck_assert_int_eq(f.endpoints, -1); /* not collected: a Mooncake host cannot tell */
	ck_assert_str_eq(f.endpoint, "");
	ck_assert_ptr_null(f.reply_received);
	ck_assert_int_eq(f.time_ms[QPLAB_TIME_TOTAL], 9);
	qplab_agent_msg_free(&m);
	qplab_facts_free(&f);
}
END_TEST

Suite *suite_impl(void)
{
	Suite *s = suite_create("impl");
	TCase *tc = unit_tcase(s, "impl", 10);

	tcase_add_test(tc, impl_placements_are_host_sets);
	tcase_add_loop_test(tc, impl_bad_placements_are_errors_at_their_line, 0,
			    sizeof(bad_placements) / sizeof(bad_placements[0]));
	tcase_add_test(tc, impl_log_assertion_matches_the_joined_lines);
	tcase_add_test(tc, impl_run_flags);
	tcase_add_test(tc, impl_a_run_makes_one_plan_per_placement);
	tcase_add_loop_test(tc, impl_what_a_mooncake_host_cannot_do_is_a_skip, 0, sizeof(skips) / sizeof(skips[0]));
	tcase_add_test(tc, impl_mooncake_ports_differ_only_in_a_shared_namespace_and_move_on);
	tcase_add_test(tc, impl_a_mooncake_report_maps_onto_facts);
	return s;
}
