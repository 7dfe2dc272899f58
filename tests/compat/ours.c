/* ours — libqphs's side of the differential test (tests/compat).
 *
 * Reads the same table as mooncake_ref and prints one line per table line
 * in the same format, or "reject NAME" where libqphs refuses the input.
 * For Connection bodies the "enc" field re-encodes only what Mooncake's
 * decoder keeps (qphs_path_mtu and other transports' keys are left out);
 * the unit suite `desc` checks that those round-trip. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "qphs/body.h"
#include "codec/jsonw.h"
#include "qphs.h"

static char *pct_decode(const char *s, size_t *n)
{
	char *out = malloc(strlen(s) + 1);
	size_t j = 0;

	for (size_t i = 0; out && s[i]; i++) {
		unsigned v;
		if (s[i] == '%' && s[i + 1] && s[i + 2] && sscanf(s + i + 1, "%2x", &v) == 1) {
			out[j++] = (char)v;
			i += 2;
		} else {
			out[j++] = s[i];
		}
	}
	if (out)
		out[j] = '\0';
	*n = j;
	return out;
}

static void put_hex(const char *s, size_t n)
{
	if (!n)
		putchar('-');
	for (size_t i = 0; i < n; i++)
		printf("%02x", (unsigned char)s[i]);
}

static void put_hexs(const char *s)
{
	put_hex(s, strlen(s));
}

/* A table field's hex (libqphs's decoder), NUL-terminated; a field that is
 * not hex is a broken table: say so and stop. */
static char *unhex(const char *s, size_t n)
{
	char *out = calloc(n / 2 + 1, 1);
	size_t len = 0, at = 0;

	if (out && qphs_hex_decode(s, n, 0, (uint8_t *)out, n / 2, &len, &at)) {
		fprintf(stderr, "ours: table field '%.*s' is not hex at byte %zu\n", (int)n, s, at);
		exit(2);
	}
	return out;
}

static size_t u32_list(const char *v, size_t n, uint32_t **out)
{
	size_t count = 0;
	char *copy = strndup(v, n), *save = NULL;

	*out = calloc(n + 1, sizeof(**out));
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		(*out)[count++] = (uint32_t)strtoul(t, NULL, 10);
	free(copy);
	return count;
}

static void extra_add(struct qphs_hs_desc *d, const char *key, struct json_object *v)
{
	if (!d->extra)
		d->extra = json_object_new_object();
	json_object_object_add(d->extra, key, v);
}

static struct json_object *u32_json(const char *v, size_t n)
{
	uint32_t *a;
	size_t c = u32_list(v, n, &a);
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < c; i++)
		json_object_array_add(arr, json_object_new_int64(a[i]));
	free(a);
	return arr;
}

static void set_field(struct qphs_hs_desc *d, const char *key, size_t klen, const char *v,
		      size_t n)
{
	static const char *const names[] = {"local_nic_path", "local_gid", "peer_nic_path",
					    "reply_msg", "payload"};
	char **f[] = {&d->local_nic_path, &d->local_gid, &d->peer_nic_path, &d->reply_msg,
		      &d->payload};
	char *s = NULL;

#define IS(k) (klen == strlen(k) && !strncmp(key, k, klen))
	/* The string fields are hex; the numbers and lists are not. */
	for (size_t i = 0; i < 5; i++)
		if (IS(names[i]))
			s = unhex(v, n);
	if (IS("efa_addr") || IS("cxi_addr"))
		s = unhex(v, n);
	for (size_t i = 0; i < 5; i++)
		if (IS(names[i]))
			qphs_desc_set_str(f[i], s);
	if (IS("local_lid"))
		d->local_lid = (uint16_t)strtoul(v, NULL, 10);
	else if (IS("qp_num"))
		d->qp_count = u32_list(v, n, &d->qp_num);
	else if (IS("ready_ack"))
		d->has_ready_ack = true, d->ready_ack = v[0] == '1';
	else if (IS("efa_addr") || IS("cxi_addr"))
		extra_add(d, IS("efa_addr") ? "efa_addr" : "cxi_addr", json_object_new_string(s));
	else if (IS("barex_port"))
		extra_add(d, "barex_port", json_object_new_int(atoi(v)));
	else if (IS("jetty_num"))
		extra_add(d, "jetty_num", u32_json(v, n));
#undef IS
	free(s);
}

static void run_enc(const char *rec)
{
	struct qphs_hs_desc d;
	char *out;
	size_t len;

	qphs_hs_desc_init(&d);
	while (*rec) {
		const char *end = strchr(rec, ';'), *eq = strchr(rec, '=');
		if (!end)
			end = rec + strlen(rec);
		if (eq && eq + 2 < end)
			set_field(&d, rec, (size_t)(eq - rec), eq + 3, (size_t)(end - eq - 3));
		rec = *end ? end + 1 : end;
	}
	qphs_hs_desc_encode(&d, &out, &len);
	printf("ok enc=");
	put_hex(out, len);
	free(out);
	qphs_hs_desc_clear(&d);
}

static void print_hs(struct qphs_hs_desc *d)
{
	char *out;
	size_t len;

	printf("ok lnp=");
	put_hexs(d->local_nic_path);
	printf(" lid=%u gid=", d->local_lid);
	put_hexs(d->local_gid);
	printf(" pnp=");
	put_hexs(d->peer_nic_path);
	printf(" qp=");
	for (size_t i = 0; i < d->qp_count; i++)
		printf("%s%u", i ? "," : "", d->qp_num[i]);
	printf("%s reply=", d->qp_count ? "" : "-");
	put_hexs(d->reply_msg);
	printf(" payload=");
	put_hexs(d->payload);
	printf(" ack=%s enc=", !d->has_ready_ack ? "absent" : d->ready_ack ? "true" : "false");
	/* Only what Mooncake's decoder keeps (see the header comment). */
	d->path_mtu = 0;
	json_object_put(d->extra);
	d->extra = NULL;
	qphs_hs_desc_encode(d, &out, &len);
	put_hex(out, len);
	free(out);
}

static void run_body(const char *mode, const char *body, size_t n)
{
	char err[256];
	char *out;
	size_t len;
	int rc;

	if (!strcmp(mode, "write")) {
		struct json_object *obj;
		rc = qphs_json_parse(body, n, &obj, err, sizeof(err));
		if (!rc) {
			qphs__jsonw_write(obj, &out, &len);
			json_object_put(obj);
			printf("ok enc=");
			put_hex(out, len);
			free(out);
		}
	} else if (!strcmp(mode, "seg")) {
		struct qphs_segment_desc s;
		rc = qphs_segment_desc_parse(body, n, &s, err, sizeof(err));
		if (!rc) {
			qphs_segment_desc_encode(&s, &out, &len);
			printf("ok enc=");
			put_hex(out, len);
			free(out);
			qphs_segment_desc_clear(&s);
		}
	} else if (!strcmp(mode, "notify")) {
		struct qphs_notify nt;
		rc = qphs_notify_parse(body, n, &nt, err, sizeof(err));
		if (!rc) {
			printf("ok name=");
			put_hexs(nt.name);
			printf(" msg=");
			put_hexs(nt.notify_msg);
			qphs_notify_encode(&nt, &out, &len);
			printf(" enc=");
			put_hex(out, len);
			free(out);
			qphs_notify_clear(&nt);
		}
	} else {
		struct qphs_hs_desc d;
		rc = qphs_hs_desc_parse(body, n, &d, err, sizeof(err));
		if (!rc) {
			print_hs(&d);
			qphs_hs_desc_clear(&d);
		}
	}
	if (rc)
		printf("reject %s: %s", qphs_errname(rc), err);
}

int main(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;

	while ((got = getline(&line, &cap, stdin)) >= 0) {
		char expect[32], mode[16];
		int off = 0;
		size_t n;
		char *arg;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (sscanf(line, "%31s %15s %n", expect, mode, &off) < 2)
			continue;
		arg = pct_decode(line + off, &n);
		if (!strcmp(mode, "enc"))
			run_enc(arg);
		else
			run_body(mode, arg, n);
		putchar('\n');
		free(arg);
	}
	free(line);
	return 0;
}
