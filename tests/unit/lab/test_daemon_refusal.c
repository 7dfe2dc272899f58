/* The daemon's last refusal (qphs_daemon_last_refusal): every bad frame the
 * lab's raw_frame step can send is remembered with the reason the daemon
 * logged, so the target agent can report it. */
#include <string.h>

#include "agent/agent.h"
#include "hs/bad_frame.h"
#include "hs_testutil.h"
#include "qphs.h"
#include "unit.h"

/* Each named bad frame and the code the daemon must give as its reason,
 * written from the table's rows, not from the daemon's output. */
static const struct {
	const char *kind;
	int code;
	const char *words; /* the row's TEXT, which the log line carries */
} frames[] = {
	{"zero-length", QPHS_ERR_FRAME_ZERO_LENGTH, "frame length is zero"},
	{"oversize", QPHS_ERR_FRAME_TOO_LONG, "frame length exceeds MC_HANDSHAKE_MAX_LENGTH"},
	{"truncate", QPHS_ERR_FRAME_TRUNCATED, "connection ended inside a frame"},
	{"garbage", QPHS_ERR_FRAME_BAD_TYPE, "frame type byte is in 0x80-0xff"},
	{"empty-body", QPHS_ERR_FRAME_EMPTY_BODY, "frame has no JSON body"},
	{"not-json", QPHS_ERR_FRAME_NOT_JSON, "frame body is not JSON"},
	{"trailing", QPHS_ERR_FRAME_TRAILING, "bytes after the JSON value in a frame"},
};

START_TEST(daemon_refusal_names_each_bad_frame)
{
	struct qphs_config cfg;
	struct qphs_daemon_refusal before, after;
	uint8_t buf[QPLAB_BAD_FRAME_MAX], out[64];
	size_t len;
	struct qphs_daemon *d;

	hs_test_config(&cfg);
	d = hs_test_daemon(&cfg, NULL);
	qphs_daemon_last_refusal(d, &before);
	ck_assert_uint_eq(before.count, 0);
	ck_assert_str_eq(before.text, "");
	ck_assert_int_eq(qplab_bad_frame(frames[_i].kind, buf, &len), 0);
	/* Closed without a reply: nothing comes back. */
	ck_assert_int_eq(hs_test_exchange(qphs_daemon_port(d), buf, len, 1, out, sizeof(out)), 0);
	qphs_daemon_last_refusal(d, &after);
	ck_assert_uint_eq(after.count, 1);
	ck_assert_str_eq(qphs_errname(after.code), qphs_errname(frames[_i].code));
	ck_assert_msg(!strncmp(after.text, "[Handshake] closing connection from 127.0.0.1:", 46),
		      "%s", after.text);
	ck_assert_msg(strstr(after.text, frames[_i].words), "%s", after.text);
	unit_hit(after.code);
	/* It keeps serving. */
	hs_test_assert_probe(d);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_refusal_keeps_the_last_of_several)
{
	struct qphs_config cfg;
	struct qphs_daemon_refusal r;
	uint8_t buf[QPLAB_BAD_FRAME_MAX], out[64];
	size_t len;
	struct qphs_daemon *d;

	hs_test_config(&cfg);
	d = hs_test_daemon(&cfg, NULL);
	ck_assert_int_eq(qplab_bad_frame("zero-length", buf, &len), 0);
	hs_test_exchange(qphs_daemon_port(d), buf, len, 1, out, sizeof(out));
	ck_assert_int_eq(qplab_bad_frame("not-json", buf, &len), 0);
	hs_test_exchange(qphs_daemon_port(d), buf, len, 1, out, sizeof(out));
	hs_test_assert_probe(d); /* a good request is no refusal */
	qphs_daemon_last_refusal(d, &r);
	ck_assert_uint_eq(r.count, 2);
	ck_assert_int_eq(r.code, QPHS_ERR_FRAME_NOT_JSON);
	ck_assert_ptr_nonnull(strstr(r.text, "frame body is not JSON"));
	unit_hit(r.code);
	qphs_daemon_free(d);
}
END_TEST

START_TEST(daemon_refusal_covers_a_connection_body_of_the_wrong_shape)
{
	struct qphs_config cfg;
	struct qphs_daemon_refusal r;
	uint8_t frame[256], out[1024];
	struct qphs_daemon *d;
	size_t len;
	ssize_t n;

	hs_test_config(&cfg);
	d = hs_test_daemon(&cfg, NULL);
	len = hs_test_frame(QPHS_HS_CONNECTION, "{\"local_nic_path\": [1]}", frame, sizeof(frame));
	n = hs_test_exchange(qphs_daemon_port(d), frame, len, 1, out, sizeof(out));
	ck_assert_int_gt(n, 9); /* answered, with an error reply */
	qphs_daemon_last_refusal(d, &r);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_int_eq(r.code, QPHS_ERR_BODY_WRONG_TYPE);
	ck_assert_msg(!strncmp(r.text, "[Handshake] rejecting Connection request from ", 46), "%s",
		      r.text);
	unit_hit(r.code);
	qphs_daemon_free(d);
}
END_TEST

static const char *reply_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

/* The agent's `daemon_refusal`, for a frame another host sent its daemon:
 * "mark" notes the count; the next request takes the refusal logged since
 * as the host's last outcome, and "none since" is OK. */
START_TEST(agent_daemon_refusal_takes_what_came_since_the_mark)
{
	struct qphs_config cfg;
	struct agent a;
	uint8_t buf[QPLAB_BAD_FRAME_MAX], out[64];
	size_t len;
	json_object *req, *rep;

	memset(&a, 0, sizeof(a));
	hs_test_config(&cfg);
	a.d = hs_test_daemon(&cfg, NULL);
	/* a refusal before the mark is not this step's */
	ck_assert_int_eq(qplab_bad_frame("not-json", buf, &len), 0);
	hs_test_exchange(qphs_daemon_port(a.d), buf, len, 1, out, sizeof(out));
	req = json_tokener_parse("{\"mark\": true}");
	rep = agent_op_daemon_refusal(&a, NULL, req);
	ck_assert_str_eq(reply_str(rep, "code"), "OK");
	json_object_put(rep);
	json_object_put(req);
	ck_assert_int_eq(qplab_bad_frame("truncate", buf, &len), 0);
	hs_test_exchange(qphs_daemon_port(a.d), buf, len, 1, out, sizeof(out));
	req = json_tokener_parse("{\"deadline_ms\": 1000}");
	rep = agent_op_daemon_refusal(&a, NULL, req);
	/* the truncated frame's row of the error table, not the earlier one */
	ck_assert_str_eq(reply_str(rep, "code"), qphs_errname(QPHS_ERR_FRAME_TRUNCATED));
	ck_assert_ptr_nonnull(strstr(reply_str(rep, "error"), "connection ended inside a frame"));
	ck_assert_str_eq(a.last_code, qphs_errname(QPHS_ERR_FRAME_TRUNCATED));
	ck_assert_ptr_nonnull(strstr(a.last_error, "connection ended inside a frame"));
	json_object_put(rep);
	/* asked again with nothing new: it refused nothing */
	rep = agent_op_daemon_refusal(&a, NULL, req);
	ck_assert_str_eq(reply_str(rep, "code"), "OK");
	ck_assert_str_eq(reply_str(rep, "error"), "");
	ck_assert_str_eq(a.last_code, "OK");
	json_object_put(rep);
	json_object_put(req);
	req = json_tokener_parse("{\"mark\": 1}");
	rep = agent_op_daemon_refusal(&a, NULL, req);
	ck_assert_str_eq(reply_str(rep, "code"), qphs_errname(QPHS_ERR_INVALID_ARGUMENT));
	json_object_put(rep);
	json_object_put(req);
	qphs_daemon_free(a.d);
}
END_TEST

START_TEST(daemon_refusal_of_null_daemon_is_empty)
{
	struct qphs_daemon_refusal r;

	memset(&r, 0x55, sizeof(r));
	qphs_daemon_last_refusal(NULL, &r);
	ck_assert_uint_eq(r.count, 0);
	ck_assert_int_eq(r.code, 0);
	ck_assert_str_eq(r.text, "");
}
END_TEST

Suite *suite_daemon_refusal(void)
{
	Suite *s = suite_create("daemon_refusal");
	TCase *tc = unit_tcase(s, "refusal", 20);

	tcase_add_loop_test(tc, daemon_refusal_names_each_bad_frame, 0,
			    (int)(sizeof(frames) / sizeof(frames[0])));
	tcase_add_test(tc, daemon_refusal_keeps_the_last_of_several);
	tcase_add_test(tc, daemon_refusal_covers_a_connection_body_of_the_wrong_shape);
	tcase_add_test(tc, daemon_refusal_of_null_daemon_is_empty);
	tcase_add_test(tc, agent_daemon_refusal_takes_what_came_since_the_mark);
	return s;
}
