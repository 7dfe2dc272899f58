/*
 * The inventory parser (inventory.h, docs/inventory.md).  Strict JSON, no
 * comments; every key and element is located by the scenario parser's
 * pre-scan, so each refusal is FILE:LINE.  Strings are checked against the
 * plain alphabets of docs/inventory.md before they are stored: nothing
 * stored here can start an option or mean anything to a shell.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/jread.h"
#include "inventory.h"
#include "qphs/error.h"
#include "scenario_int.h"

#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

enum plain { PLAIN_NAME, PLAIN_PATH, PLAIN_VALUE };

static const char *const FAULTS[] = {"link", "netem", "mtu", "blackhole", "delete_device", NULL};

/* ssh options that run a command, read other files or turn the runner's
 * own options off: an inventory may not set them. */
static const char *const BANNED_OPTIONS[] = {
	"ProxyCommand", "LocalCommand", "PermitLocalCommand", "KnownHostsCommand",
	"RemoteCommand", "Match", "Include", "ProxyUseFdpass", "BatchMode",
	"ServerAliveInterval", "ServerAliveCountMax", "PKCS11Provider",
	"SecurityKeyProvider", "SessionType", "StdinNull", "ForkAfterAuthentication", NULL};

const char *qplab_inv_fault_name(enum qplab_inv_fault f)
{
	for (int i = 0; FAULTS[i]; i++)
		if ((unsigned)f == 1u << i)
			return FAULTS[i];
	return "?";
}

static int key_line(struct sc_ctx *ctx, const char *path, const char *key)
{
	char p[SC_PATH_MAX];

	qplab__sc_join(p, sizeof(p), path, key);
	return qplab__sc_line(ctx, p);
}

/* Whether s is plain of kind k; when not, what is wrong (why, len). */
static bool plain(const char *s, enum plain k, char *why, size_t len)
{
	const char *extra = k == PLAIN_NAME ? "" : k == PLAIN_PATH ? "/" : "@:%+,=/";
	size_t n = strlen(s);

	if (!n) {
		snprintf(why, len, "must not be empty");
		return false;
	}
	if (s[0] == '-') {
		snprintf(why, len, "must not start with '-'");
		return false;
	}
	if (k == PLAIN_PATH && s[0] != '/') {
		snprintf(why, len, "must be an absolute path");
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!strchr(NAME_CHARS, c) && !strchr(extra, c)) {
			if (c < 0x20 || c >= 0x7f)
				snprintf(why, len, "holds byte 0x%02x, which is not allowed", c);
			else
				snprintf(why, len, "holds '%c', which is not allowed", c);
			return false;
		}
	}
	if (k == PLAIN_PATH && (strstr(s, "/../") || (n >= 3 && !strcmp(s + n - 3, "/..")))) {
		snprintf(why, len, "must not hold \"..\"");
		return false;
	}
	return true;
}

/* obj[key], a string that is plain of kind k, into dst (len bytes).
 * Returns true when present and stored. */
static bool get_plain(struct sc_ctx *ctx, json_object *obj, const char *path, const char *key,
		      bool required, enum plain k, char *dst, size_t len)
{
	const char *s;
	char why[96];
	int line = key_line(ctx, path, key);

	if (!qplab__sc_str(ctx, obj, path, key, required, &s))
		return false;
	if (!plain(s, k, why, sizeof(why))) {
		qplab__sc_err(ctx, line, "\"%s\" %s (%s)", key, why,
			      k == PLAIN_NAME   ? "a name is letters, digits and . _ -"
			      : k == PLAIN_PATH ? "a path is absolute: letters, digits and . _ - /"
						: "letters, digits and . _ - / @ : % + , =");
		return false;
	}
	qplab__sc_copy(ctx, line, dst, len, s, key);
	return dst[0] != '\0';
}

static void parse_options(struct sc_ctx *ctx, json_object *o, const char *path,
			  struct qplab_inv_ssh *ssh)
{
	char why[96];

	json_object_object_foreach(o, name, val) {
		char sub[SC_PATH_MAX];
		int line;
		struct qplab_inv_option *opt;
		bool banned = false;

		qplab__sc_join(sub, sizeof(sub), path, name);
		line = qplab__sc_line(ctx, sub);
		if (!plain(name, PLAIN_NAME, why, sizeof(why))) {
			qplab__sc_err(ctx, line, "ssh option name \"%s\" %s", name, why);
			continue;
		}
		for (int i = 0; BANNED_OPTIONS[i]; i++)
			banned |= !strcasecmp(name, BANNED_OPTIONS[i]);
		if (banned) {
			qplab__sc_err(ctx, line,
				      "ssh option \"%s\" is not allowed (it runs a command, reads other files or overrides the runner's own options)",
				      name);
			continue;
		}
		if (!json_object_is_type(val, json_type_string)) {
			qplab__sc_err(ctx, line, "ssh option \"%s\" must be a string, not %s", name,
				      jread_type_word(json_object_get_type(val)));
			continue;
		}
		if (ssh->noptions == QPLAB_INV_MAX_OPTIONS) {
			qplab__sc_err(ctx, line, "more than %d ssh options", QPLAB_INV_MAX_OPTIONS);
			return;
		}
		opt = &ssh->options[ssh->noptions];
		if (!plain(json_object_get_string(val), PLAIN_VALUE, why, sizeof(why))) {
			qplab__sc_err(ctx, line, "ssh option \"%s\": its value %s", name, why);
			continue;
		}
		qplab__sc_copy(ctx, line, opt->name, sizeof(opt->name), name, "ssh option name");
		qplab__sc_copy(ctx, line, opt->value, sizeof(opt->value), json_object_get_string(val),
			       "ssh option value");
		ssh->noptions++;
	}
}

static void parse_ssh(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_inv_ssh *ssh)
{
	static const char *const keys[] = {"destination", "alias", "config", "port", "identity",
					   "options", NULL};
	char sub[SC_PATH_MAX];
	json_object *opts;
	long port;

	qplab__sc_only_keys(ctx, o, path, "ssh", keys);
	get_plain(ctx, o, path, "destination", false, PLAIN_VALUE, ssh->destination,
		  sizeof(ssh->destination));
	get_plain(ctx, o, path, "alias", false, PLAIN_NAME, ssh->alias, sizeof(ssh->alias));
	if (json_object_object_get_ex(o, "destination", NULL) ==
	    json_object_object_get_ex(o, "alias", NULL))
		qplab__sc_err(ctx, qplab__sc_line(ctx, path),
			      "\"ssh\" needs exactly one of \"destination\" and \"alias\"");
	get_plain(ctx, o, path, "config", false, PLAIN_PATH, ssh->config, sizeof(ssh->config));
	get_plain(ctx, o, path, "identity", false, PLAIN_PATH, ssh->identity, sizeof(ssh->identity));
	if (qplab__sc_int(ctx, o, path, "port", 1, 65535, &port))
		ssh->port = (int)port;
	opts = qplab__sc_get(ctx, o, path, "options", json_type_object, false);
	if (opts) {
		qplab__sc_join(sub, sizeof(sub), path, "options");
		parse_options(ctx, opts, sub, ssh);
	}
}

static void parse_faults(struct sc_ctx *ctx, json_object *arr, const char *path,
			 struct qplab_inv_host *h)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		char a[SC_PATH_MAX], el[SC_PATH_MAX + 24];
		const char *s;
		int k;

		if (!qplab__sc_elem_str(ctx, arr, path, "faults", i, &s))
			continue;
		qplab__sc_join(a, sizeof(a), path, "faults");
		qplab__sc_join_index(el, sizeof(el), a, i);
		for (k = 0; FAULTS[k] && strcmp(FAULTS[k], s); k++)
			;
		if (!FAULTS[k])
			qplab__sc_err(ctx, qplab__sc_line(ctx, el),
				      "unknown fault \"%s\" (link, netem, mtu, blackhole, delete_device)", s);
		else if (h->faults & (1u << k))
			qplab__sc_err(ctx, qplab__sc_line(ctx, el), "fault \"%s\" listed twice", s);
		else
			h->faults |= 1u << k;
	}
}

static void parse_host(struct sc_ctx *ctx, json_object *o, const char *path, struct qplab_inv_host *h)
{
	static const char *const keys[] = {"ssh", "qplab", "device", "port", "netdev", "address",
					   "lab_host", "ssh_netdev", "faults", NULL};
	char sub[SC_PATH_MAX];
	json_object *ssh, *faults;
	long port = 1;
	unsigned char buf[16];

	qplab__sc_only_keys(ctx, o, path, "a host", keys);
	ssh = qplab__sc_get(ctx, o, path, "ssh", json_type_object, true);
	if (ssh) {
		qplab__sc_join(sub, sizeof(sub), path, "ssh");
		parse_ssh(ctx, ssh, sub, &h->ssh);
	}
	get_plain(ctx, o, path, "qplab", true, PLAIN_PATH, h->qplab, sizeof(h->qplab));
	get_plain(ctx, o, path, "device", true, PLAIN_NAME, h->device, sizeof(h->device));
	qplab__sc_int(ctx, o, path, "port", 1, 255, &port);
	h->port = (int)port;
	get_plain(ctx, o, path, "netdev", true, PLAIN_NAME, h->netdev, sizeof(h->netdev));
	if (get_plain(ctx, o, path, "address", true, PLAIN_VALUE, h->address, sizeof(h->address))) {
		h->ipv6 = strchr(h->address, ':') != NULL;
		if (inet_pton(h->ipv6 ? AF_INET6 : AF_INET, h->address, buf) != 1)
			qplab__sc_err(ctx, key_line(ctx, path, "address"),
				      "\"address\" \"%s\" is not an IPv4 or IPv6 address", h->address);
	}
	qplab__sc_bool(ctx, o, path, "lab_host", &h->lab_host);
	get_plain(ctx, o, path, "ssh_netdev", false, PLAIN_NAME, h->ssh_netdev, sizeof(h->ssh_netdev));
	faults = qplab__sc_get(ctx, o, path, "faults", json_type_array, false);
	if (faults)
		parse_faults(ctx, faults, path, h);
}

static void parse_root(struct sc_ctx *ctx, json_object *root, struct qplab_inventory *inv)
{
	static const char *const keys[] = {"version", "hosts", NULL};
	json_object *hosts;
	long version = 0;

	qplab__sc_only_keys(ctx, root, "", "the inventory", keys);
	if (!json_object_object_get_ex(root, "version", NULL))
		qplab__sc_err(ctx, 1, "missing required key \"version\"");
	else
		qplab__sc_int(ctx, root, "", "version", 1, 1, &version);
	hosts = qplab__sc_get(ctx, root, "", "hosts", json_type_object, true);
	if (!hosts)
		return;
	if (json_object_object_length(hosts) == 0)
		qplab__sc_err(ctx, qplab__sc_line(ctx, "/hosts"), "an inventory needs at least one host");
	json_object_object_foreach(hosts, name, val) {
		char path[SC_PATH_MAX];
		int line;
		struct qplab_inv_host *h;

		qplab__sc_join(path, sizeof(path), "/hosts", name);
		line = qplab__sc_line(ctx, path);
		if (inv->nhosts == QPLAB_MAX_HOSTS) {
			qplab__sc_err(ctx, line, "more than %d hosts", QPLAB_MAX_HOSTS);
			break;
		}
		if (!*name || strlen(name) > 8 || name[0] < 'a' || name[0] > 'z' ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(name)) {
			qplab__sc_err(ctx, line,
				      "host name \"%s\": 1-8 characters a-z, 0-9, starting with a letter (a scenario's host name)",
				      name);
			continue;
		}
		if (!json_object_is_type(val, json_type_object)) {
			qplab__sc_err(ctx, line, "host \"%s\" must be an object", name);
			continue;
		}
		h = &inv->hosts[inv->nhosts++];
		snprintf(h->name, sizeof(h->name), "%s", name);
		h->line = line;
		parse_host(ctx, val, path, h);
	}
}

int qplab_inventory_parse(const char *file, const char *text, size_t len,
			  struct qplab_inventory **out, struct qplab_errors *errs)
{
	struct sc_ctx ctx = {.file = file, .errs = errs};
	struct qplab_inventory *inv = calloc(1, sizeof(*inv));
	char *copy = malloc(len + 1);
	json_object *root = NULL;
	int rc = QPHS_ERR_MEMORY;

	*out = NULL;
	if (!inv || !copy)
		goto out;
	rc = QPHS_ERR_INVALID_ARGUMENT;
	if (len > QPLAB_SCENARIO_MAX_BYTES) {
		qplab__sc_err(&ctx, 0, "larger than %d bytes", QPLAB_SCENARIO_MAX_BYTES);
		goto out;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	root = qplab__sc_parse_json(&ctx, copy, len, false, &rc);
	if (!root)
		goto out;
	if (!json_object_is_type(root, json_type_object)) {
		qplab__sc_err(&ctx, 1, "an inventory is a JSON object");
		rc = QPHS_ERR_INVALID_ARGUMENT;
		goto out;
	}
	parse_root(&ctx, root, inv);
	inv->file = qplab__sc_strdup(file);
	rc = ctx.nerr ? QPHS_ERR_INVALID_ARGUMENT : inv->file ? 0 : QPHS_ERR_MEMORY;
out:
	if (rc == 0) {
		*out = inv;
		inv = NULL;
	} else if (!ctx.nerr) {
		qplab__sc_err(&ctx, 0, "out of memory");
	}
	qplab__sc_flush(&ctx);
	qplab_inventory_free(inv);
	json_object_put(root);
	for (size_t i = 0; i < ctx.nlines; i++)
		free(ctx.lines[i].path);
	free(ctx.lines);
	free(copy);
	return rc;
}

int qplab_inventory_load(const char *path, struct qplab_inventory **out, struct qplab_errors *errs)
{
	struct sc_ctx ctx = {.file = path, .errs = errs};
	char *buf;
	size_t len;
	int rc;

	*out = NULL;
	if (qplab__sc_read_file(&ctx, path, &buf, &len)) {
		qplab__sc_flush(&ctx);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	rc = qplab_inventory_parse(path, buf, len, out, errs);
	free(buf);
	return rc;
}

void qplab_inventory_free(struct qplab_inventory *inv)
{
	if (!inv)
		return;
	free(inv->file);
	free(inv);
}

const struct qplab_inv_host *qplab_inventory_host(const struct qplab_inventory *inv,
						  const char *name)
{
	for (size_t i = 0; inv && i < inv->nhosts; i++)
		if (!strcmp(inv->hosts[i].name, name))
			return &inv->hosts[i];
	return NULL;
}
