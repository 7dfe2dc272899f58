/* `qplab agent --config`: a scenario host's agent options and daemon fault
 * onto the library's config, lab hooks and fault.  Strict: an unknown key
 * or a value of the wrong type is an error naming it. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "cli/jread.h"

/* --config through the harness's JSON reader (cli/jread.h): a value of the
 * wrong type, out of range or too long for its field is an error naming
 * its key; the first one is what err says. */
#define INT_ANY INT_MIN, INT_MAX

static void advertise(struct jread *r, struct agent *a, json_object *o)
{
	static const char *const keys[] = {"gid", "qpn", "qp_count", "address", NULL};
	int64_t qpn;

	jread_only_keys(r, o, keys, "agent.advertise");
	if (jread_str_copy(r, o, "gid", a->hook_gid, sizeof(a->hook_gid)) == JREAD_OK)
		a->hooks.advertise_gid = a->hook_gid;
	if (jread_str_copy(r, o, "address", a->hook_server, sizeof(a->hook_server)) == JREAD_OK)
		a->hooks.advertise_server = a->hook_server;
	/* Present means set, 0 too: QPN 0 is a case of its own. */
	if (jread_int64(r, o, "qpn", 0, UINT32_MAX, &qpn) == JREAD_OK) {
		a->hooks.advertise_qpn = (uint32_t)qpn;
		a->hooks.advertise_qpn_set = true;
	}
	jread_int(r, o, "qp_count", INT_ANY, &a->hooks.advertise_qp_count);
}

/* rdma_max: the rdma cgroup limits of the agent's device (agent_cgroup.c). */
static void rdma_max(struct jread *r, struct agent *a, json_object *o)
{
	static const char *const keys[] = {"hca_handle", "hca_object", NULL};

	jread_only_keys(r, o, keys, "rdma_max");
	a->rdma_max_set = true;
	a->rdma_max_handle = a->rdma_max_object = -1;
	jread_int(r, o, "hca_handle", 0, 1000000, &a->rdma_max_handle);
	jread_int(r, o, "hca_object", 0, 1000000, &a->rdma_max_object);
}

static void agent_opts(struct jread *r, struct agent *a, json_object *o)
{
	static const char *const keys[] = {"quirk", "mtu_negotiation", "ready_ack", "reset_policy",
					   "strict_reset", "qp_timeout", "qp_retry_cnt",
					   "qp_rnr_retry", "reply_timeout_ms", "old_protocol",
					   "delay_passive_rtr_ms", "delay_active_rtr_ms", "advertise",
					   "mtu_reread",
					   "rd_atomic_clamp", "no_rdma_transport", "sq_psn",
					   "rq_psn", "rdma_max", NULL};
	json_object *v;
	int64_t psn;
	const char *s;

	jread_only_keys(r, o, keys, "agent");
	jread_str_copy(r, o, "quirk", a->cfg.quirk_profile, sizeof(a->cfg.quirk_profile));
	jread_bool(r, o, "mtu_negotiation", &a->cfg.mtu_negotiation);
	jread_bool(r, o, "ready_ack", &a->cfg.ready_ack);
	jread_bool(r, o, "strict_reset", &a->cfg.strict_reset);
	jread_bool(r, o, "rd_atomic_clamp", &a->cfg.rd_atomic_clamp);
	jread_bool(r, o, "mtu_reread", &a->cfg.mtu_reread);
	if (jread_str(r, o, "reset_policy", &s) == JREAD_OK) {
		if (!strcmp(s, "reuse"))
			a->cfg.reset_policy = QPHS_RESET_REUSE;
		else if (!strcmp(s, "reconstruct"))
			a->cfg.reset_policy = QPHS_RESET_RECONSTRUCT;
		else
			jread_fail(r, "reset_policy", "reset_policy \"%s\": not reuse or reconstruct", s);
	}
	jread_int(r, o, "qp_timeout", INT_ANY, &a->cfg.qp_timeout);
	jread_int(r, o, "qp_retry_cnt", INT_ANY, &a->cfg.qp_retry_cnt);
	jread_int(r, o, "qp_rnr_retry", INT_ANY, &a->cfg.qp_rnr_retry);
	jread_int(r, o, "reply_timeout_ms", INT_ANY, &a->cfg.reply_timeout_ms);
	jread_int(r, o, "delay_passive_rtr_ms", 0, INT_MAX, &a->hooks.passive_rtr_delay_ms);
	jread_int(r, o, "delay_active_rtr_ms", 0, INT_MAX, &a->hooks.active_reply_delay_ms);
	jread_bool(r, o, "old_protocol", &a->cfg.old_protocol);
	jread_bool(r, o, "no_rdma_transport", &a->no_rdma_transport);
	if (jread_int64(r, o, "sq_psn", 0, 0xffffff, &psn) == JREAD_OK)
		a->hooks.sq_psn = (uint32_t)psn;
	if (jread_int64(r, o, "rq_psn", 0, 0xffffff, &psn) == JREAD_OK)
		a->hooks.rq_psn = (uint32_t)psn;
	if (jread_object(r, o, "advertise", &v) == JREAD_OK)
		advertise(r, a, v);
	if (jread_object(r, o, "rdma_max", &v) == JREAD_OK)
		rdma_max(r, a, v);
}

static void fault_types(struct jread *r, struct agent *a, json_object *o)
{
	static const char *const tnames[] = {"connection", "metadata", "notify", "probe",
					     "old-protocol"};
	json_object *v;
	const char *s;

	if (jread_array(r, o, "types", &v) != JREAD_OK)
		return;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		unsigned k = 0;

		if (jread_elem_str(r, v, "types", i, &s) != JREAD_OK)
			continue;
		while (k < 5 && strcmp(tnames[k], s))
			k++;
		if (k == 5)
			jread_fail(r, "types", "fault type \"%s\" unknown", s);
		else
			a->fault.types |= 1u << k;
	}
}

static void fault_opts(struct jread *r, struct agent *a, json_object *o)
{
	static const char *const keys[] = {"name", "ms", "text", "seed", "types", NULL};
	const char *text;
	char spec[300];
	int64_t seed;
	int ms = 0;

	jread_only_keys(r, o, keys, "fault");
	if (jread_str_copy(r, o, "name", a->fault_name, sizeof(a->fault_name)) != JREAD_OK) {
		if (!r->errors)
			jread_fail(r, "name", "fault needs \"name\"");
		return;
	}
	jread_int(r, o, "ms", 0, INT_MAX, &ms);
	snprintf(spec, sizeof(spec), "%s", a->fault_name);
	if (!strcmp(a->fault_name, "delay"))
		snprintf(spec, sizeof(spec), "delay:%d", ms);
	else if (!strcmp(a->fault_name, "reject") && jread_str(r, o, "text", &text) == JREAD_OK)
		snprintf(spec, sizeof(spec), "reject:%s", text);
	if (!r->errors && qphs_fault_parse(spec, &a->fault, r->err, r->errlen) != 0)
		r->errors++;
	if (jread_int64(r, o, "seed", 0, INT64_MAX, &seed) == JREAD_OK)
		a->fault.seed = (uint64_t)seed;
	fault_types(r, a, o);
}

/* impl "mooncake-compat": a qplab agent that behaves as Mooncake 3b5a594
 * where the two differ, a stand-in named as such.  Mooncake sends and reads
 * no path MTU (HandShakeDesc has no field for one); issues ->RESET
 * unconditionally (RdmaEndPoint::doSetupConnection); creates the passive
 * endpoint and its QPs before checking the request
 * (RdmaTransport::onSetupRdmaConnections); and knows nothing of our
 * checksum extension.  Applied before the agent options, which may still
 * change any of it. */
static void impl_opts(struct jread *r, struct agent *a, const char *impl)
{
	if (!strcmp(impl, "mooncake-compat")) {
		a->cfg.mtu_negotiation = false;
		a->cfg.strict_reset = true;
		a->cfg.passive_build_first = true;
		a->cfg.checksum_extension = false;
	} else if (strcmp(impl, "qplab")) {
		jread_fail(r, "impl", "impl \"%s\": not qplab or mooncake-compat", impl);
		return;
	}
	snprintf(a->impl, sizeof(a->impl), "%s", impl);
}

int agent_apply_config(struct agent *a, const char *json, char *err, size_t errlen)
{
	static const char *const keys[] = {"impl", "agent", "fault", NULL};
	struct jread r = {.what = "--config", .err = err, .errlen = errlen};
	json_object *o, *v;
	const char *impl;

	if (jread_parse_object(&r, json, strlen(json), &o) != JREAD_OK)
		return QPHS_ERR_INVALID_ARGUMENT;
	jread_only_keys(&r, o, keys, NULL);
	if (jread_str(&r, o, "impl", &impl) == JREAD_OK)
		impl_opts(&r, a, impl);
	if (jread_object(&r, o, "agent", &v) == JREAD_OK)
		agent_opts(&r, a, v);
	if (jread_object(&r, o, "fault", &v) == JREAD_OK)
		fault_opts(&r, a, v);
	json_object_put(o);
	if (!r.errors && qphs_config_validate(&a->cfg, err, errlen) != 0)
		r.errors++;
	return r.errors ? QPHS_ERR_INVALID_ARGUMENT : 0;
}
