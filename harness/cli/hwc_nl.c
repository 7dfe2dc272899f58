/* RDMA netlink messages for a port's hardware counters (hwc.h): built and
 * parsed here, without I/O.  Layout: include/uapi/rdma/rdma_netlink.h; the
 * kernel's side is drivers/infiniband/core/nldev.c (nldev_get_dumpit,
 * stat_get_doit_default_counter). */
#include <errno.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stdio.h>
#include <string.h>

#include "hwc.h"

static size_t put_attr(unsigned char *p, size_t at, size_t len, uint16_t type, const void *v,
		       size_t vlen)
{
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + vlen), .nla_type = type};
	size_t need = NLA_ALIGN(a.nla_len);

	if (!at || at + need > len)
		return 0;
	memset(p + at, 0, need);
	memcpy(p + at, &a, sizeof(a));
	memcpy(p + at + NLA_HDRLEN, v, vlen);
	return at + need;
}

static size_t header(void *buf, size_t len, uint32_t seq, int cmd, uint16_t flags)
{
	struct nlmsghdr h = {.nlmsg_len = NLMSG_HDRLEN,
			     .nlmsg_type = (uint16_t)RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd),
			     .nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags),
			     .nlmsg_seq = seq};

	if (len < NLMSG_HDRLEN)
		return 0;
	memset(buf, 0, NLMSG_HDRLEN);
	memcpy(buf, &h, sizeof(h));
	return NLMSG_HDRLEN;
}

static size_t finish(void *buf, size_t n)
{
	struct nlmsghdr *h = buf;

	if (n)
		h->nlmsg_len = (uint32_t)n;
	return n;
}

size_t qplab_hwc_req_devices(void *buf, size_t len, uint32_t seq)
{
	return finish(buf, header(buf, len, seq, RDMA_NLDEV_CMD_GET, NLM_F_DUMP));
}

size_t qplab_hwc_req_stat(void *buf, size_t len, uint32_t seq, uint32_t index, uint32_t port)
{
	size_t n = header(buf, len, seq, RDMA_NLDEV_CMD_STAT_GET, 0);

	n = put_attr(buf, n, len, RDMA_NLDEV_ATTR_DEV_INDEX, &index, sizeof(index));
	n = put_attr(buf, n, len, RDMA_NLDEV_ATTR_PORT_INDEX, &port, sizeof(port));
	return finish(buf, n);
}

/* Calls fn for each attribute in [p, p+len); stops at a malformed one
 * (returns -EBADMSG) or when fn returns nonzero (returns that). */
typedef int (*attr_fn)(uint16_t type, const unsigned char *v, size_t vlen, void *arg);

static int each_attr(const unsigned char *p, size_t len, attr_fn fn, void *arg)
{
	while (len >= NLA_HDRLEN) {
		struct nlattr a;
		int rc;

		memcpy(&a, p, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || a.nla_len > len)
			return -EBADMSG;
		rc = fn(a.nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN, a.nla_len - NLA_HDRLEN, arg);
		if (rc)
			return rc;
		if ((size_t)NLA_ALIGN(a.nla_len) >= len)
			break;
		len -= (size_t)NLA_ALIGN(a.nla_len);
		p += NLA_ALIGN(a.nla_len);
	}
	return 0;
}

/* Calls fn on the attributes of every message in one datagram.  Returns
 * 2 at NLMSG_DONE, -errno at NLMSG_ERROR (an ACK, errno 0, is skipped),
 * else what each_attr returned. */
static int each_msg(const void *buf, size_t len, attr_fn fn, void *arg)
{
	const unsigned char *p = buf;

	while (len >= NLMSG_HDRLEN) {
		struct nlmsghdr h;
		int rc;

		memcpy(&h, p, sizeof(h));
		if (h.nlmsg_len < NLMSG_HDRLEN || h.nlmsg_len > len)
			return -EBADMSG;
		if (h.nlmsg_type == NLMSG_DONE)
			return 2;
		if (h.nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e;

			if (h.nlmsg_len < NLMSG_HDRLEN + sizeof(e))
				return -EBADMSG;
			memcpy(&e, p + NLMSG_HDRLEN, sizeof(e));
			if (e.error)
				return e.error < 0 ? e.error : -e.error;
		} else {
			rc = each_attr(p + NLMSG_HDRLEN, h.nlmsg_len - NLMSG_HDRLEN, fn, arg);
			if (rc)
				return rc;
		}
		if (NLMSG_ALIGN(h.nlmsg_len) >= len)
			break;
		len -= NLMSG_ALIGN(h.nlmsg_len);
		p += NLMSG_ALIGN(h.nlmsg_len);
	}
	return 0;
}

struct dev_find {
	const char *name;
	uint32_t index, found_index;
	int have_index, found;
};

/* Attributes of one device message: DEV_INDEX comes before DEV_NAME
 * (nldev.c fill_nldev_handle). */
static int dev_attr(uint16_t type, const unsigned char *v, size_t vlen, void *arg)
{
	struct dev_find *f = arg;

	if (type == RDMA_NLDEV_ATTR_DEV_INDEX && vlen >= 4) {
		memcpy(&f->index, v, 4);
		f->have_index = 1;
	} else if (type == RDMA_NLDEV_ATTR_DEV_NAME && f->have_index) {
		size_t n = strnlen((const char *)v, vlen);

		f->have_index = 0;
		if (n == strlen(f->name) && !memcmp(v, f->name, n)) {
			f->found_index = f->index;
			f->found = 1;
		}
	}
	return 0;
}

int qplab_hwc_parse_devices(const void *buf, size_t len, const char *name, uint32_t *index,
			    int *found)
{
	struct dev_find f = {.name = name};
	int rc = each_msg(buf, len, dev_attr, &f);

	if (f.found) {
		*index = f.found_index;
		*found = 1;
	}
	return rc == 2 ? 1 : rc;
}

struct entry {
	char name[QPLAB_HWC_NAME_LEN];
	uint64_t value;
	int have_name, have_value;
};

static int entry_attr(uint16_t type, const unsigned char *v, size_t vlen, void *arg)
{
	struct entry *e = arg;

	if (type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME) {
		snprintf(e->name, sizeof(e->name), "%.*s", (int)strnlen((const char *)v, vlen),
			 (const char *)v);
		e->have_name = 1;
	} else if (type == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE && vlen >= 8) {
		memcpy(&e->value, v, 8);
		e->have_value = 1;
	}
	return 0;
}

static int table_attr(uint16_t type, const unsigned char *v, size_t vlen, void *arg)
{
	struct qplab_hwc *out = arg;
	struct entry e = {.have_name = 0};
	int rc;

	if (type != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
		return 0;
	if ((rc = each_attr(v, vlen, entry_attr, &e)) != 0)
		return rc;
	if (!e.have_name || !e.have_value)
		return -EBADMSG;
	if (out->n < QPLAB_HWC_MAX) {
		snprintf(out->c[out->n].name, sizeof(out->c[out->n].name), "%s", e.name);
		out->c[out->n++].value = e.value;
	}
	return 0;
}

static int stat_attr(uint16_t type, const unsigned char *v, size_t vlen, void *arg)
{
	return type == RDMA_NLDEV_ATTR_STAT_HWCOUNTERS ? each_attr(v, vlen, table_attr, arg) : 0;
}

int qplab_hwc_parse_stat(const void *buf, size_t len, struct qplab_hwc *out)
{
	int rc;

	out->n = 0;
	rc = each_msg(buf, len, stat_attr, out);
	return rc == 2 ? 0 : rc;
}

int64_t qplab_hwc_get(const struct qplab_hwc *h, const char *name)
{
	for (int i = 0; i < h->n; i++)
		if (!strcmp(h->c[i].name, name))
			return (int64_t)h->c[i].value;
	return -1;
}

size_t qplab_qps_req(void *buf, size_t len, uint32_t seq, uint32_t index)
{
	size_t n = header(buf, len, seq, RDMA_NLDEV_CMD_RES_QP_GET, NLM_F_DUMP);

	return finish(buf, put_attr(buf, n, len, RDMA_NLDEV_ATTR_DEV_INDEX, &index, sizeof(index)));
}

struct qps_out {
	struct qplab_qp *qps;
	int max, n;
};

struct qp_entry {
	uint32_t qpn;
	uint8_t state;
	int have_qpn, have_state;
};

static int qp_entry_attr(uint16_t type, const unsigned char *v, size_t vlen, void *arg)
{
	struct qp_entry *e = arg;

	if (type == RDMA_NLDEV_ATTR_RES_LQPN && vlen >= 4) {
		memcpy(&e->qpn, v, 4);
		e->have_qpn = 1;
	} else if (type == RDMA_NLDEV_ATTR_RES_STATE && vlen >= 1) {
		e->state = v[0];
		e->have_state = 1;
	}
	return 0;
}

static int qp_table_attr(uint16_t type, const unsigned char *v, size_t vlen, void *arg)
{
	struct qps_out *o = arg;
	struct qp_entry e = {.have_qpn = 0};
	int rc;

	if (type != RDMA_NLDEV_ATTR_RES_QP_ENTRY)
		return 0;
	if ((rc = each_attr(v, vlen, qp_entry_attr, &e)) != 0)
		return rc;
	if (!e.have_qpn)
		return -EBADMSG;
	if (o->n < o->max) {
		o->qps[o->n].qpn = e.qpn;
		o->qps[o->n].state = e.have_state ? e.state : QPLAB_QP_STATE_UNKNOWN;
	}
	o->n++;
	return 0;
}

static int qps_attr(uint16_t type, const unsigned char *v, size_t vlen, void *arg)
{
	return type == RDMA_NLDEV_ATTR_RES_QP ? each_attr(v, vlen, qp_table_attr, arg) : 0;
}

int qplab_qps_parse(const void *buf, size_t len, struct qplab_qp *qps, int max, int *n)
{
	struct qps_out o = {.qps = qps, .max = max, .n = *n};
	int rc = each_msg(buf, len, qps_attr, &o);

	*n = o.n;
	return rc == 2 ? 1 : rc;
}

const char *qplab_qp_state_name(unsigned state)
{
	/* enum ib_qp_state (include/rdma/ib_verbs.h), as `rdma` names them. */
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "UNKNOWN";
}
