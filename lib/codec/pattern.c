/*
 * The lab's data pattern: bytes a requester WRITEs and a responder checks
 * byte for byte on its own side, both made from one seed (pure).
 */
#include "qphs/rdma.h"

/* xorshift64; a zero state would stay zero, so seed 0 is moved off it. */
static uint64_t step(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static uint64_t start(uint64_t seed)
{
	return seed ? seed : 0x9e3779b97f4a7c15ull;
}

void qphs_pattern_fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = start(seed);

	for (size_t i = 0; i < n; i++) {
		x = step(x);
		p[i] = (uint8_t)x;
	}
}

size_t qphs_pattern_compare(const uint8_t *p, size_t n, uint64_t seed, size_t *first_bad,
			    uint8_t *want)
{
	uint64_t x = start(seed);
	size_t bad = 0;

	*first_bad = n;
	for (size_t i = 0; i < n; i++) {
		x = step(x);
		if (p[i] != (uint8_t)x && bad++ == 0) {
			*first_bad = i;
			if (want)
				*want = (uint8_t)x;
		}
	}
	return bad;
}
