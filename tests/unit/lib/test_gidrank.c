/* GID ranking (lib/rdma/gidrank.c, after Mooncake's findBestGidIndex): a
 * table of GID entries and the rank each must get, then choices over whole
 * tables. */
#include <string.h>

#include "rdma/gidrank.h"
#include "unit.h"

#define V4(a, b, c, d) {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d}
#define LL6 {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
#define G6 {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
#define ZERO {0}

static const struct {
	struct qphs__gid_entry e;
	int rank;
} rank_cases[] = {
	{{0, 1, V4(192, 168, 1, 5), QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_ROUTABLE_NET},
	{{0, 1, V4(192, 168, 1, 5), QPHS__GID_ROCE_V2, ""}, QPHS__RANK_ROUTABLE},
	{{0, 1, G6, QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_ROUTABLE_NET},
	{{0, 1, V4(10, 0, 0, 1), QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_PRIVATE4_NET},
	{{0, 1, V4(172, 16, 0, 1), QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_PRIVATE4_NET},
	{{0, 1, V4(172, 31, 9, 1), QPHS__GID_ROCE_V2, ""}, QPHS__RANK_PRIVATE4},
	{{0, 1, V4(172, 32, 0, 1), QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_ROUTABLE_NET},
	{{0, 1, V4(100, 64, 0, 1), QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_PRIVATE4_NET},
	{{0, 1, V4(100, 128, 0, 1), QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_ROUTABLE_NET},
	{{0, 1, LL6, QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_DEGRADED_NET},
	{{0, 1, LL6, QPHS__GID_ROCE_V2, ""}, QPHS__RANK_DEGRADED},
	{{0, 1, V4(192, 168, 1, 5), QPHS__GID_ROCE_V2, "flannel.1"}, QPHS__RANK_DEGRADED_NET},
	{{0, 1, V4(10, 1, 1, 1), QPHS__GID_ROCE_V2, "cni0"}, QPHS__RANK_DEGRADED_NET},
	{{0, 1, V4(10, 1, 1, 1), QPHS__GID_ROCE_V2, "tunl0"}, QPHS__RANK_DEGRADED_NET},
	{{0, 1, V4(10, 1, 1, 1), QPHS__GID_ROCE_V2, "tunl01"}, QPHS__RANK_PRIVATE4_NET},
	{{0, 1, V4(192, 168, 1, 5), QPHS__GID_ROCE_V1, "eth0"}, QPHS__RANK_FALLBACK},
	{{0, 1, LL6, QPHS__GID_IB, ""}, QPHS__RANK_ROUTABLE},
	{{0, 1, ZERO, QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_SKIP},
	{{0, 0, V4(192, 168, 1, 5), QPHS__GID_ROCE_V2, "eth0"}, QPHS__RANK_SKIP},
};

START_TEST(gid_rank_table)
{
	int got = qphs__gid_rank(&rank_cases[_i].e);

	ck_assert_msg(got == rank_cases[_i].rank, "case %d: rank %d (%s), want %d", _i, got,
		      qphs__gid_rank_name(got), rank_cases[_i].rank);
}
END_TEST

/* rxe's table: link-local first, then the IPv4-mapped lab address. */
START_TEST(gid_choose_prefers_private_v4_over_link_local)
{
	struct qphs__gid_entry t[] = {
		{0, 1, LL6, QPHS__GID_ROCE_V2, "qlrt-0"},
		{1, 1, V4(10, 199, 0, 201), QPHS__GID_ROCE_V2, "qlrt-0"},
		{2, 1, ZERO, QPHS__GID_ROCE_V2, ""},
	};
	char why[256];

	ck_assert_int_eq(qphs__gid_choose(t, 3, why, sizeof(why)), 1);
	ck_assert_ptr_nonnull(strstr(why, "private IPv4 with netdev"));
	ck_assert_ptr_nonnull(strstr(why, "next: index 0"));
}
END_TEST

START_TEST(gid_choose_ties_go_to_the_lowest_index)
{
	struct qphs__gid_entry t[] = {
		{0, 1, V4(192, 168, 0, 1), QPHS__GID_ROCE_V2, "eth0"},
		{1, 1, V4(192, 168, 0, 2), QPHS__GID_ROCE_V2, "eth1"},
	};
	char why[256];

	ck_assert_int_eq(qphs__gid_choose(t, 2, why, sizeof(why)), 0);
}
END_TEST

START_TEST(gid_choose_reports_none_usable)
{
	struct qphs__gid_entry t[] = {
		{0, 1, ZERO, QPHS__GID_ROCE_V2, "eth0"},
		{1, 0, V4(10, 0, 0, 1), QPHS__GID_ROCE_V2, "eth0"},
	};
	char why[256];

	ck_assert_int_eq(qphs__gid_choose(t, 2, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "none of 2"));
}
END_TEST

Suite *suite_gidrank(void)
{
	Suite *s = suite_create("gidrank");
	TCase *tc = unit_tcase(s, "rank", 5);

	tcase_add_loop_test(tc, gid_rank_table, 0, (int)(sizeof(rank_cases) / sizeof(rank_cases[0])));
	tcase_add_test(tc, gid_choose_prefers_private_v4_over_link_local);
	tcase_add_test(tc, gid_choose_ties_go_to_the_lowest_index);
	tcase_add_test(tc, gid_choose_reports_none_usable);
	return s;
}
