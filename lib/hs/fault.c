/* Fault injection: how a misbehaving daemon answers (qphs/daemon.h).  The
 * names are the error table's FAULT column, so `--fault truncate` and the
 * error it provokes (ERR_FRAME_TRUNCATED) come from one row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_int.h"
#include "qphs/error.h"
#include "qphs/frame.h"

static const struct {
	const char *name;
	enum qphs_fault_kind kind;
} fault_names[] = {
	{"close", QPHS_FAULT_CLOSE},
	{"stall", QPHS_FAULT_STALL},
	{"truncate", QPHS_FAULT_TRUNCATE},
	{"oversize", QPHS_FAULT_OVERSIZE},
	{"zero-length", QPHS_FAULT_ZERO_LENGTH},
	{"garbage", QPHS_FAULT_GARBAGE},
	{"empty-body", QPHS_FAULT_EMPTY_BODY},
	{"not-json", QPHS_FAULT_NOT_JSON},
	{"trailing", QPHS_FAULT_TRAILING},
	{"wrong-type", QPHS_FAULT_WRONG_TYPE},
	{"old-protocol", QPHS_FAULT_OLD_PROTOCOL},
	{"null-reply", QPHS_FAULT_NULL_REPLY},
	{"reject", QPHS_FAULT_REJECT},
};

static int parse_delay(const char *ms, struct qphs_fault *out, char *err, size_t errlen)
{
	char *end;
	long v = strtol(ms, &end, 10);

	if (!*ms || *end || v < 0 || v > 3600000) {
		if (err)
			snprintf(err, errlen, "delay:MS needs a number of milliseconds "
					      "0..3600000, got '%s'", ms);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	out->kind = QPHS_FAULT_DELAY;
	out->delay_ms = (int)v;
	return 0;
}

int qphs_fault_parse(const char *spec, struct qphs_fault *out, char *err, size_t errlen)
{
	const char *colon;
	size_t n;
	int code;

	if (!spec || !out)
		return QPHS_ERR_INVALID_ARGUMENT;
	memset(out, 0, sizeof(*out));
	colon = strchr(spec, ':');
	n = colon ? (size_t)(colon - spec) : strlen(spec);
	if (n == 5 && !strncmp(spec, "delay", 5) && colon)
		return parse_delay(colon + 1, out, err, errlen);
	if (n == 6 && !strncmp(spec, "reject", 6)) {
		out->kind = QPHS_FAULT_REJECT;
		snprintf(out->text, sizeof(out->text), "%s",
			 colon && colon[1] ? colon + 1 : "rejected by qplab hs serve --fault reject");
		return 0;
	}
	for (size_t i = 0; !colon && i < sizeof(fault_names) / sizeof(fault_names[0]); i++) {
		/* Every wire fault must also be a FAULT name of the error table
		 * (reject is checked above with its text). */
		if (strcmp(spec, fault_names[i].name) == 0 && qphs_errcode_by_name(spec, &code)) {
			out->kind = fault_names[i].kind;
			return 0;
		}
	}
	if (err)
		snprintf(err, errlen, "unknown fault '%s' (close, stall, delay:MS, truncate, "
				      "oversize, zero-length, garbage, empty-body, not-json, "
				      "trailing, wrong-type, old-protocol, null-reply, reject:TEXT)", spec);
	return QPHS_ERR_INVALID_ARGUMENT;
}

bool qphs__fault_applies(const struct qphs_fault *f, int type)
{
	unsigned bit = type == QPHS_HS_OLD_PROTOCOL ? 1u << 4 : 1u << (type & 3);

	if (!f || f->kind == QPHS_FAULT_NONE || f->kind == QPHS_FAULT_REJECT)
		return false;
	return f->types == 0 || (f->types & bit) != 0;
}

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A header claiming len bytes followed by body (which may be shorter). */
static int raw_frame(uint64_t len, const void *body, size_t body_len, uint8_t **out,
		     size_t *out_len)
{
	uint8_t *p = malloc(8 + body_len);

	if (!p)
		return QPHS_ERR_MEMORY;
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(len >> (8 * i));
	if (body_len)
		memcpy(p + 8, body, body_len);
	*out = p;
	*out_len = 8 + body_len;
	return 0;
}

static int garbage(uint64_t *rng, uint8_t **out, size_t *out_len)
{
	uint8_t body[64];

	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)next_rand(rng);
	body[0] |= 0x80; /* a type byte in 0x80-0xff: ERR_FRAME_BAD_TYPE */
	return raw_frame(sizeof(body), body, sizeof(body), out, out_len);
}

/* The type byte and body bytes of a typed or untyped frame. */
static int frame(int type, const char *json, size_t len, uint8_t **out, size_t *out_len)
{
	uint8_t hdr[9];
	size_t hl = qphs_frame_header(type, len, hdr);
	uint8_t *p = malloc(hl + len);

	if (!p)
		return QPHS_ERR_MEMORY;
	memcpy(p, hdr, hl);
	memcpy(p + hl, json, len);
	*out = p;
	*out_len = hl + len;
	return 0;
}

static int trailing(int type, const char *json, size_t len, uint8_t **out, size_t *out_len)
{
	char *body = malloc(len + 8);
	size_t n = len;
	int rc;

	if (!body)
		return QPHS_ERR_MEMORY;
	memcpy(body, json, len);
	while (n && (body[n - 1] == '\n' || body[n - 1] == ' '))
		n--;
	memcpy(body + n, " {}\n", 4);
	rc = frame(type, body, n + 4, out, out_len);
	free(body);
	return rc;
}

int qphs__fault_frame(const struct qphs_fault *f, uint64_t *rng, int type, const char *json,
		      size_t len, uint8_t **out, size_t *out_len)
{
	static const char not_json[] = "this is not JSON\n";
	int typed = type != QPHS_HS_OLD_PROTOCOL;

	switch (f ? f->kind : QPHS_FAULT_NONE) {
	case QPHS_FAULT_CLOSE:
		return 1;
	case QPHS_FAULT_TRUNCATE: {
		/* The whole header and half the body, then the close. */
		int rc = frame(type, json, len, out, out_len);
		if (rc == 0)
			*out_len -= len - len / 2;
		return rc;
	}
	case QPHS_FAULT_OVERSIZE:
		return raw_frame(QPHS_MAX_LENGTH_MAX + 1, NULL, 0, out, out_len);
	case QPHS_FAULT_ZERO_LENGTH:
		return raw_frame(0, NULL, 0, out, out_len);
	case QPHS_FAULT_GARBAGE:
		return garbage(rng, out, out_len);
	case QPHS_FAULT_EMPTY_BODY:
		return raw_frame(1, &"\0\1\2\3"[typed ? type : 0], 1, out, out_len);
	case QPHS_FAULT_NOT_JSON:
		return frame(type, not_json, sizeof(not_json) - 1, out, out_len);
	case QPHS_FAULT_TRAILING:
		return trailing(type, json, len, out, out_len);
	case QPHS_FAULT_WRONG_TYPE:
		return frame(typed ? (type + 1) % 4 : QPHS_HS_PROBE, json, len, out, out_len);
	case QPHS_FAULT_OLD_PROTOCOL:
		return frame(QPHS_HS_OLD_PROTOCOL, json, len, out, out_len);
	case QPHS_FAULT_NULL_REPLY:
		return frame(type, "null\n", 5, out, out_len);
	default:
		return frame(type, json, len, out, out_len);
	}
}
