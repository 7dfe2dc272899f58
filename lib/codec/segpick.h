/*
 * segpick.h — where on a peer a data-path check reads and writes, from the
 * peer's segment descriptor alone; and whether a Mooncake initiator could
 * reach the same buffer through the same device.  Pure.
 *
 * The rules are a Mooncake initiator's, at 3b5a594:
 *   - the buffer: the first of buffers[] that holds the whole range and
 *     has rkeys (RdmaTransport::selectDevice and bytesUntilBufferEnd,
 *     rdma_transport.cpp: a buffer without rkeys is not remotely
 *     accessible);
 *   - the key: rkey[i] and devices[i] with one index i, the device's
 *     (WorkerPool::submitPostSend, worker_pool.cpp);
 *   - the device: Topology::selectDevice (topology.cpp) picks among the
 *     devices priority_matrix lists for a location named like the buffer,
 *     else among every device it lists; Topology::resolve numbers them in
 *     order of first appearance.  A descriptor without a usable
 *     priority_matrix gives a Mooncake initiator no device at all.
 * We connect to one named device, so our index is that device's position
 * in devices[]; the Mooncake check says whether its own numbering agrees.
 */
#ifndef QPHS__SEGPICK_H
#define QPHS__SEGPICK_H

#include <stddef.h>
#include <stdint.h>

#include "qphs/body.h"

struct qphs__seg_target {
	size_t buffer;          /* index in buffers[] */
	size_t device;          /* index in devices[] of the device asked for */
	uint64_t addr;          /* the buffer's first byte */
	uint64_t length;
	uint32_t rkey;          /* buffers[buffer].rkey[device] */
	int mooncake_ok;        /* 1: a Mooncake initiator would reach this
				 * buffer through this device with this rkey */
	char mooncake_why[240]; /* when not: why, in words */
};

/* Fills *t for `bytes` bytes at the start of a buffer reached through
 * `device`.  Returns 0, or QPHS_ERR_METADATA with the reason in err (the
 * descriptor lists no such device, no remotely accessible buffer, no rkey
 * for that device, or none large enough). */
int qphs__seg_pick(const struct qphs_segment_desc *s, const char *device, size_t bytes,
		   struct qphs__seg_target *t, char *err, size_t errlen);

#endif
