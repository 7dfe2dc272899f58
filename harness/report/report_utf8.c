/* Results documents are JSON, and JSON is UTF-8: a text that is not (a peer's
 * reply_msg, a scenario's own string) would make results.json unreadable to
 * every strict reader, ours included.  Before a document is written, each
 * string value whose bytes are not well-formed UTF-8 gets every bad byte
 * replaced by U+FFFD, so the rest of the text survives as it was. */
#include <stdlib.h>
#include <string.h>

#include "qphs/error.h"
#include "qphs/json.h"
#include "report.h"

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

int qplab_utf8_repair(const char *s, size_t n, char **repaired)
{
	size_t good = qphs_utf8_valid_prefix(s, n), o = 0;
	char *out;

	*repaired = NULL;
	if (good == n)
		return 0;
	/* At worst every byte is bad and becomes three. */
	out = malloc(n * 3 + 1);
	if (!out)
		return QPHS_ERR_MEMORY;
	while (n) {
		memcpy(out + o, s, good);
		o += good;
		s += good;
		n -= good;
		if (!n)
			break;
		memcpy(out + o, replacement, 3);
		o += 3;
		s++;
		n--;
		good = qphs_utf8_valid_prefix(s, n);
	}
	out[o] = '\0';
	*repaired = out;
	return 1;
}

int qplab_json_utf8_repair(json_object *o)
{
	int fixed = 0, rc = 0;
	char *r;

	switch (json_object_get_type(o)) {
	case json_type_string:
		rc = qplab_utf8_repair(json_object_get_string(o),
				       (size_t)json_object_get_string_len(o), &r);
		if (rc > 0) {
			rc = json_object_set_string(o, r) ? 1 : QPHS_ERR_MEMORY; /* 1: set */
			free(r);
		}
		return rc;
	case json_type_array:
		for (size_t i = 0; rc >= 0 && i < json_object_array_length(o); i++)
			if ((rc = qplab_json_utf8_repair(json_object_array_get_idx(o, i))) > 0)
				fixed += rc;
		break;
	case json_type_object: {
		json_object_object_foreach(o, key, v) {
			(void)key;
			if ((rc = qplab_json_utf8_repair(v)) < 0)
				break;
			fixed += rc;
		}
		break;
	}
	default:
		break;
	}
	return rc < 0 ? rc : fixed;
}
