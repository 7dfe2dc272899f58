/* GID strings, nic paths and host:port names (lib/codec/gid.c, lib/codec/nicpath.c). */
#include <stdlib.h>
#include <string.h>

#include "qphs/body.h"
#include "qphs.h"
#include "unit.h"

#define V4MAPPED "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01"

/* Mooncake's parseGidString (rdma_endpoint.cpp): what it takes and what it refuses. */
static const struct {
	const char *in;
	int ok;
	uint8_t last; /* gid[15] when ok */
	uint8_t tenth;  /* gid[10] when ok */
} gid_rows[] = {
	{V4MAPPED, 1, 0x01, 0xff},
	{"00:00:00:00:00:00:00:00:00:00:FF:FF:0A:00:00:01", 1, 0x01, 0xff},
	{"0:0:0:0:0:0:0:0:0:0:a:b:c:d:e:f", 1, 0x0f, 0x0a},
	{"000ff:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0", 1, 0x00, 0x00},
	{"0x0:0:0:0:0:0:0:0:0:0:0X1f:0:0:0:0:0xfe", 1, 0xfe, 0x1f},
	{"0: 0:\t0:0:0:0:0:0:0:0:ff:0:0:0:0: 7", 1, 0x07, 0xff},
	{"fe:80:00:00:00:00:00:00:02:00:00:ff:fe:00:00:100", 0, 0, 0}, /* > 0xff */
	{"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00", 0, 0, 0},     /* 15 fields */
	{V4MAPPED ":00", 0, 0, 0},                                     /* 17 fields */
	{V4MAPPED ":", 0, 0, 0},                                       /* trailing ':' */
	{V4MAPPED " ", 0, 0, 0},                                       /* trailing space */
	{V4MAPPED "x", 0, 0, 0},
	{"fe80::1", 0, 0, 0},                                          /* IPv6 notation */
	{"00::00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01", 0, 0, 0},     /* empty field */
	{"", 0, 0, 0},
	{"0x:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0", 0, 0, 0},                 /* 0x, no digits */
	{"g0:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01", 0, 0, 0},
	{"-1:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01", 0, 0, 0},
};

START_TEST(gid_parse_follows_mooncake)
{
	uint8_t gid[16] = {0};
	int rc = qphs_gid_parse(gid_rows[_i].in, gid);

	if (gid_rows[_i].ok) {
		ck_assert_msg(rc == 0, "\"%s\" refused", gid_rows[_i].in);
		ck_assert_uint_eq(gid[15], gid_rows[_i].last);
		ck_assert_uint_eq(gid[10], gid_rows[_i].tenth);
	} else {
		ck_assert_msg(rc == QPHS_ERR_BAD_GID, "\"%s\" accepted", gid_rows[_i].in);
		unit_hit(rc);
	}
}
END_TEST

START_TEST(gid_format_is_47_lowercase_chars)
{
	uint8_t gid[16], back[16];
	char s[QPHS_GID_STR_LEN + 1];

	for (int i = 0; i < 16; i++)
		gid[i] = (uint8_t)(i * 17 + 10);
	qphs_gid_format(gid, s);
	ck_assert_uint_eq(strlen(s), 47);
	ck_assert_str_eq(s, "0a:1b:2c:3d:4e:5f:70:81:92:a3:b4:c5:d6:e7:f8:09");
	ck_assert_int_eq(qphs_gid_parse(s, back), 0);
	ck_assert_mem_eq(gid, back, 16);
	ck_assert_int_eq(qphs_gid_parse(NULL, back), QPHS_ERR_BAD_GID);
}
END_TEST

static const struct {
	const char *in, *server, *device;
} nic_rows[] = {
	{"10.0.0.1:15123@mlx5_0", "10.0.0.1:15123", "mlx5_0"},
	{"[fe80::1%eth0]:15000@rxe0", "[fe80::1%eth0]:15000", "rxe0"},
	{"host@dev@more", "host", "dev@more"}, /* the first '@' splits */
	{"host", NULL, NULL},
	{"@dev", NULL, NULL},
	{"host@", NULL, NULL},
	{"", NULL, NULL},
};

START_TEST(gid_nic_path_splits_at_first_at)
{
	char *server = NULL, *device = NULL;
	int rc = qphs_nic_path_split(nic_rows[_i].in, &server, &device);

	if (nic_rows[_i].server) {
		ck_assert_int_eq(rc, 0);
		ck_assert_str_eq(server, nic_rows[_i].server);
		ck_assert_str_eq(device, nic_rows[_i].device);
	} else {
		ck_assert_int_eq(rc, QPHS_ERR_BAD_NIC_PATH);
		ck_assert_ptr_null(server);
		unit_hit(rc);
	}
	free(server);
	free(device);
}
END_TEST

/* Mooncake's parseHostNameWithPort (common.h), except that a bad port is an
 * error here (Mooncake falls back to the default port). */
static const struct {
	const char *in, *host;
	int port; /* -1: QPHS_ERR_BAD_ADDRESS */
} hp_rows[] = {
	{"10.0.0.1:15000", "10.0.0.1", 15000},
	{"10.0.0.1", "10.0.0.1", 12001},
	{"node-a.example:1", "node-a.example", 1},
	{"[fe80::1]", "fe80::1", 12001},
	{"[fe80::1]:16000", "fe80::1", 16000},
	{"[::1]:0", "::1", 0},
	{"fe80::1", "fe80::1", 12001},
	{"fe80::1:1500", "fe80::1:1500", 12001}, /* a valid bare v6 keeps the default port */
	{"fe80::1:15000", "fe80::1", 15000},      /* not valid v6: split at the last ':' */
	{"fe80::1%eth0", "fe80::1%eth0", 12001},
	{"fe80::1%eth0:15000", "fe80::1%eth0", 15000},
	{"host:65535", "host", 65535},
	{"host:65536", NULL, -1},
	{"host:", NULL, -1},
	{"host:12a", NULL, -1},
	{"host:-1", NULL, -1},
	{"host: 80", NULL, -1},
	{":80", NULL, -1},
	{"[fe80::1]x", NULL, -1},
	{"[fe80::1", NULL, -1},
	{"[]:80", NULL, -1},
	{"", NULL, -1},
};

START_TEST(gid_host_port_follows_mooncake)
{
	char host[64] = "";
	uint16_t port = 0;
	int rc = qphs_parse_host_port(hp_rows[_i].in, host, sizeof(host), &port, 12001);

	if (hp_rows[_i].port < 0) {
		ck_assert_msg(rc == QPHS_ERR_BAD_ADDRESS, "\"%s\" accepted", hp_rows[_i].in);
		unit_hit(rc);
		return;
	}
	ck_assert_msg(rc == 0, "\"%s\" refused", hp_rows[_i].in);
	ck_assert_str_eq(host, hp_rows[_i].host);
	ck_assert_int_eq(port, hp_rows[_i].port);
}
END_TEST

START_TEST(gid_host_port_bounds_and_format)
{
	char host[8], buf[64];
	uint16_t port;

	ck_assert_int_eq(qphs_parse_host_port("abcdefgh:1", host, sizeof(host), &port, 1),
			 QPHS_ERR_BAD_ADDRESS);
	ck_assert_int_eq(qphs_parse_host_port("abcdefg:1", host, sizeof(host), &port, 1), 0);
	ck_assert_int_eq(qphs_format_host_port("10.0.0.1", 15000, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "10.0.0.1:15000");
	ck_assert_int_eq(qphs_format_host_port("fe80::1%eth0", 80, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "[fe80::1%eth0]:80");
	ck_assert_int_eq(qphs_format_host_port("10.0.0.1", 15000, buf, 14), QPHS_ERR_BAD_ADDRESS);
	ck_assert_int_eq(qphs_format_host_port("", 1, buf, sizeof(buf)), QPHS_ERR_BAD_ADDRESS);
	unit_hit(QPHS_ERR_BAD_ADDRESS);
	/* What format writes, parse reads back. */
	ck_assert_int_eq(qphs_format_host_port("::1", 16000, buf, sizeof(buf)), 0);
	ck_assert_int_eq(qphs_parse_host_port(buf, host, sizeof(host), &port, 1), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_int_eq(port, 16000);
}
END_TEST

Suite *suite_gid(void)
{
	Suite *s = suite_create("gid");
	TCase *tc = unit_tcase(s, "gid", 10);

	tcase_add_loop_test(tc, gid_parse_follows_mooncake, 0,
			    sizeof(gid_rows) / sizeof(gid_rows[0]));
	tcase_add_test(tc, gid_format_is_47_lowercase_chars);
	tc = unit_tcase(s, "names", 10);
	tcase_add_loop_test(tc, gid_nic_path_splits_at_first_at, 0,
			    sizeof(nic_rows) / sizeof(nic_rows[0]));
	tcase_add_loop_test(tc, gid_host_port_follows_mooncake, 0,
			    sizeof(hp_rows) / sizeof(hp_rows[0]));
	tcase_add_test(tc, gid_host_port_bounds_and_format);
	return s;
}
