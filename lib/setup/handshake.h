/* handshake.h — helpers shared by the active (connect.c) and passive
 * (passive.c) halves and the data-path check.  Internal. */
#ifndef QPHS__HANDSHAKE_H
#define QPHS__HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

#include "qphs/body.h"
#include "setup_int.h"

int qphs__local_path_mtu(struct qphs_endpoint *ep);
/* Our side of a Connection request, what qphs__hs_local_desc writes into
 * an initialised descriptor, built in one allocation instead: *d is set
 * (reply_msg and payload empty, no ready_ack key) with its qp_num and
 * strings in *block; free both with qphs__hs_desc_release.  Reads ep's
 * QPs: call with ep->lock held.  Returns 0 or QPHS_ERR_MEMORY (*d zeroed,
 * *block NULL). */
int qphs__hs_local_block(struct qphs_endpoint *ep, struct qphs_hs_desc *d, void **block);
/* One Connection request to server, what cfg says (the frame type:
 * cfg->old_protocol; the client's deadlines) and nothing else; *connect_ms
 * (may be NULL) gets the TCP connect's time, also when connecting failed.
 * The reply is qphs__client_request_desc's: with block NULL the caller
 * clears it, else it frees it with qphs__hs_desc_release(reply, *block). */
int qphs__hs_send(const struct qphs_config *cfg, const char *server,
		  const struct qphs_hs_desc *d, struct qphs_hs_desc *reply, void **block,
		  char *errtxt, size_t errlen, double *connect_ms);
/* Our segment descriptor (*s initialised here; the caller clears it);
 * crc_len > 0 adds the check region's CRC-32 over that many bytes when
 * the checksum extension is on. */
int qphs__seg_local(struct qphs_rdma *r, size_t crc_len, struct qphs_segment_desc *s);
/* A Metadata request to server: ask (NULL = our server name) goes in the
 * request's name ("qphs-checksum LEN" asks a qplab peer for its CRC);
 * the reply is parsed into *out (caller clears). */
int qphs__seg_fetch(struct qphs_context *ctx, const char *server, const char *ask,
		    struct qphs_segment_desc *out, char *errtxt, size_t errlen);
int qphs__peer_gid_by_metadata(struct qphs_context *ctx, const char *nic_path,
			       uint8_t gid[16], uint16_t *lid, char *errtxt, size_t errlen);
uint32_t qphs__crc32(const uint8_t *p, size_t n);

#endif
