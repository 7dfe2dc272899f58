/*
 * run_capture.h — packet captures of the lab (`qplab run --capture`, and
 * every scenario with wire expectations).
 *
 * One tcpdump per topology build, started after `topo up` on a point
 * that sees every lab packet between the hosts: the bridge of a topology
 * of three or more hosts (promiscuous, so it sees the frames it forwards),
 * else the first host's lab interface (a veth pair: every packet of the
 * pair leaves or reaches it).  Filter: TCP (the handshake) and UDP 4791
 * (RoCEv2).  Each scenario gets its window of that file (the records
 * stamped between its agents' start and their exit) as its own pcap,
 * at most RUN_CAPTURE_MAX_BYTES of records; the rest is counted and the
 * capture marked truncated.  The topology's file goes with the topology.
 */
#ifndef QPLAB_RUN_CAPTURE_H
#define QPLAB_RUN_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "scenario/wire.h"

/* The bound of one scenario's pcap (records, headers excluded). */
#define RUN_CAPTURE_MAX_BYTES (8L * 1024 * 1024)

struct run_topo;

struct run_cap {
	pid_t pid;                  /* tcpdump, 0 = none */
	char path[4200];            /* the topology's capture */
	char point[128];            /* where it listens, in words */
	char host[32];              /* the host whose interface it is, "" = the bridge */
	long offset;                /* bytes of path already given to scenarios */
	bool want;                  /* this scenario is captured */
	double t0;                  /* its window's start (run_wall_s) */
};

/* What one scenario's capture holds (results.json "pcaps"). */
struct run_cap_result {
	bool captured;
	char path[4400];            /* the scenario's pcap */
	char point[128], host[32];
	long packets, bytes;        /* records written, their bytes */
	long dropped;               /* records over the bound, not written */
	bool truncated;
	char error[256];            /* "" = none: why there is no capture, or tshark failed */
	struct qplab_wire_pkt *pkts; /* tshark's records, with wire expectations (owned) */
	size_t npkts;
	bool decoded;               /* tshark ran and every line was read */
	char addr[QPLAB_MAX_HOSTS][2][64]; /* plan host -> its IPv4, IPv6 ("" none) */
	size_t nhosts;
};

/* A pcap's records from byte *offset on whose timestamps lie in [t0, t1]
 * (seconds since the epoch) into dst (a new file with src's header), at
 * most max_bytes of records, the others counted in r->dropped; records
 * before t0 are skipped.  *offset moves past every whole record up to the
 * first one after t1 (a record cut short by the writer is left for the
 * next call).  Returns 0, or -1 with err. */
int run_pcap_split(const char *src, long *offset, double t0, double t1, const char *dst, long max_bytes,
		   struct run_cap_result *r, char *err, size_t errlen);

/* Starts tcpdump for topology t writing dir/.topo-ID.pcap, and waits until
 * it listens.  Returns 0, or -1 with err (nothing left running). */
int run_cap_start(struct run_cap *c, const struct run_topo *t, const char *dir, char *err, size_t errlen);
/* True while tcpdump runs (a link going down on its interface ends it). */
bool run_cap_alive(struct run_cap *c);
/* Stops tcpdump (SIGTERM, then SIGKILL, bounded) and removes its file. */
void run_cap_stop(struct run_cap *c);
/* The scenario's window [t0, now] into dst, after the writer has caught
 * up (its file stops growing, bounded). */
void run_cap_take(struct run_cap *c, double t0, const char *dst, struct run_cap_result *r);
/* tshark (the Lua dissector for the handshake) over r->path into
 * r->pkts: a tshark of its own. */
void run_cap_decode(struct run_cap_result *r);
/* The dissector: QPLAB_WIRESHARK_LUA, else the checkout's. */
const char *run_cap_dissector(void);

/* The fields tshark writes for the wire expectations (-e ...). */
#define RUN_TSHARK_FIELDS                                                                             \
	(char *)"-e", (char *)"mooncake.ready_ack_key",                                               \
	(char *)"-e", (char *)"ip.src", (char *)"-e", (char *)"ip.dst", (char *)"-e", (char *)"ipv6.src",     \
	(char *)"-e", (char *)"ipv6.dst", (char *)"-e", (char *)"udp.length", (char *)"-e",                  \
	(char *)"infiniband.bth.opcode", (char *)"-e", (char *)"infiniband.bth.psn", (char *)"-e",            \
	(char *)"infiniband.bth.destqp", (char *)"-e", (char *)"infiniband.bth.padcnt", (char *)"-e",         \
	(char *)"infiniband.aeth.syndrome", (char *)"-e", (char *)"mooncake.type", (char *)"-e",              \
	(char *)"mooncake.role", (char *)"-e", (char *)"mooncake.reply_msg", (char *)"-e",             \
	(char *)"mooncake.error"

/* One tshark for the run (run_tshark.c): started at the first scenario
 * with wire expectations, fed each capture as part of one pcap stream. */
struct run_tshark {
	pid_t pid;                  /* 0 = not running */
	int to_fd, from_fd;
	char *buf;                  /* unread output */
	size_t len, cap;
	unsigned char hdr[24];      /* the stream's pcap header */
	unsigned char last_ts[8];
	bool last_ts_set, started, broken; /* broken: each scenario gets a tshark of its own */
};
/* Decodes r->path through t (else through run_cap_decode). */
void run_tshark_decode(struct run_tshark *t, struct run_cap_result *r);
void run_tshark_stop(struct run_tshark *t);
void run_cap_result_free(struct run_cap_result *r);

/* Seconds since the epoch (pcap's clock). */
double run_wall_s(void);

#endif
