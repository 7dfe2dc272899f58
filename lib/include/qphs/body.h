/*
 * qphs/body.h — the handshake's message bodies <-> JSON.  Pure: no
 * sockets, no devices, no global state; any thread.
 *
 * The bodies are plain structs the caller owns: fill or parse one, then
 * release what it holds with its _clear function.  Every char * member
 * is malloc'd by the library (never NULL after _init or a successful
 * _parse) and freed by _clear; set one with qphs_desc_set_str.  An encoder
 * returns a new malloc'd string (transferred: free()).  err/errlen may be
 * NULL/0 everywhere; when given, a failure writes a message that names the
 * key and the problem.
 *
 * Writing follows Mooncake's writer (jsoncpp 1.9.5 FastWriter): compact,
 * keys in byte order, '\n' at the end, '/' not escaped, control characters
 * and non-ASCII as \uXXXX (UTF-16 surrogate pairs above U+FFFF).
 *
 * Reading: missing keys take defaults, unknown keys are ignored, numbers or
 * bools in a string key are stringified (compat); every shape libqphs
 * refuses on purpose ("Ours" below; the reject rows of tests/compat) fails
 * with a code from qphs/error.h and a message naming the key and the problem
 * (written into err, errlen bytes, may be NULL).
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
#ifndef QPHS_BODY_H
#define QPHS_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qphs/export.h"
#include "qphs/addr.h"
#include "qphs/json.h"

struct json_object;

#define QPHS_MAX_QPS 255     /* elements of qp_num */

/* Connection body (HandShakeDesc).  All strings are owned by the struct
 * (malloc'd, never NULL after parse/init); free with qphs_hs_desc_clear. */
struct qphs_hs_desc {
	char *local_nic_path;
	uint16_t local_lid;
	char *local_gid;          /* as received: validate with qphs_gid_parse */
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
QPHS_EXPORT int qphs_hs_desc_init(struct qphs_hs_desc *d);
QPHS_EXPORT void qphs_hs_desc_clear(struct qphs_hs_desc *d);
/* Deep copy.  dst must not hold anything (cleared or uninitialised). */
QPHS_EXPORT int qphs_hs_desc_copy(struct qphs_hs_desc *dst, const struct qphs_hs_desc *src);
/* Replaces *field (one of the char * members) with a copy of value. */
QPHS_EXPORT int qphs_desc_set_str(char **field, const char *value);

QPHS_EXPORT int qphs_hs_desc_parse(const char *json, size_t json_len,
			struct qphs_hs_desc *out, char *err, size_t errlen);
/* Writes the body, Mooncake's bytes, into a new malloc'd NUL-terminated
 * string (*out transferred; *out_len excludes the terminator).  The
 * ready_ack key is written when has_ready_ack (or ready_ack is true, as
 * Mooncake does); qphs_path_mtu only when path_mtu != 0; extra's four keys
 * when present. */
QPHS_EXPORT int qphs_hs_desc_encode(const struct qphs_hs_desc *d, char **out, size_t *out_len);

/* Notify body {"name": s, "notify_msg": s}. */
struct qphs_notify {
	char *name;
	char *notify_msg;
};
QPHS_EXPORT int qphs_notify_parse(const char *json, size_t json_len, struct qphs_notify *out,
		       char *err, size_t errlen);
QPHS_EXPORT int qphs_notify_encode(const struct qphs_notify *n, char **out, size_t *out_len);
QPHS_EXPORT void qphs_notify_clear(struct qphs_notify *n);

/* Probe: request "{}\n", reply {"status":"success"}\n. */
QPHS_EXPORT int qphs_probe_parse(const char *json, size_t json_len, char *err, size_t errlen);
QPHS_EXPORT int qphs_probe_reply_encode(char **out, size_t *out_len);

/* Metadata: segment descriptor (Mooncake's TransferMetadata::encodeSegmentDesc
 * and decodeSegmentDesc, transfer_metadata.cpp).  A
 * descriptor Mooncake would drop as corrupt (an empty device name or gid, a
 * buffer with an empty name, addr 0 or length 0, a non-empty rkey whose size
 * differs from lkey's or from the device count) is QPHS_ERR_METADATA with
 * "Corrupted segment descriptor [<detail>]"; wrong JSON types are the
 * QPHS_ERR_BODY_* codes.  tcp_data_port and tcp_proto_version must be
 * integers of 32 bits. */
struct qphs_seg_device {
	char *name;
	uint16_t lid;
	char *gid;
};
struct qphs_seg_buffer {
	char *name;
	uint64_t addr;
	uint64_t length;
	uint32_t *rkey;
	size_t rkey_count;
	uint32_t *lkey;
	size_t lkey_count;
};
struct qphs_segment_desc {
	char *name;
	char *protocol;            /* "rdma" */
	int64_t tcp_data_port;
	int64_t tcp_proto_version; /* 1 */
	char *timestamp;           /* "YYYY-MM-DD HH:MM:SS.uuuuuu" */
	char *rdma_server_name;    /* "" = absent */
	struct qphs_seg_device *devices;
	size_t device_count;
	struct qphs_seg_buffer *buffers;
	size_t buffer_count;
	/* Mooncake's topology, {location: [[preferred devices], [others]]}:
	 * a Mooncake initiator picks the device for a buffer from the entry
	 * named like the buffer (or any device it lists) and fails every
	 * transfer when it is absent (Topology::selectDevice, topology.cpp).
	 * Owned; NULL = absent. */
	struct json_object *priority_matrix;
	/* Ours, ignored by Mooncake's decodeSegmentDesc: the key "qphs", an
	 * object.  "checksum": true says the peer answers qphs-checksum
	 * Metadata requests (a qplab peer's data-path check extra); "crc32"
	 * and "crc_len" are the answer: the CRC-32 of the first crc_len
	 * bytes of its first buffer. */
	bool qphs_checksum;
	bool has_crc;
	uint32_t crc32;
	uint64_t crc_len;
};
QPHS_EXPORT int qphs_segment_desc_init(struct qphs_segment_desc *s);
QPHS_EXPORT void qphs_segment_desc_clear(struct qphs_segment_desc *s);
QPHS_EXPORT int qphs_segment_desc_parse(const char *json, size_t json_len,
			     struct qphs_segment_desc *out, char *err, size_t errlen);
QPHS_EXPORT int qphs_segment_desc_encode(const struct qphs_segment_desc *s, char **out,
			      size_t *out_len);

#endif
