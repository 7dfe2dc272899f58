/* qphs_json_shape: what a body holds, from one pass over its text, before
 * anything parses it (qphs/json.h). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "qphs/json.h"

/* Nesting is tracked exactly to this depth (one bit per level: array or
 * object); deeper levels only count.  QPHS_MAX_DEPTH is far below it. */
#define TRACKED 64

void qphs_json_shape(const char *json, size_t json_len, struct qphs_json_shape *out)
{
	uint64_t is_array = 0; /* bit L: level L+1 is an array */
	size_t depth = 0;
	bool in_string = false, array_opened = false;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < json_len; i++) {
		char ch = json[i];

		if (in_string) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_string = false;
			continue;
		}
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
			continue;
		/* The first token after '[' is an element unless it is ']'. */
		if (array_opened && ch != ']')
			out->elements++;
		array_opened = false;
		switch (ch) {
		case '"':
			in_string = true;
			break;
		case '{':
		case '[':
			if (depth < TRACKED) {
				uint64_t bit = (uint64_t)1 << depth;
				is_array = ch == '[' ? is_array | bit : is_array & ~bit;
			}
			depth++;
			if (depth > out->depth)
				out->depth = depth;
			array_opened = ch == '[';
			break;
		case '}':
		case ']':
			if (depth)
				depth--;
			break;
		case ':':
			out->keys++;
			break;
		case ',':
			if (depth && depth <= TRACKED && (is_array >> (depth - 1)) & 1)
				out->elements++;
			break;
		default:
			break;
		}
	}
}
