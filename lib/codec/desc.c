/* Connection, Notify and Probe bodies <-> JSON (see desc.h). */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "qphs/body.h"
#include "descfast.h"
#include "jsonr.h"
#include "jsonw.h"
#include "qphs/error.h"

/* Other transports' keys: carried through verbatim, never interpreted. */
static const char *const extra_keys[] = {"barex_port", "cxi_addr", "efa_addr", "jetty_num"};
#define N_EXTRA (sizeof(extra_keys) / sizeof(extra_keys[0]))

int qphs_desc_set_str(char **field, const char *value)
{
	char *copy = strdup(value ? value : "");

	if (!copy)
		return QPHS_ERR_MEMORY;
	free(*field);
	*field = copy;
	return 0;
}

static char **hs_strings(struct qphs_hs_desc *d, size_t i)
{
	char **f[] = {&d->local_nic_path, &d->local_gid, &d->peer_nic_path, &d->reply_msg,
		      &d->payload};
	return i < sizeof(f) / sizeof(f[0]) ? f[i] : NULL;
}

int qphs_hs_desc_init(struct qphs_hs_desc *d)
{
	memset(d, 0, sizeof(*d));
	for (size_t i = 0; hs_strings(d, i); i++) {
		if (qphs_desc_set_str(hs_strings(d, i), "")) {
			qphs_hs_desc_clear(d);
			return QPHS_ERR_MEMORY;
		}
	}
	return 0;
}

void qphs_hs_desc_clear(struct qphs_hs_desc *d)
{
	for (size_t i = 0; hs_strings(d, i); i++)
		free(*hs_strings(d, i));
	free(d->qp_num);
	json_object_put(d->extra);
	memset(d, 0, sizeof(*d));
}

int qphs_hs_desc_copy(struct qphs_hs_desc *dst, const struct qphs_hs_desc *src)
{
	struct qphs_hs_desc *s = (struct qphs_hs_desc *)src;

	if (qphs_hs_desc_init(dst))
		return QPHS_ERR_MEMORY;
	for (size_t i = 0; hs_strings(dst, i); i++)
		if (qphs_desc_set_str(hs_strings(dst, i), *hs_strings(s, i)))
			goto fail;
	if (src->qp_count) {
		dst->qp_num = malloc(src->qp_count * sizeof(*dst->qp_num));
		if (!dst->qp_num)
			goto fail;
		memcpy(dst->qp_num, src->qp_num, src->qp_count * sizeof(*dst->qp_num));
	}
	dst->qp_count = src->qp_count;
	dst->local_lid = src->local_lid;
	dst->has_ready_ack = src->has_ready_ack;
	dst->ready_ack = src->ready_ack;
	dst->path_mtu = src->path_mtu;
	if (src->extra && json_object_deep_copy(src->extra, &dst->extra, NULL))
		goto fail;
	return 0;
fail:
	qphs_hs_desc_clear(dst);
	return QPHS_ERR_MEMORY;
}

static int read_ready_ack(struct json_object *obj, struct qphs_hs_desc *d, char *err,
			  size_t errlen)
{
	struct json_object *v = NULL;

	/* Mooncake: a present key (even null) means "supported". */
	d->has_ready_ack = json_object_object_get_ex(obj, "ready_ack", &v);
	d->ready_ack = false;
	if (!d->has_ready_ack || json_object_get_type(v) == json_type_null)
		return 0;
	if (json_object_get_type(v) != json_type_boolean)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
				     "ready_ack: not a bool (true or false)");
	d->ready_ack = json_object_get_boolean(v);
	return 0;
}

static int read_path_mtu(struct json_object *obj, struct qphs_hs_desc *d, char *err,
			 size_t errlen)
{
	struct json_object *v = qphs__jr_get(obj, "qphs_path_mtu");
	uint64_t mtu;
	int rc;

	d->path_mtu = 0;
	if (!v)
		return 0;
	rc = qphs__jr_uint(v, "qphs_path_mtu", "a path MTU", 4096, &mtu, err, errlen);
	if (rc == QPHS_ERR_BODY_WRONG_TYPE)
		return rc;
	if (rc == 0 && mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
		rc = QPHS_ERR_BODY_OUT_OF_RANGE;
	if (rc) {
		char t[64];
		qphs__json_scalar_text(v, t, sizeof(t));
		return qphs__jr_fail(err, errlen, rc,
				     "qphs_path_mtu: %s is not 256, 512, 1024, 2048 or 4096", t);
	}
	if (rc == 0)
		d->path_mtu = (int)mtu;
	return rc;
}

/* local_gid follows Mooncake's isString() rule: a number or bool there reads
 * as "" (not stringified); an array or object is refused like elsewhere. */
static int read_gid(struct json_object *obj, struct qphs_hs_desc *d, char *err, size_t errlen)
{
	struct json_object *v = qphs__jr_get(obj, "local_gid");
	enum json_type t = json_object_get_type(v);

	if (v && t != json_type_string && t != json_type_array && t != json_type_object)
		v = NULL;
	return qphs__jr_string(v, "local_gid", &d->local_gid, err, errlen);
}

static int read_extra(struct json_object *obj, struct qphs_hs_desc *d)
{
	for (size_t i = 0; i < N_EXTRA; i++) {
		struct json_object *v = NULL;

		if (!json_object_object_get_ex(obj, extra_keys[i], &v))
			continue;
		if (!d->extra && !(d->extra = json_object_new_object()))
			return QPHS_ERR_MEMORY;
		if (json_object_object_add(d->extra, extra_keys[i], json_object_get(v)))
			return QPHS_ERR_MEMORY;
	}
	return 0;
}

static int read_hs(struct json_object *obj, struct qphs_hs_desc *d, char *err, size_t errlen)
{
	static const char *const keys[] = {"local_nic_path", "", "peer_nic_path", "reply_msg",
					   "payload"};
	uint64_t lid = 0;
	struct json_object *v;
	int rc;

	for (size_t i = 0; hs_strings(d, i); i++) {
		if (!*keys[i])
			continue;
		rc = qphs__jr_string(qphs__jr_get(obj, keys[i]), keys[i], hs_strings(d, i), err,
				     errlen);
		if (rc)
			return rc;
	}
	if ((rc = read_gid(obj, d, err, errlen)))
		return rc;
	v = qphs__jr_get(obj, "local_lid");
	if (v && (rc = qphs__jr_uint(v, "local_lid", "a LID", UINT16_MAX, &lid, err, errlen)))
		return rc;
	d->local_lid = (uint16_t)lid;
	rc = qphs__jr_u32_array(qphs__jr_get(obj, "qp_num"), "qp_num", "a QP number", QPHS_MAX_QPS,
				QPHS_ERR_BODY_TOO_MANY_QPS, &d->qp_num, &d->qp_count, err, errlen);
	if (rc)
		return rc;
	if ((rc = read_ready_ack(obj, d, err, errlen)) || (rc = read_path_mtu(obj, d, err, errlen)))
		return rc;
	return read_extra(obj, d);
}

static int need_object(struct json_object *obj, char *err, size_t errlen)
{
	static const char *const names[] = {
		[json_type_null] = "null", [json_type_boolean] = "a bool",
		[json_type_double] = "a number", [json_type_int] = "a number",
		[json_type_object] = "an object", [json_type_array] = "an array",
		[json_type_string] = "a string"};

	if (json_object_get_type(obj) == json_type_object)
		return qphs__jr_check_strings(obj, err, errlen);
	return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_NOT_OBJECT,
			     "body is %s, not a JSON object", names[json_object_get_type(obj)]);
}

static int hs_desc_from_json(struct json_object *obj, struct qphs_hs_desc *out, char *err,
			    size_t errlen)
{
	int rc = need_object(obj, err, errlen);

	if (rc)
		return rc;
	if (qphs_hs_desc_init(out))
		return QPHS_ERR_MEMORY;
	rc = read_hs(obj, out, err, errlen);
	if (rc)
		qphs_hs_desc_clear(out);
	return rc;
}

int qphs__hs_desc_parse_json(const char *json, size_t json_len, struct qphs_hs_desc *out,
			     char *err, size_t errlen)
{
	struct json_object *obj;
	int rc = qphs_json_parse(json, json_len, &obj, err, errlen);

	if (rc)
		return rc;
	rc = hs_desc_from_json(obj, out, err, errlen);
	json_object_put(obj);
	return rc;
}

/* The common body without json-c, the same result (descfast.h); every
 * other body, and every refusal, through json-c. */
int qphs_hs_desc_parse(const char *json, size_t json_len, struct qphs_hs_desc *out,
			char *err, size_t errlen)
{
	size_t members;

	if (qphs__hs_desc_fast(json, json_len, out, &members))
		return 0;
	return qphs__hs_desc_parse_json(json, json_len, out, err, errlen);
}

/* Adds key -> v to obj, taking v; a NULL v (allocation failed) fails. */
static int add(struct json_object *obj, const char *key, struct json_object *v)
{
	if (!v || json_object_object_add(obj, key, v)) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

static struct json_object *str(const char *s)
{
	return json_object_new_string(s ? s : "");
}

static struct json_object *u32_array(const uint32_t *a, size_t n)
{
	struct json_object *arr = json_object_new_array_ext((int)n);

	for (size_t i = 0; arr && i < n; i++) {
		struct json_object *e = json_object_new_int64(a[i]);
		if (!e || json_object_array_add(arr, e)) {
			json_object_put(e);
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

static int build_hs(const struct qphs_hs_desc *d, struct json_object *o)
{
	int bad = add(o, "local_nic_path", str(d->local_nic_path)) |
		  add(o, "local_lid", json_object_new_int(d->local_lid)) |
		  add(o, "local_gid", str(d->local_gid)) |
		  add(o, "peer_nic_path", str(d->peer_nic_path)) |
		  add(o, "qp_num", u32_array(d->qp_num, d->qp_count)) |
		  add(o, "reply_msg", str(d->reply_msg)) | add(o, "payload", str(d->payload));

	/* Mooncake writes the key when supported or when true. */
	if (d->has_ready_ack || d->ready_ack)
		bad |= add(o, "ready_ack", json_object_new_boolean(d->ready_ack));
	if (d->path_mtu)
		bad |= add(o, "qphs_path_mtu", json_object_new_int(d->path_mtu));
	for (size_t i = 0; d->extra && i < N_EXTRA; i++) {
		struct json_object *v = NULL;
		if (!json_object_object_get_ex(d->extra, extra_keys[i], &v))
			continue;
		if (!v) /* a carried null */
			bad |= json_object_object_add(o, extra_keys[i], NULL) ? -1 : 0;
		else
			bad |= add(o, extra_keys[i], json_object_get(v));
	}
	return bad ? QPHS_ERR_MEMORY : 0;
}

static int write_obj(struct json_object *o, int rc, char **out, size_t *out_len)
{
	if (!rc)
		rc = qphs__jsonw_write(o, out, out_len);
	json_object_put(o);
	return rc;
}

int qphs__hs_desc_encode_tree(const struct qphs_hs_desc *d, char **out, size_t *out_len)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return QPHS_ERR_MEMORY;
	return write_obj(o, build_hs(d, o), out, out_len);
}

/* build_hs's keys, written in jsoncpp's byte order without a tree: the
 * same bytes (test_desc compares the two), at a fraction of the cost of a
 * json-c object per key.  A descriptor carrying other transports' keys
 * takes the tree, which sorts them in. */
int qphs__hs_desc_encode_general(const struct qphs_hs_desc *d, char **out, size_t *out_len)
{
	struct qphs__jw b = {0};

	if (d->extra)
		return qphs__hs_desc_encode_tree(d, out, out_len);
	qphs__jw_raw(&b, "{\"local_gid\":", 13);
	qphs__jw_string(&b, d->local_gid);
	qphs__jw_raw(&b, ",\"local_lid\":", 13);
	qphs__jw_int(&b, d->local_lid);
	qphs__jw_raw(&b, ",\"local_nic_path\":", 18);
	qphs__jw_string(&b, d->local_nic_path);
	qphs__jw_raw(&b, ",\"payload\":", 11);
	qphs__jw_string(&b, d->payload);
	qphs__jw_raw(&b, ",\"peer_nic_path\":", 17);
	qphs__jw_string(&b, d->peer_nic_path);
	qphs__jw_raw(&b, ",\"qp_num\":[", 11);
	for (size_t i = 0; i < d->qp_count; i++) {
		if (i)
			qphs__jw_raw(&b, ",", 1);
		qphs__jw_int(&b, d->qp_num[i]);
	}
	qphs__jw_raw(&b, "]", 1);
	if (d->path_mtu) {
		qphs__jw_raw(&b, ",\"qphs_path_mtu\":", 17);
		qphs__jw_int(&b, d->path_mtu);
	}
	if (d->has_ready_ack || d->ready_ack)
		qphs__jw_raw(&b, d->ready_ack ? ",\"ready_ack\":true" : ",\"ready_ack\":false",
			     d->ready_ack ? 17 : 18);
	qphs__jw_raw(&b, ",\"reply_msg\":", 13);
	qphs__jw_string(&b, d->reply_msg);
	qphs__jw_raw(&b, "}", 1);
	return qphs__jw_finish(&b, out, out_len);
}

/* Plain strings (the common case) take descwrite.c's shortcut: the same
 * bytes, fuzz/fuzz_hs_desc_write compares the two. */
int qphs_hs_desc_encode(const struct qphs_hs_desc *d, char **out, size_t *out_len)
{
	if (qphs__hs_desc_encode_plain(d, out, out_len))
		return 0;
	return qphs__hs_desc_encode_general(d, out, out_len);
}

void qphs_notify_clear(struct qphs_notify *n)
{
	free(n->name);
	free(n->notify_msg);
	n->name = n->notify_msg = NULL;
}

int qphs_notify_parse(const char *json, size_t json_len, struct qphs_notify *out,
		       char *err, size_t errlen)
{
	struct json_object *obj;
	int rc = qphs_json_parse(json, json_len, &obj, err, errlen);

	out->name = out->notify_msg = NULL;
	if (rc)
		return rc;
	rc = need_object(obj, err, errlen);
	if (!rc)
		rc = qphs__jr_string(qphs__jr_get(obj, "name"), "name", &out->name, err, errlen);
	if (!rc)
		rc = qphs__jr_string(qphs__jr_get(obj, "notify_msg"), "notify_msg",
				     &out->notify_msg, err, errlen);
	json_object_put(obj);
	if (rc)
		qphs_notify_clear(out);
	return rc;
}

int qphs_notify_encode(const struct qphs_notify *n, char **out, size_t *out_len)
{
	struct json_object *o = json_object_new_object();
	int bad;

	if (!o)
		return QPHS_ERR_MEMORY;
	bad = add(o, "name", str(n->name)) | add(o, "notify_msg", str(n->notify_msg));
	return write_obj(o, bad ? QPHS_ERR_MEMORY : 0, out, out_len);
}

int qphs_probe_parse(const char *json, size_t json_len, char *err, size_t errlen)
{
	struct json_object *obj;
	int rc = qphs_json_parse(json, json_len, &obj, err, errlen);

	if (rc)
		return rc;
	rc = need_object(obj, err, errlen);
	json_object_put(obj);
	return rc;
}

int qphs_probe_reply_encode(char **out, size_t *out_len)
{
	static const char reply[] = "{\"status\":\"success\"}\n";

	*out = strdup(reply);
	if (!*out)
		return QPHS_ERR_MEMORY;
	*out_len = sizeof(reply) - 1;
	return 0;
}
