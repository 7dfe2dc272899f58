/*
 * adapter.h — qplab-mooncake-agent's I/O parts: the stderr tee that keeps
 * Mooncake's log lines (logtee.c), the Mooncake engine behind the C API
 * (engine.c), the requests (ops.c), main (adapter.c).  Built only against
 * a Mooncake build (scripts/mooncake-agent.sh); proto.h is the pure part.
 */
#ifndef QPLAB_MOONCAKE_ADAPTER_H
#define QPLAB_MOONCAKE_ADAPTER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto.h"
#include "qphs/config.h"

/* ---- logtee.c: fd 2 through a pipe, read by a thread that writes every
 * byte on to the real stderr and keeps glog lines in a ring ---- */

/* Starts the tee.  Returns 0, or -1 (errno) with stderr untouched. */
int logtee_start(void);
/* The ring position now (lines pushed so far). */
uint64_t logtee_mark(void);
/* Returns once everything written to fd 2 before the call has been read
 * into the ring, or ms passed. */
void logtee_sync(int ms);
/* The lines since mark (mca_ring_since), under the tee's lock. */
json_object *logtee_since(uint64_t mark, uint64_t *lost);
/* mca_first_failure over the lines since mark, under the tee's lock. */
int logtee_first_failure(uint64_t mark, enum mca_side side, char *text, size_t textlen, char *wc,
			 size_t wclen, const char **where);

/* ---- the host ---- */

struct mc_host {
	const char *host, *device, *listen;
	char addr[256];
	uint16_t port;
	void *engine;              /* transfer_engine_t */
	bool transport;            /* installTransport("rdma") succeeded */
	char ctx_code[48];         /* "" = no context error */
	char ctx_text[700];
	uint8_t *region;           /* MCA_REGION_BYTES, registered remote-accessible */
	uint8_t *staging;          /* 2 * MCA_REGION_BYTES: transfer source, read-back */
	struct qphs_config cfg;    /* for our own requests (Probe, Metadata) */
	struct mca_state st;
	pthread_mutex_t mu;        /* busy, busy_what */
	pthread_cond_t cv;
	bool busy;                 /* a Mooncake call outlived its request */
	char busy_what[80];
	double report_cpu_ms;      /* process CPU time at the previous report */
	double report_wall_ms;     /* and when it ended (monotonic ms) */
	int log_grace_ms;          /* how long a failure's log line may lag: 300 ms
				    * times QPLAB_TIME_MULTIPLIER */
};

/* ---- engine.c ---- */

/* Creates the engine (P2PHANDSHAKE on addr, its daemon pinned to port),
 * installs the RDMA transport on the device, registers the buffers.
 * Returns 0; a failed transport is the host's context error (ctx_code),
 * not a failure.  -1 with the code NAME in code and the reason in err: no
 * engine (the `fatal` line). */
int eng_open(struct mc_host *h, char *code, size_t codelen, char *err, size_t errlen);
void eng_close(struct mc_host *h);
/* openSegment(server): the segment id, or < 0. */
int eng_segment(struct mc_host *h, const char *server);
/* One transfer of len bytes between local and the peer's remote address,
 * waited for until deadline (monotonic ms).  Returns its last status
 * (STATUS_* of transfer_engine_c.h; STATUS_WAITING when the deadline
 * passed), or -1 with *submit_rc set when submitTransfer refused it. */
int eng_transfer(struct mc_host *h, int seg, int opcode, void *local, uint64_t remote, size_t len,
		 double deadline, int *submit_rc);
/* The device's GID index and GID (showLinks); -1 when unknown. */
int eng_gid(struct mc_host *h, int *gid_index, char *gid, size_t gidlen);

/* ---- ops.c ---- */

/* Serves one request; returns the reply.  Sets *quit for `exit`. */
json_object *ops_serve(struct mc_host *h, struct mca_request *r, int *quit);

double mc_now_ms(void);

#endif
