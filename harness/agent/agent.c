/* `qplab agent`: starts one lab host (daemon + device), prints `ready`,
 * then serves JSON-line requests until `exit`, EOF, SIGTERM or SIGINT. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "cli/cli.h"
#include "cli/jread.h"
#include "qphs/body.h"

#define LINE_MAX_BYTES 65536

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void emit(json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(o);
}

static int fatal(int code, const char *text)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(AGENT_PROTO_VERSION));
	json_object_object_add(o, "type", json_object_new_string("fatal"));
	json_object_object_add(o, "code", json_object_new_string(qphs_errname(code)));
	json_object_object_add(o, "error", json_object_new_string(text));
	emit(o);
	fprintf(stderr, "qplab agent: %s: %s\n", qphs_errname(code), text);
	return QPLAB_EXIT_FAIL;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: qplab agent --host NAME --device DEV --listen ADDR:PORT "
		     "[--config JSON] [-v]\n\n"
		     "One lab host: opens DEV with libqphs, runs the handshake daemon on\n"
		     "ADDR:PORT, prints a `ready` JSON line, then answers JSON-line requests\n"
		     "on stdin (docs/agent-protocol.md).  MC_* variables apply as for any\n"
		     "Mooncake process; when they, or opening DEV, fail, the agent still\n"
		     "starts and `ready` carries context_error.  Exit: 0 after `exit` or EOF,\n"
		     "1 when the daemon could not start (a `fatal` line says why), 2 usage\n"
		     "error.\n");
}

static int parse_args(int argc, char **argv, struct agent *a, const char **config, int *verbose)
{
	static const struct option opts[] = {
		{"host", required_argument, NULL, 'H'},   {"device", required_argument, NULL, 'd'},
		{"listen", required_argument, NULL, 'l'}, {"config", required_argument, NULL, 'c'},
		{"verbose", no_argument, NULL, 'v'},      {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "H:d:l:c:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'H': a->host = optarg; break;
		case 'd': a->device = optarg; break;
		case 'l': a->listen = optarg; break;
		case 'c': *config = optarg; break;
		case 'v': *verbose = 1; break;
		case 'h': usage(stdout); return -1;
		default: return QPLAB_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return qplab_usage_error("agent: unexpected argument '%s'", argv[optind]);
	if (!a->host || !a->device || !a->listen)
		return qplab_usage_error("agent: --host, --device and --listen are required");
	if (qphs_parse_host_port(a->listen, a->addr, sizeof(a->addr), &a->port, 0) != 0 || !a->port)
		return qplab_usage_error("agent: --listen: want ADDR:PORT, got '%s'", a->listen);
	return 0;
}

/* The device side: a failure here is the host's context error, not the
 * agent's.  Then the RDMA handlers are not attached and the daemon answers
 * Connection and Metadata requests null, as a Mooncake node whose only
 * device failed does: its RdmaTransport does not install, and its daemon,
 * which keeps serving, has no handler for them (rdma_transport.cpp
 * RdmaTransport::install; transfer_metadata_plugin.cpp
 * SocketHandShakePlugin::startDaemon).  The agent option no_rdma_transport
 * asks for that state on purpose.  Returns 0 or the code, text in err. */
static int open_context(struct agent *a, char *err, size_t errlen)
{
	int rc;

	if (a->no_rdma_transport) {
		snprintf(err, errlen, "no RDMA transport (agent option no_rdma_transport): "
			 "Connection and Metadata requests are answered null");
		return QPHS_ERR_CONTEXT;
	}
	rc = qphs_rdma_new(&a->cfg, qphs_daemon_address(a->d), &a->r, err, errlen);
	if (!rc && (rc = qphs_rdma_open_device(a->r, a->device, &a->ctx)) != 0)
		snprintf(err, errlen, "%s", qphs_rdma_errstr(a->r));
	if (!rc)
		rc = qphs_context_set_hooks(a->ctx, &a->hooks);
	if (!rc && qphs_rdma_attach(a->r, a->d) != 0)
		rc = QPHS_ERR_CONTEXT;
	if (rc) {
		a->ctx = NULL;
		if (!err[0])
			snprintf(err, errlen, "%s", qphs_strerror(rc));
	}
	return rc;
}

/* Returns 0, or a code with err when the daemon could not start (fatal).
 * A context error (a->ctx_code) is not fatal. */
static int start(struct agent *a, char *err, size_t errlen)
{
	int rc = qphs_daemon_new(&a->cfg, &a->d);

	if (!rc && a->fault_name[0])
		rc = qphs_daemon_set_fault(a->d, &a->fault);
	if (!rc && (rc = qphs_daemon_listen(a->d, a->addr, a->port)) != 0)
		snprintf(err, errlen, "listen on %s: %s", a->listen, qphs_daemon_errstr(a->d));
	if (!rc && !a->ctx_code)
		a->ctx_code = agent_cgroup_enter(a, a->ctx_error, sizeof(a->ctx_error));
	if (!rc && !a->ctx_code)
		a->ctx_code = open_context(a, a->ctx_error, sizeof(a->ctx_error));
	if (!rc && qphs_daemon_raise_nofile(&a->cfg, NULL, err, errlen) != 0) {
		fprintf(stderr, "qplab agent %s: warning: %s\n", a->host, err);
		err[0] = '\0';
	}
	if (!rc && qphs_daemon_tune_malloc() != 0)
		fprintf(stderr, "qplab agent %s: warning: cannot fix the mmap threshold\n",
			a->host);
	if (!rc && (rc = qphs_daemon_start(a->d)) != 0)
		snprintf(err, errlen, "daemon: %s", qphs_daemon_errstr(a->d));
	if (rc && !err[0])
		snprintf(err, errlen, "%s", qphs_strerror(rc));
	if (!rc && a->ctx_code) {
		fprintf(stderr, "qplab agent %s: context error %s: %s\n", a->host,
			qphs_errname(a->ctx_code), a->ctx_error);
		snprintf(a->last_code, sizeof(a->last_code), "%s", qphs_errname(a->ctx_code));
		snprintf(a->last_error, sizeof(a->last_error), "%s", a->ctx_error);
	}
	return rc;
}

static void add_context(struct agent *a, json_object *o)
{
	struct qphs_context_info ci;
	json_object *ce = NULL;
	char path[600];

	if (!a->ctx) {
		/* The nic path it would have had, so peers can still aim at it. */
		snprintf(path, sizeof(path), "%s@%s", qphs_daemon_address(a->d), a->device);
		json_object_object_add(o, "nic_path", json_object_new_string(path));
		json_object_object_add(o, "device", json_object_new_string(a->device));
		ce = json_object_new_object();
		json_object_object_add(ce, "code", json_object_new_string(qphs_errname(a->ctx_code)));
		json_object_object_add(ce, "text", json_object_new_string(a->ctx_error));
		json_object_object_add(o, "context_error", ce);
		return;
	}
	qphs_context_info(a->ctx, &ci);
	json_object_object_add(o, "nic_path", json_object_new_string(ci.nic_path));
	json_object_object_add(o, "device", json_object_new_string(ci.device));
	json_object_object_add(o, "port", json_object_new_int(ci.port));
	json_object_object_add(o, "active_mtu", json_object_new_int(ci.active_mtu));
	json_object_object_add(o, "gid_index", json_object_new_int(ci.gid_index));
	json_object_object_add(o, "gid", json_object_new_string(ci.gid));
	json_object_object_add(o, "gid_reason", json_object_new_string(ci.gid_reason));
	json_object_object_add(o, "quirk", ci.quirk_profile[0] ? json_object_new_string(ci.quirk_profile) : NULL);
	json_object_object_add(o, "context_error", NULL);
}

static void ready(struct agent *a)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(AGENT_PROTO_VERSION));
	json_object_object_add(o, "type", json_object_new_string("ready"));
	json_object_object_add(o, "host", json_object_new_string(a->host));
	json_object_object_add(o, "impl", json_object_new_string(a->impl));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "listen", json_object_new_string(qphs_daemon_address(a->d)));
	add_context(a, o);
	json_object_object_add(o, "qp_per_ep", json_object_new_int(a->cfg.num_qp_per_ep));
	json_object_object_add(o, "fault", a->fault_name[0] ? json_object_new_string(a->fault_name) : NULL);
	/* The clock its events are dated on, read as late as possible: the
	 * runner takes its own at this line's arrival for the offset. */
	json_object_object_add(o, "mono_ms", json_object_new_double(qphs_monotonic_ms()));
	emit(o);
}

static json_object *protocol_error(json_object *req, int code, const char *text)
{
	struct jread r = {0}; /* the error is text's; a bad id or op is left out */
	json_object *id = NULL;
	const char *op = NULL;

	jread_value(&r, req, "id", json_type_int, &id);
	jread_str(&r, req, "op", &op);
	return agent_reply(id, op, 0, code, text);
}

/* One line in, one reply out.  Returns 1 after `exit`. */
static int serve_line(struct agent *a, const char *line, size_t len, unsigned long lineno)
{
	struct jread r = {0};
	json_object *req = NULL;
	char text[128];
	int quit = 0, v = 0;

	if (len > LINE_MAX_BYTES) {
		snprintf(text, sizeof(text), "line %lu: longer than %d bytes", lineno, LINE_MAX_BYTES);
		emit(protocol_error(NULL, QPHS_ERR_INVALID_ARGUMENT, text));
		return 0;
	}
	if (jread_parse_object(&r, line, len, &req) != JREAD_OK) {
		snprintf(text, sizeof(text), "line %lu: not a JSON object", lineno);
		emit(protocol_error(NULL, QPHS_ERR_MALFORMED_JSON, text));
	} else if (jread_int(&r, req, "v", INT_MIN, INT_MAX, &v) != JREAD_OK ||
		   v != AGENT_PROTO_VERSION) {
		snprintf(text, sizeof(text), "protocol version: want \"v\": %d", AGENT_PROTO_VERSION);
		emit(protocol_error(req, QPHS_ERR_INVALID_ARGUMENT, text));
	} else {
		emit(agent_serve(a, req, &quit));
	}
	json_object_put(req);
	return quit;
}

static void loop(struct agent *a)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long lineno = 0;

	while (!stop_signal && (n = getline(&line, &cap, stdin)) >= 0) {
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		if (serve_line(a, line, (size_t)n, lineno))
			break;
	}
	free(line);
	if (stop_signal)
		fprintf(stderr, "qplab agent %s: signal %d, exiting\n", a->host, (int)stop_signal);
}

int cmd_agent(int argc, char **argv)
{
	struct agent a;
	struct sigaction sa = {.sa_handler = on_signal};
	const char *config = NULL;
	char err[700] = "";
	int verbose = 0, rc;

	memset(&a, 0, sizeof(a));
	qphs_config_init(&a.cfg);
	snprintf(a.impl, sizeof(a.impl), "qplab");
	rc = parse_args(argc, argv, &a, &config, &verbose);
	if (rc)
		return rc < 0 ? QPLAB_EXIT_OK : rc;
	qplab_log_to_stderr(verbose);
	snprintf(a.last_code, sizeof(a.last_code), "OK");
	a.t_handshake = a.t_ready_ack = a.t_total = a.t_tcp = -1;
	for (int i = 0; i < QPHS_TR_COUNT; i++)
		a.t_tr[i] = -1;
	/* An invalid MC_* value is the host's context error (the library
	 * refuses the configuration: no device is opened); cfg keeps the
	 * defaults, with which the daemon still runs. */
	a.ctx_code = qphs_config_from_env(&a.cfg, NULL, NULL, a.ctx_error, sizeof(a.ctx_error));
	rc = config ? agent_apply_config(&a, config, err, sizeof(err)) : 0;
	if (rc)
		return fatal(rc, err);
	/* No SA_RESTART: a signal ends the blocking read, and the loop exits. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = start(&a, err, sizeof(err));
	if (rc) {
		fatal(rc, err);
	} else {
		ready(&a);
		loop(&a);
	}
	if (a.d)
		qphs_daemon_stop(a.d);
	agent_fanin_free(&a);
	qphs_rdma_free(a.r);
	qphs_daemon_free(a.d);
	agent_cgroup_leave(&a);
	return rc ? QPLAB_EXIT_FAIL : QPLAB_EXIT_OK;
}
