/*
 * qphs/error.h — the one error table of libqphs.
 *
 * Every public call returns 0 on success or a negative code from this table.
 * Mooncake's own codes keep Mooncake's numbers (include/error.h of the
 * Transfer Engine), so a caller that compares against -104 keeps working.
 * Causes Mooncake has no code for get codes of their own at -1000 and below.
 *
 * The table has four columns:
 *   NAME   the enum constant is QPHS_NAME; qphs_errname() returns "NAME"
 *   CODE   the number
 *   FAULT  the short name a fault injector uses to provoke this error
 *          (`qplab hs serve --fault FAULT`, scenario `fault` keys), or ""
 *   TEXT   what qphs_strerror() returns
 *
 * Scenario files and the CLI refer to errors by NAME, and to faults by FAULT,
 * so all three vocabularies come from this single list.
 */
#ifndef QPHS_ERROR_H
#define QPHS_ERROR_H

#include "qphs/export.h"

#define QPHS_ERRNO_MAP(X)                                                      \
	X(OK, 0, "", "success")                                                \
	/* Mooncake's codes (same numbers). */                                 \
	X(ERR_INVALID_ARGUMENT, -1, "", "invalid argument")                    \
	X(ERR_DEVICE_NOT_FOUND, -6, "", "RDMA device not found")               \
	X(ERR_DNS, -101, "", "peer name could not be resolved")                \
	X(ERR_SOCKET, -102, "", "socket error")                                \
	X(ERR_MALFORMED_JSON, -103, "", "malformed JSON")                      \
	X(ERR_REJECT_HANDSHAKE, -104, "reject", "handshake rejected by peer")  \
	X(ERR_METADATA, -200, "", "metadata error")                            \
	X(ERR_ENDPOINT, -201, "", "endpoint error")                            \
	X(ERR_CONTEXT, -202, "", "RDMA context error")                         \
	X(ERR_MEMORY, -302, "", "out of memory")                               \
	X(ERR_NOT_IMPLEMENTED, -303, "", "not implemented")                    \
	/* Frames (lib/wire): every way a frame can be bad. */                 \
	X(ERR_FRAME_ZERO_LENGTH, -1000, "zero-length", "frame length is zero") \
	X(ERR_FRAME_TOO_LONG, -1001, "oversize",                               \
	  "frame length exceeds MC_HANDSHAKE_MAX_LENGTH")                      \
	X(ERR_FRAME_TRUNCATED, -1002, "truncate",                              \
	  "connection ended inside a frame")                                   \
	X(ERR_FRAME_BAD_TYPE, -1003, "garbage",                                \
	  "frame type byte is in 0x80-0xff")                                   \
	X(ERR_FRAME_EMPTY_BODY, -1004, "empty-body", "frame has no JSON body") \
	X(ERR_FRAME_NOT_JSON, -1005, "not-json", "frame body is not JSON")     \
	X(ERR_FRAME_TRAILING, -1006, "trailing",                               \
	  "bytes after the JSON value in a frame")                             \
	/* Message bodies (lib/desc): JSON of the wrong shape. */              \
	X(ERR_BODY_NOT_OBJECT, -1020, "", "message body is not a JSON object") \
	X(ERR_BODY_WRONG_TYPE, -1021, "", "a key has the wrong JSON type")     \
	X(ERR_BODY_OUT_OF_RANGE, -1022, "", "a number is out of range")        \
	X(ERR_BODY_TOO_DEEP, -1023, "", "JSON nesting deeper than 32 levels")  \
	X(ERR_BODY_STRING_TOO_LONG, -1024, "",                                 \
	  "a string is longer than 4 KiB")                                     \
	X(ERR_BODY_TOO_MANY_QPS, -1025, "",                                    \
	  "qp_num has more than 255 elements")                                 \
	X(ERR_BAD_GID, -1026, "", "malformed GID string")                      \
	X(ERR_BAD_NIC_PATH, -1027, "", "malformed nic path")                   \
	X(ERR_BAD_ADDRESS, -1028, "", "malformed host:port address")           \
	/* Configuration (lib/config). */                                      \
	X(ERR_CONFIG_SYNTAX, -1040, "", "configuration value is not a number") \
	X(ERR_CONFIG_RANGE, -1041, "",                                         \
	  "configuration value is outside its accepted range")                 \
	/* Transport (lib/daemon, lib/client). */                              \
	X(ERR_CONNECT_REFUSED, -1060, "", "connection refused")                \
	X(ERR_CONNECT_TIMEOUT, -1061, "", "connect timed out")                 \
	X(ERR_REPLY_TIMEOUT, -1062, "stall", "reply timed out")                \
	X(ERR_PEER_CLOSED, -1063, "close", "peer closed without a reply")      \
	X(ERR_REPLY_WRONG_TYPE, -1064, "wrong-type",                           \
	  "reply type differs from the request type")                          \
	X(ERR_REPLY_OLD_PROTOCOL, -1065, "old-protocol",                       \
	  "old-protocol reply to a typed request")                             \
	X(ERR_UNREACHABLE, -1066, "", "peer network unreachable")              \
	X(ERR_WRITE_TIMEOUT, -1067, "", "write timed out")                     \
	X(ERR_ADDR_IN_USE, -1068, "", "address already in use")                \
	X(ERR_NO_PORT, -1069, "", "no free port in the RPC port range")        \
	X(ERR_BUSY, -1070, "", "resource busy")                                \
	X(ERR_STOPPED, -1071, "", "daemon stopped")                            \
	X(ERR_PEER_NO_TRANSPORT, -1072, "null-reply",                          \
	  "peer answered null: no transport handles this request type")      \
	/* RDMA (lib/context, lib/endpoint, lib/verbs). */                     \
	X(ERR_PORT_NOT_ACTIVE, -1100, "", "RDMA port is not ACTIVE")           \
	X(ERR_GID_NULL, -1101, "", "GID is NULL")                              \
	X(ERR_NO_SUITABLE_GID, -1102, "", "no suitable GID found")             \
	X(ERR_QP_COUNT_MISMATCH, -1103, "",                                    \
	  "QP count mismatch in peer and local endpoints")                     \
	X(ERR_MODIFY_QP, -1104, "", "QP state transition failed")              \
	X(ERR_CREATE_QP, -1105, "", "QP creation failed")                      \
	X(ERR_NIC_PATH_MISMATCH, -1106, "", "peer nic path inconsistency")     \
	X(ERR_COMPLETION, -1107, "", "work completion with error status")      \
	X(ERR_COMPLETION_TIMEOUT, -1108, "", "no completion within deadline")  \
	X(ERR_DEVICE_FATAL, -1109, "", "RDMA device reported a fatal event")   \
	X(ERR_RETIRED, -1110, "", "endpoint retired; connect again")           \
	X(ERR_DATA_MISMATCH, -1111, "", "data-path check read back wrong bytes") \
	X(ERR_QP_FATAL, -1112, "", "QP reported an asynchronous error")      \
	/* Threads (every part that starts one; the text names its errno). */ \
	X(ERR_THREAD, -1120, "", "cannot start a thread")

enum qphs_errno {
#define QPHS__ERR_ENUM(name, code, fault, text) QPHS_##name = (code),
	QPHS_ERRNO_MAP(QPHS__ERR_ENUM)
#undef QPHS__ERR_ENUM
};

/* Returns the constant's name without the QPHS_ prefix ("ERR_DNS"), or
 * "UNKNOWN" for a code not in the table.  Static storage: never free it. */
QPHS_EXPORT const char *qphs_errname(int code);

/* Returns the short human text for code.  Static storage. */
QPHS_EXPORT const char *qphs_strerror(int code);

/* Returns the fault name that provokes code ("" if none).  Static storage. */
QPHS_EXPORT const char *qphs_errfault(int code);

/* Looks a code up by its name ("ERR_DNS") or its fault name ("truncate").
 * Returns 1 and stores the code in *code when found, 0 otherwise. */
QPHS_EXPORT int qphs_errcode_by_name(const char *name, int *code);

#endif
