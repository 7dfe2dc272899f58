/*
 * desc.h — handshake message bodies <-> JSON (SPEC §1, §2).  Pure.
 *
 * Writing follows Mooncake's writer (jsoncpp 1.9.5 FastWriter): compact,
 * keys in byte order, '\n' at the end, '/' not escaped, control characters
 * and non-ASCII as \uXXXX (UTF-16 surrogate pairs above U+FFFF).
 *
 * Reading: missing keys take defaults, unknown keys are ignored, numbers or
 * bools in a string key are stringified (compat); every shape SPEC §2's table
 * marks "reject" fails with a code from qphs/error.h and a message naming the
 * key and the problem (written into err, errlen bytes, may be NULL).
 *
 * Details that follow Mooncake (checked against jsoncpp by tests/compat):
 *   - null is the default for every key (jsoncpp's asString gives "", isUInt
 *     is false, iterating null is empty), except that a null ready_ack still
 *     counts as present (Mooncake tests isMember): has_ready_ack, false;
 *   - stringified numbers read as jsoncpp writes them: 5 -> "5", 1.5 ->
 *     "1.5", 3.0 -> "3.0", 1e20 -> "1e+20", 0.1 -> "0.10000000000000001";
 *     true -> "true"; integers beyond 64 bits are doubles, as in jsoncpp;
 *   - local_gid takes strings only (Mooncake: isString, else ""): a number
 *     or bool there reads as "", an array or object is refused;
 *   - local_lid, qp_num elements, and segment lid/addr/length/keys accept an
 *     integral double (3.0, 1e2) as jsoncpp's isUInt does.
 * Ours, stricter than Mooncake: a string (or bool, null, array) where a
 * number belongs is QPHS_ERR_BODY_WRONG_TYPE, a number out of range or
 * fractional QPHS_ERR_BODY_OUT_OF_RANGE; a string with an embedded NUL
 * (\u0000) is QPHS_ERR_BODY_WRONG_TYPE (our strings are C strings).
 */
#ifndef QPHS__DESC_H
#define QPHS__DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define QPHS_MAX_STRING 4096 /* bytes, any string key */
#define QPHS_MAX_QPS 255     /* elements of qp_num */
#define QPHS_MAX_DEPTH 32    /* JSON nesting */
#define QPHS_GID_STR_LEN 47  /* "xx:" x 15 + "xx" */

/* Parses json (json_len bytes; need not be NUL-terminated) into a new object
 * (*out transferred: json_object_put; the JSON value null gives *out NULL
 * and 0).  Errors: QPHS_ERR_FRAME_EMPTY_BODY (no value, only whitespace),
 * QPHS_ERR_FRAME_NOT_JSON (also: comments, trailing commas, single quotes,
 * NaN/Infinity, numbers that overflow a double, strings that are not
 * well-formed UTF-8 — jsoncpp takes some of these, Mooncake never writes
 * them), QPHS_ERR_FRAME_TRAILING (anything but whitespace after the value),
 * QPHS_ERR_BODY_TOO_DEEP (detected before parsing completes),
 * QPHS_ERR_FRAME_TOO_LONG (over INT_MAX bytes), QPHS_ERR_MEMORY. */
int qphs__json_parse(const char *json, size_t json_len, struct json_object **out,
		     char *err, size_t errlen);

/* Connection body (HandShakeDesc).  All strings are owned by the struct
 * (malloc'd, never NULL after parse/init); free with qphs__hs_desc_clear. */
struct qphs__hs_desc {
	char *local_nic_path;
	uint16_t local_lid;
	char *local_gid;          /* as received: validate with qphs__gid_parse */
	char *peer_nic_path;
	uint32_t *qp_num;         /* qp_count elements, NULL when 0 */
	size_t qp_count;
	char *reply_msg;
	char *payload;
	bool has_ready_ack;       /* the key was present */
	bool ready_ack;
	int path_mtu;             /* qphs_path_mtu in bytes; 0 = absent */
	/* Other transports' keys (efa_addr, barex_port, jetty_num, cxi_addr),
	 * carried through verbatim: an object holding just those keys, or NULL.
	 * Owned (json_object_put on clear). */
	struct json_object *extra;
};

/* Sets every field to its default (empty strings, zeros).  Returns 0 or
 * QPHS_ERR_MEMORY. */
int qphs__hs_desc_init(struct qphs__hs_desc *d);
void qphs__hs_desc_clear(struct qphs__hs_desc *d);
/* Deep copy.  dst must not hold anything (cleared or uninitialised). */
int qphs__hs_desc_copy(struct qphs__hs_desc *dst, const struct qphs__hs_desc *src);
/* Replaces *field (one of the char * members) with a copy of value. */
int qphs__desc_set_str(char **field, const char *value);

int qphs__hs_desc_parse(const char *json, size_t json_len,
			struct qphs__hs_desc *out, char *err, size_t errlen);
int qphs__hs_desc_from_json(struct json_object *obj, struct qphs__hs_desc *out,
			    char *err, size_t errlen);
/* Writes the body, Mooncake's bytes, into a new malloc'd NUL-terminated
 * string (*out transferred; *out_len excludes the terminator).  The
 * ready_ack key is written when has_ready_ack (or ready_ack is true, as
 * Mooncake does); qphs_path_mtu only when path_mtu != 0; extra's four keys
 * when present. */
int qphs__hs_desc_encode(const struct qphs__hs_desc *d, char **out, size_t *out_len);

/* Notify body {"name": s, "notify_msg": s}. */
struct qphs__notify {
	char *name;
	char *notify_msg;
};
int qphs__notify_parse(const char *json, size_t json_len, struct qphs__notify *out,
		       char *err, size_t errlen);
int qphs__notify_encode(const struct qphs__notify *n, char **out, size_t *out_len);
void qphs__notify_clear(struct qphs__notify *n);

/* Probe: request "{}\n", reply {"status":"success"}\n. */
int qphs__probe_parse(const char *json, size_t json_len, char *err, size_t errlen);
int qphs__probe_reply_encode(char **out, size_t *out_len);

/* Metadata: segment descriptor (research/mooncake-facts.md §2.2).  A
 * descriptor Mooncake would drop as corrupt (an empty device name or gid, a
 * buffer with an empty name, addr 0 or length 0, a non-empty rkey whose size
 * differs from lkey's or from the device count) is QPHS_ERR_METADATA with
 * "Corrupted segment descriptor [<detail>]"; wrong JSON types are the
 * QPHS_ERR_BODY_* codes.  tcp_data_port and tcp_proto_version must be
 * integers of 32 bits. */
struct qphs__seg_device {
	char *name;
	uint16_t lid;
	char *gid;
};
struct qphs__seg_buffer {
	char *name;
	uint64_t addr;
	uint64_t length;
	uint32_t *rkey;
	size_t rkey_count;
	uint32_t *lkey;
	size_t lkey_count;
};
struct qphs__segment_desc {
	char *name;
	char *protocol;            /* "rdma" */
	int64_t tcp_data_port;
	int64_t tcp_proto_version; /* 1 */
	char *timestamp;           /* "YYYY-MM-DD HH:MM:SS.uuuuuu" */
	char *rdma_server_name;    /* "" = absent */
	struct qphs__seg_device *devices;
	size_t device_count;
	struct qphs__seg_buffer *buffers;
	size_t buffer_count;
	struct json_object *priority_matrix; /* owned; NULL = absent */
};
int qphs__segment_desc_init(struct qphs__segment_desc *s);
void qphs__segment_desc_clear(struct qphs__segment_desc *s);
int qphs__segment_desc_parse(const char *json, size_t json_len,
			     struct qphs__segment_desc *out, char *err, size_t errlen);
int qphs__segment_desc_encode(const struct qphs__segment_desc *s, char **out,
			      size_t *out_len);

/* GID strings (facts §7): 16 fields separated by ':', each 1..n hex digits
 * (either case, optional 0x prefix, whitespace allowed after a colon), value
 * <= 0xff, nothing trailing.  Returns 0 or QPHS_ERR_BAD_GID. */
int qphs__gid_parse(const char *s, uint8_t gid[16]);
/* 47 lowercase characters plus NUL. */
void qphs__gid_format(const uint8_t gid[16], char out[QPHS_GID_STR_LEN + 1]);

/* Nic path "<server>@<device>": server is everything before the first '@',
 * device everything after.  Both must be non-empty.  *server and *device are
 * malloc'd (transferred).  Returns 0 or QPHS_ERR_BAD_NIC_PATH. */
int qphs__nic_path_split(const char *path, char **server, char **device);
/* "host:port" (IPv6 in brackets), facts §4's parseHostNameWithPort: [v6],
 * [v6]:port, bare v6 (no port), v6%scope:port, else split at the last ':'.
 * "Bare v6" is what inet_pton takes (so fe80::1:1500 is a host with no
 * port, but fe80::1:15000 is host fe80::1, port 15000, as in Mooncake).
 * A missing port gives default_port.  host is copied into hostbuf (brackets
 * removed).  Returns 0 or QPHS_ERR_BAD_ADDRESS (bad port, empty host, too
 * long).  Ours, stricter than Mooncake, which falls back to the default
 * port: a port that is not all digits 0..65535 (empty after ':' included),
 * and anything but ":port" after a ']'. */
int qphs__parse_host_port(const char *server, char *hostbuf, size_t hostlen,
			  uint16_t *port, uint16_t default_port);
/* Formats host and port as a server name, bracketing IPv6 hosts. */
int qphs__format_host_port(const char *host, uint16_t port, char *buf, size_t len);

#endif
