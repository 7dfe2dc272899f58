/* A port's hardware counters over RDMA netlink (hwc.h): the socket side.
 * Two round trips: a device dump for the name's index, then the port's
 * default counters. */
#include <errno.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "hwc.h"

enum { HWC_BUF = 32768 };

static int send_req(int fd, const void *req, size_t n)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};

	return sendto(fd, req, n, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)n ? 0 : -1;
}

static int find_index(int fd, const char *dev, uint32_t *index, char *err, size_t errlen)
{
	static unsigned char buf[HWC_BUF];
	size_t n = qplab_hwc_req_devices(buf, sizeof(buf), 1);
	int rc = 0, found = 0;

	if (send_req(fd, buf, n)) {
		snprintf(err, errlen, "rdma netlink: %s", strerror(errno));
		return -1;
	}
	while (rc == 0) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);

		if (got <= 0) {
			snprintf(err, errlen, "rdma netlink: %s", got ? strerror(errno) : "closed");
			return -1;
		}
		rc = qplab_hwc_parse_devices(buf, (size_t)got, dev, index, &found);
	}
	if (rc == 1 && found)
		return 0;
	snprintf(err, errlen, "rdma netlink: %s", rc == 1 ? "no such device" : strerror(-rc));
	return -1;
}

int qplab_hwc_read(const char *dev, int port, struct qplab_hwc *out, char *err, size_t errlen)
{
	static unsigned char buf[HWC_BUF];
	struct timeval tv = {.tv_sec = 2};
	uint32_t index = 0;
	ssize_t got;
	size_t n;
	int fd, rc = -1;

	out->n = 0;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0) {
		snprintf(err, errlen, "rdma netlink: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (find_index(fd, dev, &index, err, errlen))
		goto out;
	n = qplab_hwc_req_stat(buf, sizeof(buf), 2, index, (uint32_t)port);
	if (send_req(fd, buf, n) || (got = recv(fd, buf, sizeof(buf), 0)) <= 0) {
		snprintf(err, errlen, "rdma netlink: %s", strerror(errno));
		goto out;
	}
	rc = qplab_hwc_parse_stat(buf, (size_t)got, out);
	if (rc)
		snprintf(err, errlen, "rdma netlink: %s/%d: %s", dev, port, strerror(-rc));
	else if (!out->n)
		snprintf(err, errlen, "rdma netlink: %s/%d has no hardware counters", dev, port);
	rc = rc || !out->n ? -1 : 0;
out:
	close(fd);
	return rc;
}

int qplab_qps_read(const char *dev, struct qplab_qp *qps, int max, char *err, size_t errlen)
{
	static unsigned char buf[HWC_BUF];
	struct timeval tv = {.tv_sec = 2};
	uint32_t index = 0;
	int fd, rc = 0, n = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0) {
		snprintf(err, errlen, "rdma netlink: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (find_index(fd, dev, &index, err, errlen)) {
		close(fd);
		return -1;
	}
	if (send_req(fd, buf, qplab_qps_req(buf, sizeof(buf), 2, index))) {
		snprintf(err, errlen, "rdma netlink: %s", strerror(errno));
		close(fd);
		return -1;
	}
	while (rc == 0) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);

		if (got <= 0) {
			snprintf(err, errlen, "rdma netlink: %s", got ? strerror(errno) : "closed");
			close(fd);
			return -1;
		}
		rc = qplab_qps_parse(buf, (size_t)got, qps, max, &n);
	}
	close(fd);
	if (rc < 0) {
		snprintf(err, errlen, "rdma netlink: the QPs of %s: %s", dev, strerror(-rc));
		return -1;
	}
	return n;
}
