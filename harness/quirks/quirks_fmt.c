/* The probe results as JSON, as a text table and as a markdown matrix.
 * Pure: no device, no process; tests/unit/test_quirks_fmt.c covers it. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/jread.h"
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

/* A probe document through the harness's JSON reader (cli/jread.h): every
 * key is required, of its type, and fits its field. */
#define INT_ANY INT_MIN, INT_MAX

static void info_from(struct jread *r, json_object *o, struct qphs_probe_info *in)
{
	int64_t vendor = 0;

	memset(in, 0, sizeof(*in));
	jread_str_copy(r, o, "device", in->device, sizeof(in->device));
	jread_str_copy(r, o, "peer_device", in->peer_device, sizeof(in->peer_device));
	jread_str_copy(r, o, "driver", in->driver, sizeof(in->driver));
	jread_str_copy(r, o, "quirk", in->quirk, sizeof(in->quirk));
	jread_int(r, o, "port", INT_ANY, &in->port);
	jread_int(r, o, "gid_index", INT_ANY, &in->gid_index);
	jread_int(r, o, "peer_gid_index", INT_ANY, &in->peer_gid_index);
	jread_int(r, o, "gid_tbl_len", INT_ANY, &in->gid_tbl_len);
	jread_int(r, o, "active_mtu", INT_ANY, &in->active_mtu);
	jread_int(r, o, "max_mtu", INT_ANY, &in->max_mtu);
	jread_int(r, o, "max_qp_rd_atom", INT_ANY, &in->max_qp_rd_atom);
	jread_int(r, o, "max_qp_init_rd_atom", INT_ANY, &in->max_qp_init_rd_atom);
	jread_int64(r, o, "vendor_id", 0, UINT32_MAX, &vendor);
	in->vendor_id = (uint32_t)vendor;
	jread_int(r, o, "qp_timeout", INT_ANY, &in->qp_timeout);
	jread_int(r, o, "deadline_ms", INT_ANY, &in->deadline_ms);
}

static void row_from(struct jread *r, json_object *o, struct qphs_probe_row *row)
{
	bool ran = false;

	memset(row, 0, sizeof(*row));
	jread_str_copy(r, o, "probe", row->name, sizeof(row->name));
	jread_bool(r, o, "ran", &ran);
	row->ran = ran;
	jread_int(r, o, "ret", INT_ANY, &row->ret);
	jread_str_copy(r, o, "errno", row->err, sizeof(row->err));
	jread_str_copy(r, o, "state", row->state, sizeof(row->state));
	jread_str_copy(r, o, "completion", row->completion, sizeof(row->completion));
	jread_str_copy(r, o, "note", row->note, sizeof(row->note));
	/* json-c writes 2.0 as 2.0 but 0 as 0: a number of either type. */
	jread_double(r, o, "ms", &row->ms);
}

int quirks_from_json(json_object *doc, struct quirks_column *col, char *err, size_t len)
{
	struct jread r = {.err = err, .errlen = len, .all_required = true};
	json_object *info, *rows, *row;
	int ver = 0;

	memset(col, 0, sizeof(*col));
	if (!json_object_is_type(doc, json_type_object)) {
		snprintf(err, len, "not a JSON object");
		return -1;
	}
	if (jread_int(&r, doc, "schema_version", INT_ANY, &ver) != JREAD_OK)
		return -1;
	if (ver != QUIRKS_SCHEMA_VERSION) {
		snprintf(err, len, "schema_version %d, want %d", ver, QUIRKS_SCHEMA_VERSION);
		return -1;
	}
	jread_str_copy(&r, doc, "kernel", col->kernel, sizeof(col->kernel));
	if (jread_object(&r, doc, "info", &info) == JREAD_OK)
		info_from(&r, info, &col->info);
	if (jread_array(&r, doc, "rows", &rows) != JREAD_OK || r.errors)
		return -1;
	if (json_object_array_length(rows) > QPHS_PROBE_MAX_ROWS) {
		snprintf(err, len, "more than %d rows", QPHS_PROBE_MAX_ROWS);
		return -1;
	}
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		char what[32];

		snprintf(what, sizeof(what), "row %zu", i);
		r.what = what;
		if (jread_elem(&r, rows, "rows", i, json_type_object, &row) == JREAD_OK)
			row_from(&r, row, &col->rows[i]);
		if (r.errors)
			return -1;
		col->nrows = i + 1;
	}
	snprintf(col->label, sizeof(col->label), "%s %s%s%s", col->kernel, col->info.driver,
		 col->info.quirk[0] ? "+" : "", col->info.quirk);
	return 0;
}
