/*
 * Automatic GID index ranking (Mooncake's RdmaContext::findBestGidIndex and
 * rdma_gid_probe.h): a GID
 * reachable from a real network device beats one without a netdev, a
 * private IPv4 beats a degraded (overlay or link-local) one, and anything
 * non-zero is the last resort.
 */
#include <stdio.h>
#include <string.h>

#include "gidrank.h"

static int all_zero(const uint8_t g[16])
{
	for (int i = 0; i < 16; i++)
		if (g[i])
			return 0;
	return 1;
}

static int v4_mapped(const uint8_t g[16])
{
	for (int i = 0; i < 10; i++)
		if (g[i])
			return 0;
	return g[10] == 0xff && g[11] == 0xff;
}

static int private_v4(const uint8_t g[16])
{
	const uint8_t *a = g + 12;

	return a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) ||
	       (a[0] == 100 && (a[1] & 0xc0) == 64);
}

static int overlay_netdev(const char *n)
{
	static const char *const prefixes[] = {"flannel", "cni", "calico", "vxlan", "docker"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(n, prefixes[i], strlen(prefixes[i])))
			return 1;
	return !strcmp(n, "tunl0");
}

int qphs__gid_rank(const struct qphs__gid_entry *e)
{
	int net = e->netdev[0] != '\0';

	if (!e->ok || all_zero(e->gid))
		return QPHS__RANK_SKIP;
	if (e->kind == QPHS__GID_IB)
		return net ? QPHS__RANK_ROUTABLE_NET : QPHS__RANK_ROUTABLE;
	if (e->kind != QPHS__GID_ROCE_V2)
		return QPHS__RANK_FALLBACK;
	if ((net && overlay_netdev(e->netdev)) ||
	    (!v4_mapped(e->gid) && e->gid[0] == 0xfe && (e->gid[1] & 0xc0) == 0x80))
		return net ? QPHS__RANK_DEGRADED_NET : QPHS__RANK_DEGRADED;
	if (v4_mapped(e->gid) && private_v4(e->gid))
		return net ? QPHS__RANK_PRIVATE4_NET : QPHS__RANK_PRIVATE4;
	return net ? QPHS__RANK_ROUTABLE_NET : QPHS__RANK_ROUTABLE;
}

const char *qphs__gid_rank_name(int rank)
{
	switch (rank) {
	case QPHS__RANK_ROUTABLE_NET: return "routable with netdev";
	case QPHS__RANK_ROUTABLE: return "routable without netdev";
	case QPHS__RANK_PRIVATE4_NET: return "private IPv4 with netdev";
	case QPHS__RANK_DEGRADED_NET: return "degraded (overlay/link-local) with netdev";
	case QPHS__RANK_PRIVATE4: return "private IPv4 without netdev";
	case QPHS__RANK_DEGRADED: return "degraded without netdev";
	case QPHS__RANK_FALLBACK: return "fallback non-zero (not RoCEv2)";
	default: return "skipped (query failed or all-zero)";
	}
}

int qphs__gid_choose(const struct qphs__gid_entry *e, size_t n, char *reason,
		     size_t reason_len)
{
	int best = -1, best_rank = QPHS__RANK_SKIP, second = -1, skipped = 0;

	for (size_t i = 0; i < n; i++) {
		int r = qphs__gid_rank(&e[i]);

		if (r == QPHS__RANK_SKIP) {
			skipped++;
			continue;
		}
		if (best < 0 || r < best_rank) {
			second = best;
			best = (int)i;
			best_rank = r;
		} else if (second < 0 || r < qphs__gid_rank(&e[second])) {
			second = (int)i;
		}
	}
	if (best < 0) {
		snprintf(reason, reason_len, "auto: none of %zu entries usable", n);
		return -1;
	}
	if (second >= 0)
		snprintf(reason, reason_len, "auto: index %d ranks %s; %d of %zu skipped; next: index %d (%s)",
			 e[best].index, qphs__gid_rank_name(best_rank), skipped, n, e[second].index,
			 qphs__gid_rank_name(qphs__gid_rank(&e[second])));
	else
		snprintf(reason, reason_len, "auto: index %d ranks %s; %d of %zu skipped; no other candidate",
			 e[best].index, qphs__gid_rank_name(best_rank), skipped, n);
	return e[best].index;
}
