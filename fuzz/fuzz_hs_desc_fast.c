/* Differential: the fast Connection reader (codec/descfast.h) against the
 * json-c path it stands in for.  Whatever the fast reader reads, the json-c
 * path must read too, into the same descriptor, and qphs_json_shape must
 * count the same members; what it gives up on it must leave untouched.
 * The daemon's one-block variant must read the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/descfast.h"
#include "qphs/body.h"
#include "qphs/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int str_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static int same(const struct qphs_hs_desc *a, const struct qphs_hs_desc *b)
{
	return str_eq(a->local_nic_path, b->local_nic_path) &&
	       str_eq(a->local_gid, b->local_gid) &&
	       str_eq(a->peer_nic_path, b->peer_nic_path) &&
	       str_eq(a->reply_msg, b->reply_msg) && str_eq(a->payload, b->payload) &&
	       a->local_lid == b->local_lid && a->qp_count == b->qp_count &&
	       (!a->qp_count || !memcmp(a->qp_num, b->qp_num, a->qp_count * sizeof(*a->qp_num))) &&
	       (a->qp_count || (!a->qp_num && !b->qp_num)) &&
	       a->has_ready_ack == b->has_ready_ack && a->ready_ack == b->ready_ack &&
	       a->path_mtu == b->path_mtu && !a->extra && !b->extra;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *json = (const char *)data;
	struct qphs_hs_desc fast, ref, pub, untouched;
	struct qphs_json_shape shape;
	size_t members;
	char err[256];
	void *block;

	memset(&fast, 0xA5, sizeof(fast));
	untouched = fast;
	if (!qphs__hs_desc_fast(json, size, &fast, &members)) {
		if (memcmp(&fast, &untouched, sizeof(fast)))
			abort(); /* gave up but wrote */
		return 0;
	}
	if (qphs__hs_desc_parse_json(json, size, &ref, err, sizeof(err)))
		abort(); /* read a body the reference refuses */
	if (!same(&fast, &ref))
		abort();
	qphs_json_shape(json, size, &shape);
	if (shape.keys + shape.elements != members)
		abort();
	if (qphs_hs_desc_parse(json, size, &pub, err, sizeof(err)) || !same(&pub, &ref))
		abort();
	qphs_hs_desc_clear(&pub);
	/* The daemon's variant: everything in one block. */
	if (!qphs__hs_desc_fast_block(json, size, &pub, &members, &block) || !same(&pub, &ref) ||
	    shape.keys + shape.elements != members)
		abort();
	free(block);
	qphs_hs_desc_clear(&fast);
	qphs_hs_desc_clear(&ref);
	return 0;
}
