/* `qplab hs serve`: a standalone Mooncake-compatible handshake peer that
 * needs no RDMA device, and that misbehaves on purpose with --fault so
 * other implementations' clients can be tested. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json_object.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "qphs/body.h"
#include "qphs.h"
#include "qphs/frame.h"

#define SERVE_QPN_BASE 1000u /* the built-in reply's QP numbers: 1000, 1001, ... */
#define LOG_FLUSH_MS 100 /* the longest a request's log line waits in stderr's buffer */
#define SERVE_GID "00:00:00:00:00:00:00:00:00:00:ff:ff:7f:00:00:01"

static const char probe_reply[] = "{\"status\":\"success\"}\n";
static const char notify_reply[] = "{\"name\":\"\",\"notify_msg\":\"success\"}\n";
static const char metadata_reply[] =
	"{\"buffers\":[],\"devices\":[],\"name\":\"qplab-hs-serve\",\"priority_matrix\":{},"
	"\"protocol\":\"rdma\",\"tcp_data_port\":0,\"tcp_proto_version\":1,"
	"\"timestamp\":\"2026-01-01 00:00:00.000000\"}\n";

struct serve {
	char *reply;      /* --reply FILE's bytes, or NULL */
	size_t reply_len;
	struct qphs_fault fault;
	int quiet;        /* --quiet: no line per request */
};

/* Every fault of the error table, with the error it provokes. */
static void print_faults(FILE *out)
{
#define FAULT_ROW(name, code, fault, text)                                     \
	if ((fault)[0])                                                        \
		fprintf(out, "  %-14s %s%s\n", !strcmp((fault), "reject") ? "reject:TEXT" \
							 : (fault),    \
			#name, !strcmp((fault), "reject")           \
				? " (Connection only; TEXT is reply_msg)" : "");
	QPHS_ERRNO_MAP(FAULT_ROW)
#undef FAULT_ROW
}

static void serve_usage(FILE *out)
{
	fprintf(out,
		"usage: qplab hs serve --listen HOST:PORT [--reply FILE] [--fault KIND]\n"
		"                      [--seed N] [--max-connections N] [--limit NAME=N]... [--quiet] [-v]\n\n"
		"A Mooncake-compatible handshake peer without RDMA.  Prints\n"
		"'listening on ADDR:PORT' first (PORT 0 = a random port in\n"
		"[MC_MIN_RPC_PORT, MC_MAX_RPC_PORT]), logs one line per request on\n"
		"stderr (none with --quiet), and runs until SIGINT or SIGTERM.  Probe and\n"
		"Notify get Mooncake's answers, Metadata a fixed segment descriptor; Connection gets\n"
		"--reply FILE verbatim or a built-in HandShakeDesc mirroring the\n"
		"request's nic paths, one QP number (1000, 1001, ...) per requested QP.\n\n"
		"--fault KIND (and the client error it must produce; the names are the\n"
		"FAULT column of the error table):\n");
	print_faults(out);
	fprintf(out, "  %-14s none: success unless MS exceeds the client's timeout\n"
		     "--seed N seeds garbage's bytes.\n"
		     "--limit NAME=N sets one of the daemon's limits (docs/hs.md \"Limits\"):\n"
		     "  max_conns_per_source, max_requests_per_source, memory_budget_kib,\n"
		     "  max_small_body, max_body_keys.  On stop, one 'hs serve: stats:' line.\n",
		"delay:MS");
}

/* The built-in Connection answer: the request's paths swapped, fixed QPs.
 * The reply only borrows its strings (the request's, and these) for the
 * encoder: nothing to copy and free per request. */
static char serve_gid[] = SERVE_GID;
static char no_text[] = "";

static int builtin_connection(const struct qphs_hs_desc *asked, char *reply_msg, char **out,
			      size_t *len)
{
	uint32_t fixed[QPHS_MAX_QPS], *qps = fixed;
	struct qphs_hs_desc rep = {0};
	int rc;

	if (asked->qp_count > QPHS_MAX_QPS) { /* a parsed body has no more */
		qps = calloc(asked->qp_count, sizeof(*qps));
		if (!qps)
			return QPHS_ERR_MEMORY;
	}
	for (size_t i = 0; i < asked->qp_count; i++)
		qps[i] = SERVE_QPN_BASE + (uint32_t)i;
	rep.qp_num = asked->qp_count ? qps : NULL;
	rep.qp_count = asked->qp_count;
	rep.has_ready_ack = asked->has_ready_ack;
	rep.ready_ack = asked->ready_ack;
	rep.local_nic_path = asked->peer_nic_path;
	rep.peer_nic_path = asked->local_nic_path;
	rep.local_gid = serve_gid;
	rep.reply_msg = reply_msg;
	rep.payload = no_text;
	rc = qphs_hs_desc_encode(&rep, out, len);
	if (qps != fixed)
		free(qps);
	return rc;
}

static void answer_connection(struct serve *s, struct qphs_request *req)
{
	/* The daemon parsed and checked the body already. */
	const struct qphs_hs_desc *asked = qphs_request_desc(req);
	int reject = s->fault.kind == QPHS_FAULT_REJECT;
	char *body = NULL;
	size_t len;

	if (s->reply && !reject) {
		qphs_request_reply(req, s->reply, s->reply_len);
		return;
	}
	if (!asked || builtin_connection(asked, reject ? s->fault.text : no_text, &body, &len) != 0)
		qphs_request_close(req);
	else
		qphs_request_reply(req, body, len);
	free(body);
}

static void on_request(struct qphs_request *req, void *user)
{
	struct serve *s = user;
	int type = qphs_request_type(req);
	size_t len;
	const char *json = qphs_request_json(req, &len);
	int shown = len > 200 ? 200 : (int)len;

	while (shown > 0 && json[shown - 1] == '\n')
		shown--;
	if (!s->quiet)
		fprintf(stderr, "hs serve: %s request from %s, %zu bytes: %.*s%s\n",
			qphs_msg_type_name(type), qphs_request_peer(req), len, shown, json,
			len > 200 ? "..." : "");
	switch (type) {
	case QPHS_HS_PROBE:
		qphs_request_reply(req, probe_reply, sizeof(probe_reply) - 1);
		break;
	case QPHS_HS_NOTIFY:
		qphs_request_reply(req, notify_reply, sizeof(notify_reply) - 1);
		break;
	case QPHS_HS_METADATA:
		qphs_request_reply(req, metadata_reply, sizeof(metadata_reply) - 1);
		break;
	default:
		answer_connection(s, req);
	}
}

/* The limits --limit may set: the config fields of the same names. */
static const struct {
	const char *name;
	size_t offset;
} limit_fields[] = {
	{"max_conns_per_source", offsetof(struct qphs_config, max_conns_per_source)},
	{"max_requests_per_source", offsetof(struct qphs_config, max_requests_per_source)},
	{"memory_budget_kib", offsetof(struct qphs_config, memory_budget_kib)},
	{"max_small_body", offsetof(struct qphs_config, max_small_body)},
	{"max_body_keys", offsetof(struct qphs_config, max_body_keys)},
};

/* --limit NAME=N into cfg; the range is checked with the whole config. */
static int parse_limit(const char *arg, struct qphs_config *cfg)
{
	const char *eq = strchr(arg, '=');
	char *end;
	long v;

	for (size_t i = 0; eq && i < sizeof(limit_fields) / sizeof(limit_fields[0]); i++) {
		if (strlen(limit_fields[i].name) != (size_t)(eq - arg) ||
		    strncmp(arg, limit_fields[i].name, (size_t)(eq - arg)))
			continue;
		errno = 0;
		v = strtol(eq + 1, &end, 10);
		if (!eq[1] || *end || errno || v < 0 || v > 1 << 30)
			return qplab_usage_error("--limit %s: not a number in 0..%d", arg, 1 << 30);
		*(int *)((char *)cfg + limit_fields[i].offset) = (int)v;
		return 0;
	}
	return qplab_usage_error("--limit: want NAME=N with NAME one of max_conns_per_source, "
				 "max_requests_per_source, memory_budget_kib, max_small_body, "
				 "max_body_keys; got '%s'", arg);
}

struct serve_args {
	const char *listen, *reply, *fault;
	unsigned long long seed;
	int verbose, quiet;
	struct qphs_config cfg;
};

static int parse_serve_args(int argc, char **argv, struct serve_args *a)
{
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"reply", required_argument, NULL, 'r'},
		{"fault", required_argument, NULL, 'f'},
		{"seed", required_argument, NULL, 's'},
		{"max-connections", required_argument, NULL, 'm'},
		{"limit", required_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	char *end, err[256];
	long v;
	int c, rc;

	while ((c = getopt_long(argc, argv, "hvq", opts, NULL)) != -1) {
		switch (c) {
		case 'l': a->listen = optarg; break;
		case 'r': a->reply = optarg; break;
		case 'f': a->fault = optarg; break;
		case 'v': a->verbose = 1; break;
		case 'q': a->quiet = 1; break;
		case 's':
			errno = 0;
			a->seed = strtoull(optarg, &end, 0);
			if (*end || errno || optarg[0] == '-')
				return qplab_usage_error("--seed: not a number: '%s'", optarg);
			break;
		case 'm':
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 1000000)
				return qplab_usage_error("--max-connections: 1..1000000, got '%s'",
							 optarg);
			a->cfg.max_connections = (int)v;
			break;
		case 'L':
			if ((rc = parse_limit(optarg, &a->cfg)) != 0)
				return rc;
			break;
		case 'h': serve_usage(stdout); return -1;
		default: serve_usage(stderr); return QPLAB_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return qplab_usage_error("hs serve: unexpected argument '%s'", argv[optind]);
	if (!a->listen)
		return qplab_usage_error("hs serve: --listen HOST:PORT is required");
	if (qphs_config_validate(&a->cfg, err, sizeof(err)) != 0)
		return qplab_usage_error("hs serve: %s", err);
	return 0;
}

static int setup(struct serve_args *a, struct serve *s)
{
	char err[300];

	if (a->fault && qphs_fault_parse(a->fault, &s->fault, err, sizeof(err)) != 0)
		return qplab_usage_error("--fault: %s", err);
	s->fault.seed = a->seed;
	s->quiet = a->quiet;
	if (a->reply) {
		struct json_object *obj;
		if (qplab_read_file(a->reply, QPHS_MAX_LENGTH_MAX, &s->reply, &s->reply_len, err,
				    sizeof(err)))
			return qplab_usage_error("--reply %s: %s", a->reply, err);
		if (qphs_json_parse(s->reply, s->reply_len, &obj, err, sizeof(err)) != 0)
			return qplab_usage_error("--reply %s: %s", a->reply, err);
		json_object_put(obj);
	}
	return 0;
}

/* One line of the daemon's counters, for scripts (tests/hostile). */
static void print_stats(const struct qphs_daemon *d)
{
	struct qphs_daemon_stats st;

	qphs_daemon_stats(d, &st);
	fprintf(stderr,
		"hs serve: stats: accepted=%llu replied=%llu timed_out=%llu refused_at_cap=%llu "
		"refused_per_source=%llu refused_budget=%llu rejected_too_long=%llu "
		"rejected_body=%llu memory_trims=%llu open=%llu live_bytes=%llu "
		"accept_thread_took=%llu accept_wakeups=%llu limited_source=%s\n",
		(unsigned long long)st.accepted, (unsigned long long)st.replied,
		(unsigned long long)st.timed_out, (unsigned long long)st.refused_at_cap,
		(unsigned long long)st.refused_per_source, (unsigned long long)st.refused_budget,
		(unsigned long long)st.rejected_frame[-QPHS_ERR_FRAME_TOO_LONG - 1000],
		(unsigned long long)st.rejected_body, (unsigned long long)st.memory_trims,
		(unsigned long long)st.open_connections, (unsigned long long)st.live_bytes,
		(unsigned long long)st.accept_thread_took, (unsigned long long)st.accept_wakeups,
		st.limited_source[0] ? st.limited_source : "-");
}

/* Runs the daemon until SIGINT/SIGTERM (blocked here, so the loop thread
 * inherits the mask and sigwait is the only place they land). */
static int run(struct serve_args *a, struct serve *s, const char *host, uint16_t port)
{
	const struct timespec flush_every = {0, LOG_FLUSH_MS * 1000000L};
	struct qphs_daemon *d = NULL;
	char err[256];
	sigset_t set;
	int sig, rc;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rc = qphs_daemon_new(&a->cfg, &d);
	for (int t = QPHS_HS_CONNECTION; rc == 0 && t <= QPHS_HS_PROBE; t++)
		rc = qphs_daemon_set_handler(d, t, on_request, s);
	if (rc == 0)
		rc = qphs_daemon_set_fault(d, &s->fault);
	if (rc == 0)
		rc = qphs_daemon_listen(d, host, port);
	if (rc == 0 && qphs_daemon_raise_nofile(&a->cfg, NULL, err, sizeof(err)) != 0)
		fprintf(stderr, "qplab hs serve: warning: %s\n", err);
	if (rc == 0 && qphs_daemon_tune_malloc() != 0)
		fprintf(stderr, "qplab hs serve: warning: cannot fix the mmap threshold: after "
				"large bodies the RSS may stay high\n");
	if (rc == 0)
		rc = qphs_daemon_start(d);
	if (rc != 0) {
		fprintf(stderr, "qplab hs serve: %s: %s\n", qphs_errname(rc),
			d && *qphs_daemon_errstr(d) ? qphs_daemon_errstr(d) : qphs_strerror(rc));
		qphs_daemon_free(d);
		return QPLAB_EXIT_FAIL;
	}
	printf("listening on %s\n", qphs_daemon_address(d));
	fflush(stdout);
	/* stderr is fully buffered (hs_serve_main): the lines of a burst leave
	 * in one write, not one each, at most LOG_FLUSH_MS late. */
	while ((sig = sigtimedwait(&set, NULL, &flush_every)) < 0)
		fflush(stderr);
	fprintf(stderr, "hs serve: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	print_stats(d);
	qphs_daemon_free(d);
	return QPLAB_EXIT_OK;
}

int hs_serve_main(int argc, char **argv)
{
	struct serve_args a = {0};
	struct serve s = {0};
	char host[256], err[256];
	uint16_t port;
	int rc;

	qphs_config_init(&a.cfg);
	if (qphs_config_from_env(&a.cfg, NULL, NULL, err, sizeof(err)) != 0)
		return qplab_usage_error("%s", err);
	rc = parse_serve_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? QPLAB_EXIT_OK : rc;
	if (qphs_parse_host_port(a.listen, host, sizeof(host), &port, 0) != 0)
		return qplab_usage_error("--listen: want HOST:PORT, got '%s'", a.listen);
	qplab_log_to_stderr(a.verbose);
	rc = setup(&a, &s);
	/* Before anything is written to stderr by the daemon; run() flushes. */
	static char logbuf[1 << 16];
	if (rc == 0)
		setvbuf(stderr, logbuf, _IOFBF, sizeof(logbuf));
	if (rc == 0)
		rc = run(&a, &s, host[0] && strcmp(host, "*") ? host : NULL, port);
	free(s.reply);
	return rc;
}
