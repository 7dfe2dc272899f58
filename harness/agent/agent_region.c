/* The agent's `region` request: its check region registered again with
 * the access flags asked for (qphs_context_register_region), so a peer's
 * READ or WRITE can be refused, and the rkey it had becomes stale; and
 * the `verify` request: this host's own byte-for-byte check of what a
 * peer wrote into that region. */
#include <stdio.h>

#include "agent.h"
#include "cli/jread.h"
#include "cli/labwords.h"

json_object *agent_op_region(struct agent *a, json_object *id, json_object *req)
{
	char err[160] = "", words[80];
	struct jread r = {.what = "request", .err = err, .errlen = sizeof(err)};
	json_object *arr = NULL, *o;
	const char *w;
	uint32_t old_rkey = 0, new_rkey = 0;
	int bits = 0, rc, k;

	if (jread_array(&r, req, "access", &arr) != JREAD_OK || !arr)
		return agent_reply(id, "region", 0, QPHS_ERR_INVALID_ARGUMENT,
				   r.errors ? err : "region: \"access\" (an array of words) missing");
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		if (jread_elem_str(&r, arr, "access", i, &w) != JREAD_OK)
			return agent_reply(id, "region", 0, QPHS_ERR_INVALID_ARGUMENT, err);
		if ((k = qplab_word_index(qplab_access_words, w)) < 0) {
			snprintf(err, sizeof(err), "request: \"access\"[%zu] \"%.40s\" is not one of "
				 "local_write, remote_write, remote_read", i, w);
			return agent_reply(id, "region", 0, QPHS_ERR_INVALID_ARGUMENT, err);
		}
		bits |= 1 << k;
	}
	rc = qphs_context_register_region(a->ctx, bits, &old_rkey, &new_rkey);
	agent_remember(a, rc, rc ? qphs_context_errstr(a->ctx) : "", NULL);
	o = agent_reply(id, "region", 1, rc, a->last_error);
	json_object_object_add(o, "access",
			       json_object_new_string(qplab_access_text(bits, words, sizeof(words))));
	json_object_object_add(o, "old_rkey", rc ? NULL : json_object_new_int64(old_rkey));
	json_object_object_add(o, "new_rkey", rc ? NULL : json_object_new_int64(new_rkey));
	return o;
}

json_object *agent_op_verify(struct agent *a, json_object *id, json_object *req)
{
	char err[160] = "";
	struct jread r = {.what = "request", .err = err, .errlen = sizeof(err)};
	int64_t bytes = 0, seed = -1;
	struct qphs_verify_result v;
	json_object *o;
	int rc;

	jread_int64(&r, req, "bytes", 1, QPHS_CHECK_REGION_BYTES, &bytes);
	jread_int64(&r, req, "seed", 0, INT64_MAX, &seed);
	if (!r.errors && (bytes == 0 || seed < 0))
		snprintf(err, sizeof(err), "verify: needs \"bytes\" (1..%u) and \"seed\"",
			 QPHS_CHECK_REGION_BYTES);
	if (r.errors || bytes == 0 || seed < 0)
		return agent_reply(id, "verify", 0, QPHS_ERR_INVALID_ARGUMENT, err);
	rc = qphs_context_verify_region(a->ctx, (size_t)bytes, (uint64_t)seed, &v);
	agent_remember(a, rc, rc ? v.text : "", NULL);
	o = agent_reply(id, "verify", 1, rc, a->last_error);
	json_object_object_add(o, "mismatched", json_object_new_int64((int64_t)v.mismatched));
	json_object_object_add(o, "first_mismatch", v.mismatched
			       ? json_object_new_int64((int64_t)v.first_mismatch) : NULL);
	return o;
}
