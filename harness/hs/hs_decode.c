/*
 * `qplab hs decode`: handshake frames on stdin, two lines per frame on
 * stdout — the type name, then the JSON as received with its trailing
 * whitespace (Mooncake's '\n') removed.  The first bad frame ends the run
 * with its error's name on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "qphs/body.h"
#include "hs_codec.h"
#include "qphs.h"
#include "qphs/frame.h"

static void decode_usage(FILE *out)
{
	fprintf(out,
		"usage: qplab hs decode [--max-length BYTES] < frames\n"
		"\n"
		"Reads handshake frames on stdin until EOF and prints two lines per\n"
		"frame: its type (connection, metadata, notify, probe or old-protocol)\n"
		"and its JSON exactly as received, minus trailing whitespace (the '\\n'\n"
		"Mooncake ends every body with).  A JSON holding newlines prints them\n"
		"as they are.\n"
		"\n"
		"  --max-length BYTES   the frame length limit, %llu..%llu (default:\n"
		"                       MC_HANDSHAKE_MAX_LENGTH, else %llu)\n"
		"\n"
		"A bad frame (zero or over-limit length, type byte 0x80-0xff, no body,\n"
		"EOF inside a frame, a body that is not one JSON value) stops the run:\n"
		"  qplab hs decode: ERR_NAME: text (frame N, byte offset K)[: detail]\n"
		"where N counts frames from 1 and K is where that frame starts in the\n"
		"input.  Frames before it are printed.\n"
		"\n"
		"Exit codes: 0 every frame good, 1 a bad frame or read error, 2 usage\n"
		"error (bad flag, invalid MC_HANDSHAKE_MAX_LENGTH).\n",
		(unsigned long long)QPHS_MAX_LENGTH_MIN, (unsigned long long)QPHS_MAX_LENGTH_MAX,
		(unsigned long long)QPHS_MAX_LENGTH_MIN);
}

/* Only MC_HANDSHAKE_MAX_LENGTH matters here: an unrelated bad MC_* variable
 * must not stop the decoder. */
static const char *max_length_only(const char *name, void *user)
{
	(void)user;
	return strcmp(name, "MC_HANDSHAKE_MAX_LENGTH") ? NULL : getenv(name);
}

static int parse_max_length(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || v < QPHS_MAX_LENGTH_MIN || v > QPHS_MAX_LENGTH_MAX)
		return -1;
	*out = v;
	return 0;
}

/* Returns -1 when the options are good, else the exit code. */
static int parse_decode_args(int argc, char **argv, uint64_t *max_length)
{
	const char *value = NULL;
	struct qphs_config cfg;
	char err[256] = "";

	for (int i = 1; i < argc; i++) {
		int m = hs_opt_value(argc, argv, &i, "--max-length", &value);
		if (m < 0)
			return qplab_usage_error("hs decode: --max-length needs a value");
		if (m > 0)
			continue;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			decode_usage(stdout);
			return QPLAB_EXIT_OK;
		}
		return qplab_usage_error("hs decode: unknown argument '%s' (see --help)", argv[i]);
	}
	if (value) {
		if (parse_max_length(value, max_length) == 0)
			return -1;
		return qplab_usage_error("hs decode: --max-length '%s' is not a number of "
					 "bytes in %llu..%llu", value,
					 (unsigned long long)QPHS_MAX_LENGTH_MIN,
					 (unsigned long long)QPHS_MAX_LENGTH_MAX);
	}
	qphs_config_init(&cfg);
	if (qphs_config_from_env(&cfg, max_length_only, NULL, err, sizeof(err)) != 0)
		return qplab_usage_error("hs decode: %s", err);
	*max_length = cfg.max_length;
	return -1;
}

struct decode_run {
	struct qphs_decoder *dec;
	unsigned long frame_no;  /* 1-based number of the frame being read */
	uint64_t frame_start;    /* its offset in the input */
	uint64_t offset;         /* bytes of input consumed so far */
};

static int bad_frame(const struct decode_run *r, int code, const char *detail)
{
	char where[128];

	fflush(stdout);
	snprintf(where, sizeof(where), "frame %lu, byte offset %llu", r->frame_no,
		 (unsigned long long)r->frame_start);
	fprintf(stderr, "qplab hs decode: %s: %s (%s)%s%s\n", qphs_errname(code),
		qphs_strerror(code), where, detail && *detail ? ": " : "", detail ? detail : "");
	return QPLAB_EXIT_FAIL;
}

/* Checks that the frame's body is one JSON value, then prints it. */
static int print_frame(const struct decode_run *r, const struct qphs_frame *f)
{
	struct json_object *obj = NULL;
	char err[512] = "";
	size_t len = f->json_len;
	int rc = qphs_json_parse(f->json, f->json_len, &obj, err, sizeof(err));

	if (rc)
		return bad_frame(r, rc, err);
	json_object_put(obj);
	while (len > 0 && strchr(" \t\r\n", f->json[len - 1]))
		len--;
	printf("%s\n", qphs_msg_type_name(f->type));
	fwrite(f->json, 1, len, stdout);
	putchar('\n');
	return QPLAB_EXIT_OK;
}

/* Feeds one chunk of input, printing every frame it completes. */
static int decode_chunk(struct decode_run *r, const char *buf, size_t len)
{
	while (len > 0) {
		struct qphs_frame f;
		ssize_t n = qphs_decoder_feed(r->dec, buf, len);

		if (n < 0)
			return bad_frame(r, (int)n, "");
		buf += n;
		len -= (size_t)n;
		r->offset += (uint64_t)n;
		if (qphs_decoder_frame(r->dec, &f)) {
			int rc = print_frame(r, &f);
			if (rc)
				return rc;
			r->frame_no++;
			r->frame_start = r->offset;
		}
	}
	return QPLAB_EXIT_OK;
}

static int decode_stdin(struct decode_run *r)
{
	static char buf[65536];

	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
		int rc;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fflush(stdout);
			fprintf(stderr, "qplab hs decode: reading stdin: %s\n", strerror(errno));
			return QPLAB_EXIT_FAIL;
		}
		if (n == 0)
			break;
		if ((rc = decode_chunk(r, buf, (size_t)n)) != 0)
			return rc;
	}
	return QPLAB_EXIT_OK;
}

int hs_decode_main(int argc, char **argv)
{
	struct decode_run r = {.frame_no = 1};
	uint64_t max_length = 0;
	int rc = parse_decode_args(argc, argv, &max_length);

	if (rc >= 0)
		return rc;
	r.dec = qphs_decoder_new(max_length);
	if (!r.dec) {
		hs_print_error("decode", QPHS_ERR_MEMORY, "");
		return QPLAB_EXIT_FAIL;
	}
	rc = decode_stdin(&r);
	if (rc == 0 && (rc = qphs_decoder_eof(r.dec)) != 0)
		rc = bad_frame(&r, rc, "");
	qphs_decoder_free(r.dec);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "qplab hs decode: writing stdout: %s\n", strerror(errno));
		return QPLAB_EXIT_FAIL;
	}
	return rc;
}
