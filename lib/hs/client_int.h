/* client_int.h — the handshake client's internal door for the setup
 * layer.  Internal. */
#ifndef QPHS__CLIENT_INT_H
#define QPHS__CLIENT_INT_H

#include <stddef.h>

#include "qphs/body.h"
#include "qphs/client.h"
#include "qphs/config.h"

/* qphs_client_request for a Connection (or old-protocol) request that
 * also hands over the reply as the client read it to check it: when it
 * returns 0 or QPHS_ERR_REJECT_HANDSHAKE, *reply holds the parsed reply;
 * otherwise *reply is untouched.  With block NULL the caller clears the
 * reply (qphs_hs_desc_clear).  With block, *block is set too: non-NULL
 * when the reply's strings and qp_num share that one allocation (the
 * common reply, read by the fast reader), NULL when they are the
 * struct's own; qphs__hs_desc_release (codec/descfast.h) frees either.
 * res->reply stays NULL: the setup layer reads each reply once, parsed. */
int qphs__client_request_desc(const struct qphs_config *cfg, const char *server, int type,
			      const char *json, size_t json_len, struct qphs_client_result *res,
			      struct qphs_hs_desc *reply, void **block);

#endif
