/* Metadata bodies: segment descriptors <-> JSON, as Mooncake's
 * TransferMetadata::encodeSegmentDesc and decodeSegmentDesc
 * (transfer_metadata.cpp) write and read them.
 *
 * Mooncake drops the whole descriptor ("Corrupted segment descriptor") on
 * an empty device name or gid, a buffer with an empty name, addr 0 or
 * length 0, or a non-empty rkey whose size differs from lkey's or from the
 * device count; so do we, with QPHS_ERR_METADATA and that text followed by
 * the detail in brackets.  Wrong JSON types are QPHS_ERR_BODY_* as in every
 * other body. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "qphs/body.h"
#include "jsonr.h"
#include "jsonw.h"
#include "qphs/error.h"

#define CORRUPT "Corrupted segment descriptor"

int qphs_segment_desc_init(struct qphs_segment_desc *s)
{
	memset(s, 0, sizeof(*s));
	if (qphs_desc_set_str(&s->name, "") || qphs_desc_set_str(&s->protocol, "") ||
	    qphs_desc_set_str(&s->timestamp, "") ||
	    qphs_desc_set_str(&s->rdma_server_name, "")) {
		qphs_segment_desc_clear(s);
		return QPHS_ERR_MEMORY;
	}
	return 0;
}

void qphs_segment_desc_clear(struct qphs_segment_desc *s)
{
	for (size_t i = 0; s->devices && i < s->device_count; i++) {
		free(s->devices[i].name);
		free(s->devices[i].gid);
	}
	for (size_t i = 0; s->buffers && i < s->buffer_count; i++) {
		free(s->buffers[i].name);
		free(s->buffers[i].rkey);
		free(s->buffers[i].lkey);
	}
	free(s->devices);
	free(s->buffers);
	free(s->name);
	free(s->protocol);
	free(s->timestamp);
	free(s->rdma_server_name);
	json_object_put(s->priority_matrix);
	memset(s, 0, sizeof(*s));
}

/* An array key: missing or null is empty; otherwise it must be an array. */
static int array_of(struct json_object *obj, const char *key, struct json_object **arr,
		    size_t *n, char *err, size_t errlen)
{
	*arr = qphs__jr_get(obj, key);
	*n = 0;
	if (!*arr)
		return 0;
	if (json_object_get_type(*arr) != json_type_array)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
				     "%s: not an array", key);
	*n = json_object_array_length(*arr);
	return 0;
}

static int element_object(struct json_object *e, const char *what, char *err, size_t errlen)
{
	if (json_object_get_type(e) == json_type_object)
		return 0;
	return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE, "%s: not an object", what);
}

static int read_device(struct json_object *e, size_t i, struct qphs_seg_device *dev,
		       char *err, size_t errlen)
{
	char what[64], key[80];
	uint64_t lid = 0;
	struct json_object *v;
	int rc;

	snprintf(what, sizeof(what), "devices[%zu]", i);
	if ((rc = element_object(e, what, err, errlen)))
		return rc;
	snprintf(key, sizeof(key), "%s.name", what);
	if ((rc = qphs__jr_string(qphs__jr_get(e, "name"), key, &dev->name, err, errlen)))
		return rc;
	snprintf(key, sizeof(key), "%s.gid", what);
	if ((rc = qphs__jr_string(qphs__jr_get(e, "gid"), key, &dev->gid, err, errlen)))
		return rc;
	snprintf(key, sizeof(key), "%s.lid", what);
	v = qphs__jr_get(e, "lid");
	if (v && (rc = qphs__jr_uint(v, key, "a LID", UINT16_MAX, &lid, err, errlen)))
		return rc;
	dev->lid = (uint16_t)lid;
	if (!*dev->name || !*dev->gid)
		return qphs__jr_fail(err, errlen, QPHS_ERR_METADATA, CORRUPT " [%s: empty %s]",
				     what, *dev->name ? "gid" : "name");
	return 0;
}

static int read_keys(struct json_object *e, const char *what, struct qphs_seg_buffer *b,
		     char *err, size_t errlen)
{
	char key[80];
	int rc;

	snprintf(key, sizeof(key), "%s.rkey", what);
	rc = qphs__jr_u32_array(qphs__jr_get(e, "rkey"), key, "a memory key", SIZE_MAX / 8,
				QPHS_ERR_BODY_OUT_OF_RANGE, &b->rkey, &b->rkey_count, err, errlen);
	if (rc)
		return rc;
	snprintf(key, sizeof(key), "%s.lkey", what);
	return qphs__jr_u32_array(qphs__jr_get(e, "lkey"), key, "a memory key", SIZE_MAX / 8,
				  QPHS_ERR_BODY_OUT_OF_RANGE, &b->lkey, &b->lkey_count, err,
				  errlen);
}

static int read_buffer(struct json_object *e, size_t i, size_t ndev,
		       struct qphs_seg_buffer *b, char *err, size_t errlen)
{
	char what[64], key[80];
	struct json_object *v;
	int rc;

	snprintf(what, sizeof(what), "buffers[%zu]", i);
	if ((rc = element_object(e, what, err, errlen)))
		return rc;
	snprintf(key, sizeof(key), "%s.name", what);
	if ((rc = qphs__jr_string(qphs__jr_get(e, "name"), key, &b->name, err, errlen)))
		return rc;
	snprintf(key, sizeof(key), "%s.addr", what);
	if ((v = qphs__jr_get(e, "addr")) &&
	    (rc = qphs__jr_uint(v, key, "an address", UINT64_MAX, &b->addr, err, errlen)))
		return rc;
	snprintf(key, sizeof(key), "%s.length", what);
	if ((v = qphs__jr_get(e, "length")) &&
	    (rc = qphs__jr_uint(v, key, "a length", UINT64_MAX, &b->length, err, errlen)))
		return rc;
	if ((rc = read_keys(e, what, b, err, errlen)))
		return rc;
	if (!*b->name || !b->addr || !b->length)
		return qphs__jr_fail(err, errlen, QPHS_ERR_METADATA, CORRUPT " [%s: %s]", what,
				     !*b->name ? "empty name" : !b->addr ? "addr is 0" : "length is 0");
	if (b->rkey_count && (b->rkey_count != b->lkey_count || b->rkey_count != ndev))
		return qphs__jr_fail(err, errlen, QPHS_ERR_METADATA,
				     CORRUPT " [%s: %zu rkeys, %zu lkeys, %zu devices]", what,
				     b->rkey_count, b->lkey_count, ndev);
	return 0;
}

static int read_devices(struct json_object *obj, struct qphs_segment_desc *s, char *err,
			size_t errlen)
{
	struct json_object *arr;
	size_t n;
	int rc = array_of(obj, "devices", &arr, &n, err, errlen);

	if (rc || !n)
		return rc;
	s->devices = calloc(n, sizeof(*s->devices));
	if (!s->devices)
		return QPHS_ERR_MEMORY;
	for (size_t i = 0; i < n; i++) {
		s->device_count = i + 1;
		rc = read_device(json_object_array_get_idx(arr, i), i, &s->devices[i], err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static int read_buffers(struct json_object *obj, struct qphs_segment_desc *s, char *err,
			size_t errlen)
{
	struct json_object *arr;
	size_t n;
	int rc = array_of(obj, "buffers", &arr, &n, err, errlen);

	if (rc || !n)
		return rc;
	s->buffers = calloc(n, sizeof(*s->buffers));
	if (!s->buffers)
		return QPHS_ERR_MEMORY;
	for (size_t i = 0; i < n; i++) {
		s->buffer_count = i + 1;
		rc = read_buffer(json_object_array_get_idx(arr, i), i, s->device_count,
				 &s->buffers[i], err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* tcp_data_port and tcp_proto_version: Mooncake's asInt, so a 32-bit int. */
static int read_int(struct json_object *obj, const char *key, int64_t *out, char *err,
		    size_t errlen)
{
	struct json_object *v = qphs__jr_get(obj, key);
	char t[64];

	*out = 0;
	if (!v)
		return 0;
	if (json_object_get_type(v) != json_type_int)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
				     "%s: not an integer", key);
	*out = json_object_get_int64(v);
	if (*out < INT32_MIN || *out > INT32_MAX) {
		qphs__json_scalar_text(v, t, sizeof(t));
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_OUT_OF_RANGE,
				     "%s: %s is not a 32-bit integer", key, t);
	}
	return 0;
}

/* Ours: "qphs": {"checksum": bool, "crc32": u32, "crc_len": u64}; keys we
 * do not know are ignored (a later qplab may add some). */
static int read_qphs(struct json_object *obj, struct qphs_segment_desc *s, char *err,
		     size_t errlen)
{
	struct json_object *q = qphs__jr_get(obj, "qphs"), *v;
	uint64_t n;
	int rc;

	if (!q)
		return 0;
	if (json_object_get_type(q) != json_type_object)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE, "qphs: not an object");
	if ((v = qphs__jr_get(q, "checksum"))) {
		if (json_object_get_type(v) != json_type_boolean)
			return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
					     "qphs.checksum: not a bool");
		s->qphs_checksum = json_object_get_boolean(v);
	}
	if ((v = qphs__jr_get(q, "crc32"))) {
		if ((rc = qphs__jr_uint(v, "qphs.crc32", "a CRC-32", UINT32_MAX, &n, err, errlen)))
			return rc;
		s->crc32 = (uint32_t)n;
		s->has_crc = true;
	}
	if ((v = qphs__jr_get(q, "crc_len")) &&
	    (rc = qphs__jr_uint(v, "qphs.crc_len", "a length", UINT64_MAX, &s->crc_len, err,
				errlen)))
		return rc;
	return 0;
}

static int read_segment(struct json_object *obj, struct qphs_segment_desc *s, char *err,
			size_t errlen)
{
	static const char *const keys[] = {"name", "protocol", "timestamp", "rdma_server_name"};
	char **fields[] = {&s->name, &s->protocol, &s->timestamp, &s->rdma_server_name};
	struct json_object *pm;
	int rc;

	for (size_t i = 0; i < 4; i++)
		if ((rc = qphs__jr_string(qphs__jr_get(obj, keys[i]), keys[i], fields[i], err,
					  errlen)))
			return rc;
	if ((rc = read_int(obj, "tcp_data_port", &s->tcp_data_port, err, errlen)) ||
	    (rc = read_int(obj, "tcp_proto_version", &s->tcp_proto_version, err, errlen)) ||
	    (rc = read_devices(obj, s, err, errlen)) || (rc = read_buffers(obj, s, err, errlen)))
		return rc;
	pm = qphs__jr_get(obj, "priority_matrix");
	if (pm && json_object_get_type(pm) != json_type_object)
		return qphs__jr_fail(err, errlen, QPHS_ERR_BODY_WRONG_TYPE,
				     "priority_matrix: not an object");
	s->priority_matrix = json_object_get(pm);
	return read_qphs(obj, s, err, errlen);
}

int qphs_segment_desc_parse(const char *json, size_t json_len,
			     struct qphs_segment_desc *out, char *err, size_t errlen)
{
	struct json_object *obj;
	int rc = qphs_json_parse(json, json_len, &obj, err, errlen);

	if (rc)
		return rc;
	if (json_object_get_type(obj) != json_type_object)
		rc = qphs__jr_fail(err, errlen, QPHS_ERR_BODY_NOT_OBJECT,
				   "segment descriptor is not a JSON object");
	if (!rc)
		rc = qphs__jr_check_strings(obj, err, errlen);
	if (!rc && !(rc = qphs_segment_desc_init(out))) {
		rc = read_segment(obj, out, err, errlen);
		if (rc)
			qphs_segment_desc_clear(out);
	}
	json_object_put(obj);
	return rc;
}

static int add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

/* Appends e (taken) to arr; a NULL e (allocation failed) fails. */
static int push(struct json_object *arr, struct json_object *e)
{
	if (!e || json_object_array_add(arr, e)) {
		json_object_put(e);
		return -1;
	}
	return 0;
}

static struct json_object *u32s(const uint32_t *a, size_t n)
{
	struct json_object *arr = json_object_new_array_ext((int)n);

	for (size_t i = 0; arr && i < n; i++) {
		if (push(arr, json_object_new_int64(a[i]))) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

static struct json_object *device_json(const struct qphs_seg_device *d)
{
	struct json_object *o = json_object_new_object();

	if (o && (add(o, "name", json_object_new_string(d->name ? d->name : "")) |
		  add(o, "lid", json_object_new_int(d->lid)) |
		  add(o, "gid", json_object_new_string(d->gid ? d->gid : "")))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *buffer_json(const struct qphs_seg_buffer *b)
{
	struct json_object *o = json_object_new_object();

	if (o && (add(o, "name", json_object_new_string(b->name ? b->name : "")) |
		  add(o, "addr", json_object_new_uint64(b->addr)) |
		  add(o, "length", json_object_new_uint64(b->length)) |
		  add(o, "rkey", u32s(b->rkey, b->rkey_count)) |
		  add(o, "lkey", u32s(b->lkey, b->lkey_count)))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *qphs_json(const struct qphs_segment_desc *s)
{
	struct json_object *o = json_object_new_object();

	if (o && (add(o, "checksum", json_object_new_boolean(s->qphs_checksum)) ||
		  (s->has_crc && (add(o, "crc32", json_object_new_int64(s->crc32)) ||
				  add(o, "crc_len", json_object_new_uint64(s->crc_len)))))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int build_lists(const struct qphs_segment_desc *s, struct json_object *o)
{
	struct json_object *devs = json_object_new_array(), *bufs = json_object_new_array();
	int bad = 0;

	for (size_t i = 0; devs && i < s->device_count; i++)
		bad |= push(devs, device_json(&s->devices[i]));
	for (size_t i = 0; bufs && i < s->buffer_count; i++)
		bad |= push(bufs, buffer_json(&s->buffers[i]));
	bad |= add(o, "devices", devs) | add(o, "buffers", bufs);
	return bad;
}

int qphs_segment_desc_encode(const struct qphs_segment_desc *s, char **out,
			      size_t *out_len)
{
	struct json_object *o = json_object_new_object();
	int bad, rc;

	if (!o)
		return QPHS_ERR_MEMORY;
	bad = add(o, "name", json_object_new_string(s->name ? s->name : "")) |
	      add(o, "protocol", json_object_new_string(s->protocol ? s->protocol : "")) |
	      add(o, "tcp_data_port", json_object_new_int64(s->tcp_data_port)) |
	      add(o, "tcp_proto_version", json_object_new_int64(s->tcp_proto_version)) |
	      add(o, "timestamp", json_object_new_string(s->timestamp ? s->timestamp : "")) |
	      build_lists(s, o);
	if (s->rdma_server_name && *s->rdma_server_name)
		bad |= add(o, "rdma_server_name", json_object_new_string(s->rdma_server_name));
	/* Always written, as encodeSegmentDesc does: an empty topology, {}
	 * or none, is null (Topology::toJson of an empty matrix). */
	if (s->priority_matrix && json_object_object_length(s->priority_matrix))
		bad |= add(o, "priority_matrix", json_object_get(s->priority_matrix));
	else
		bad |= json_object_object_add(o, "priority_matrix", NULL) ? -1 : 0;
	if (s->qphs_checksum || s->has_crc)
		bad |= add(o, "qphs", qphs_json(s));
	rc = bad ? QPHS_ERR_MEMORY : qphs__jsonw_write(o, out, out_len);
	json_object_put(o);
	return rc;
}
