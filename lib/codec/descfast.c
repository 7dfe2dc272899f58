/* The common Connection body read in one pass, without json-c (descfast.h):
 * a scan that only looks (struct scan), then one allocation per field. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/body.h"
#include "qphs/json.h"
#include "descfast.h"
#include "jsonw.h"

/* The string keys first, in qphs_hs_desc's order. */
enum { K_NIC, K_GID, K_PEER, K_REPLY, K_PAYLOAD, N_STR = K_PAYLOAD + 1,
       K_LID = N_STR, K_QPS, K_ACK, K_MTU, N_KEYS };

static const struct {
	const char *name;
	size_t len;
} key_names[N_KEYS] = {
	[K_NIC] = {"local_nic_path", 14}, [K_GID] = {"local_gid", 9},
	[K_PEER] = {"peer_nic_path", 13}, [K_REPLY] = {"reply_msg", 9},
	[K_PAYLOAD] = {"payload", 7},     [K_LID] = {"local_lid", 9},
	[K_QPS] = {"qp_num", 6},          [K_ACK] = {"ready_ack", 9},
	[K_MTU] = {"qphs_path_mtu", 13},
};

struct scan {
	const char *s;
	size_t n, i;
	unsigned seen; /* bit k: key k was read */
	const char *str[N_STR];
	size_t str_len[N_STR];
	uint64_t lid, mtu;
	bool ack;
	uint32_t qps[QPHS_MAX_QPS];
	size_t qp_count;
	size_t members;
};

static void skip_space(struct scan *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
			       p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

/* The next byte is c: consumed. */
static bool take(struct scan *p, char c)
{
	if (p->i >= p->n || p->s[p->i] != c)
		return false;
	p->i++;
	return true;
}

static bool digit_at(const struct scan *p)
{
	return p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9';
}

/* A byte a plain string holds as it is: what the writer writes as it is
 * (jsonw.h's table: printable ASCII but '"' and '\\'), less DEL, which
 * goes to json-c like every other control byte (the table's plain bit). */
static bool plain_byte(unsigned char c)
{
	return qphs__jw_as_is[c] & QPHS__JW_PLAIN;
}

/* A string of printable ASCII without escapes, at most QPHS_MAX_STRING
 * bytes: its bytes are its value. */
static bool plain_string(struct scan *p, const char **at, size_t *len)
{
	const unsigned char *u = (const unsigned char *)p->s;
	size_t j;

	if (!take(p, '"'))
		return false;
	for (j = p->i; j < p->n && plain_byte(u[j]); j++)
		;
	if (j >= p->n || u[j] != '"' || j - p->i > QPHS_MAX_STRING)
		return false;
	*at = p->s + p->i;
	*len = j - p->i;
	p->i = j + 1;
	return true;
}

/* An unsigned integer no greater than max, without sign, fraction,
 * exponent or leading zero. */
static bool plain_uint(struct scan *p, uint64_t max, uint64_t *v)
{
	int digits = 0;

	if (!digit_at(p))
		return false;
	*v = 0;
	if (p->s[p->i] == '0') {
		p->i++;
	} else {
		for (; digit_at(p); p->i++) {
			if (++digits > 10) /* UINT32_MAX has 10 */
				return false;
			*v = *v * 10 + (uint64_t)(p->s[p->i] - '0');
		}
	}
	if (digit_at(p) || (p->i < p->n && (p->s[p->i] == '.' || p->s[p->i] == 'e' ||
					     p->s[p->i] == 'E')))
		return false;
	return *v <= max;
}

static bool word(struct scan *p, const char *w, size_t len)
{
	if (p->n - p->i < len || memcmp(p->s + p->i, w, len))
		return false;
	p->i += len;
	return true;
}

static bool qp_array(struct scan *p)
{
	uint64_t v;

	if (!take(p, '['))
		return false;
	skip_space(p);
	if (take(p, ']'))
		return true;
	for (;;) {
		if (p->qp_count == QPHS_MAX_QPS || !plain_uint(p, UINT32_MAX, &v))
			return false;
		p->qps[p->qp_count++] = (uint32_t)v;
		p->members++;
		skip_space(p);
		if (take(p, ']'))
			return true;
		if (!take(p, ','))
			return false;
		skip_space(p);
	}
}

static bool value(struct scan *p, int k)
{
	switch (k) {
	case K_LID:
		return plain_uint(p, UINT16_MAX, &p->lid);
	case K_MTU:
		return plain_uint(p, 4096, &p->mtu) &&
		       (p->mtu == 256 || p->mtu == 512 || p->mtu == 1024 || p->mtu == 2048 ||
			p->mtu == 4096);
	case K_QPS:
		return qp_array(p);
	case K_ACK:
		if (word(p, "true", 4))
			p->ack = true;
		else if (word(p, "false", 5))
			p->ack = false;
		else
			return false;
		return true;
	default:
		return plain_string(p, &p->str[k], &p->str_len[k]);
	}
}

static int key_index(const char *k, size_t len)
{
	for (int i = 0; i < N_KEYS; i++)
		if (key_names[i].len == len && !memcmp(key_names[i].name, k, len))
			return i;
	return -1;
}

/* One "key": value pair of a known key not seen before. */
static bool member(struct scan *p)
{
	const char *k;
	size_t len;
	int i;

	if (!plain_string(p, &k, &len) || (i = key_index(k, len)) < 0 ||
	    (p->seen & (1u << i)))
		return false;
	p->seen |= 1u << i;
	p->members++;
	skip_space(p);
	if (!take(p, ':'))
		return false;
	skip_space(p);
	return value(p, i);
}

static bool scan_body(struct scan *p)
{
	skip_space(p);
	if (!take(p, '{'))
		return false;
	skip_space(p);
	if (!take(p, '}')) {
		for (;;) {
			if (!member(p))
				return false;
			skip_space(p);
			if (take(p, '}'))
				break;
			if (!take(p, ','))
				return false;
			skip_space(p);
		}
	}
	skip_space(p);
	return p->i == p->n;
}

static char *copy(const char *s, size_t len, char *to)
{
	if (to) {
		if (len)
			memcpy(to, s, len);
		to[len] = '\0';
	}
	return to;
}

/* The fields but the strings and qp_num. */
static void scalars(const struct scan *p, struct qphs_hs_desc *d)
{
	d->qp_count = p->qp_count;
	d->local_lid = (uint16_t)p->lid;
	d->has_ready_ack = p->seen & (1u << K_ACK);
	d->ready_ack = p->ack;
	d->path_mtu = (int)p->mtu;
}

/* Where each string key of the scan goes in d. */
static void string_fields(struct qphs_hs_desc *d, char **field[N_STR])
{
	field[K_NIC] = &d->local_nic_path;
	field[K_GID] = &d->local_gid;
	field[K_PEER] = &d->peer_nic_path;
	field[K_REPLY] = &d->reply_msg;
	field[K_PAYLOAD] = &d->payload;
}

/* One allocation per field, as qphs_hs_desc_clear frees them. */
static bool build(const struct scan *p, struct qphs_hs_desc *out)
{
	struct qphs_hs_desc d = {0};
	char **field[N_STR];

	string_fields(&d, field);
	for (int k = 0; k < N_STR; k++)
		if (!(*field[k] = copy(p->str[k], p->str_len[k], malloc(p->str_len[k] + 1))))
			goto fail;
	if (p->qp_count) {
		d.qp_num = malloc(p->qp_count * sizeof(*d.qp_num));
		if (!d.qp_num)
			goto fail;
		memcpy(d.qp_num, p->qps, p->qp_count * sizeof(*d.qp_num));
	}
	scalars(p, &d);
	*out = d;
	return true;
fail:
	qphs_hs_desc_clear(&d);
	return false;
}

/* Every string and qp_num in one allocation: qp_num first (malloc's
 * alignment), then the strings. */
static bool build_block(const struct scan *p, struct qphs_hs_desc *out, void **block)
{
	struct qphs_hs_desc d = {0};
	char **field[N_STR];
	size_t qps = p->qp_count * sizeof(*d.qp_num), size = qps;
	char *b, *at;

	string_fields(&d, field);
	for (int k = 0; k < N_STR; k++)
		size += p->str_len[k] + 1;
	b = malloc(size);
	if (!b)
		return false;
	if (qps) {
		d.qp_num = (uint32_t *)(void *)b;
		memcpy(d.qp_num, p->qps, qps);
	}
	at = b + qps;
	for (int k = 0; k < N_STR; k++) {
		*field[k] = copy(p->str[k], p->str_len[k], at);
		at += p->str_len[k] + 1;
	}
	scalars(p, &d);
	*out = d;
	*block = b;
	return true;
}

static bool scan(struct scan *p, const char *json, size_t json_len)
{
	p->s = json;
	p->n = json_len;
	p->i = 0;
	p->seen = 0;
	p->lid = p->mtu = 0;
	p->ack = false;
	p->qp_count = p->members = 0;
	for (int k = 0; k < N_STR; k++) {
		p->str[k] = "";
		p->str_len[k] = 0;
	}
	return scan_body(p);
}

int qphs__hs_desc_fast(const char *json, size_t json_len, struct qphs_hs_desc *out,
		       size_t *members)
{
	struct scan p;

	if (!scan(&p, json, json_len) || !build(&p, out))
		return 0;
	*members = p.members;
	return 1;
}

int qphs__hs_desc_fast_block(const char *json, size_t json_len, struct qphs_hs_desc *out,
			     size_t *members, void **block)
{
	struct scan p;

	if (!scan(&p, json, json_len) || !build_block(&p, out, block))
		return 0;
	*members = p.members;
	return 1;
}

void qphs__hs_desc_release(struct qphs_hs_desc *d, void *block)
{
	if (block) {
		free(block);
		memset(d, 0, sizeof(*d));
	} else {
		qphs_hs_desc_clear(d);
	}
}
