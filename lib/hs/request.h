/* request.h — what libqphs's own handlers (lib/rdma) may read of a daemon
 * request beyond the public accessors of qphs/daemon.h. */
#ifndef QPHS__REQUEST_H
#define QPHS__REQUEST_H

#include "codec/desc.h"
#include "qphs/daemon.h"

/* The Connection (or old-protocol) body as the daemon already parsed and
 * checked it, so a handler need not parse it again; NULL for other types.
 * Borrowed: valid until the request is completed.  Any thread that holds
 * the request. */
const struct qphs__hs_desc *qphs__request_desc(const struct qphs_request *req);

#endif
