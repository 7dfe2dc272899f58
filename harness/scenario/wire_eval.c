/* Wire expectations over tshark's records (wire.h): the records read from
 * `tshark -T ek` lines, RoCE payload sizes from the IBTA header layout,
 * and each expectation checked.  Pure: no I/O. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jread.h"
#include "wire.h"

/* Extension header bytes after the BTH per RC opcode (IBTA vol. 1, 9.2,
 * table 38; 9.3: RETH 16, AETH 4, AtomicETH 28, AtomicAckETH 8, ImmDt 4,
 * IETH 4).  -1: not an RC opcode we know. */
static int rc_ext_bytes(int op)
{
	static const signed char ext[0x18] = {
		[0x00] = 0,  [0x01] = 0,  [0x02] = 0,  [0x03] = 4,  /* SEND first, middle, last, last+imm */
		[0x04] = 0,  [0x05] = 4,                             /* SEND only, only+imm */
		[0x06] = 16, [0x07] = 0,  [0x08] = 0,  [0x09] = 4,  /* WRITE first (RETH), middle, last, last+imm */
		[0x0a] = 16, [0x0b] = 20,                            /* WRITE only (RETH), only+imm */
		[0x0c] = 16,                                         /* READ request (RETH) */
		[0x0d] = 4,  [0x0e] = 0,  [0x0f] = 4,  [0x10] = 4,  /* READ response first, middle, last, only (AETH) */
		[0x11] = 4,                                          /* ACK (AETH) */
		[0x12] = 12,                                         /* ATOMIC ACK (AETH + AtomicAckETH) */
		[0x13] = 28, [0x14] = 28,                            /* CmpSwap, FetchAdd (AtomicETH) */
		[0x15] = -1,
		[0x16] = 4,  [0x17] = 4,                             /* SEND last, only with invalidate (IETH) */
	};

	return op >= 0 && op < (int)sizeof(ext) ? ext[op] : -1;
}

int qplab_wire_roce_payload(int udp_length, int opcode, int padcnt)
{
	int ext = rc_ext_bytes(opcode), n;

	if (ext < 0 || padcnt < 0 || padcnt > 3)
		return -1;
	n = udp_length - 8 - 12 - ext - padcnt - 4;
	return n < 0 ? -1 : n;
}

static const struct {
	const char *name;
	int syndrome;
} syndromes[] = {
	{"psn_sequence_error", 0x60},
	{"invalid_request", 0x61},
	{"remote_access_error", 0x62},
	{"remote_operational_error", 0x63},
};

int qplab_wire_syndrome(const char *name)
{
	for (size_t i = 0; name && i < sizeof(syndromes) / sizeof(syndromes[0]); i++)
		if (!strcmp(syndromes[i].name, name))
			return syndromes[i].syndrome;
	return -1;
}

const char *qplab_wire_syndrome_name(int syndrome)
{
	for (size_t i = 0; i < sizeof(syndromes) / sizeof(syndromes[0]); i++)
		if (syndromes[i].syndrome == syndrome)
			return syndromes[i].name;
	return NULL;
}

/* wireshark/mooncake.lua's mooncake.error values: where libqphs's frame
 * decoder (lib/codec/wire.c) and its JSON reader (lib/codec/jsonr.c)
 * refuse a frame, under libqphs's names for the error. */
static const char *const bad_frame_codes[] = {
	"ERR_FRAME_ZERO_LENGTH", "ERR_FRAME_TOO_LONG", "ERR_FRAME_BAD_TYPE", "ERR_FRAME_EMPTY_BODY",
	"ERR_FRAME_TRUNCATED",   "ERR_FRAME_NOT_JSON", "ERR_FRAME_TRAILING", "ERR_BODY_TOO_DEEP",
};

bool qplab_wire_bad_frame_code(const char *name)
{
	for (size_t i = 0; name && i < sizeof(bad_frame_codes) / sizeof(bad_frame_codes[0]); i++)
		if (!strcmp(bad_frame_codes[i], name))
			return true;
	return false;
}

void qplab_wire_pkt_free(struct qplab_wire_pkt *p)
{
	for (size_t i = 0; i < p->nmsg; i++)
		free(p->msg[i].reply_msg);
	memset(p, 0, sizeof(*p));
}

/* layers[key][i] as a string, or NULL. */
static const char *field(struct jread *r, json_object *layers, const char *key, size_t i)
{
	json_object *arr = jread_array_or_null(layers, key);
	const char *s = NULL;

	if (!arr || i >= json_object_array_length(arr) || jread_elem_str(r, arr, key, i, &s) != JREAD_OK)
		return NULL;
	return s;
}

/* A number tshark printed (decimal, or 0x hex for QP numbers); -1 absent. */
static int num(struct jread *r, json_object *layers, const char *key)
{
	const char *s = field(r, layers, key, 0);
	char *end;
	long v;

	if (!s)
		return -1;
	v = strtol(s, &end, 0);
	if (*end || v < 0 || v > 0x7fffffff) {
		jread_fail(r, key, "\"%s\" is not a number", s);
		return -1;
	}
	return (int)v;
}

static void copy(char *dst, size_t len, const char *s)
{
	snprintf(dst, len, "%s", s ? s : "");
}

int qplab_wire_pkt_parse(const char *line, size_t len, struct qplab_wire_pkt *p, char *err, size_t errlen)
{
	struct jread r = {.what = "tshark -T ek", .err = err, .errlen = errlen};
	json_object *o, *layers;
	int udp;

	memset(p, 0, sizeof(*p));
	p->syndrome = p->payload = p->opcode = p->psn = p->destqp = -1;
	if (jread_parse_object(&r, line, len, &o) != JREAD_OK)
		return -1;
	if (!(layers = jread_object_or_null(o, "layers"))) {
		json_object_put(o);
		return 1;
	}
	copy(p->src, sizeof(p->src), field(&r, layers, "ip_src", 0) ? field(&r, layers, "ip_src", 0)
								    : field(&r, layers, "ipv6_src", 0));
	copy(p->dst, sizeof(p->dst), field(&r, layers, "ip_dst", 0) ? field(&r, layers, "ip_dst", 0)
								    : field(&r, layers, "ipv6_dst", 0));
	p->udp_sport = num(&r, layers, "udp_srcport");
	p->opcode = num(&r, layers, "infiniband_bth_opcode");
	p->roce = p->opcode >= 0;
	if (p->roce) {
		p->psn = num(&r, layers, "infiniband_bth_psn");
		p->destqp = num(&r, layers, "infiniband_bth_destqp");
		p->syndrome = num(&r, layers, "infiniband_aeth_syndrome");
		udp = num(&r, layers, "udp_length");
		p->payload = udp < 0 ? -1 : qplab_wire_roce_payload(udp, p->opcode, num(&r, layers, "infiniband_bth_padcnt"));
	}
	for (size_t i = 0; i < QPLAB_WIRE_MSGS && field(&r, layers, "mooncake_type", i); i++) {
		const char *msg = field(&r, layers, "mooncake_reply_msg", i);

		copy(p->msg[i].type, sizeof(p->msg[i].type), field(&r, layers, "mooncake_type", i));
		copy(p->msg[i].role, sizeof(p->msg[i].role), field(&r, layers, "mooncake_role", i));
		copy(p->msg[i].ready_ack, sizeof(p->msg[i].ready_ack),
		     field(&r, layers, "mooncake_ready_ack_key", i));
		p->nmsg = i + 1;
		if (msg && !(p->msg[i].reply_msg = strdup(msg)))
			jread_fail(&r, "mooncake_reply_msg", "out of memory");
	}
	for (size_t i = 0; i < QPLAB_WIRE_MSGS && field(&r, layers, "mooncake_error", i); i++) {
		copy(p->error[i], sizeof(p->error[i]), field(&r, layers, "mooncake_error", i));
		p->nerror = i + 1;
	}
	json_object_put(o);
	if (r.errors) {
		qplab_wire_pkt_free(p);
		return -1;
	}
	return 0;
}

/* Host h's address is a (h -1: any host). */
static bool is_host(const struct qplab_wire_hosts *hosts, int h, const char *a)
{
	if (h < 0)
		return true;
	if (!hosts || (size_t)h >= hosts->n)
		return false;
	for (int f = 0; f < 2; f++)
		if (hosts->addr[h][f] && hosts->addr[h][f][0] && !strcmp(hosts->addr[h][f], a))
			return true;
	return false;
}

/* The host whose lab address is a, or -1. */
static int host_of(const struct qplab_wire_hosts *hosts, const char *a)
{
	for (size_t h = 0; hosts && h < hosts->n; h++)
		if (is_host(hosts, (int)h, a))
			return (int)h;
	return -1;
}

/* Whether p went from e's `from` to its `to`.  A handshake packet whose
 * source and destination are one address came between two hosts of one
 * namespace (shared mode): every lab address is local there, so the kernel
 * gives the client's socket the destination's own address as its source,
 * and only the daemon's end (the destination of a request, the source of
 * a reply) names its host; the client's end is then any other host. */
static bool ends_match(const struct qplab_wire_expect *e, const struct qplab_wire_pkt *p,
		       const struct qplab_wire_hosts *hosts)
{
	if (!p->roce && p->src[0] && !strcmp(p->src, p->dst) && (p->nmsg || p->nerror)) {
		bool reply = p->nmsg && !strcmp(p->msg[0].role, "reply");
		int daemon = host_of(hosts, p->src), dside = reply ? e->from : e->to,
		    cside = reply ? e->to : e->from;

		return daemon >= 0 && (dside < 0 || dside == daemon) && cside != daemon &&
		       (cside < 0 || (hosts && (size_t)cside < hosts->n));
	}
	return is_host(hosts, e->from, p->src) && is_host(hosts, e->to, p->dst);
}

static bool text_ok(const struct qplab_wire_expect *e, const char *s)
{
	if (!s)
		return false;
	if (e->exact && strcmp(s, e->exact))
		return false;
	if (e->prefix && strncmp(s, e->prefix, strlen(e->prefix)))
		return false;
	return !e->contains || strstr(s, e->contains);
}

static bool in_bounds(const struct qplab_wire_expect *e, long v)
{
	return v >= e->min && (e->max < 0 || v <= e->max);
}

static void bounds_words(const struct qplab_wire_expect *e, char *out, size_t len)
{
	if (e->max == e->min)
		snprintf(out, len, "%ld", e->min);
	else if (e->max < 0)
		snprintf(out, len, "at least %ld", e->min);
	else
		snprintf(out, len, "%ld..%ld", e->min, e->max);
}

/* The most times one (destination QP, PSN) request went out. */
static long most_sends(const struct qplab_wire_expect *e, const struct qplab_wire_pkt *pk, size_t n,
		       const struct qplab_wire_hosts *hosts, int *psn)
{
	long best = 0;

	for (size_t i = 0; i < n; i++) {
		long c = 0;

		if (!pk[i].roce || pk[i].syndrome >= 0 || !is_host(hosts, e->from, pk[i].src) ||
		    !is_host(hosts, e->to, pk[i].dst))
			continue; /* requests carry no AETH */
		for (size_t j = 0; j < n; j++)
			c += pk[j].roce && pk[j].syndrome < 0 && pk[j].psn == pk[i].psn &&
			     pk[j].destqp == pk[i].destqp && pk[j].opcode == pk[i].opcode &&
			     !strcmp(pk[j].src, pk[i].src);
		if (c > best) {
			best = c;
			*psn = pk[i].psn;
		}
	}
	return best;
}

bool qplab_wire_eval(const struct qplab_wire_expect *e, const struct qplab_wire_pkt *pk, size_t n,
		     const struct qplab_wire_hosts *hosts, char *expected, size_t explen, char *observed,
		     size_t obslen)
{
	char b[64];
	long count = 0, largest = -1;
	int psn = -1;

	bounds_words(e, b, sizeof(b));
	for (size_t i = 0; i < n; i++) {
		const struct qplab_wire_pkt *p = &pk[i];

		if (!ends_match(e, p, hosts))
			continue;
		switch (e->kind) {
		case QPLAB_WIRE_HANDSHAKE:
		case QPLAB_WIRE_REPLY_MSG:
			for (size_t m = 0; m < p->nmsg; m++) {
				const struct qplab_wire_msg *g = &p->msg[m];

				if (e->kind == QPLAB_WIRE_REPLY_MSG)
					count += !strcmp(g->role, "reply") && text_ok(e, g->reply_msg);
				else
					count += (!e->type[0] || !strcmp(e->type, g->type)) &&
						 (!e->role[0] || !strcmp(e->role, g->role)) &&
						 (!e->ready_ack[0] || !strcmp(e->ready_ack, g->ready_ack));
			}
			break;
		case QPLAB_WIRE_ROCE_NAK:
			count += p->roce && p->syndrome == e->syndrome;
			break;
		case QPLAB_WIRE_ROCE_PAYLOAD:
			if (p->roce && p->payload > largest)
				largest = p->payload;
			break;
		case QPLAB_WIRE_ROCE_PACKETS:
			count += p->roce;
			break;
		case QPLAB_WIRE_ROCE_SENDS:
			break;
		case QPLAB_WIRE_BAD_FRAME:
			for (size_t m = 0; m < p->nerror; m++)
				count += !e->code[0] || !strcmp(e->code, p->error[m]);
			break;
		}
	}
	switch (e->kind) {
	case QPLAB_WIRE_HANDSHAKE:
		snprintf(expected, explen, "%s %s message%s (%s%s%s %s)", b, e->type[0] ? e->type : "handshake",
			 e->max == 1 ? "" : "s", e->role[0] ? e->role : "request or reply",
			 e->ready_ack[0] ? ", ready_ack " : "", e->ready_ack, "on the wire");
		snprintf(observed, obslen, "%ld", count);
		break;
	case QPLAB_WIRE_REPLY_MSG:
		snprintf(expected, explen, "%s repl%s carrying reply_msg %s%.80s%s%s%.80s%s%s%.80s%s", b,
			 e->max == 1 ? "y" : "ies", e->exact ? "exactly \"" : "", e->exact ? e->exact : "",
			 e->exact ? "\" " : "", e->prefix ? "prefix \"" : "", e->prefix ? e->prefix : "",
			 e->prefix ? "\" " : "", e->contains ? "containing \"" : "", e->contains ? e->contains : "",
			 e->contains ? "\"" : "");
		snprintf(observed, obslen, "%ld", count);
		break;
	case QPLAB_WIRE_ROCE_NAK:
		snprintf(expected, explen, "%s NAK%s %s (AETH syndrome 0x%02x)", b, e->max == 1 ? "" : "s",
			 qplab_wire_syndrome_name(e->syndrome) ? qplab_wire_syndrome_name(e->syndrome) : "?",
			 (unsigned)e->syndrome & 0xffu);
		snprintf(observed, obslen, "%ld", count);
		break;
	case QPLAB_WIRE_ROCE_PAYLOAD:
		snprintf(expected, explen, "largest RoCE payload %s bytes", b);
		if (largest < 0)
			snprintf(observed, obslen, "no RoCE packet");
		else
			snprintf(observed, obslen, "%ld bytes", largest);
		return largest >= 0 && in_bounds(e, largest);
	case QPLAB_WIRE_ROCE_SENDS:
		count = most_sends(e, pk, n, hosts, &psn);
		snprintf(expected, explen, "the most sends of one request (1 + retries): %s", b);
		if (count)
			snprintf(observed, obslen, "%ld (PSN %d)", count, psn);
		else
			snprintf(observed, obslen, "no RoCE request");
		break;
	case QPLAB_WIRE_ROCE_PACKETS:
		snprintf(expected, explen, "%s RoCE packet%s", b, e->max == 1 ? "" : "s");
		snprintf(observed, obslen, "%ld", count);
		break;
	case QPLAB_WIRE_BAD_FRAME:
		snprintf(expected, explen, "%s bad frame%s (mooncake.error %s)", b, e->max == 1 ? "" : "s",
			 e->code[0] ? e->code : "of any name");
		snprintf(observed, obslen, "%ld", count);
		break;
	}
	return in_bounds(e, count);
}
