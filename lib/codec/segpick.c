/* Where a data-path check goes on a peer (segpick.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "qphs/error.h"
#include "segpick.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return QPHS_ERR_METADATA;
}

/* An entry of priority_matrix is [[preferred...], [others...]] of strings
 * (Topology::parse refuses the whole matrix otherwise). */
static int entry_ok(struct json_object *v)
{
	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) != 2)
		return 0;
	for (size_t k = 0; k < 2; k++) {
		struct json_object *l = json_object_array_get_idx(v, k);

		if (!json_object_is_type(l, json_type_array))
			return 0;
		for (size_t j = 0; j < json_object_array_length(l); j++)
			if (!json_object_is_type(json_object_array_get_idx(l, j), json_type_string))
				return 0;
	}
	return 1;
}

/* Position of device in an entry's preferred-then-other order, each name
 * counted at its first appearance (Topology::resolve), or -1. */
static int position_in(struct json_object *entry, const char *device)
{
	const char *seen[256];
	int n = 0;

	for (size_t k = 0; k < 2; k++) {
		struct json_object *l = json_object_array_get_idx(entry, k);

		for (size_t j = 0; j < json_object_array_length(l) && n < 256; j++) {
			const char *name = json_object_get_string(json_object_array_get_idx(l, j));
			int dup = 0;

			for (int i = 0; i < n && !dup; i++)
				dup = !strcmp(seen[i], name);
			if (dup)
				continue;
			if (!strcmp(name, device))
				return n;
			seen[n++] = name;
		}
	}
	return -1;
}

/* Would a Mooncake initiator reach buffer `name` through `device`, which
 * devices[] lists at `index`?  1, or 0 with the reason in why. */
static int mooncake_reaches(const struct qphs_segment_desc *s, const char *name,
			    const char *device, size_t index, char *why, size_t len)
{
	struct json_object *pm = s->priority_matrix, *mine = NULL;
	int entries = 0, listed = 0;

	if (!pm || !json_object_object_length(pm)) {
		snprintf(why, len, "%s priority_matrix: a Mooncake initiator selects no device for "
			 "any buffer of this segment (Topology::selectDevice)", pm ? "an empty" : "no");
		return 0;
	}
	json_object_object_foreach(pm, loc, v) {
		if (!entry_ok(v)) {
			snprintf(why, len, "priority_matrix[\"%s\"] is not [[preferred], [others]] of "
				 "device names: Mooncake's Topology::parse refuses the matrix", loc);
			return 0;
		}
		entries++;
		listed |= position_in(v, device) >= 0;
		if (!strcmp(loc, name))
			mine = v;
	}
	if (mine ? position_in(mine, device) < 0 : !listed) {
		snprintf(why, len, "priority_matrix %s device %s: a Mooncake initiator never picks "
			 "it for buffer \"%s\"", mine ? "names buffer's location, without" :
			 "does not name", device, name);
		return 0;
	}
	/* One location: Topology::resolve numbers its devices in that order.
	 * With several, Mooncake visits them in hash order: not knowable here. */
	if (entries == 1) {
		json_object_object_foreach(pm, loc1, v1) {
			int pos = position_in(v1, device);

			(void)loc1;
			if (pos >= 0 && (size_t)pos != index) {
				snprintf(why, len, "priority_matrix numbers %s #%d but devices[] lists it "
					 "at #%zu: a Mooncake initiator would use rkey[%d] and "
					 "devices[%d]", device, pos, index, pos, pos);
				return 0;
			}
		}
	}
	return 1;
}

int qphs__seg_pick(const struct qphs_segment_desc *s, const char *device, size_t bytes,
		   struct qphs__seg_target *t, char *err, size_t errlen)
{
	size_t dev = s->device_count, largest = 0;
	int accessible = 0;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < s->device_count && dev == s->device_count; i++)
		if (!strcmp(s->devices[i].name, device))
			dev = i;
	if (dev == s->device_count)
		return fail(err, errlen, "the peer's segment descriptor lists no device %s", device);
	for (size_t b = 0; b < s->buffer_count; b++) {
		const struct qphs_seg_buffer *buf = &s->buffers[b];

		if (!buf->rkey_count)
			continue;
		accessible = 1;
		if (buf->length > largest)
			largest = buf->length;
		if (buf->length < bytes)
			continue;
		if (dev >= buf->rkey_count)
			return fail(err, errlen, "buffer \"%s\" has no rkey for device %s", buf->name,
				    device);
		t->buffer = b;
		t->device = dev;
		t->addr = buf->addr;
		t->length = buf->length;
		t->rkey = buf->rkey[dev];
		t->mooncake_ok = mooncake_reaches(s, buf->name, device, dev, t->mooncake_why,
						  sizeof(t->mooncake_why));
		return 0;
	}
	if (!accessible)
		return fail(err, errlen, "the peer registered no remotely accessible buffer "
			    "(every buffer's rkey list is empty)");
	return fail(err, errlen, "the peer's largest remotely accessible buffer holds %zu bytes, "
		    "fewer than %zu", largest, bytes);
}
