/*
 * The handshake frame codec (Mooncake's readString and writeString,
 * common.h): frame headers out, whole frames in.
 *
 * The length is read and written one byte at a time, least significant
 * first, so the wire is little-endian whatever the host's byte order.
 * Mooncake writes its host order, which is little-endian on every host it
 * runs on; doing it explicitly keeps a big-endian qplab compatible too.
 */
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "qphs/frame.h"

/* The decoder's states, in the order a frame passes through them. */
enum dec_state {
	DEC_LENGTH, /* collecting the 8 length bytes */
	DEC_FIRST,  /* length checked; waiting for the first payload byte */
	DEC_BODY,   /* payload buffer allocated, collecting the rest */
	DEC_DONE,   /* a whole frame is ready */
	DEC_FAILED, /* a bad frame was seen; only reset or free help */
};

struct qphs_decoder {
	uint64_t max_length;
	enum dec_state state;
	int error;            /* the error reported while DEC_FAILED */
	uint8_t len_bytes[QPHS_FRAME_LEN_BYTES];
	size_t len_have;      /* length bytes seen so far */
	uint64_t length;      /* the frame's length, once all 8 are in */
	uint8_t *payload;     /* length + 1 bytes (NUL terminator) */
	uint64_t payload_have;
};

static const char *const type_names[] = {
	[QPHS_HS_CONNECTION] = "connection",
	[QPHS_HS_METADATA] = "metadata",
	[QPHS_HS_NOTIFY] = "notify",
	[QPHS_HS_PROBE] = "probe",
};

#define OLD_PROTOCOL_NAME "old-protocol"
#define N_TYPES (sizeof(type_names) / sizeof(type_names[0]))

const char *qphs_msg_type_name(int type)
{
	if (type >= 0 && (size_t)type < N_TYPES)
		return type_names[type];
	if (type == QPHS_HS_OLD_PROTOCOL)
		return OLD_PROTOCOL_NAME;
	return NULL;
}

int qphs_msg_type_from_name(const char *name)
{
	if (!name)
		return -1;
	for (size_t i = 0; i < N_TYPES; i++)
		if (strcmp(type_names[i], name) == 0)
			return (int)i;
	if (strcmp(name, OLD_PROTOCOL_NAME) == 0)
		return QPHS_HS_OLD_PROTOCOL;
	return -1;
}

static int is_wire_type(int type)
{
	return type >= QPHS_HS_CONNECTION && type <= QPHS_HS_PROBE;
}

static void put_le64(uint8_t out[QPHS_FRAME_LEN_BYTES], uint64_t v)
{
	for (size_t i = 0; i < QPHS_FRAME_LEN_BYTES; i++)
		out[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t in[QPHS_FRAME_LEN_BYTES])
{
	uint64_t v = 0;

	for (size_t i = 0; i < QPHS_FRAME_LEN_BYTES; i++)
		v |= (uint64_t)in[i] << (8 * i);
	return v;
}

size_t qphs_frame_header(int type, size_t json_len, uint8_t hdr[9])
{
	if (type == QPHS_HS_OLD_PROTOCOL) {
		put_le64(hdr, json_len);
		return QPHS_FRAME_LEN_BYTES;
	}
	if (!is_wire_type(type))
		return 0;
	put_le64(hdr, (uint64_t)json_len + 1);
	hdr[QPHS_FRAME_LEN_BYTES] = (uint8_t)type;
	return QPHS_FRAME_LEN_BYTES + 1;
}

int qphs_frame_encode(int type, const char *json, size_t json_len,
		       uint8_t **out, size_t *out_len)
{
	uint8_t hdr[QPHS_FRAME_LEN_BYTES + 1];
	size_t hlen;
	uint8_t *buf;

	if (!json || json_len == 0 || !out || !out_len)
		return QPHS_ERR_INVALID_ARGUMENT;
	/* An old-protocol frame has no type byte, so its JSON must not start
	 * with a byte the reader would take for one (or reject). */
	if (type == QPHS_HS_OLD_PROTOCOL &&
	    ((uint8_t)json[0] <= QPHS_HS_PROBE || (uint8_t)json[0] >= 0x80))
		return QPHS_ERR_INVALID_ARGUMENT;
	hlen = qphs_frame_header(type, json_len, hdr);
	if (hlen == 0 || json_len > SIZE_MAX - hlen)
		return QPHS_ERR_INVALID_ARGUMENT;
	buf = malloc(hlen + json_len);
	if (!buf)
		return QPHS_ERR_MEMORY;
	memcpy(buf, hdr, hlen);
	memcpy(buf + hlen, json, json_len);
	*out = buf;
	*out_len = hlen + json_len;
	return 0;
}

struct qphs_decoder *qphs_decoder_new(uint64_t max_length)
{
	struct qphs_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (max_length < QPHS_MAX_LENGTH_MIN)
		max_length = QPHS_MAX_LENGTH_MIN;
	if (max_length > QPHS_MAX_LENGTH_MAX)
		max_length = QPHS_MAX_LENGTH_MAX;
	d->max_length = max_length;
	d->state = DEC_LENGTH;
	return d;
}

void qphs_decoder_reset(struct qphs_decoder *d)
{
	if (!d)
		return;
	free(d->payload);
	d->payload = NULL;
	d->payload_have = 0;
	d->len_have = 0;
	d->length = 0;
	d->error = 0;
	d->state = DEC_LENGTH;
}

void qphs_decoder_free(struct qphs_decoder *d)
{
	if (!d)
		return;
	free(d->payload);
	free(d);
}

static ssize_t fail(struct qphs_decoder *d, int code)
{
	d->state = DEC_FAILED;
	d->error = code;
	return code;
}

/* All 8 length bytes are in: check them before anything is allocated. */
static int check_length(struct qphs_decoder *d)
{
	d->length = get_le64(d->len_bytes);
	if (d->length == 0)
		return QPHS_ERR_FRAME_ZERO_LENGTH;
	if (d->length > d->max_length)
		return QPHS_ERR_FRAME_TOO_LONG;
	return 0;
}

/* The first payload byte decides typed or old protocol; a typed frame needs
 * at least one JSON byte after it.  Only then is the payload allocated,
 * exactly the frame's size plus a NUL terminator. */
static int take_first_byte(struct qphs_decoder *d, uint8_t first)
{
	if (first >= 0x80)
		return QPHS_ERR_FRAME_BAD_TYPE;
	if (first <= QPHS_HS_PROBE && d->length == 1)
		return QPHS_ERR_FRAME_EMPTY_BODY;
	d->payload = malloc((size_t)d->length + 1);
	if (!d->payload)
		return QPHS_ERR_MEMORY;
	d->payload[0] = first;
	d->payload_have = 1;
	return 0;
}

static void finish_if_whole(struct qphs_decoder *d)
{
	if (d->payload_have == d->length) {
		d->payload[d->length] = '\0';
		d->state = DEC_DONE;
	}
}

/* DEC_LENGTH: collects length bytes; moves on once all 8 are in and good. */
static int feed_length(struct qphs_decoder *d, const uint8_t *p, size_t len, size_t *used)
{
	size_t take = QPHS_FRAME_LEN_BYTES - d->len_have;
	int rc;

	if (take > len)
		take = len;
	memcpy(d->len_bytes + d->len_have, p, take);
	d->len_have += take;
	*used += take;
	if (d->len_have < QPHS_FRAME_LEN_BYTES)
		return 0;
	if ((rc = check_length(d)) != 0)
		return rc;
	d->state = DEC_FIRST;
	return 0;
}

/* DEC_BODY: copies what is missing of the payload, no more. */
static void feed_body(struct qphs_decoder *d, const uint8_t *p, size_t len, size_t *used)
{
	uint64_t want = d->length - d->payload_have;
	size_t take = len;

	if ((uint64_t)take > want)
		take = (size_t)want;
	memcpy(d->payload + d->payload_have, p, take);
	d->payload_have += take;
	*used += take;
	finish_if_whole(d);
}

ssize_t qphs_decoder_feed(struct qphs_decoder *d, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t used = 0;
	int rc;

	if (d->state == DEC_FAILED)
		return d->error;
	if (d->state == DEC_DONE)
		qphs_decoder_reset(d); /* the last frame was handed out */
	if (d->state == DEC_LENGTH && (rc = feed_length(d, p, len, &used)) != 0)
		return fail(d, rc);
	if (d->state == DEC_FIRST && used < len) {
		if ((rc = take_first_byte(d, p[used])) != 0)
			return fail(d, rc);
		used++;
		d->state = DEC_BODY;
		finish_if_whole(d);
	}
	if (d->state == DEC_BODY)
		feed_body(d, p + used, len - used, &used);
	return (ssize_t)used;
}

int qphs_decoder_frame(struct qphs_decoder *d, struct qphs_frame *f)
{
	if (d->state != DEC_DONE)
		return 0;
	if (d->payload[0] <= QPHS_HS_PROBE) {
		f->type = d->payload[0];
		f->json = (const char *)d->payload + 1;
		f->json_len = (size_t)d->length - 1;
	} else {
		f->type = QPHS_HS_OLD_PROTOCOL;
		f->json = (const char *)d->payload;
		f->json_len = (size_t)d->length;
	}
	return 1;
}

int qphs_decoder_eof(const struct qphs_decoder *d)
{
	if (d->state == DEC_FAILED)
		return d->error;
	return qphs_decoder_buffered(d) ? QPHS_ERR_FRAME_TRUNCATED : 0;
}

size_t qphs_decoder_buffered(const struct qphs_decoder *d)
{
	switch (d->state) {
	case DEC_LENGTH:
		return d->len_have;
	case DEC_FIRST:
	case DEC_BODY:
	case DEC_FAILED:
		return d->len_have + (size_t)d->payload_have;
	case DEC_DONE:
		break;
	}
	return 0;
}
