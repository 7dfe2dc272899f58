/* The inventory (docs/inventory.md): docs' example parses, every refusal
 * names FILE:LINE of the key at fault, nothing that could reach a shell
 * is stored, the fault rules, the SKIP reasons of plans, and the ssh
 * command line with its remote words quoted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/inventory.h"
#include "unit.h"

/* One valid host; a row replaces the marked line (@X@) with its own. */
static const char TEMPLATE[] =
	"{\n"
	"  \"version\": 1,\n"
	"  \"hosts\": {\n"
	"    \"a\": {\n"
	"      \"ssh\": { \"destination\": \"root@127.0.0.1\", \"port\": 2201,\n"
	"               \"identity\": \"/run/k/id\", \"options\": { \"UserKnownHostsFile\": \"/run/k/known\" } },\n"
	"      \"qplab\": \"/usr/local/bin/qplab\",\n"
	"      \"device\": \"rxe0\",\n"
	"      \"netdev\": \"eth1\",\n"
	"      \"address\": \"10.199.1.1\",\n"
	"      @X@\n"
	"      \"lab_host\": true\n"
	"    }\n"
	"  }\n"
	"}\n";

static char *fill(const char *x)
{
	static char out[4096];
	const char *at = strstr(TEMPLATE, "@X@");

	snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - TEMPLATE), TEMPLATE, x, at + 3);
	return out;
}

static int line_of(const char *text, const char *needle)
{
	const char *at = strstr(text, needle);
	int line = 1;

	for (const char *p = text; at && p < at; p++)
		line += *p == '\n';
	return at ? line : -1;
}

static int parse(const char *text, struct qplab_inventory **inv, struct qplab_errors *errs)
{
	return qplab_inventory_parse("inv.json", text, strlen(text), inv, errs);
}

START_TEST(inventory_docs_example_parses)
{
	FILE *f = fopen("docs/inventory.md", "r");
	static char doc[65536];
	size_t n;
	char *start, *end;
	struct qplab_inventory *inv;
	struct qplab_errors errs = {0};
	const struct qplab_inv_host *a, *b;

	ck_assert_ptr_nonnull(f);
	n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = '\0';
	start = strstr(doc, "```json\n");
	ck_assert_ptr_nonnull(start);
	start += 8;
	end = strstr(start, "```");
	ck_assert_ptr_nonnull(end);
	ck_assert_int_eq(qplab_inventory_parse("doc", start, (size_t)(end - start), &inv, &errs), 0);
	ck_assert_int_eq(errs.n, 0);
	ck_assert_int_eq(inv->nhosts, 2);
	a = qplab_inventory_host(inv, "a");
	b = qplab_inventory_host(inv, "b");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_str_eq(a->ssh.alias, "lab-a");
	ck_assert_str_eq(a->ssh.destination, "");
	ck_assert(a->lab_host);
	ck_assert_uint_eq(a->faults, QPLAB_INV_FAULT_LINK | QPLAB_INV_FAULT_NETEM | QPLAB_INV_FAULT_MTU |
					     QPLAB_INV_FAULT_BLACKHOLE | QPLAB_INV_FAULT_DELETE_DEVICE);
	ck_assert_str_eq(b->ssh.destination, "root@10.0.0.12");
	ck_assert_int_eq(b->ssh.port, 22);
	ck_assert_int_eq((int)b->ssh.noptions, 1);
	ck_assert_str_eq(b->ssh.options[0].name, "StrictHostKeyChecking");
	ck_assert_str_eq(b->device, "mlx5_0");
	ck_assert(!b->lab_host);
	ck_assert_uint_eq(b->faults, 0);
	ck_assert_ptr_null(qplab_inventory_host(inv, "c"));
	qplab_inventory_free(inv);
}
END_TEST

START_TEST(inventory_template_parses_with_defaults)
{
	struct qplab_inventory *inv;
	struct qplab_errors errs = {0};

	ck_assert_int_eq(parse(fill(""), &inv, &errs), 0);
	ck_assert_int_eq(inv->hosts[0].port, 1);
	ck_assert_int_eq(inv->hosts[0].ssh.port, 2201);
	ck_assert(!inv->hosts[0].ipv6);
	ck_assert_str_eq(inv->hosts[0].ssh_netdev, "");
	ck_assert_str_eq(inv->file, "inv.json");
	qplab_inventory_free(inv);
}
END_TEST

/* Fragments for the @X@ line (so their line is the @X@ line) or whole
 * files, each with words its message must hold. */
static const struct {
	const char *x;      /* the @X@ line's replacement (NULL: whole file) */
	const char *file;
	const char *at;     /* the expected line is the one holding this */
	const char *words;
} bad[] = {
	{"\"colour\": \"red\",", NULL, "colour", "unknown key \"colour\""},
	{"\"port\": \"1\",", NULL, "\"port\": \"1\"", "\"port\" must be an integer"},
	{"\"port\": 0,", NULL, "\"port\": 0", "\"port\""},
	{"\"port\": 1.5,", NULL, "\"port\": 1.5", "\"port\""},
	{"\"ssh_netdev\": \"eth0; reboot\",", NULL, "ssh_netdev", "holds ';'"},
	{"\"ssh_netdev\": \"$(reboot)\",", NULL, "ssh_netdev", "holds '$'"},
	{"\"ssh_netdev\": \"-oProxyCommand=x\",", NULL, "ssh_netdev", "must not start with '-'"},
	{"\"ssh_netdev\": \"e\\nx\",", NULL, "ssh_netdev", "byte 0x0a"},
	{"\"ssh_netdev\": \"a b\",", NULL, "ssh_netdev", "holds ' '"},
	{"\"ssh_netdev\": null,", NULL, "ssh_netdev", "\"ssh_netdev\" must be a string, not null"},
	{"\"ssh_netdev\": \"\",", NULL, "ssh_netdev", "must not be empty"},
	{"\"faults\": [\"link\", \"reboot\"],", NULL, "reboot", "unknown fault \"reboot\""},
	{"\"faults\": [\"link\", \"link\"],", NULL, "faults", "listed twice"},
	{"\"faults\": [\"link\", 3],", NULL, "faults", "must be a string"},
	{"\"faults\": \"link\",", NULL, "faults", "\"faults\" must be an array"},
	{"\"ssh_netdev\": true,", NULL, "ssh_netdev", "\"ssh_netdev\" must be a string, not true or false"},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\" },\n \"qplab\": \"/q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\",\n \"lab_host\": \"yes\" } } }",
	 "\"yes\"", "\"lab_host\" must be true or false"},
	{"\"device\": \"rxe0\",", NULL, "\"device\": \"rxe0\",\n      \"lab_host\"", "duplicate"},
	{NULL, "{ \"version\": 2, \"hosts\": {} }", "version", "\"version\""},
	{NULL, "{ \"hosts\": { \"a\": {} } }", "hosts", "missing required key \"version\""},
	{NULL, "[1]", "[1]", "an inventory is a JSON object"},
	{NULL, "{ \"version\": 1,\n  \"hosts\": {\n \"A\": {} } }", "\"A\"", "host name \"A\""},
	{NULL, "{ \"version\": 1,\n  \"hosts\": {\n \"a\": 1 } }", "\"a\": 1", "must be an object"},
	{NULL, "{ \"version\": 1,\n  \"hosts\": {} }", "hosts", "at least one host"},
	{NULL, "{ \"version\": 1, // no\n \"hosts\": {} }", "no", "syntax error"},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": {},\n \"qplab\": \"/q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "\"ssh\"", "exactly one of \"destination\" and \"alias\""},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\", \"destination\": \"y\" },\n \"qplab\": \"/q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "\"ssh\"", "exactly one of"},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\" },\n \"qplab\": \"q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "\"qplab\"", "absolute path"},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\" },\n \"qplab\": \"/a/../q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "\"qplab\"", "\"..\""},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\" },\n \"qplab\": \"/q\", \"device\": \"d\", \"netdev\": \"n\",\n \"address\": \"10.0.0.256\" } } }",
	 "10.0.0.256", "not an IPv4 or IPv6 address"},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\" },\n \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "\"a\": {", "missing required key \"qplab\""},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\",\n \"options\": { \"ProxyCommand\": \"nc\" } },\n \"qplab\": \"/q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "ProxyCommand", "\"ProxyCommand\" is not allowed"},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\",\n \"options\": { \"batchmode\": \"no\" } },\n \"qplab\": \"/q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "batchmode", "not allowed"},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\",\n \"options\": { \"User\": \"a'b\" } },\n \"qplab\": \"/q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "User", "holds '''"},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\",\n \"options\": { \"User\": 1 } },\n \"qplab\": \"/q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "User", "must be a string"},
	{NULL, "{ \"version\": 1,\n \"hosts\": { \"a\": {\n \"ssh\": { \"alias\": \"x\",\n \"port\": 70000 },\n \"qplab\": \"/q\", \"device\": \"d\", \"netdev\": \"n\", \"address\": \"10.0.0.1\" } } }",
	 "70000", "\"port\""},
};

START_TEST(inventory_refusals_name_file_and_line)
{
	const char *text = bad[_i].x ? fill(bad[_i].x) : bad[_i].file;
	struct qplab_inventory *inv = (void *)1;
	struct qplab_errors errs = {0};
	char want[64];
	int line = line_of(text, bad[_i].at);

	ck_assert_int_gt(line, 0);
	ck_assert_int_ne(parse(text, &inv, &errs), 0);
	ck_assert_ptr_null(inv);
	ck_assert_uint_ge(errs.n, 1);
	snprintf(want, sizeof(want), "inv.json:%d: ", line);
	for (size_t i = 0; i < errs.n; i++)
		if (strstr(errs.msgs[i], bad[_i].words)) {
			ck_assert_msg(!strncmp(errs.msgs[i], want, strlen(want)), "row %d: %s (wanted %s)",
				      _i, errs.msgs[i], want);
			qplab_errors_free(&errs);
			return;
		}
	ck_abort_msg("row %d: no message holds '%s'; first: %s", _i, bad[_i].words, errs.msgs[0]);
}
END_TEST

START_TEST(inventory_load_names_a_missing_file)
{
	struct qplab_inventory *inv;
	struct qplab_errors errs = {0};

	ck_assert_int_ne(qplab_inventory_load("/nonexistent/inv.json", &inv, &errs), 0);
	ck_assert_ptr_null(inv);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msgs[0], "/nonexistent/inv.json: No such file or directory");
	qplab_errors_free(&errs);
}
END_TEST

static struct qplab_inv_host host(bool lab, unsigned faults, const char *ssh_netdev)
{
	struct qplab_inv_host h = {.name = "a", .netdev = "eth1", .lab_host = lab, .faults = faults};

	snprintf(h.ssh_netdev, sizeof(h.ssh_netdev), "%s", ssh_netdev);
	return h;
}

START_TEST(inventory_faults_only_on_lab_hosts_off_the_ssh_netdev)
{
	char why[256];
	struct qplab_inv_host h = host(true, QPLAB_INV_FAULT_LINK | QPLAB_INV_FAULT_DELETE_DEVICE, "eth0");

	ck_assert(qplab_inv_fault_allowed(&h, QPLAB_INV_FAULT_LINK, why, sizeof(why)));
	ck_assert(!qplab_inv_fault_allowed(&h, QPLAB_INV_FAULT_NETEM, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "does not allow fault netem on host a"));
	h = host(false, QPLAB_INV_FAULT_LINK, "eth0");
	ck_assert(!qplab_inv_fault_allowed(&h, QPLAB_INV_FAULT_LINK, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "not a lab host"));
	h = host(true, QPLAB_INV_FAULT_LINK | QPLAB_INV_FAULT_DELETE_DEVICE, "eth1");
	ck_assert(!qplab_inv_fault_allowed(&h, QPLAB_INV_FAULT_LINK, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "the netdev its ssh session uses"));
	/* Deleting the RDMA device leaves the ssh netdev alone. */
	ck_assert(qplab_inv_fault_allowed(&h, QPLAB_INV_FAULT_DELETE_DEVICE, why, sizeof(why)));
	h = host(true, QPLAB_INV_FAULT_LINK, "");
	ck_assert(!qplab_inv_fault_allowed(&h, QPLAB_INV_FAULT_LINK, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "ssh_netdev"));
}
END_TEST

static struct qplab_plan *plan_of(const char *text)
{
	struct qplab_plan *p;
	struct qplab_errors errs = {0};

	int rc = qplab_scenario_parse("s.json", text, strlen(text), &p, &errs);

	ck_assert_msg(rc == 0, "%s", errs.n ? errs.msgs[0] : "?");
	return p;
}

/* The scenario text must not fit inv: its reason, in why. */
static const char *unfit(const struct qplab_inventory *inv, const char *text, char *why, size_t len)
{
	struct qplab_plan *p = plan_of(text);

	ck_assert(!qplab_inventory_fits(inv, p, why, len));
	qplab_plan_free(p);
	return why;
}

START_TEST(inventory_fits_or_says_why_not)
{
	struct qplab_inventory inv = {.nhosts = 2};
	struct qplab_plan *p;
	char why[512];

	inv.hosts[0] = host(true, QPLAB_INV_FAULT_LINK, "eth0");
	inv.hosts[1] = host(false, 0, "");
	snprintf(inv.hosts[1].name, sizeof(inv.hosts[1].name), "b");
	p = plan_of("{\"description\":\"d\",\"source\":\"s\",\"hosts\":{\"a\":{},\"b\":{}},"
		    "\"steps\":[{\"do\":\"link_down\",\"host\":\"a\"},{\"do\":\"connect\",\"from\":\"a\",\"to\":\"b\"}],"
		    "\"expect\":[{\"host\":\"a\",\"code\":\"OK\"}]}");
	ck_assert(qplab_inventory_fits(&inv, p, why, sizeof(why)));
	qplab_plan_free(p);
	ck_assert_ptr_nonnull(strstr(unfit(&inv,
			"{\"description\":\"d\",\"source\":\"s\",\"hosts\":{\"a\":{},\"b\":{}},"
			"\"steps\":[{\"do\":\"link_down\",\"host\":\"b\"}],"
			"\"expect\":[{\"host\":\"a\",\"code\":\"OK\"}]}",
			why, sizeof(why)), "host b is not a lab host"));
	ck_assert_str_eq(unfit(&inv,
			"{\"description\":\"d\",\"source\":\"s\",\"hosts\":{\"a\":{},\"b\":{},\"c\":{}},"
			"\"steps\":[{\"do\":\"connect\",\"from\":\"a\",\"to\":\"c\"}],"
			"\"expect\":[{\"host\":\"a\",\"code\":\"OK\"}]}",
			why, sizeof(why)), "the scenario needs 3 hosts, the inventory has 2; this one is missing: c");
	ck_assert_ptr_nonnull(strstr(unfit(&inv,
			"{\"description\":\"d\",\"source\":\"s\",\"hosts\":{\"a\":{\"mtu\":1280},\"b\":{}},"
			"\"steps\":[{\"do\":\"connect\",\"from\":\"a\",\"to\":\"b\"}],"
			"\"expect\":[{\"host\":\"a\",\"code\":\"OK\"}]}",
			why, sizeof(why)), "does not allow fault mtu on host a"));
	ck_assert_ptr_nonnull(strstr(unfit(&inv,
			"{\"description\":\"d\",\"source\":\"s\",\"hosts\":{\"a\":{},\"b\":{}},"
			"\"steps\":[{\"do\":\"connect\",\"from\":\"a\",\"to_address\":\"unroutable\"}],"
			"\"expect\":[{\"host\":\"a\",\"code\":\"OK\"}]}",
			why, sizeof(why)), "unroutable address"));
	ck_assert_str_eq(unfit(&inv,
			"{\"description\":\"d\",\"source\":\"s\",\"hosts\":{\"a\":{},\"b\":{\"device\":\"second\"}},"
			"\"steps\":[{\"do\":\"connect\",\"from\":\"a\",\"to\":\"b\"}],"
			"\"expect\":[{\"host\":\"a\",\"code\":\"OK\"}]}",
			why, sizeof(why)), "host b: device \"second\" needs the lab topology's second netdev");
	ck_assert_str_eq(unfit(&inv,
			"{\"description\":\"d\",\"source\":\"s\",\"hosts\":{\"a\":{},\"b\":{}},"
			"\"steps\":[{\"do\":\"connect\",\"from\":\"a\",\"to\":\"b\"}],"
			"\"expect\":[{\"host\":\"a\",\"code\":\"OK\"}],\n"
			"\"wire\":[{\"label\":\"l\",\"why\":\"w\",\"handshake\":{\"from\":\"b\",\"to\":\"a\"},\"count\":{\"min\":1}}]}",
			why, sizeof(why)), "line 2: wire expectations need a capture of the lab link, which the hosts backend " "does not take on the machines yet");
	ck_assert_str_eq(unfit(&inv,
			"{\"description\":\"d\",\"source\":\"s\",\"hosts\":{\"a\":{},\"b\":{}},"
			"\"steps\":[{\"do\":\"connect\",\"from\":\"a\",\"to\":\"b\"},{\"do\":\"disable_ipv6\",\"host\":\"a\"}],"
			"\"expect\":[{\"host\":\"a\",\"code\":\"OK\"}]}",
			why, sizeof(why)), "step 2: the hosts backend does not carry out disable_ipv6 yet");
}
END_TEST

START_TEST(inventory_ssh_argv_is_words_and_the_remote_is_quoted)
{
	struct qplab_inventory *inv;
	struct qplab_errors errs = {0};
	const char *remote[] = {"/usr/local/bin/qplab", "agent", "--config", "{\"a\":\"it's\"}", NULL};
	char **argv;
	size_t n = 0;
	static const char *const want[] = {
		"ssh", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3",
		"-p", "2201", "-i", "/run/k/id", "-o", "UserKnownHostsFile=/run/k/known", "--",
		"root@127.0.0.1", "'/usr/local/bin/qplab' 'agent' '--config' '{\"a\":\"it'\\''s\"}'", NULL};

	ck_assert_int_eq(parse(fill(""), &inv, &errs), 0);
	argv = qplab_inv_ssh_argv(&inv->hosts[0], remote);
	ck_assert_ptr_nonnull(argv);
	for (; want[n]; n++) {
		ck_assert_ptr_nonnull(argv[n]);
		ck_assert_str_eq(argv[n], want[n]);
	}
	ck_assert_ptr_null(argv[n]);
	qplab_inv_argv_free(argv);
	qplab_inventory_free(inv);
}
END_TEST

Suite *suite_inventory(void)
{
	Suite *s = suite_create("inventory");
	TCase *tc = unit_tcase(s, "parse", 5);

	tcase_add_test(tc, inventory_docs_example_parses);
	tcase_add_test(tc, inventory_template_parses_with_defaults);
	tcase_add_loop_test(tc, inventory_refusals_name_file_and_line, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, inventory_load_names_a_missing_file);
	tcase_add_test(tc, inventory_faults_only_on_lab_hosts_off_the_ssh_netdev);
	tcase_add_test(tc, inventory_fits_or_says_why_not);
	tcase_add_test(tc, inventory_ssh_argv_is_words_and_the_remote_is_quoted);
	return s;
}
