/* The `posted` line of a datapath request with "notify_posted": written
 * the moment its first WR is on the wire, before its completion is
 * waited for, so the runner can act while that WR is outstanding (kill
 * the peer mid-READ: docs/agent-protocol.md "datapath"). */
#include <stdio.h>

#include <json-c/json.h>

#include "agent.h"

void agent_posted_notice(void *id)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(AGENT_PROTO_VERSION));
	json_object_object_add(o, "type", json_object_new_string("posted"));
	json_object_object_add(o, "id", json_object_get((json_object *)id));
	json_object_object_add(o, "op", json_object_new_string("datapath"));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(o);
}
