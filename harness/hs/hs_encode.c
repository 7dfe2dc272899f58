/*
 * `qplab hs encode`: a JSON body on stdin, one handshake frame on stdout.
 *
 * The body is parsed by the parser of its message type and written again
 * by our writer (Mooncake's bytes: compact, sorted keys, '\n' at the end),
 * so what goes out is what libqphs itself would send; --raw frames the
 * bytes untouched, for building frames a peer should reject.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "cli/jread.h"
#include "qphs/body.h"
#include "hs_codec.h"
#include "qphs.h"
#include "qphs/frame.h"

static void encode_usage(FILE *out)
{
	fprintf(out,
		"usage: qplab hs encode --type TYPE [--old-protocol] [--raw] < body.json > frame\n"
		"\n"
		"Reads one JSON message body on stdin and writes one handshake frame on\n"
		"stdout: the 8-byte little-endian length, the type byte, the JSON.\n"
		"\n"
		"  --type TYPE      connection, metadata, notify or probe: the body's\n"
		"                   message type, which chooses its parser\n"
		"  --old-protocol   write an old-protocol frame (no type byte)\n"
		"  --raw            frame stdin's bytes exactly as they are, unparsed\n"
		"\n"
		"Without --raw the body is parsed and written again the way Mooncake\n"
		"writes it: compact, keys sorted, '\\n' at the end.  A probe body must\n"
		"be {} (request) or {\"status\":\"success\"} (reply).\n"
		"\n"
		"Exit codes: 0 frame written, 1 the body was rejected (the error's\n"
		"name and text on stderr), 2 usage error.\n");
}

struct encode_opts {
	int type;
	bool old_protocol;
	bool raw;
};

/* Returns -1 when the options are good, else the exit code. */
static int parse_encode_args(int argc, char **argv, struct encode_opts *o)
{
	const char *type = NULL;

	for (int i = 1; i < argc; i++) {
		int m = hs_opt_value(argc, argv, &i, "--type", &type);
		if (m < 0)
			return qplab_usage_error("hs encode: --type needs a value");
		if (m > 0)
			continue;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			encode_usage(stdout);
			return QPLAB_EXIT_OK;
		} else if (!strcmp(argv[i], "--old-protocol")) {
			o->old_protocol = true;
		} else if (!strcmp(argv[i], "--raw")) {
			o->raw = true;
		} else {
			return qplab_usage_error("hs encode: unknown argument '%s' (see --help)",
						 argv[i]);
		}
	}
	if (!type)
		return qplab_usage_error("hs encode: --type is required "
					 "(connection, metadata, notify or probe)");
	o->type = qphs_msg_type_from_name(type);
	if (o->type < QPHS_HS_CONNECTION || o->type > QPHS_HS_PROBE)
		return qplab_usage_error("hs encode: unknown --type '%s' "
					 "(connection, metadata, notify or probe)", type);
	return -1;
}

static int reencode_connection(const char *in, size_t len, char **out, size_t *out_len,
			       char *err, size_t errlen)
{
	struct qphs_hs_desc d;
	int rc = qphs_hs_desc_parse(in, len, &d, err, errlen);

	if (rc)
		return rc;
	rc = qphs_hs_desc_encode(&d, out, out_len);
	qphs_hs_desc_clear(&d);
	return rc;
}

static int reencode_metadata(const char *in, size_t len, char **out, size_t *out_len,
			     char *err, size_t errlen)
{
	struct qphs_segment_desc s;
	int rc = qphs_segment_desc_parse(in, len, &s, err, errlen);

	if (rc)
		return rc;
	rc = qphs_segment_desc_encode(&s, out, out_len);
	qphs_segment_desc_clear(&s);
	return rc;
}

static int reencode_notify(const char *in, size_t len, char **out, size_t *out_len,
			   char *err, size_t errlen)
{
	struct qphs_notify n;
	int rc = qphs_notify_parse(in, len, &n, err, errlen);

	if (rc)
		return rc;
	rc = qphs_notify_encode(&n, out, out_len);
	qphs_notify_clear(&n);
	return rc;
}

/* A probe carries nothing: the request is {} and the reply
 * {"status":"success"}; any other object is refused rather than guessed. */
static int reencode_probe(const char *in, size_t len, char **out, size_t *out_len,
			  char *err, size_t errlen)
{
	struct json_object *obj;
	struct jread r = {0};
	const char *status = "";
	int rc = qphs_probe_parse(in, len, err, errlen);
	int keys;

	if (rc || (rc = qphs_json_parse(in, len, &obj, err, errlen)) != 0)
		return rc;
	/* probe_parse took it as an object; do not rely on that for null. */
	keys = json_object_is_type(obj, json_type_object) ? json_object_object_length(obj) : -1;
	if (keys == 0) {
		*out = strdup("{}\n");
		*out_len = 3;
		rc = *out ? 0 : QPHS_ERR_MEMORY;
	} else if (keys == 1 && jread_str(&r, obj, "status", &status) == JREAD_OK &&
		   !strcmp(status, "success")) {
		rc = qphs_probe_reply_encode(out, out_len);
	} else {
		snprintf(err, errlen, "a probe body is {} or {\"status\":\"success\"}; "
				      "use --raw to frame anything else");
		rc = QPHS_ERR_INVALID_ARGUMENT;
	}
	json_object_put(obj);
	return rc;
}

static int reencode(int type, const char *in, size_t len, char **out, size_t *out_len,
		    char *err, size_t errlen)
{
	switch (type) {
	case QPHS_HS_CONNECTION:
		return reencode_connection(in, len, out, out_len, err, errlen);
	case QPHS_HS_METADATA:
		return reencode_metadata(in, len, out, out_len, err, errlen);
	case QPHS_HS_NOTIFY:
		return reencode_notify(in, len, out, out_len, err, errlen);
	default:
		return reencode_probe(in, len, out, out_len, err, errlen);
	}
}

/* Frames body and writes the frame to stdout; returns the exit code. */
static int write_frame(const struct encode_opts *o, const char *body, size_t len)
{
	int type = o->old_protocol ? QPHS_HS_OLD_PROTOCOL : o->type;
	uint8_t *frame;
	size_t frame_len;
	int rc = qphs_frame_encode(type, body, len, &frame, &frame_len);

	if (rc) {
		hs_print_error("encode", rc,
			       len == 0 ? "the body is empty"
			       : o->old_protocol ? "an old-protocol body must start with a byte "
						   "in 0x04-0x7f"
						 : "");
		return QPLAB_EXIT_FAIL;
	}
	rc = hs_write_stdout(frame, frame_len);
	free(frame);
	if (rc) {
		perror("qplab hs encode: stdout");
		return QPLAB_EXIT_FAIL;
	}
	return QPLAB_EXIT_OK;
}

int hs_encode_main(int argc, char **argv)
{
	struct encode_opts o = {0};
	char err[512] = "";
	char *in = NULL, *body = NULL;
	size_t in_len, body_len;
	int rc = parse_encode_args(argc, argv, &o);

	if (rc >= 0)
		return rc;
	rc = hs_read_stdin((size_t)QPHS_MAX_LENGTH_MAX - 1, &in, &in_len);
	if (rc) {
		hs_print_error("encode", rc,
			       rc == QPHS_ERR_SOCKET ? strerror(errno)
			       : rc == QPHS_ERR_FRAME_TOO_LONG ? "stdin holds more than 128 MiB"
							       : "reading stdin");
		return QPLAB_EXIT_FAIL;
	}
	if (o.raw) {
		rc = write_frame(&o, in, in_len);
	} else if ((rc = reencode(o.type, in, in_len, &body, &body_len, err, sizeof(err))) != 0) {
		hs_print_error("encode", rc, err);
		rc = QPLAB_EXIT_FAIL;
	} else {
		rc = write_frame(&o, body, body_len);
	}
	free(body);
	free(in);
	return rc;
}
