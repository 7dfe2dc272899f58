/* cfg.old_protocol: the handshake's Connection requests go out as untyped
 * (old-protocol) frames, the way Mooncake's client sent them before the
 * type byte, and the untyped reply is accepted. */
#include <stdatomic.h>

#include "setup/handshake.h"
#include "hs_testutil.h"
#include "qphs.h"
#include "unit.h"

static atomic_int seen_type = -1;

/* An empty reply desc, as Mooncake's passive side sends to a ready ACK. */
static void answer(struct qphs_request *req, void *user)
{
	static const char body[] = "{\"local_gid\":\"\",\"local_lid\":0,\"local_nic_path\":\"\","
				   "\"payload\":\"\",\"peer_nic_path\":\"\",\"qp_num\":[],"
				   "\"reply_msg\":\"\"}\n";

	(void)user;
	atomic_store(&seen_type, qphs_request_type(req));
	qphs_request_reply(req, body, sizeof(body) - 1);
}

static const struct {
	bool old;
	int want; /* the type the daemon saw */
} cases[] = {
	{false, QPHS_HS_CONNECTION},
	{true, QPHS_HS_OLD_PROTOCOL},
};

START_TEST(old_protocol_flag_picks_the_frame_type_of_connection_requests)
{
	struct qphs_config cfg;
	struct qphs_hs_desc local, reply;
	struct qphs_daemon *d = NULL;
	char txt[256] = "";

	hs_test_config(&cfg);
	ck_assert(!cfg.old_protocol); /* the default speaks typed frames */
	cfg.old_protocol = cases[_i].old;
	ck_assert_int_eq(qphs_daemon_new(&cfg, &d), 0);
	ck_assert_int_eq(qphs_daemon_set_handler(d, QPHS_HS_CONNECTION, answer, NULL), 0);
	ck_assert_int_eq(qphs_daemon_listen(d, "127.0.0.1", 0), 0);
	ck_assert_int_eq(qphs_daemon_start(d), 0);
	ck_assert_int_eq(qphs_hs_desc_init(&local), 0);
	atomic_store(&seen_type, -1);
	ck_assert_int_eq(qphs__hs_send(&cfg, hs_test_addr(d), &local, &reply, NULL, txt,
				       sizeof(txt), NULL), 0);
	ck_assert_int_eq(atomic_load(&seen_type), cases[_i].want);
	ck_assert_str_eq(reply.reply_msg, "");
	qphs_hs_desc_clear(&reply);
	qphs_hs_desc_clear(&local);
	qphs_daemon_free(d);
}
END_TEST

Suite *suite_old_protocol(void)
{
	Suite *s = suite_create("old_protocol");
	TCase *tc = unit_tcase(s, "client", 20);

	tcase_add_loop_test(tc, old_protocol_flag_picks_the_frame_type_of_connection_requests, 0,
			    (int)(sizeof(cases) / sizeof(cases[0])));
	return s;
}
