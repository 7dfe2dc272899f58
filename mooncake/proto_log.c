/* Mooncake's log lines: the ring that keeps them, glog's line format, and
 * the failures they name (proto.h).  Mooncake's C API returns a segment
 * id, a batch status or a Status code, never the reason; its glog lines
 * (on stderr, as Mooncake logs before InitGoogleLogging) are the only
 * place the reason is, so the adapter reads them. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "qphs/error.h"

void mca_ring_push(struct mca_ring *r, const char *line, size_t len)
{
	char *slot = r->lines[r->pushed % MCA_RING_LINES];

	if (len >= MCA_RING_LINE_BYTES)
		len = MCA_RING_LINE_BYTES - 1;
	memcpy(slot, line, len);
	slot[len] = '\0';
	r->pushed++;
}

static uint64_t first_held(const struct mca_ring *r, uint64_t mark)
{
	uint64_t oldest = r->pushed > MCA_RING_LINES ? r->pushed - MCA_RING_LINES : 0;

	return mark > oldest ? mark : oldest;
}

const char *mca_ring_at(const struct mca_ring *r, uint64_t mark, uint64_t i)
{
	uint64_t n = mark + i;

	if (n >= r->pushed || n < first_held(r, mark))
		return NULL;
	return r->lines[n % MCA_RING_LINES];
}

json_object *mca_ring_since(const struct mca_ring *r, uint64_t mark, uint64_t *lost)
{
	json_object *a = json_object_new_array();
	uint64_t from = first_held(r, mark);

	if (lost)
		*lost = mark < r->pushed ? from - mark : 0;
	for (uint64_t n = from; n < r->pushed; n++)
		json_object_array_add(a, json_object_new_string(r->lines[n % MCA_RING_LINES]));
	return a;
}

static const char *digits(const char *p, int min, int max)
{
	int n = 0;

	while (isdigit((unsigned char)p[n]) && n < max)
		n++;
	return n >= min ? p + n : NULL;
}

int mca_glog_parse(const char *line, char *level, const char **msg)
{
	const char *p = line + 1, *end;

	if (!line[0] || !strchr("IWEF", line[0]))
		return 0;
	/* Lmmdd (older glog) or Lyyyymmdd (0.6, Debian 12's), then
	 * hh:mm:ss.uuuuuu, the thread id (padded), FILE:LINE] */
	end = digits(p, 4, 8);
	if (!end || (end - p != 4 && end - p != 8) || *end != ' ')
		return 0;
	p = digits(end + 1, 2, 2);
	if (!p || *p != ':' || !(p = digits(p + 1, 2, 2)) || *p != ':' || !(p = digits(p + 1, 2, 2)) ||
	    *p != '.' || !(p = digits(p + 1, 6, 6)) || *p != ' ')
		return 0;
	while (*p == ' ')
		p++;
	if (!(p = digits(p, 1, 10)) || *p != ' ')
		return 0;
	end = strstr(p + 1, "] ");
	if (!end || end == p + 1 || !isdigit((unsigned char)end[-1]) || memchr(p + 1, ' ', (size_t)(end - p - 1)))
		return 0;
	*level = line[0];
	*msg = end + 2;
	return 1;
}

/* One text, logged on the client side of Mooncake (its own requests:
 * openSegment, transfers, the active handshake) or by its daemon (the
 * requests it serves), has a code per side: 0 where it cannot occur. */
struct rule {
	const char *text;          /* a substring of the message */
	int client, daemon;
	const char *where;
};

/* The rules, in the order they are tried.  A code is what the function
 * returns at that log line: Mooncake's codes keep their numbers in our
 * table (ERR_SOCKET -102, ERR_METADATA -200, ERR_ENDPOINT -201, ...).  The
 * daemon's frame refusals return nothing to anyone (it closes the
 * connection): their code is our table's row for the same refusal, so a
 * scenario compares the two daemons.  A failed slice has no code in
 * Mooncake (the slice is marked failed): ours, ERR_COMPLETION. */
static const struct rule rules[] = {
	{"Handshake rejected by ", QPHS_ERR_METADATA, 0,
	 "TransferMetadata::sendHandshake (transfer_metadata.cpp)"},
	{"received packet mismatch", QPHS_ERR_REJECT_HANDSHAKE, 0,
	 "RdmaEndPoint::setupConnectionsByActive (rdma_endpoint.cpp)"},
	{"QP count mismatch in peer and local endpoints", QPHS_ERR_INVALID_ARGUMENT,
	 QPHS_ERR_INVALID_ARGUMENT, "RdmaEndPoint::doSetupConnection (rdma_endpoint.cpp)"},
	{"Failed to modify QP to ", QPHS_ERR_ENDPOINT, QPHS_ERR_ENDPOINT,
	 "RdmaEndPoint::doSetupConnection (rdma_endpoint.cpp)"},
	{"peer nic path inconsistency", 0, QPHS_ERR_REJECT_HANDSHAKE,
	 "RdmaEndPoint::setupConnectionsByPassive (rdma_endpoint.cpp)"},
	{"Received stale RDMA ready ACK", 0, QPHS_ERR_REJECT_HANDSHAKE,
	 "RdmaEndPoint::setupConnectionsByPassive (rdma_endpoint.cpp)"},
	{"SocketHandShakePlugin: failed to get IP address", QPHS_ERR_DNS, 0,
	 "SocketHandShakePlugin::exchangeMetadata (transfer_metadata_plugin.cpp)"},
	{"SocketHandShakePlugin: connect()", QPHS_ERR_SOCKET, 0,
	 "SocketHandShakePlugin::doConnect (transfer_metadata_plugin.cpp)"},
	{"readString: zero length", QPHS_ERR_SOCKET, QPHS_ERR_FRAME_ZERO_LENGTH, "readString (common.h)"},
	{"readString: too large length", QPHS_ERR_SOCKET, QPHS_ERR_FRAME_TOO_LONG, "readString (common.h)"},
	{"readString: unexpected length", QPHS_ERR_SOCKET, QPHS_ERR_FRAME_TRUNCATED, "readString (common.h)"},
	{"readString: incomplete handshake length", QPHS_ERR_SOCKET, QPHS_ERR_FRAME_TRUNCATED,
	 "readString (common.h)"},
	{"failed to receive handshake message, malformed json format", 0, QPHS_ERR_FRAME_NOT_JSON,
	 "SocketHandShakePlugin::startDaemon (transfer_metadata_plugin.cpp)"},
	{"malformed json format", QPHS_ERR_MALFORMED_JSON, 0,
	 "SocketHandShakePlugin::doSend (transfer_metadata_plugin.cpp)"},
	{"unexpected handshake message type", QPHS_ERR_SOCKET, QPHS_ERR_FRAME_BAD_TYPE,
	 "SocketHandShakePlugin::startDaemon / doSend (transfer_metadata_plugin.cpp)"},
	{"Unsupported segment descriptor", QPHS_ERR_METADATA, 0,
	 "TransferMetadata::decodeSegmentDesc (transfer_metadata.cpp)"},
	{"Corrupted segment descriptor", QPHS_ERR_METADATA, 0,
	 "TransferMetadata::decodeSegmentDesc (transfer_metadata.cpp)"},
	{"Worker: Process failed for slice", QPHS_ERR_COMPLETION, 0,
	 "WorkerPool::performPollCq (worker_pool.cpp)"},
	/* init returns -1; our row for the same cause */
	{"No valid port found for local TCP service", QPHS_ERR_NO_PORT, 0,
	 "TransferEngineImpl::init (transfer_engine_impl.cpp)"},
	/* initializeRdmaResources returns ERR_DEVICE_NOT_FOUND */
	{"RdmaTransport: No available RNIC", QPHS_ERR_DEVICE_NOT_FOUND, 0,
	 "RdmaTransport::initializeRdmaResources (rdma_transport.cpp)"},
};

int mca_log_failure(const char *msg, enum mca_side side, const char **where)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		int code = side == MCA_SIDE_DAEMON ? rules[i].daemon : rules[i].client;

		if (code && strstr(msg, rules[i].text)) {
			if (where)
				*where = rules[i].where;
			return code;
		}
	}
	return 0;
}

/* ibv_wc_status_str's texts (rdma-core libibverbs) and their names. */
static const struct {
	const char *text, *name;
} wc_names[] = {
	{"success", "IBV_WC_SUCCESS"},
	{"local length error", "IBV_WC_LOC_LEN_ERR"},
	{"local QP operation error", "IBV_WC_LOC_QP_OP_ERR"},
	{"local EE context operation error", "IBV_WC_LOC_EEC_OP_ERR"},
	{"local protection error", "IBV_WC_LOC_PROT_ERR"},
	{"Work Request Flushed Error", "IBV_WC_WR_FLUSH_ERR"},
	{"memory management operation error", "IBV_WC_MW_BIND_ERR"},
	{"bad response error", "IBV_WC_BAD_RESP_ERR"},
	{"local access error", "IBV_WC_LOC_ACCESS_ERR"},
	{"remote invalid request error", "IBV_WC_REM_INV_REQ_ERR"},
	{"remote access error", "IBV_WC_REM_ACCESS_ERR"},
	{"remote operation error", "IBV_WC_REM_OP_ERR"},
	{"transport retry counter exceeded", "IBV_WC_RETRY_EXC_ERR"},
	{"RNR retry counter exceeded", "IBV_WC_RNR_RETRY_EXC_ERR"},
	{"local RDD violation error", "IBV_WC_LOC_RDD_VIOL_ERR"},
	{"remote invalid RD request", "IBV_WC_REM_INV_RD_REQ_ERR"},
	{"aborted error", "IBV_WC_REM_ABORT_ERR"},
	{"fatal error", "IBV_WC_FATAL_ERR"},
	{"response timeout error", "IBV_WC_RESP_TIMEOUT_ERR"},
	{"general error", "IBV_WC_GENERAL_ERR"},
};

const char *mca_wc_name(const char *text)
{
	for (size_t i = 0; i < sizeof(wc_names) / sizeof(wc_names[0]); i++)
		if (!strcmp(text, wc_names[i].text))
			return wc_names[i].name;
	return NULL;
}

int mca_first_failure(const struct mca_ring *r, uint64_t mark, enum mca_side side, char *text,
		      size_t textlen, char *wc, size_t wclen, const char **where)
{
	const char *msg;
	char level;

	if (wc && wclen)
		wc[0] = '\0';
	for (uint64_t n = first_held(r, mark); n < r->pushed; n++) {
		const char *line = r->lines[n % MCA_RING_LINES];
		int code;

		if (!mca_glog_parse(line, &level, &msg) || level == 'I')
			continue;
		code = mca_log_failure(msg, side, where);
		if (!code)
			continue;
		snprintf(text, textlen, "%s", msg);
		if (code == QPHS_ERR_COMPLETION && wc) {
			const char *colon = strrchr(msg, ':');
			const char *name = colon && colon[1] == ' ' ? mca_wc_name(colon + 2) : NULL;

			snprintf(wc, wclen, "%s", name ? name : "");
		}
		return code;
	}
	return 0;
}
