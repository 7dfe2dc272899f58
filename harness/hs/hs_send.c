/* `qplab hs send`: one request to any Mooncake handshake daemon, the reply
 * on stdout, the failure on stderr and in the exit status (hs_exit.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "qphs.h"
#include "qphs/frame.h"

static void send_usage(FILE *out)
{
	fprintf(out,
		"usage: qplab hs send --to HOST:PORT --type probe|notify|metadata|connection\n"
		"                     [--body FILE|-] [--old-protocol] [--connect-timeout S]\n"
		"                     [--timeout S] [-v]\n\n"
		"Sends one request and prints the reply JSON on stdout.  Default bodies:\n"
		"probe {}, notify {\"name\":\"qplab\",\"notify_msg\":\"\"}, metadata {};\n"
		"connection needs --body.  --old-protocol sends an untyped frame (a daemon\n"
		"treats it as Connection).  --connect-timeout S (whole seconds, default\n"
		"MC_HANDSHAKE_CONNECT_TIMEOUT or 5) bounds each connect; --timeout S\n"
		"(default 60, fractions allowed) bounds sending and the reply.\n\n");
	hs_exit_table_print(out);
}

static const char *default_body(int type)
{
	switch (type) {
	case QPHS_HS_PROBE:
		return "{}\n";
	case QPHS_HS_NOTIFY:
		return "{\"name\":\"qplab\",\"notify_msg\":\"\"}\n";
	case QPHS_HS_METADATA:
		return "{}\n";
	default:
		return NULL;
	}
}

struct send_args {
	const char *to, *body_path;
	int type, old_protocol, verbose;
	struct qphs_config cfg;
};

static int parse_args(int argc, char **argv, struct send_args *a)
{
	static const struct option opts[] = {
		{"to", required_argument, NULL, 't'},
		{"type", required_argument, NULL, 'y'},
		{"body", required_argument, NULL, 'b'},
		{"old-protocol", no_argument, NULL, 'o'},
		{"connect-timeout", required_argument, NULL, 'c'},
		{"timeout", required_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	double v;
	int c;

	while ((c = getopt_long(argc, argv, "hv", opts, NULL)) != -1) {
		switch (c) {
		case 't': a->to = optarg; break;
		case 'b': a->body_path = optarg; break;
		case 'o': a->old_protocol = 1; break;
		case 'v': a->verbose = 1; break;
		case 'h': send_usage(stdout); return -1;
		case 'y':
			a->type = qphs_msg_type_from_name(optarg);
			if (a->type < 0 || a->type > QPHS_HS_PROBE)
				return qplab_usage_error("--type: '%s' is not probe, notify, "
							 "metadata or connection", optarg);
			break;
		case 'c':
			v = strtod(optarg, &end);
			if (*end || v < 1 || v > 3599 || v != (int)v)
				return qplab_usage_error("--connect-timeout: whole seconds 1..3599, "
							 "got '%s'", optarg);
			a->cfg.connect_timeout_s = (int)v;
			break;
		case 'T':
			v = strtod(optarg, &end);
			if (*end || !(v > 0) || v > 86400)
				return qplab_usage_error("--timeout: seconds > 0, got '%s'", optarg);
			a->cfg.reply_timeout_ms = (int)(v * 1000 + 0.5) ? (int)(v * 1000 + 0.5) : 1;
			break;
		default: send_usage(stderr); return QPLAB_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return qplab_usage_error("hs send: unexpected argument '%s'", argv[optind]);
	if (!a->to)
		return qplab_usage_error("hs send: --to HOST:PORT is required");
	if (a->type < 0 && !a->old_protocol)
		return qplab_usage_error("hs send: --type is required");
	return 0;
}

static void print_reply(const struct qphs_client_result *res)
{
	if (!res->reply)
		return;
	fwrite(res->reply, 1, res->reply_len, stdout);
	if (!res->reply_len || res->reply[res->reply_len - 1] != '\n')
		fputc('\n', stdout);
	fflush(stdout);
}

int hs_send_main(int argc, char **argv)
{
	struct send_args a = {.type = -1};
	struct qphs_client_result res;
	char err[256];
	const char *body;
	char *owned = NULL;
	size_t len;
	int rc;

	qphs_config_init(&a.cfg);
	if (qphs_config_from_env(&a.cfg, NULL, NULL, err, sizeof(err)) != 0)
		return qplab_usage_error("%s", err);
	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? QPLAB_EXIT_OK : rc;
	if (a.verbose)
		qplab_log_to_stderr(1);
	if (a.type < 0)
		a.type = QPHS_HS_CONNECTION;
	if (a.body_path) {
		/* As long as a frame may be (MC_HANDSHAKE_MAX_LENGTH's upper
		 * bound): a longer one is a daemon's limit to test with the
		 * length alone (hs encode --raw). */
		if (qplab_read_file(a.body_path, QPHS_MAX_LENGTH_MAX, &owned, &len, err, sizeof(err)))
			return qplab_usage_error("--body %s: %s", a.body_path, err);
		body = owned;
	} else {
		body = default_body(a.type);
		if (!body)
			return qplab_usage_error("hs send: --type connection needs --body FILE|-");
		len = strlen(body);
	}
	rc = qphs_client_request(&a.cfg, a.to, a.old_protocol ? QPHS_HS_OLD_PROTOCOL : a.type,
				 body, len, &res);
	free(owned);
	print_reply(&res);
	if (rc)
		fprintf(stderr, "qplab hs send: %s: %s: %s\n", qphs_errname(rc), qphs_strerror(rc),
			res.errstr);
	free(res.reply);
	if (rc == QPHS_ERR_BAD_ADDRESS || rc == QPHS_ERR_INVALID_ARGUMENT)
		return QPLAB_EXIT_USAGE;
	return hs_exit_code(rc);
}
