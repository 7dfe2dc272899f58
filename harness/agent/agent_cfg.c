/* `qplab agent --config`: a scenario host's agent options and daemon fault
 * onto the library's config, lab hooks and fault.  Strict: an unknown key
 * or a value of the wrong type is an error naming it. */
#include <stdio.h>
#include <string.h>

#include "agent.h"

struct cfgdec {
	char *err;
	size_t errlen;
	int rc;
};

static int bad(struct cfgdec *c, const char *fmt, const char *key)
{
	if (!c->rc) {
		snprintf(c->err, c->errlen, fmt, key);
		c->rc = QPHS_ERR_INVALID_ARGUMENT;
	}
	return -1;
}

/* 1 when key is present with type t (value in *v), 0 when absent. */
static int take(struct cfgdec *c, json_object *o, const char *key, json_type t, json_object **v)
{
	if (!json_object_object_get_ex(o, key, v))
		return 0;
	if (!json_object_is_type(*v, t))
		return bad(c, "--config: \"%s\" has the wrong JSON type", key);
	return 1;
}

static void boolean(struct cfgdec *c, json_object *o, const char *key, bool *dst)
{
	json_object *v;

	if (take(c, o, key, json_type_boolean, &v) > 0)
		*dst = json_object_get_boolean(v);
}

static void integer(struct cfgdec *c, json_object *o, const char *key, int *dst)
{
	json_object *v;

	if (take(c, o, key, json_type_int, &v) > 0)
		*dst = (int)json_object_get_int64(v);
}

static void known_keys(struct cfgdec *c, json_object *o, const char *const *keys)
{
	json_object_object_foreach(o, key, val) {
		size_t i = 0;

		(void)val;
		while (keys[i] && strcmp(keys[i], key))
			i++;
		if (!keys[i])
			bad(c, "--config: unknown key \"%s\"", key);
	}
}

static void advertise(struct cfgdec *c, struct agent *a, json_object *o)
{
	static const char *const keys[] = {"gid", "qpn", "qp_count", "address", NULL};
	json_object *v;
	int64_t qpn = 0;

	known_keys(c, o, keys);
	if (take(c, o, "gid", json_type_string, &v) > 0) {
		snprintf(a->hook_gid, sizeof(a->hook_gid), "%s", json_object_get_string(v));
		a->hooks.advertise_gid = a->hook_gid;
	}
	if (take(c, o, "address", json_type_string, &v) > 0) {
		snprintf(a->hook_server, sizeof(a->hook_server), "%s", json_object_get_string(v));
		a->hooks.advertise_server = a->hook_server;
	}
	/* Present means set, 0 too: QPN 0 is a case of its own. */
	if (take(c, o, "qpn", json_type_int, &v) > 0) {
		qpn = json_object_get_int64(v);
		a->hooks.advertise_qpn = (uint32_t)qpn;
		a->hooks.advertise_qpn_set = true;
	}
	integer(c, o, "qp_count", &a->hooks.advertise_qp_count);
}

static void agent_opts(struct cfgdec *c, struct agent *a, json_object *o)
{
	static const char *const keys[] = {"quirk", "mtu_negotiation", "ready_ack", "reset_policy",
					   "strict_reset", "qp_timeout", "qp_retry_cnt",
					   "qp_rnr_retry", "reply_timeout_ms", "old_protocol",
					   "delay_passive_rtr_ms", "advertise", "mtu_reread",
					   "rd_atomic_clamp", "no_rdma_transport", NULL};
	json_object *v;

	known_keys(c, o, keys);
	if (take(c, o, "quirk", json_type_string, &v) > 0)
		snprintf(a->cfg.quirk_profile, sizeof(a->cfg.quirk_profile), "%s",
			 json_object_get_string(v));
	boolean(c, o, "mtu_negotiation", &a->cfg.mtu_negotiation);
	boolean(c, o, "ready_ack", &a->cfg.ready_ack);
	boolean(c, o, "strict_reset", &a->cfg.strict_reset);
	boolean(c, o, "rd_atomic_clamp", &a->cfg.rd_atomic_clamp);
	boolean(c, o, "mtu_reread", &a->cfg.mtu_reread);
	if (take(c, o, "reset_policy", json_type_string, &v) > 0) {
		if (!strcmp(json_object_get_string(v), "reuse"))
			a->cfg.reset_policy = QPHS_RESET_REUSE;
		else if (!strcmp(json_object_get_string(v), "reconstruct"))
			a->cfg.reset_policy = QPHS_RESET_RECONSTRUCT;
		else
			bad(c, "--config: reset_policy \"%s\": not reuse or reconstruct",
			    json_object_get_string(v));
	}
	integer(c, o, "qp_timeout", &a->cfg.qp_timeout);
	integer(c, o, "qp_retry_cnt", &a->cfg.qp_retry_cnt);
	integer(c, o, "qp_rnr_retry", &a->cfg.qp_rnr_retry);
	integer(c, o, "reply_timeout_ms", &a->cfg.reply_timeout_ms);
	integer(c, o, "delay_passive_rtr_ms", &a->hooks.passive_rtr_delay_ms);
	boolean(c, o, "old_protocol", &a->cfg.old_protocol);
	boolean(c, o, "no_rdma_transport", &a->no_rdma_transport);
	if (take(c, o, "advertise", json_type_object, &v) > 0)
		advertise(c, a, v);
}

static void fault_opts(struct cfgdec *c, struct agent *a, json_object *o)
{
	static const char *const keys[] = {"name", "ms", "text", "seed", "types", NULL};
	static const char *const tnames[] = {"connection", "metadata", "notify", "probe",
					     "old-protocol"};
	json_object *v, *t;
	char spec[300];
	int ms = 0;

	known_keys(c, o, keys);
	if (take(c, o, "name", json_type_string, &v) <= 0) {
		bad(c, "--config: fault needs \"%s\"", "name");
		return;
	}
	snprintf(a->fault_name, sizeof(a->fault_name), "%s", json_object_get_string(v));
	integer(c, o, "ms", &ms);
	snprintf(spec, sizeof(spec), "%s", a->fault_name);
	if (!strcmp(a->fault_name, "delay"))
		snprintf(spec, sizeof(spec), "delay:%d", ms);
	else if (!strcmp(a->fault_name, "reject") && take(c, o, "text", json_type_string, &t) > 0)
		snprintf(spec, sizeof(spec), "reject:%s", json_object_get_string(t));
	if (!c->rc && qphs_fault_parse(spec, &a->fault, c->err, c->errlen) != 0)
		c->rc = QPHS_ERR_INVALID_ARGUMENT;
	if (take(c, o, "seed", json_type_int, &v) > 0)
		a->fault.seed = (uint64_t)json_object_get_int64(v);
	if (take(c, o, "types", json_type_array, &v) > 0) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(v, i));
			unsigned k = 0;

			while (k < 5 && strcmp(tnames[k], s ? s : ""))
				k++;
			if (k == 5)
				bad(c, "--config: fault type \"%s\" unknown", s ? s : "?");
			else
				a->fault.types |= 1u << k;
		}
	}
}

/* impl "mooncake-compat": a qplab agent that behaves as Mooncake 3b5a594
 * where the two differ, a stand-in named as such.  Mooncake sends and reads
 * no path MTU (HandShakeDesc has no field for one); issues ->RESET
 * unconditionally (RdmaEndPoint::doSetupConnection); creates the passive
 * endpoint and its QPs before checking the request
 * (RdmaTransport::onSetupRdmaConnections); and knows nothing of our
 * checksum extension.  Applied before the agent options, which may still
 * change any of it. */
static void impl_opts(struct cfgdec *c, struct agent *a, const char *impl)
{
	if (!strcmp(impl, "mooncake-compat")) {
		a->cfg.mtu_negotiation = false;
		a->cfg.strict_reset = true;
		a->cfg.passive_build_first = true;
		a->cfg.checksum_extension = false;
	} else if (strcmp(impl, "qplab")) {
		bad(c, "--config: impl \"%s\": not qplab or mooncake-compat", impl);
		return;
	}
	snprintf(a->impl, sizeof(a->impl), "%s", impl);
}

int agent_apply_config(struct agent *a, const char *json, char *err, size_t errlen)
{
	static const char *const keys[] = {"impl", "agent", "fault", NULL};
	struct cfgdec c = {.err = err, .errlen = errlen};
	json_object *o = json_tokener_parse(json), *v;

	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		snprintf(err, errlen, "--config: not a JSON object");
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	known_keys(&c, o, keys);
	if (take(&c, o, "impl", json_type_string, &v) > 0)
		impl_opts(&c, a, json_object_get_string(v));
	if (take(&c, o, "agent", json_type_object, &v) > 0)
		agent_opts(&c, a, v);
	if (take(&c, o, "fault", json_type_object, &v) > 0)
		fault_opts(&c, a, v);
	json_object_put(o);
	if (!c.rc && qphs_config_validate(&a->cfg, err, errlen) != 0)
		c.rc = QPHS_ERR_INVALID_ARGUMENT;
	return c.rc;
}
