/* The probe results as JSON, as a text table and as a markdown matrix.
 * Pure: no device, no process; tests/unit/test_quirks_fmt.c covers it. */
#include <stdio.h>
#include <string.h>

#include "quirks.h"

#define ADD(o, k, v) json_object_object_add(o, k, v)

static json_object *info_json(const struct qphs_probe_info *in)
{
	json_object *o = json_object_new_object();

	ADD(o, "device", json_object_new_string(in->device));
	ADD(o, "peer_device", json_object_new_string(in->peer_device));
	ADD(o, "driver", json_object_new_string(in->driver));
	ADD(o, "quirk", json_object_new_string(in->quirk));
	ADD(o, "port", json_object_new_int(in->port));
	ADD(o, "gid_index", json_object_new_int(in->gid_index));
	ADD(o, "peer_gid_index", json_object_new_int(in->peer_gid_index));
	ADD(o, "gid_tbl_len", json_object_new_int(in->gid_tbl_len));
	ADD(o, "active_mtu", json_object_new_int(in->active_mtu));
	ADD(o, "max_mtu", json_object_new_int(in->max_mtu));
	ADD(o, "max_qp_rd_atom", json_object_new_int(in->max_qp_rd_atom));
	ADD(o, "max_qp_init_rd_atom", json_object_new_int(in->max_qp_init_rd_atom));
	ADD(o, "vendor_id", json_object_new_int64(in->vendor_id));
	ADD(o, "qp_timeout", json_object_new_int(in->qp_timeout));
	ADD(o, "deadline_ms", json_object_new_int(in->deadline_ms));
	return o;
}

static json_object *row_json(const struct qphs_probe_row *r)
{
	json_object *o = json_object_new_object();

	ADD(o, "probe", json_object_new_string(r->name));
	ADD(o, "ran", json_object_new_boolean(r->ran));
	ADD(o, "ret", json_object_new_int(r->ret));
	ADD(o, "errno", json_object_new_string(r->err));
	ADD(o, "state", json_object_new_string(r->state));
	ADD(o, "completion", json_object_new_string(r->completion));
	ADD(o, "ms", json_object_new_double((double)(long long)(r->ms * 100.0 + 0.5) / 100.0));
	ADD(o, "note", json_object_new_string(r->note));
	return o;
}

json_object *quirks_to_json(const char *kernel, const struct qphs_probe_info *info,
			    const struct qphs_probe_row *rows, size_t n)
{
	json_object *doc = json_object_new_object(), *arr = json_object_new_array();

	ADD(doc, "schema_version", json_object_new_int(QUIRKS_SCHEMA_VERSION));
	ADD(doc, "kernel", json_object_new_string(kernel));
	ADD(doc, "info", info_json(info));
	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, row_json(&rows[i]));
	ADD(doc, "rows", arr);
	return doc;
}

/* ---- decoding ------------------------------------------------------------ */

static int get(json_object *o, const char *k, json_type t, json_object **v, char *err, size_t len)
{
	if (!json_object_object_get_ex(o, k, v) || !json_object_is_type(*v, t)) {
		snprintf(err, len, "key '%s' missing or not %s", k, json_type_to_name(t));
		return -1;
	}
	return 0;
}

static int get_str(json_object *o, const char *k, char *out, size_t cap, char *err, size_t len)
{
	json_object *v;

	if (get(o, k, json_type_string, &v, err, len))
		return -1;
	if ((size_t)json_object_get_string_len(v) >= cap) {
		snprintf(err, len, "key '%s' longer than %zu bytes", k, cap - 1);
		return -1;
	}
	memcpy(out, json_object_get_string(v), (size_t)json_object_get_string_len(v) + 1);
	return 0;
}

static int get_int(json_object *o, const char *k, int *out, char *err, size_t len)
{
	json_object *v;

	if (get(o, k, json_type_int, &v, err, len))
		return -1;
	*out = json_object_get_int(v);
	return 0;
}

static int info_from(json_object *o, struct qphs_probe_info *in, char *err, size_t len)
{
	int vendor = 0;

	memset(in, 0, sizeof(*in));
	return get_str(o, "device", in->device, sizeof(in->device), err, len) ||
	       get_str(o, "peer_device", in->peer_device, sizeof(in->peer_device), err, len) ||
	       get_str(o, "driver", in->driver, sizeof(in->driver), err, len) ||
	       get_str(o, "quirk", in->quirk, sizeof(in->quirk), err, len) ||
	       get_int(o, "port", &in->port, err, len) ||
	       get_int(o, "gid_index", &in->gid_index, err, len) ||
	       get_int(o, "peer_gid_index", &in->peer_gid_index, err, len) ||
	       get_int(o, "gid_tbl_len", &in->gid_tbl_len, err, len) ||
	       get_int(o, "active_mtu", &in->active_mtu, err, len) ||
	       get_int(o, "max_mtu", &in->max_mtu, err, len) ||
	       get_int(o, "max_qp_rd_atom", &in->max_qp_rd_atom, err, len) ||
	       get_int(o, "max_qp_init_rd_atom", &in->max_qp_init_rd_atom, err, len) ||
	       get_int(o, "vendor_id", &vendor, err, len) ||
	       (in->vendor_id = (uint32_t)vendor, 0) ||
	       get_int(o, "qp_timeout", &in->qp_timeout, err, len) ||
	       get_int(o, "deadline_ms", &in->deadline_ms, err, len)
		       ? -1
		       : 0;
}

static int row_from(json_object *o, struct qphs_probe_row *r, char *err, size_t len)
{
	json_object *v;

	memset(r, 0, sizeof(*r));
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, len, "a row is not an object");
		return -1;
	}
	if (get_str(o, "probe", r->name, sizeof(r->name), err, len) ||
	    get(o, "ran", json_type_boolean, &v, err, len))
		return -1;
	r->ran = json_object_get_boolean(v);
	if (get_int(o, "ret", &r->ret, err, len) ||
	    get_str(o, "errno", r->err, sizeof(r->err), err, len) ||
	    get_str(o, "state", r->state, sizeof(r->state), err, len) ||
	    get_str(o, "completion", r->completion, sizeof(r->completion), err, len) ||
	    get_str(o, "note", r->note, sizeof(r->note), err, len))
		return -1;
	/* json-c writes 2.0 as 2.0 but 0 as 0: accept both number types. */
	if (!json_object_object_get_ex(o, "ms", &v) ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
		snprintf(err, len, "key 'ms' missing or not a number");
		return -1;
	}
	r->ms = json_object_get_double(v);
	return 0;
}

int quirks_from_json(json_object *doc, struct quirks_column *col, char *err, size_t len)
{
	json_object *v, *rows;
	int ver;
	char e[200] = "";

	memset(col, 0, sizeof(*col));
	if (!json_object_is_type(doc, json_type_object)) {
		snprintf(err, len, "not a JSON object");
		return -1;
	}
	if (get_int(doc, "schema_version", &ver, err, len))
		return -1;
	if (ver != QUIRKS_SCHEMA_VERSION) {
		snprintf(err, len, "schema_version %d, want %d", ver, QUIRKS_SCHEMA_VERSION);
		return -1;
	}
	if (get_str(doc, "kernel", col->kernel, sizeof(col->kernel), err, len) ||
	    get(doc, "info", json_type_object, &v, err, len) ||
	    info_from(v, &col->info, err, len) || get(doc, "rows", json_type_array, &rows, err, len))
		return -1;
	if (json_object_array_length(rows) > QPHS_PROBE_MAX_ROWS) {
		snprintf(err, len, "more than %d rows", QPHS_PROBE_MAX_ROWS);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		if (row_from(json_object_array_get_idx(rows, i), &col->rows[i], e, sizeof(e))) {
			snprintf(err, len, "row %zu: %s", i, e);
			return -1;
		}
		col->nrows = i + 1;
	}
	snprintf(col->label, sizeof(col->label), "%s %s%s%s", col->kernel, col->info.driver,
		 col->info.quirk[0] ? "+" : "", col->info.quirk);
	return 0;
}
