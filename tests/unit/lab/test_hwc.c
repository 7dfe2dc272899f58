/* RDMA netlink messages for a port's hardware counters and a device's QPs
 * (cli/hwc.h): the requests' bytes and the parsing of replies built here
 * as the kernel's nldev.c lays them out. */
#include <errno.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <string.h>

#include "cli/hwc.h"
#include "unit.h"

struct msg {
	unsigned char b[4096];
	size_t n, nest[4];
	int depth;
};

static void begin(struct msg *m, uint16_t type, uint16_t flags)
{
	struct nlmsghdr h = {.nlmsg_type = type, .nlmsg_flags = flags};

	memcpy(m->b + m->n, &h, sizeof(h));
	m->nest[m->depth++] = m->n;
	m->n += NLMSG_HDRLEN;
}

static void end_msg(struct msg *m)
{
	size_t at = m->nest[--m->depth];
	uint32_t len = (uint32_t)(m->n - at);

	memcpy(m->b + at, &len, sizeof(len));
	m->n = NLMSG_ALIGN(m->n);
}

static void attr(struct msg *m, uint16_t type, const void *v, size_t len)
{
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type};

	memset(m->b + m->n, 0, NLA_ALIGN(a.nla_len));
	memcpy(m->b + m->n, &a, sizeof(a));
	memcpy(m->b + m->n + NLA_HDRLEN, v, len);
	m->n += NLA_ALIGN(a.nla_len);
}

static void nest(struct msg *m, uint16_t type)
{
	struct nlattr a = {.nla_type = (uint16_t)(type | NLA_F_NESTED)};

	memcpy(m->b + m->n, &a, sizeof(a));
	m->nest[m->depth++] = m->n;
	m->n += NLA_HDRLEN;
}

static void end_nest(struct msg *m)
{
	size_t at = m->nest[--m->depth];
	uint16_t len = (uint16_t)(m->n - at);

	memcpy(m->b + at, &len, sizeof(len));
}

static void device(struct msg *m, uint32_t index, const char *name)
{
	begin(m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET), NLM_F_MULTI);
	attr(m, RDMA_NLDEV_ATTR_DEV_INDEX, &index, 4);
	attr(m, RDMA_NLDEV_ATTR_DEV_NAME, name, strlen(name) + 1);
	end_msg(m);
}

static void done(struct msg *m)
{
	int zero = 0;

	begin(m, NLMSG_DONE, NLM_F_MULTI);
	memcpy(m->b + m->n, &zero, 4);
	m->n += 4;
	end_msg(m);
}

static void counter(struct msg *m, const char *name, uint64_t v)
{
	nest(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
	attr(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name, strlen(name) + 1);
	attr(m, RDMA_NLDEV_ATTR_PAD, "", 0); /* nla_put_u64_64bit's alignment pad */
	attr(m, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, &v, 8);
	end_nest(m);
}

START_TEST(hwc_requests_are_nldev_messages)
{
	unsigned char b[256];
	struct nlmsghdr h;
	struct nlattr a;
	uint32_t v;
	size_t n = qplab_hwc_req_stat(b, sizeof(b), 7, 3, 1);

	ck_assert_uint_eq(n, NLMSG_HDRLEN + 2 * NLA_ALIGN(NLA_HDRLEN + 4));
	memcpy(&h, b, sizeof(h));
	ck_assert_uint_eq(h.nlmsg_len, n);
	ck_assert_uint_eq(h.nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET));
	ck_assert_uint_eq(h.nlmsg_seq, 7);
	memcpy(&a, b + NLMSG_HDRLEN, sizeof(a));
	ck_assert_uint_eq(a.nla_type, RDMA_NLDEV_ATTR_DEV_INDEX);
	memcpy(&v, b + NLMSG_HDRLEN + NLA_HDRLEN, 4);
	ck_assert_uint_eq(v, 3);
	memcpy(&a, b + NLMSG_HDRLEN + 8, sizeof(a));
	ck_assert_uint_eq(a.nla_type, RDMA_NLDEV_ATTR_PORT_INDEX);
	n = qplab_hwc_req_devices(b, sizeof(b), 1);
	memcpy(&h, b, sizeof(h));
	ck_assert_uint_eq(n, NLMSG_HDRLEN);
	ck_assert(h.nlmsg_flags & NLM_F_DUMP);
	ck_assert_uint_eq(qplab_hwc_req_stat(b, 20, 1, 1, 1), 0); /* does not fit */
}
END_TEST

START_TEST(hwc_device_dump_is_read_to_its_end)
{
	struct msg m = {.n = 0};
	uint32_t index = 0;
	int found = 0;

	device(&m, 4, "qlr-a");
	device(&m, 9, "qlr-b");
	ck_assert_int_eq(qplab_hwc_parse_devices(m.b, m.n, "qlr-b", &index, &found), 0);
	ck_assert_int_eq(found, 1);
	ck_assert_uint_eq(index, 9);
	found = 0;
	ck_assert_int_eq(qplab_hwc_parse_devices(m.b, m.n, "qlr", &index, &found), 0);
	ck_assert_int_eq(found, 0); /* a prefix is not the name */
	m.n = 0;
	done(&m);
	ck_assert_int_eq(qplab_hwc_parse_devices(m.b, m.n, "qlr-b", &index, &found), 1);
	ck_assert_int_eq(found, 0);
}
END_TEST

START_TEST(hwc_stat_reply_gives_names_and_values)
{
	struct msg m = {.n = 0};
	struct qplab_hwc h;
	uint32_t one = 1;

	begin(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET), 0);
	attr(&m, RDMA_NLDEV_ATTR_DEV_INDEX, &one, 4);
	attr(&m, RDMA_NLDEV_ATTR_PORT_INDEX, &one, 4);
	nest(&m, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	counter(&m, "completer_retry_err", 3);
	counter(&m, "retry_exceeded_err", 1ULL << 40);
	end_nest(&m);
	end_msg(&m);
	ck_assert_int_eq(qplab_hwc_parse_stat(m.b, m.n, &h), 0);
	ck_assert_int_eq(h.n, 2);
	ck_assert_int_eq(qplab_hwc_get(&h, "completer_retry_err"), 3);
	ck_assert_int_eq(qplab_hwc_get(&h, "retry_exceeded_err"), 1LL << 40);
	ck_assert_int_eq(qplab_hwc_get(&h, "sent_pkts"), -1);
	/* Truncated: an attribute longer than its message. */
	ck_assert_int_eq(qplab_hwc_parse_stat(m.b, m.n - 8, &h), -EBADMSG);
}
END_TEST

START_TEST(hwc_kernel_error_is_its_errno)
{
	struct msg m = {.n = 0};
	struct nlmsgerr e = {.error = -ENODEV};
	struct qplab_hwc h;
	uint32_t index;
	int found = 0;

	begin(&m, NLMSG_ERROR, 0);
	memcpy(m.b + m.n, &e, sizeof(e));
	m.n += sizeof(e);
	end_msg(&m);
	ck_assert_int_eq(qplab_hwc_parse_stat(m.b, m.n, &h), -ENODEV);
	ck_assert_int_eq(qplab_hwc_parse_devices(m.b, m.n, "x", &index, &found), -ENODEV);
}
END_TEST

/* One QP entry as fill_res_qp_entry lays it out (nldev.c): the port, the
 * QP number, the state (after ib_query_qp), the type, the owner's PID. */
static void qp(struct msg *m, uint32_t qpn, uint8_t state)
{
	uint32_t port = 1, pid = 4242;
	uint8_t type = 2; /* IB_QPT_RC */

	nest(m, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
	attr(m, RDMA_NLDEV_ATTR_PORT_INDEX, &port, 4);
	attr(m, RDMA_NLDEV_ATTR_RES_LQPN, &qpn, 4);
	attr(m, RDMA_NLDEV_ATTR_RES_STATE, &state, 1);
	attr(m, RDMA_NLDEV_ATTR_RES_TYPE, &type, 1);
	attr(m, RDMA_NLDEV_ATTR_RES_PID, &pid, 4);
	end_nest(m);
}

START_TEST(qps_dump_lists_numbers_and_states)
{
	struct msg m = {.n = 0};
	struct qplab_qp q[4];
	unsigned char b[256];
	struct nlmsghdr h;
	struct nlattr a;
	uint32_t v = 9;
	int n = 0;
	size_t len = qplab_qps_req(b, sizeof(b), 2, 9);

	ck_assert_uint_eq(len, NLMSG_HDRLEN + NLA_ALIGN(NLA_HDRLEN + 4));
	memcpy(&h, b, sizeof(h));
	ck_assert_uint_eq(h.nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET));
	ck_assert(h.nlmsg_flags & NLM_F_DUMP);
	memcpy(&a, b + NLMSG_HDRLEN, sizeof(a));
	ck_assert_uint_eq(a.nla_type, RDMA_NLDEV_ATTR_DEV_INDEX);
	/* Two messages of one dump (the kernel starts another when its skb
	 * is full), each the device's handle and then its table. */
	begin(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET), NLM_F_MULTI);
	attr(&m, RDMA_NLDEV_ATTR_DEV_INDEX, &v, 4);
	attr(&m, RDMA_NLDEV_ATTR_DEV_NAME, "qlr-b", 6);
	nest(&m, RDMA_NLDEV_ATTR_RES_QP);
	qp(&m, 1, 3);
	qp(&m, 17, 0);
	end_nest(&m);
	end_msg(&m);
	begin(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET), NLM_F_MULTI);
	attr(&m, RDMA_NLDEV_ATTR_DEV_INDEX, &v, 4);
	nest(&m, RDMA_NLDEV_ATTR_RES_QP);
	qp(&m, 18, 6);
	end_nest(&m);
	end_msg(&m);
	ck_assert_int_eq(qplab_qps_parse(m.b, m.n, q, 4, &n), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(q[0].qpn, 1);
	ck_assert_uint_eq(q[1].qpn, 17);
	ck_assert_str_eq(qplab_qp_state_name(q[1].state), "RESET");
	ck_assert_uint_eq(q[2].qpn, 18);
	ck_assert_str_eq(qplab_qp_state_name(q[2].state), "ERR");
	ck_assert_str_eq(qplab_qp_state_name(q[0].state), "RTS");
	ck_assert_str_eq(qplab_qp_state_name(7), "UNKNOWN");
	/* Past max they are counted, not stored; NLMSG_DONE ends the dump. */
	n = 0;
	ck_assert_int_eq(qplab_qps_parse(m.b, m.n, q, 1, &n), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(q[0].qpn, 1);
	m.n = 0;
	done(&m);
	ck_assert_int_eq(qplab_qps_parse(m.b, m.n, q, 4, &n), 1);
	ck_assert_int_eq(n, 3);
}
END_TEST

START_TEST(qps_entry_without_a_number_is_malformed)
{
	struct msg m = {.n = 0};
	struct qplab_qp q[2];
	uint8_t state = 3;
	int n = 0;

	begin(&m, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_RES_QP_GET), NLM_F_MULTI);
	nest(&m, RDMA_NLDEV_ATTR_RES_QP);
	nest(&m, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
	attr(&m, RDMA_NLDEV_ATTR_RES_STATE, &state, 1);
	end_nest(&m);
	end_nest(&m);
	end_msg(&m);
	ck_assert_int_eq(qplab_qps_parse(m.b, m.n, q, 2, &n), -EBADMSG);
}
END_TEST

Suite *suite_hwc(void)
{
	Suite *s = suite_create("hwc");
	TCase *tc = unit_tcase(s, "netlink", 10);

	tcase_add_test(tc, hwc_requests_are_nldev_messages);
	tcase_add_test(tc, hwc_device_dump_is_read_to_its_end);
	tcase_add_test(tc, hwc_stat_reply_gives_names_and_values);
	tcase_add_test(tc, hwc_kernel_error_is_its_errno);
	tcase_add_test(tc, qps_dump_lists_numbers_and_states);
	tcase_add_test(tc, qps_entry_without_a_number_is_malformed);
	return s;
}
