/* qphs_hs_desc_encode's shortcut (jsonw.h): when no string of the
 * descriptor needs an escape, the body's length is known from the
 * strings' lengths, so it is written into one allocation sized once,
 * its keys as constants; the general writer (desc.c) checks room and
 * escapes for every piece.  Same keys, order and numbers as that writer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/body.h"
#include "jsonw.h"

enum { S_GID, S_NIC, S_PAYLOAD, S_PEER, S_REPLY, N_STR };

/* Everything but the strings and QP numbers, with room to spare: 14 keys
 * and punctuation, a LID of 5 digits, an MTU of 11 characters. */
#define FIXED_MAX 256
#define QPN_MAX 11 /* 10 digits and a comma */

/* A constant's bytes: a copy of known size, no call. */
#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

static char *put_str(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	p += n;
	*p++ = '"';
	return p;
}

int qphs__hs_desc_encode_plain(const struct qphs_hs_desc *d, char **out, size_t *out_len)
{
	const char *s[N_STR] = {[S_GID] = d->local_gid, [S_NIC] = d->local_nic_path,
				[S_PAYLOAD] = d->payload, [S_PEER] = d->peer_nic_path,
				[S_REPLY] = d->reply_msg};
	size_t len[N_STR], size = FIXED_MAX;
	char *buf, *p;

	if (d->extra || d->path_mtu < 0 || d->qp_count > (SIZE_MAX - FIXED_MAX) / 2 / QPN_MAX)
		return 0;
	size += d->qp_count * QPN_MAX;
	for (int i = 0; i < N_STR; i++) {
		if (!s[i])
			s[i] = "";
		if ((len[i] = qphs__jw_plain_len(s[i])) == SIZE_MAX || len[i] > SIZE_MAX / 2 / N_STR)
			return 0;
		size += len[i];
	}
	if (!(p = buf = malloc(size)))
		return 0;
	p = LIT(p, "{\"local_gid\":\"");
	p = put_str(p, s[S_GID], len[S_GID]);
	p = LIT(p, ",\"local_lid\":");
	p = qphs__put_u64(p, d->local_lid);
	p = LIT(p, ",\"local_nic_path\":\"");
	p = put_str(p, s[S_NIC], len[S_NIC]);
	p = LIT(p, ",\"payload\":\"");
	p = put_str(p, s[S_PAYLOAD], len[S_PAYLOAD]);
	p = LIT(p, ",\"peer_nic_path\":\"");
	p = put_str(p, s[S_PEER], len[S_PEER]);
	p = LIT(p, ",\"qp_num\":[");
	for (size_t i = 0; i < d->qp_count; i++) {
		if (i)
			*p++ = ',';
		p = qphs__put_u64(p, d->qp_num[i]);
	}
	*p++ = ']';
	if (d->path_mtu) {
		p = LIT(p, ",\"qphs_path_mtu\":");
		p = qphs__put_u64(p, (uint64_t)d->path_mtu);
	}
	/* Mooncake writes the key when supported or when true. */
	if (d->has_ready_ack || d->ready_ack)
		p = d->ready_ack ? LIT(p, ",\"ready_ack\":true") : LIT(p, ",\"ready_ack\":false");
	p = LIT(p, ",\"reply_msg\":\"");
	p = put_str(p, s[S_REPLY], len[S_REPLY]);
	p = LIT(p, "}\n");
	*p = '\0';
	*out = buf;
	*out_len = (size_t)(p - buf);
	return 1;
}
