/* The hosts backend's faults as the one command each is on the machine
 * (run_hosts.c): the lab netdev and device come from the host, never the
 * words; faults the backend does not carry out are refused. */
#include <stdio.h>
#include <string.h>

#include "run/run.h"
#include "unit.h"

static const struct {
	const char *words[7];
	const char *remote;   /* the remote words joined by spaces; NULL: refused */
} rows[] = {
	{{"link", "a", "down"}, "ip link set dev eth1 down"},
	{{"link", "a", "up"}, "ip link set dev eth1 up"},
	{{"link", "a", "sideways"}, NULL},
	{{"mtu", "a", "1280"}, "ip link set dev eth1 mtu 1280"},
	{{"netem", "a", "loss", "100"}, "tc qdisc replace dev eth1 root netem loss 100%"},
	{{"netem", "a", "loss", "5", "delay", "20"}, "tc qdisc replace dev eth1 root netem loss 5% delay 20ms"},
	{{"netem", "a", "jitter", "5"}, NULL},
	{{"clear", "a"}, "tc qdisc del dev eth1 root"},
	{{"del-rxe", "a"}, "rdma link del mlx5_0"},
	{{"blackhole", "a", "b"}, NULL},
	{{"drop-roce", "a"}, NULL},
};

START_TEST(run_hosts_fault_words_are_one_command_on_the_lab_netdev)
{
	struct run_host h = {.name = "a", .rxe = "mlx5_0", .ifname = "eth1"};
	struct run_topo t = {.nhosts = 1};
	const char *out[16];
	char bufs[2][64], joined[256] = "";
	int n = 0, k;

	while (rows[_i].words[n])
		n++;
	k = run_hosts_fault_words(&h, &t, rows[_i].words, n, out, bufs);
	if (!rows[_i].remote) {
		ck_assert_int_eq(k, -1);
		return;
	}
	ck_assert_int_gt(k, 0);
	ck_assert_ptr_null(out[k]);
	for (int i = 0; i < k; i++)
		snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s", i ? " " : "", out[i]);
	ck_assert_str_eq(joined, rows[_i].remote);
}
END_TEST

Suite *suite_run_hosts(void)
{
	Suite *s = suite_create("run_hosts");
	TCase *tc = unit_tcase(s, "faults", 5);

	tcase_add_loop_test(tc, run_hosts_fault_words_are_one_command_on_the_lab_netdev, 0,
			    (int)(sizeof(rows) / sizeof(rows[0])));
	return s;
}
