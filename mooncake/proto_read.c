/* Readings of JSON the adapter does not write: Mooncake's showLinks; and
 * the data path's pure helpers (proto.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli/jread.h"
#include "proto.h"

/* o[key] as a string or an integer; absent, null or of another type:
 * NULL or -1 (the kernel's and Mooncake's JSON, read through the strict
 * reader, cli/jread.h; a member of another type is what an unknown
 * version prints, not ours to refuse). */
static const char *str_of(json_object *o, const char *key)
{
	const char *v = NULL;

	jread_str(&(struct jread){0}, o, key, &v);
	return v;
}

static int64_t int_of(json_object *o, const char *key)
{
	int64_t v = -1;

	jread_int64(&(struct jread){0}, o, key, INT64_MIN, INT64_MAX, &v);
	return v;
}

int mca_links_gid(const char *json, const char *dev, int *gid_index, char *gid, size_t gidlen)
{
	json_object *o = NULL, *nics;
	int rc = -1;

	if (jread_parse_object(&(struct jread){0}, json, strlen(json), &o) == JREAD_OK &&
	    jread_array(&(struct jread){0}, o, "local_nics", &nics) == JREAD_OK) {
		for (size_t i = 0; i < json_object_array_length(nics); i++) {
			json_object *n = json_object_array_get_idx(nics, i);
			const char *name = str_of(n, "device"), *g = str_of(n, "gid");
			const char *src = str_of(n, "source");

			/* "topology": listed, but the RDMA transport never opened it. */
			if (!name || strcmp(name, dev) || !g || !src || strcmp(src, "rdma_transport"))
				continue;
			*gid_index = (int)int_of(n, "gid_index");
			snprintf(gid, gidlen, "%s", g);
			rc = 0;
			break;
		}
	}
	json_object_put(o);
	return rc;
}

int mca_pick_buffer(const struct qphs_segment_desc *s, size_t bytes, char *err, size_t errlen)
{
	for (size_t i = 0; i < s->buffer_count; i++)
		if (s->buffers[i].rkey_count > 0 && s->buffers[i].length >= bytes)
			return (int)i;
	snprintf(err, errlen, "the peer's segment descriptor lists no remotely accessible buffer of "
		 "%zu bytes or more (%zu buffers)", bytes, s->buffer_count);
	return -1;
}

void mca_pattern(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed ? seed : 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < len; i++) {
		/* xorshift64: cheap, and no byte repeats its neighbour's rule */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 24);
	}
}

const char *mca_status_name(int status)
{
	static const char *const names[] = {"WAITING", "PENDING", "INVALID", "CANCELED",
					    "COMPLETED", "TIMEOUT", "FAILED"};

	return status >= 0 && status < 7 ? names[status] : "UNKNOWN";
}
