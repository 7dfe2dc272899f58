/* envpair.h — the two-name environment variables (QPLAB_RDMA_DEVS,
 * QPLAB_RDMA_ADDRS) that rdma_setup and setup_floor take their two
 * devices and addresses from. */
#ifndef QPLAB_BENCH_ENVPAIR_H
#define QPLAB_BENCH_ENVPAIR_H

#include <stdlib.h>
#include <string.h>

/* The environment variable name as "X,Y" (QPLAB_RDMA_DEVS, QPLAB_RDMA_ADDRS)
 * into x and y, each of len bytes with its NUL.  -1 when it is unset, has
 * no comma or a second one, an empty part, or a part too long. */
static inline int bench_env_pair(const char *name, char *x, char *y, size_t len)
{
	const char *v = getenv(name), *c = v ? strchr(v, ',') : NULL;
	size_t nx, ny;

	if (!c)
		return -1;
	nx = (size_t)(c - v);
	ny = strlen(c + 1);
	if (!nx || !ny || nx >= len || ny >= len || strchr(c + 1, ','))
		return -1;
	memcpy(x, v, nx);
	x[nx] = '\0';
	memcpy(y, c + 1, ny + 1);
	return 0;
}

#endif
