/* Plans in netns/topo's terms, and the SKIP reasons for what topo cannot do. */
#include <stdio.h>
#include <string.h>

#include "plan_testutil.h"
#include "qphs.h"
#include "run/realise.h"
#include "unit.h"

static struct qplab_plan *plan_of(const char *hosts, const char *links, const char *steps)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "{ \"description\": \"d\", \"source\": \"s\", \"hosts\": { %s }, \"links\": [ %s ],\n"
		 "  \"steps\": [ %s ], \"expect\": [ { \"hosts\": \"all\", \"daemon_alive\": true } ] }\n",
		 hosts, links, steps);
	return plan_test_parse(text);
}

/* argv joined by spaces, for comparison. */
static const char *joined(const char *const *argv, int n)
{
	static char out[512];
	size_t k = 0;

	out[0] = '\0';
	for (int i = 0; i < n && k < sizeof(out); i++)
		k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%s", i ? " " : "", argv[i]);
	return out;
}

START_TEST(realise_topo_up_words)
{
	struct qplab_plan *p = plan_of("\"a\": { \"mtu\": 4200 }, \"b\": { \"ipv6\": true }, \"c\": {}",
				       "{ \"between\": [\"b\", \"c\"], \"mtu\": 9000 }",
				       "{ \"do\": \"link_up\", \"host\": \"a\" }");
	const char *argv[QPLAB_TOPO_ARGV_MAX];
	char buf[256];
	int n = qplab_topo_up_args(p, "t1", "netns", argv, buf, sizeof(buf));

	ck_assert_str_eq(joined(argv, n), "up --name t1 --hosts a,b,c --mtu a=4200 --mtu b=9000 --mtu c=9000 "
					  "--ipv6 --mode netns");
	ck_assert_ptr_null(argv[n]);
	ck_assert_int_eq(qplab_topo_up_args(p, "t1", NULL, argv, buf, 8), -1);
	qplab_plan_free(p);
}
END_TEST

static const struct {
	const char *step, *words;
} steps[] = {
	{"{ \"do\": \"link_down\", \"host\": \"b\" }", "link b down"},
	{"{ \"do\": \"link_up\", \"host\": \"b\" }", "link b up"},
	{"{ \"do\": \"netem_on\", \"host\": \"a\", \"netem\": { \"loss_pct\": 30, \"delay_ms\": 5 } }", "netem a loss 30 delay 5"},
	{"{ \"do\": \"netem_on\", \"host\": \"a\", \"netem\": { \"loss_pct\": 100, \"traffic\": \"roce\" } }", "drop-roce a"},
	{"{ \"do\": \"netem_off\", \"host\": \"a\" }", "clear a"},
	{"{ \"do\": \"set_mtu\", \"host\": \"a\", \"mtu\": 1280 }", "mtu a 1280"},
	{"{ \"do\": \"delete_device\", \"host\": \"b\" }", "del-rxe b"},
	{"{ \"do\": \"blackhole\", \"host\": \"a\", \"peer\": \"b\" }", "blackhole a b"},
	{"{ \"do\": \"unblackhole\", \"host\": \"a\", \"peer\": \"b\" }", "unblackhole a b"},
	{"{ \"do\": \"add_address\", \"host\": \"b\" }", "addr b add-second"},
	{"{ \"do\": \"remove_address\", \"host\": \"b\" }", "addr b remove"},
	{"{ \"do\": \"restore_address\", \"host\": \"a\" }", "addr a restore"},
	{"{ \"do\": \"disable_ipv6\", \"host\": \"b\" }", "ipv6 b off"},
	{"{ \"do\": \"firewall_drop\", \"host\": \"b\" }", "firewall b drop 12001"},
	{"{ \"do\": \"firewall_reject\", \"host\": \"b\" }", "firewall b reject 12001"},
	{"{ \"do\": \"firewall_off\", \"host\": \"b\" }", "firewall b off 12001"},
	{"{ \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\" }", ""},
	{"{ \"do\": \"restart_agent\", \"host\": \"a\" }", ""},
};

START_TEST(realise_topo_fault_words_per_step)
{
	struct qplab_plan *p = plan_of("\"a\": {}, \"b\": {}", "", steps[_i].step);
	const char *argv[QPLAB_TOPO_ARGV_MAX];
	char buf[64];
	int n = qplab_topo_step_args(p, &p->steps[0], argv, buf, sizeof(buf));

	ck_assert_int_ge(n, 0);
	ck_assert_str_eq(joined(argv, n), steps[_i].words);
	qplab_plan_free(p);
}
END_TEST

static const char *const ALL_CAPS[] = {"rxe_netns", "netem", "ipv6", NULL};
static const char *const NO_NETEM[] = {"rxe_netns", NULL};
static const char *const NO_NETNS[] = {"netem", "ipv6", NULL};

static const struct {
	const char *hosts, *links, *step;
	const char *const *caps;
	const char *reason; /* NULL: runs */
} skips[] = {
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"link_up\", \"host\": \"a\" }", ALL_CAPS, NULL},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"netem_on\", \"host\": \"a\", \"netem\": { \"loss_pct\": 5 } }", NO_NETEM, "no netem here"},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"netem_on\", \"host\": \"a\", \"netem\": { \"loss_pct\": 5, \"jitter_ms\": 3 } }", ALL_CAPS, "jitter"},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"netem_on\", \"host\": \"a\", \"netem\": { \"loss_pct\": 50, \"traffic\": \"roce\" } }", ALL_CAPS, "drop-roce only"},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"netem_on\", \"host\": \"a\", \"netem\": { \"delay_ms\": 50, \"traffic\": \"handshake\" } }", ALL_CAPS, "TCP only"},
	{"\"a\": {}, \"b\": {}", "{ \"between\": [\"a\", \"b\"], \"netem\": { \"delay_ms\": 2 } }", "{ \"do\": \"link_up\", \"host\": \"a\" }", NO_NETEM, "no netem here"},
	{"\"a\": { \"ipv6\": true }, \"b\": {}", "", "{ \"do\": \"link_up\", \"host\": \"a\" }", NO_NETEM, "wants IPv6"},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"link_up\", \"host\": \"a\" }", NULL, NULL},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"add_address\", \"host\": \"a\" }", NO_NETNS, "add_address needs the netns topology"},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"remove_address\", \"host\": \"a\" }", NO_NETNS, "remove_address needs the netns topology"},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"remove_address\", \"host\": \"a\" }", NO_NETEM, NULL},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"disable_ipv6\", \"host\": \"a\" }", NO_NETNS, NULL},
	{"\"a\": {}, \"b\": {}", "", "{ \"do\": \"firewall_reject\", \"host\": \"a\" }", NO_NETNS, "a host's firewall would be everyone's"},
};

START_TEST(realise_skip_reasons)
{
	struct qplab_plan *p = plan_of(skips[_i].hosts, skips[_i].links, skips[_i].step);
	char buf[200];
	const char *why = qplab_plan_skip_reason(p, skips[_i].caps, buf, sizeof(buf));

	if (!skips[_i].reason)
		ck_assert_msg(why == NULL, "unexpected skip: %s", why);
	else
		ck_assert_msg(why && strstr(why, skips[_i].reason), "case %d: %s", _i, why ? why : "(runs)");
	qplab_plan_free(p);
}
END_TEST

START_TEST(realise_requires_names_the_missing_capability)
{
	const char *text = "{ \"description\": \"d\", \"source\": \"s\", \"requires\": [\"rxe_netns\", \"kvm\"],\n"
			   "  \"hosts\": { \"a\": {} }, \"steps\": [ { \"do\": \"link_up\", \"host\": \"a\" } ],\n"
			   "  \"expect\": [ { \"host\": \"a\", \"daemon_alive\": true } ] }";
	struct qplab_plan *p;
	char buf[128];

	ck_assert_int_eq(qplab_scenario_parse("t.json", text, strlen(text), &p, NULL), 0);
	ck_assert_str_eq(qplab_plan_skip_reason(p, NO_NETEM, buf, sizeof(buf)), "missing capability kvm");
	qplab_plan_free(p);
}
END_TEST

Suite *suite_realise(void)
{
	Suite *s = suite_create("realise");
	TCase *tc = unit_tcase(s, "topo", 5);

	tcase_add_test(tc, realise_topo_up_words);
	tcase_add_loop_test(tc, realise_topo_fault_words_per_step, 0, sizeof(steps) / sizeof(steps[0]));
	tcase_add_loop_test(tc, realise_skip_reasons, 0, sizeof(skips) / sizeof(skips[0]));
	tcase_add_test(tc, realise_requires_names_the_missing_capability);
	return s;
}
