/*
 * gidrank.h — the automatic GID index choice (after Mooncake's
 * RdmaContext::findBestGidIndex), as a pure function
 * over a table the caller read (so it is unit-testable without a device).
 */
#ifndef QPHS__GIDRANK_H
#define QPHS__GIDRANK_H

#include <stddef.h>
#include <stdint.h>

enum qphs__gid_kind { QPHS__GID_IB = 0, QPHS__GID_ROCE_V1 = 1, QPHS__GID_ROCE_V2 = 2 };

struct qphs__gid_entry {
	int index;
	int ok;              /* the query succeeded */
	uint8_t gid[16];
	int kind;            /* enum qphs__gid_kind */
	char netdev[32];     /* "" when the index has no netdev */
};

/* Ranks, lowest wins (the order of Mooncake's autoGidCandidateClassPriority,
 * rdma_gid_probe.h). */
enum qphs__gid_rank {
	QPHS__RANK_ROUTABLE_NET = 0,
	QPHS__RANK_ROUTABLE = 1,
	QPHS__RANK_PRIVATE4_NET = 2,
	QPHS__RANK_DEGRADED_NET = 3,
	QPHS__RANK_PRIVATE4 = 4,
	QPHS__RANK_DEGRADED = 5,
	QPHS__RANK_FALLBACK = 6,
	QPHS__RANK_SKIP = 99,   /* failed query or all-zero GID */
};

int qphs__gid_rank(const struct qphs__gid_entry *e);
const char *qphs__gid_rank_name(int rank);

/* Picks the best of n entries (ties to the lowest index).  Returns the
 * chosen index or -1 when none is usable; writes why into reason (the
 * winner's rank, how many entries were skipped and the runner-up). */
int qphs__gid_choose(const struct qphs__gid_entry *e, size_t n, char *reason,
		     size_t reason_len);

#endif
