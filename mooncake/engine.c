/* The Mooncake Transfer Engine behind its C API (transfer_engine_c.h): the
 * only file of ours that calls it.  One engine per adapter: P2PHANDSHAKE
 * metadata on the host's address, the RDMA transport on the host's device
 * named explicitly, one exported buffer and one staging buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"
#include "qphs/error.h"
#include "transfer_engine_c.h"

double mc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The RDMA transport on the host's device alone: a NIC priority matrix
 * naming it as preferred for cpu:0 (TransferEngineImpl::installTransport
 * takes args[0] as that matrix and Topology::parse reads it), the same
 * name the buffers are registered under. */
static int install(struct mc_host *h)
{
	char matrix[200];
	void *args[2] = {matrix, NULL};
	uint64_t mark = logtee_mark();
	const char *where = NULL;
	int code;

	snprintf(matrix, sizeof(matrix), "{\"cpu:0\": [[\"%s\"], []]}", h->device);
	if (installTransport(h->engine, "rdma", args)) {
		h->transport = true;
		return 0;
	}
	/* What RdmaTransport::install logged is the reason (rdma_transport.cpp:
	 * "cannot initialize RDMA resources" after the device's own failure). */
	logtee_sync(500);
	code = logtee_first_failure(mark, MCA_SIDE_CLIENT, h->ctx_text, sizeof(h->ctx_text), NULL, 0, &where);
	snprintf(h->ctx_code, sizeof(h->ctx_code), "%s", code ? qphs_errname(code) : "ERR_CONTEXT");
	if (!code)
		snprintf(h->ctx_text, sizeof(h->ctx_text), "installTransport(\"rdma\", %s) failed: "
			 "Mooncake's RDMA transport did not install (its log says why); its "
			 "daemon keeps serving and answers Connection and Metadata null", matrix);
	return -1;
}

static int register_buffers(struct mc_host *h, char *err, size_t errlen)
{
	if (posix_memalign((void **)&h->region, 4096, MCA_REGION_BYTES) ||
	    posix_memalign((void **)&h->staging, 4096, 2 * MCA_REGION_BYTES)) {
		snprintf(err, errlen, "out of memory for the buffers");
		return -1;
	}
	/* Every host's bytes differ, so a check that reads the wrong host's
	 * buffer, or restores the wrong bytes, is caught. */
	mca_pattern(h->region, MCA_REGION_BYTES, (uint64_t)getpid() * 2654435761u);
	memset(h->staging, 0, 2 * MCA_REGION_BYTES);
	/* The exported one first: a peer takes the first buffer with rkeys. */
	if (registerLocalMemory(h->engine, h->region, MCA_REGION_BYTES, "cpu:0", 1) ||
	    registerLocalMemory(h->engine, h->staging, 2 * MCA_REGION_BYTES, "cpu:0", 0)) {
		snprintf(err, errlen, "registerLocalMemory failed");
		return -1;
	}
	return 0;
}

int eng_open(struct mc_host *h, char *code, size_t codelen, char *err, size_t errlen)
{
	char name[300], bound[300], why[600];
	uint64_t mark = logtee_mark();
	const char *where;
	int rc;

	/* The port is pinned by MC_MIN_RPC_PORT = MC_MAX_RPC_PORT (adapter.c);
	 * the one of local_server_name is ignored (TransferEngineImpl::init). */
	snprintf(name, sizeof(name), "%s", h->addr);
	snprintf(code, codelen, "ERR_CONTEXT");
	h->engine = createTransferEngine("P2PHANDSHAKE", name, name, h->port, 0);
	if (!h->engine) {
		/* Its log says why (TransferEngineImpl::init). */
		logtee_sync(500);
		rc = logtee_first_failure(mark, MCA_SIDE_CLIENT, why, sizeof(why), NULL, 0, &where);
		if (rc)
			snprintf(code, codelen, "%s", qphs_errname(rc));
		snprintf(err, errlen, "createTransferEngine(\"P2PHANDSHAKE\", \"%s\") failed: %s", name,
			 rc ? why : "(Mooncake's log above says why)");
		return -1;
	}
	getLocalIpAndPort(h->engine, bound, sizeof(bound));
	if (strcmp(bound, h->listen)) {
		snprintf(err, errlen, "Mooncake's daemon is at %s, not at %s", bound, h->listen);
		return -1;
	}
	if (install(h) == 0 || h->ctx_code[0])
		return register_buffers(h, err, errlen);
	return -1;
}

void eng_close(struct mc_host *h)
{
	if (h->engine) {
		unregisterLocalMemory(h->engine, h->staging);
		unregisterLocalMemory(h->engine, h->region);
		destroyTransferEngine(h->engine);
		h->engine = NULL;
	}
	free(h->region);
	free(h->staging);
	h->region = h->staging = NULL;
}

int eng_segment(struct mc_host *h, const char *server)
{
	return openSegment(h->engine, server);
}

int eng_transfer(struct mc_host *h, int seg, int opcode, void *local, uint64_t remote, size_t len,
		 double deadline, int *submit_rc)
{
	struct transfer_request req = {.opcode = opcode, .source = local, .target_id = seg,
				       .target_offset = remote, .length = len};
	struct transfer_status st = {.status = STATUS_WAITING};
	batch_id_t b = allocateBatchID(h->engine, 1);
	struct timespec ms1 = {0, 1000000};

	*submit_rc = submitTransfer(h->engine, b, &req, 1);
	if (*submit_rc) {
		freeBatchID(h->engine, b);
		return -1;
	}
	for (;;) {
		st.status = STATUS_WAITING;
		if (getTransferStatus(h->engine, b, 0, &st) == 0 && st.status != STATUS_WAITING &&
		    st.status != STATUS_PENDING)
			break;
		if (mc_now_ms() > deadline)
			return STATUS_WAITING; /* the batch stays Mooncake's: freeing it now is unsafe */
		nanosleep(&ms1, NULL);
	}
	freeBatchID(h->engine, b);
	return st.status;
}

int eng_gid(struct mc_host *h, int *gid_index, char *gid, size_t gidlen)
{
	static char buf[16384];

	*gid_index = -1;
	gid[0] = '\0';
	if (!h->engine || showLinks(h->engine, buf, sizeof(buf), 1))
		return -1;
	return mca_links_gid(buf, h->device, gid_index, gid, gidlen);
}
