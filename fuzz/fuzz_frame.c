/*
 * libFuzzer target over the frame decoder (lib/wire).
 *
 * The input is a byte stream as a peer would send it.  It is decoded twice:
 * in chunks whose sizes come from a hash of the input, and all at once; both
 * runs must see the same frames and end with the same error.  Every frame
 * must be exactly the stream's bytes (its length field, type byte and JSON)
 * and re-encode to them; consumed never exceeds what was offered; an error
 * stays put until reset.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "qphs/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			__builtin_trap();                                      \
	} while (0)

struct outcome {
	size_t frames;
	uint64_t digest; /* over every frame's type and JSON, in order */
	int err;
	size_t consumed;
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull; /* FNV-1a */
	return h;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A frame that ended at stream offset `end` and began at `start`. */
static void check_frame(const struct qphs_frame *f, const uint8_t *data, size_t start,
			size_t end, struct outcome *o)
{
	size_t hdr = f->type == QPHS_HS_OLD_PROTOCOL ? 8 : 9;
	uint8_t *again;
	size_t again_len;

	CHECK(end - start >= hdr + 1);
	CHECK(le64(data + start) == end - start - 8);
	CHECK(f->json_len + hdr == end - start);
	CHECK(f->json[f->json_len] == '\0');
	CHECK(memcmp(f->json, data + start + hdr, f->json_len) == 0);
	if (hdr == 9)
		CHECK(f->type >= 0 && f->type <= 3 && data[start + 8] == f->type);
	else
		CHECK(data[start + 8] >= 0x04 && data[start + 8] <= 0x7f);
	CHECK(qphs_frame_encode(f->type, f->json, f->json_len, &again, &again_len) == 0);
	CHECK(again_len == end - start && memcmp(again, data + start, again_len) == 0);
	free(again);
	o->frames++;
	o->digest = mix(mix(o->digest, &f->type, sizeof(f->type)), f->json, f->json_len);
}

/* Offers data[off..off+n) until it is used up or the decoder fails. */
static int feed_chunk(struct qphs_decoder *d, const uint8_t *data, size_t *frame_start,
		      size_t off, size_t n, struct outcome *o)
{
	while (n > 0) {
		struct qphs_frame f;
		ssize_t used = qphs_decoder_feed(d, data + off, n);

		if (used < 0) {
			/* Sticky: the same error again, and from eof. */
			CHECK(qphs_decoder_feed(d, data + off, n) == used);
			CHECK(qphs_decoder_eof(d) == used);
			CHECK(!qphs_decoder_frame(d, &f));
			return (int)used;
		}
		CHECK(used > 0 && (size_t)used <= n);
		off += (size_t)used;
		n -= (size_t)used;
		o->consumed += (size_t)used;
		if (qphs_decoder_frame(d, &f)) {
			check_frame(&f, data, *frame_start, off, o);
			CHECK(qphs_decoder_buffered(d) == 0);
			*frame_start = off;
		} else {
			CHECK(n == 0); /* feed stops early only at a frame's end */
			CHECK(qphs_decoder_buffered(d) == off - *frame_start);
		}
	}
	return 0;
}

static void run(const uint8_t *data, size_t size, int chunked, struct outcome *o)
{
	struct qphs_decoder *d = qphs_decoder_new(0);
	uint64_t state = mix(0xcbf29ce484222325ull, data, size) | 1;
	size_t off = 0, frame_start = 0;

	CHECK(d != NULL);
	memset(o, 0, sizeof(*o));
	while (off < size && o->err == 0) {
		size_t n = size - off;
		if (chunked) {
			state ^= state << 13, state ^= state >> 7, state ^= state << 17;
			n = 1 + (size_t)(state % (state & 1 ? 4 : 64));
			if (n > size - off)
				n = size - off;
		}
		o->err = feed_chunk(d, data, &frame_start, off, n, o);
		off += n;
	}
	if (o->err == 0) {
		o->err = qphs_decoder_eof(d);
		CHECK(o->err == 0 || o->err == QPHS_ERR_FRAME_TRUNCATED);
		CHECK((o->err != 0) == (frame_start < size));
	} else {
		CHECK(o->err == QPHS_ERR_FRAME_ZERO_LENGTH || o->err == QPHS_ERR_FRAME_TOO_LONG ||
		      o->err == QPHS_ERR_FRAME_BAD_TYPE || o->err == QPHS_ERR_FRAME_EMPTY_BODY ||
		      o->err == QPHS_ERR_MEMORY);
	}
	qphs_decoder_reset(d);
	CHECK(qphs_decoder_buffered(d) == 0 && qphs_decoder_eof(d) == 0);
	qphs_decoder_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome whole, chunked;

	run(data, size, 0, &whole);
	run(data, size, 1, &chunked);
	CHECK(whole.frames == chunked.frames && whole.digest == chunked.digest);
	CHECK(whole.err == chunked.err);
	/* The chunked run may fail earlier inside one offered chunk; when both
	 * succeed they used every byte. */
	if (whole.err == 0 || whole.err == QPHS_ERR_FRAME_TRUNCATED)
		CHECK(whole.consumed == size && chunked.consumed == size);
	return 0;
}
