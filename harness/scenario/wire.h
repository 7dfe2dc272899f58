/*
 * wire.h — expectations on a scenario's packets (the top-level `wire`
 * section, docs/scenarios.md "Wire expectations") and their evaluation
 * over packets already decoded by tshark.
 *
 * The runner captures the scenario (harness/run/run_capture.c), asks
 * tshark for one record per packet (our Lua dissector names the
 * handshake's messages, Wireshark's InfiniBand dissector the RoCEv2
 * headers) and hands the records here.  Nothing here does I/O.
 */
#ifndef QPLAB_WIRE_H
#define QPLAB_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario.h"

enum qplab_wire_kind {
	QPLAB_WIRE_HANDSHAKE,       /* handshake messages: count, direction, type, role */
	QPLAB_WIRE_REPLY_MSG,       /* a reply carried a reply_msg matching the text */
	QPLAB_WIRE_ROCE_NAK,        /* AETH NAKs with a syndrome */
	QPLAB_WIRE_ROCE_PAYLOAD,    /* the largest RoCE payload, bytes */
	QPLAB_WIRE_ROCE_SENDS,      /* the most times one PSN went out (retries + 1) */
	QPLAB_WIRE_ROCE_PACKETS,    /* RoCE packets at all (count; 0 = none) */
	QPLAB_WIRE_BAD_FRAME,       /* packets the dissector flags with mooncake.error */
};

struct qplab_wire_expect {
	int line;
	char *label, *why;          /* why: the rule the expectation follows (required) */
	enum qplab_wire_kind kind;
	int from, to;               /* host indexes, -1 = any */
	char ready_ack[8];          /* handshake: true|false|none (no ready_ack key), "" any */
	char type[16];              /* handshake: connection|metadata|notify|probe|old-protocol, "" any */
	char role[8];               /* handshake: request|reply, "" any */
	int syndrome;               /* roce_nak: the AETH syndrome byte */
	char code[24];              /* bad_frame: a mooncake.error name, "" any */
	long min, max;              /* count (or bytes) bounds, inclusive; max -1 = none */
	char *exact, *prefix, *contains; /* reply_msg; NULL when absent */
};

/* One packet as tshark decoded it.  A TCP segment may carry several
 * handshake messages: nmsg of them, each with type, role, reply_msg. */
#define QPLAB_WIRE_MSGS 4
struct qplab_wire_msg {
	char type[16], role[8];
	char ready_ack[8];          /* mooncake.ready_ack_key: true, false, none */
	char *reply_msg;            /* owned; NULL = the message had none */
};
struct qplab_wire_pkt {
	char src[64], dst[64];      /* IP addresses as tshark prints them */
	bool roce;                  /* a BTH was decoded */
	int opcode, psn, destqp;    /* BTH */
	int syndrome;               /* AETH syndrome byte, -1 = no AETH */
	int payload;                /* RoCE payload bytes (qplab_wire_roce_payload), -1 unknown */
	int udp_sport;              /* UDP source port, -1 = none (the runner's marker: 9) */
	struct qplab_wire_msg msg[QPLAB_WIRE_MSGS];
	size_t nmsg;
	char error[QPLAB_WIRE_MSGS][24]; /* mooncake.error: the dissector's bad frames */
	size_t nerror;
};

/* A RoCEv2 packet's payload: the UDP length minus the UDP header (8), the
 * BTH (12), the extension headers its opcode carries (IBTA vol. 1, 9.2
 * and table 38: RETH 16, AETH 4, AtomicETH 28, AtomicAckETH 8, ImmDt 4,
 * IETH 4), the pad count and the ICRC (4).  -1 for an opcode outside the
 * RC set or a length too short for its headers. */
int qplab_wire_roce_payload(int udp_length, int opcode, int padcnt);

/* The syndrome byte of a name: "psn_sequence_error" 0x60, "invalid_request"
 * 0x61, "remote_access_error" 0x62, "remote_operational_error" 0x63
 * (AETH bits 7..5 = 011: NAK, bits 4..0 the NAK code; IBTA vol. 1,
 * 9.7.5.1, table 42); -1 otherwise.  And back (NULL when none). */
int qplab_wire_syndrome(const char *name);
const char *qplab_wire_syndrome_name(int syndrome);

/* The names the dissector gives a bad frame in mooncake.error
 * (wireshark/mooncake.lua, after lib/codec/wire.c and lib/codec/jsonr.c):
 * true for one of them. */
bool qplab_wire_bad_frame_code(const char *name);

/* Host addresses for from/to: addrs[h] are host h's addresses (IPv4,
 * IPv6; "" = none), as the capture shows them. */
struct qplab_wire_hosts {
	const char *addr[QPLAB_MAX_HOSTS][2];
	size_t n;
};

/* Checks e against the packets: true when it holds; expected and observed
 * in words for the diagnostic. */
bool qplab_wire_eval(const struct qplab_wire_expect *e, const struct qplab_wire_pkt *pkts, size_t n,
		     const struct qplab_wire_hosts *hosts, char *expected, size_t explen, char *observed,
		     size_t obslen);

/* One tshark `-T ek` line into *p (a line without "layers" is not a
 * packet: returns 1).  Returns 0, 1, or -1 on a line that is not the JSON
 * tshark writes (err says why).  Free with qplab_wire_pkt_free. */
int qplab_wire_pkt_parse(const char *line, size_t len, struct qplab_wire_pkt *p, char *err, size_t errlen);
void qplab_wire_pkt_free(struct qplab_wire_pkt *p);

/* Frees n parsed expectations (plan->wire) and the array. */
void qplab_wire_free(struct qplab_wire_expect *e, size_t n);

#endif
