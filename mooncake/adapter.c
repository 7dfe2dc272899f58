/* qplab-mooncake-agent: a real Mooncake Transfer Engine as one lab host.
 * The CLI and the JSON-line protocol of `qplab agent` (docs/agent-
 * protocol.md, "A Mooncake host"); Mooncake is driven through its public C
 * API only (engine.c).  Exits on `exit`, EOF on stdin, SIGTERM or SIGINT.
 *
 * MOONCAKE_COMMIT, MOONCAKE_BUILD_DIR and MOONCAKE_SRC_DIR come from the
 * build (scripts/mooncake-agent.sh), so the ready line, and results.json
 * after it, say which Mooncake ran. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"
#include "cli/cli.h"
#include "qphs/addr.h"
#include "qphs/config.h"

#ifndef MOONCAKE_COMMIT
#define MOONCAKE_COMMIT "unknown"
#endif
#ifndef MOONCAKE_BUILD_DIR
#define MOONCAKE_BUILD_DIR "unknown"
#endif
#ifndef MOONCAKE_SRC_DIR
#define MOONCAKE_SRC_DIR "unknown"
#endif

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

static int fatal(const char *code, const char *text)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "v", json_object_new_int(MCA_PROTO_VERSION));
	json_object_object_add(o, "type", json_object_new_string("fatal"));
	json_object_object_add(o, "code", json_object_new_string(code));
	json_object_object_add(o, "error", json_object_new_string(text));
	emit(o);
	fprintf(stderr, "qplab-mooncake-agent: %s: %s\n", code, text);
	return 1;
}

static int usage(FILE *out, int rc)
{
	fprintf(out, "usage: qplab-mooncake-agent --host NAME --device DEV --listen ADDR:PORT "
		     "[--config JSON] [-v]\n\n"
		     "A real Mooncake Transfer Engine (%.12s, built in %s) as one lab host:\n"
		     "P2PHANDSHAKE metadata on ADDR with its daemon on PORT, the RDMA transport\n"
		     "on DEV, driven through transfer_engine_c.h; prints a `ready` JSON line,\n"
		     "then answers the JSON-line requests of `qplab agent` (docs/agent-protocol.md,\n"
		     "\"A Mooncake host\").  Exit: 0 after `exit` or EOF, 1 when the engine could\n"
		     "not start (a `fatal` line says why), 2 usage error.\n",
		MOONCAKE_COMMIT, MOONCAKE_BUILD_DIR);
	return rc;
}

static int parse_args(int argc, char **argv, struct mc_host *h, const char **config)
{
	static const struct option opts[] = {
		{"host", required_argument, NULL, 'H'},   {"device", required_argument, NULL, 'd'},
		{"listen", required_argument, NULL, 'l'}, {"config", required_argument, NULL, 'c'},
		{"verbose", no_argument, NULL, 'v'},      {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "H:d:l:c:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'H': h->host = optarg; break;
		case 'd': h->device = optarg; break;
		case 'l': h->listen = optarg; break;
		case 'c': *config = optarg; break;
		case 'v': break; /* Mooncake logs what MC_LOG_LEVEL says */
		case 'h': return usage(stdout, -1);
		default: return usage(stderr, 2);
		}
	}
	if (optind < argc || !h->host || !h->device || !h->listen)
		return usage(stderr, 2);
	if (qphs_parse_host_port(h->listen, h->addr, sizeof(h->addr), &h->port, 0) != 0 || !h->port) {
		fprintf(stderr, "qplab-mooncake-agent: --listen: want ADDR:PORT, got '%s'\n", h->listen);
		return 2;
	}
	return 0;
}

/* Mooncake reads every MC_* variable once, during static initialisation,
 * before main: worker_pool.cpp's kTransferWorkerCount calls globalConfig()
 * (config.cpp loadGlobalConfig).  So the two settings the adapter needs go
 * in by running itself again with them in the environment: the P2P
 * daemon's port range pinned to the host's port (findAvailableTcpPort
 * picks a random port in [MC_MIN_RPC_PORT, MC_MAX_RPC_PORT] and ignores
 * the port of local_server_name), and no MC_LOG_DIR (loadGlobalConfig
 * would call InitGoogleLogging and log to files; the adapter reads
 * stderr).  Returns only when the environment is right already, or the
 * exec failed (-1). */
static int environment(const struct mc_host *h, char **argv)
{
	const char *lo = getenv("MC_MIN_RPC_PORT"), *hi = getenv("MC_MAX_RPC_PORT");
	char port[8];

	snprintf(port, sizeof(port), "%u", h->port);
	if (lo && hi && !strcmp(lo, port) && !strcmp(hi, port) && !getenv("MC_LOG_DIR"))
		return 0;
	setenv("MC_MIN_RPC_PORT", port, 1);
	setenv("MC_MAX_RPC_PORT", port, 1);
	unsetenv("MC_LOG_DIR");
	execv("/proc/self/exe", argv);
	return -1;
}

static void ready(struct mc_host *h)
{
	struct mca_ready_info in = {.host = h->host, .listen = h->listen, .device = h->device,
				    .pid = (int)getpid(), .commit = MOONCAKE_COMMIT,
				    .build = MOONCAKE_BUILD_DIR, .source = MOONCAKE_SRC_DIR};
	char gid[64];

	eng_gid(h, &in.gid_index, gid, sizeof(gid));
	in.gid = gid;
	if (h->ctx_code[0]) {
		in.context_code = h->ctx_code;
		in.context_text = h->ctx_text;
	}
	emit(mca_ready(&in));
}

static void loop(struct mc_host *h)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long lineno = 0;
	int quit = 0;

	while (!quit && !stop_signal && (n = getline(&line, &cap, stdin)) >= 0) {
		struct mca_request r;
		json_object *err;

		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		if (mca_request_parse(line, (size_t)n, lineno, &r, &err)) {
			emit(err);
			continue;
		}
		emit(ops_serve(h, &r, &quit));
		mca_request_free(&r);
	}
	free(line);
	if (stop_signal)
		fprintf(stderr, "qplab-mooncake-agent %s: signal %d, exiting\n", h->host, (int)stop_signal);
}

int main(int argc, char **argv)
{
	struct mc_host h;
	struct sigaction sa = {.sa_handler = on_signal};
	const char *config = NULL;
	char err[700], code[48];
	double mult;
	int rc;

	memset(&h, 0, sizeof(h));
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	mca_state_init(&h.st);
	qphs_config_init(&h.cfg);
	rc = parse_args(argc, argv, &h, &config);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (config && mca_config_check(config, err, sizeof(err)))
		return fatal("ERR_INVALID_ARGUMENT", err);
	/* Mooncake's log line of a failure reaches our pipe a little after
	 * the call returned, later on a loaded machine (TCG) than here. */
	if (qplab_time_multiplier(&mult, err, sizeof(err)))
		return fatal("ERR_CONFIG_RANGE", err);
	h.log_grace_ms = (int)qplab_scaled_ms(300, mult);
	if (environment(&h, argv))
		return fatal("ERR_CONTEXT", "cannot run itself again with MC_MIN_RPC_PORT and MC_MAX_RPC_PORT set");
	if (logtee_start())
		return fatal("ERR_SOCKET", "cannot capture stderr (pipe)");
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (eng_open(&h, code, sizeof(code), err, sizeof(err))) {
		rc = fatal(code, err);
		eng_close(&h);
		return rc;
	}
	if (h.ctx_code[0]) {
		fprintf(stderr, "qplab-mooncake-agent %s: context error %s: %s\n", h.host, h.ctx_code,
			h.ctx_text);
		mca_state_last(&h.st, h.ctx_code, h.ctx_text, NULL);
	}
	ready(&h);
	h.report_wall_ms = mc_now_ms();
	loop(&h);
	pthread_mutex_lock(&h.mu);
	rc = h.busy;
	pthread_mutex_unlock(&h.mu);
	if (rc) {
		/* A Mooncake call still hangs: tearing the engine down under it is
		 * what Mooncake never expects; exit and let the kernel clean up. */
		fprintf(stderr, "qplab-mooncake-agent %s: exiting with %s still running\n", h.host,
			h.busy_what);
		_exit(0);
	}
	eng_close(&h);
	return 0;
}
