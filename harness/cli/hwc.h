/* hwc.h — an RDMA device port's hardware counters (rxe:
 * drivers/infiniband/sw/rxe/rxe_hw_counters.c), as `rdma statistic show
 * link DEV/PORT` reads them: over RDMA netlink (RDMA_NLDEV_CMD_STAT_GET).
 * Netlink, not /sys/class/infiniband/DEV/ports/N/hw_counters: in a network
 * namespace other than the device's, sysfs holds a compat device without
 * hw_counters, while netlink answers in every namespace of shared mode.
 *
 * The same netlink gives a device's QPs (below).
 *
 * hwc_nl.c builds and parses the messages (pure); hwc_read.c does the
 * socket I/O. */
#ifndef QPLAB_HWC_H
#define QPLAB_HWC_H

#include <stddef.h>
#include <stdint.h>

#define QPLAB_HWC_MAX 48
#define QPLAB_HWC_NAME_LEN 32

struct qplab_hwc {
	int n;
	struct {
		char name[QPLAB_HWC_NAME_LEN];
		uint64_t value;
	} c[QPLAB_HWC_MAX];
};

/* Requests into buf (len bytes); return the message's length, 0 when it
 * does not fit.  devices: a dump of every device (index and name); stat:
 * the default counters of device index, port. */
size_t qplab_hwc_req_devices(void *buf, size_t len, uint32_t seq);
size_t qplab_hwc_req_stat(void *buf, size_t len, uint32_t seq, uint32_t index, uint32_t port);

/* One datagram of the device dump: sets *index and *found when it names
 * the device.  Returns 1 when the dump ended in it (NLMSG_DONE), 0 when
 * more is to come, < 0 = -errno the kernel sent (or -EBADMSG for a
 * malformed message).  The whole dump is read before the next request:
 * its remaining parts would otherwise be taken for the next reply. */
int qplab_hwc_parse_devices(const void *buf, size_t len, const char *name, uint32_t *index,
			    int *found);
/* The stat reply: 0 and *out filled (counters beyond QPLAB_HWC_MAX are
 * dropped), or -errno as above. */
int qplab_hwc_parse_stat(const void *buf, size_t len, struct qplab_hwc *out);

/* The value of counter name in h, or -1 when h has none. */
int64_t qplab_hwc_get(const struct qplab_hwc *h, const char *name);

/* ---- a device's QPs, as `rdma resource show qp` lists them
 * (RDMA_NLDEV_CMD_RES_QP_GET; nldev.c res_get_common_dumpit,
 * fill_res_qp_entry), without starting a program ---- */

#define QPLAB_QP_STATE_UNKNOWN 255

struct qplab_qp {
	uint32_t qpn;
	uint8_t state;             /* enum ib_qp_state, or QPLAB_QP_STATE_UNKNOWN */
};

/* The QP dump of device index (the kernel wants the index). */
size_t qplab_qps_req(void *buf, size_t len, uint32_t seq, uint32_t index);
/* One datagram of that dump: its QPs appended to qps[*n...] (at most max
 * stored, *n counts them all).  Returns as qplab_hwc_parse_devices. */
int qplab_qps_parse(const void *buf, size_t len, struct qplab_qp *qps, int max, int *n);
/* "RESET" ... "ERR", "UNKNOWN". */
const char *qplab_qp_state_name(unsigned state);
/* Device dev's QPs, GSI QP 1 included, in the kernel's order.  Returns
 * how many (at most max stored), or -1 with the reason in err. */
int qplab_qps_read(const char *dev, struct qplab_qp *qps, int max, char *err, size_t errlen);

/* Reads device dev's port counters.  Returns 0, or -1 with the reason in
 * err (no such device, no netlink, the kernel's error). */
int qplab_hwc_read(const char *dev, int port, struct qplab_hwc *out, char *err, size_t errlen);

#endif
