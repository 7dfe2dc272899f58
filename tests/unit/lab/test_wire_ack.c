/* Wire expectations on the ready-ACK: handshake's "ready_ack" key parsed,
 * mooncake.ready_ack_key read per message from tshark's records (one value
 * on every message, so a segment with several lines up), and counted.
 *
 * The records follow what the library sends (lib/setup/connect.c
 * run_handshake, send_ready_ack; lib/setup/passive.c passive_connection):
 * a request of a peer that speaks the ready-ACK carries "ready_ack": false,
 * its ACK (the second Connection request) "ready_ack": true, a reply the
 * key only when the request had it and was no ACK; a peer without it (an
 * old Mooncake, agent ready_ack false) writes no key. */
#include <stdio.h>
#include <string.h>

#include "plan_testutil.h"
#include "scenario/wire.h"
#include "unit.h"

#define HEAD                                                                                        \
	"{ \"description\": \"d\", \"source\": \"s\", \"hosts\": { \"a\": {}, \"b\": {} },\n"         \
	"  \"steps\": [ { \"do\": \"connect\", \"from\": \"a\", \"to\": \"b\" } ],\n"                 \
	"  \"expect\": [ { \"hosts\": \"all\", \"daemon_alive\": true } ],\n"

#define A "\"ip_src\":[\"10.199.0.1\"],\"ip_dst\":[\"10.199.0.2\"]"
#define B "\"ip_src\":[\"10.199.0.2\"],\"ip_dst\":[\"10.199.0.1\"]"

static const char *const ek[] = {
	/* a -> b: its request, then its ACK; b -> a: the two replies, one
	 * with the key (to the request), one without (to the ACK) */
	"{\"layers\":{" A ",\"mooncake_type\":[\"connection\"],\"mooncake_role\":[\"request\"],"
	"\"mooncake_ready_ack_key\":[\"false\"]}}",
	"{\"layers\":{" B ",\"mooncake_type\":[\"connection\"],\"mooncake_role\":[\"reply\"],"
	"\"mooncake_ready_ack_key\":[\"false\"]}}",
	"{\"layers\":{" A ",\"mooncake_type\":[\"connection\"],\"mooncake_role\":[\"request\"],"
	"\"mooncake_ready_ack_key\":[\"true\"]}}",
	/* one segment: a Metadata reply (no key) before the ACK's reply (no
	 * key): the values line up with mooncake_type's */
	"{\"layers\":{" B ",\"mooncake_type\":[\"metadata\",\"connection\"],"
	"\"mooncake_role\":[\"reply\",\"reply\"],\"mooncake_ready_ack_key\":[\"none\",\"none\"]}}",
	/* b -> a: an old peer's request, no key */
	"{\"layers\":{" B ",\"mooncake_type\":[\"connection\"],\"mooncake_role\":[\"request\"],"
	"\"mooncake_ready_ack_key\":[\"none\"]}}",
	/* a record from a dissector without the field: no value, matches
	 * only an expectation without ready_ack */
	"{\"layers\":{" A ",\"mooncake_type\":[\"probe\"],\"mooncake_role\":[\"request\"]}}",
};
#define NEK (sizeof(ek) / sizeof(ek[0]))

static size_t load(struct qplab_wire_pkt *pk)
{
	for (size_t i = 0; i < NEK; i++) {
		char err[256];

		ck_assert_msg(qplab_wire_pkt_parse(ek[i], strlen(ek[i]), &pk[i], err, sizeof(err)) == 0,
			      "line %zu: %s", i, err);
	}
	return NEK;
}

START_TEST(ready_ack_key_is_read_per_message)
{
	struct qplab_wire_pkt pk[NEK];
	size_t n = load(pk);

	ck_assert_str_eq(pk[0].msg[0].ready_ack, "false");
	ck_assert_str_eq(pk[2].msg[0].ready_ack, "true");
	ck_assert_uint_eq(pk[3].nmsg, 2);
	ck_assert_str_eq(pk[3].msg[1].type, "connection");
	ck_assert_str_eq(pk[3].msg[1].ready_ack, "none");
	ck_assert_str_eq(pk[4].msg[0].ready_ack, "none");
	ck_assert_str_eq(pk[5].msg[0].ready_ack, "");
	for (size_t i = 0; i < n; i++)
		qplab_wire_pkt_free(&pk[i]);
}
END_TEST

START_TEST(ready_ack_is_parsed)
{
	struct qplab_plan *p = plan_test_parse(
		HEAD "  \"wire\": [\n"
		"    { \"why\": \"w\", \"handshake\": { \"type\": \"connection\", \"ready_ack\": true }, \"count\": 1 },\n"
		"    { \"why\": \"w\", \"handshake\": { \"ready_ack\": false }, \"count\": 1 },\n"
		"    { \"why\": \"w\", \"handshake\": { \"ready_ack\": \"none\" }, \"count\": 1 },\n"
		"    { \"why\": \"w\", \"handshake\": { \"role\": \"request\" }, \"count\": 1 }\n"
		"  ] }\n");

	ck_assert_str_eq(p->wire[0].ready_ack, "true");
	ck_assert_str_eq(p->wire[1].ready_ack, "false");
	ck_assert_str_eq(p->wire[2].ready_ack, "none");
	ck_assert_str_eq(p->wire[3].ready_ack, ""); /* any, or none recorded */
	qplab_plan_free(p);
}
END_TEST

static const char *const bad[] = {
	"{ \"why\": \"w\", \"handshake\": { \"ready_ack\": \"true\" }, \"count\": 1 }",
	"{ \"why\": \"w\", \"handshake\": { \"ready_ack\": 1 }, \"count\": 1 }",
	"{ \"why\": \"w\", \"handshake\": { \"ready_ack\": null }, \"count\": 1 }",
	"{ \"why\": \"w\", \"roce_packets\": { \"ready_ack\": true }, \"count\": 1 }",
};

START_TEST(ready_ack_refuses_other_values)
{
	char text[1024];
	struct qplab_errors errs = {0};
	struct qplab_plan *p = NULL;

	snprintf(text, sizeof(text), HEAD "  \"wire\": [ %s ] }\n", bad[_i]);
	qplab_scenario_parse("t.json", text, strlen(text), &p, &errs);
	ck_assert_msg(errs.n > 0, "accepted: %s", bad[_i]);
	ck_assert_msg(strstr(errs.msgs[0], "ready_ack") != NULL, "%s", errs.msgs[0]);
	qplab_errors_free(&errs);
	qplab_plan_free(p);
}
END_TEST

static const struct {
	const char *wire;
	bool ok;
	const char *observed;
} evals[] = {
	/* the ACK: the one Connection request with ready_ack true */
	{"\"handshake\": { \"from\": \"a\", \"type\": \"connection\", \"role\": \"request\", \"ready_ack\": true }, \"count\": 1", true, "1"},
	{"\"handshake\": { \"from\": \"b\", \"ready_ack\": true }, \"count\": 0", true, "0"},
	{"\"handshake\": { \"from\": \"a\", \"role\": \"request\", \"ready_ack\": false }, \"count\": 1", true, "1"},
	/* b's replies: one with the key, one without */
	{"\"handshake\": { \"from\": \"b\", \"role\": \"reply\", \"ready_ack\": false }, \"count\": 1", true, "1"},
	{"\"handshake\": { \"from\": \"b\", \"type\": \"connection\", \"role\": \"reply\", \"ready_ack\": \"none\" }, \"count\": 1", true, "1"},
	/* b's request without the key; the Metadata reply has none either */
	{"\"handshake\": { \"from\": \"b\", \"ready_ack\": \"none\" }, \"count\": 3", true, "3"},
	{"\"handshake\": { \"from\": \"b\", \"role\": \"request\", \"ready_ack\": false }, \"count\": { \"min\": 1 }", false, "0"},
	/* without ready_ack every message counts, the probe too */
	{"\"handshake\": { \"from\": \"a\", \"role\": \"request\" }, \"count\": 3", true, "3"},
};

START_TEST(ready_ack_is_counted)
{
	struct qplab_wire_pkt pk[NEK];
	size_t n = load(pk);
	struct qplab_wire_hosts hosts = {.addr = {{"10.199.0.1", ""}, {"10.199.0.2", ""}}, .n = 2};
	char text[2048], expected[256];

	snprintf(text, sizeof(text), HEAD "  \"wire\": [ { \"why\": \"w\", %s } ] }\n", evals[_i].wire);
	plan_test_wire_eval(text, pk, n, &hosts, evals[_i].ok, evals[_i].observed, expected,
			    sizeof(expected));
	if (strstr(evals[_i].wire, "\"ready_ack\""))
		ck_assert_msg(strstr(expected, "ready_ack") != NULL, "%s", expected);
	for (size_t i = 0; i < n; i++)
		qplab_wire_pkt_free(&pk[i]);
}
END_TEST

Suite *suite_wire_ack(void)
{
	Suite *s = suite_create("wire_ack");
	TCase *tc = unit_tcase(s, "wire_ack", 5);

	tcase_add_test(tc, ready_ack_key_is_read_per_message);
	tcase_add_test(tc, ready_ack_is_parsed);
	tcase_add_loop_test(tc, ready_ack_refuses_other_values, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_loop_test(tc, ready_ack_is_counted, 0, sizeof(evals) / sizeof(evals[0]));
	return s;
}
