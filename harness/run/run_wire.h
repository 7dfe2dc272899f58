/* run_wire.h — a scenario's capture and wire verdicts in results.json. */
#ifndef QPLAB_RUN_WIRE_H
#define QPLAB_RUN_WIRE_H

#include <json-c/json.h>

#include "scenario/scenario.h"

struct run_outcome;

/* Adds "pcaps" (paths under rel, the pcap directory as seen from
 * results.json) and, when the scenario passed so far and has wire
 * expectations, one verdict per expectation to j's "expectations".
 * Frees o's decoded packets.  Returns how many wire expectations failed. */
int run_wire_json(json_object *j, const struct qplab_plan *p, struct run_outcome *o, const char *rel);

#endif
