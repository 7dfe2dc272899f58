/*
 * qphs.h — libqphs, a Mooncake Transfer Engine compatible handshake and RDMA
 * RC queue-pair connection library.
 *
 * Conventions, true of every header below:
 *  - Every call returns 0 (or a count) on success and a negative code from
 *    qphs/error.h on failure.  Human text for the last failure lives on the
 *    handle it happened on, never in a process-wide variable.
 *  - Handles are opaque and come in _new/_free (or _open/_close) pairs.
 *    _free accepts NULL.  The message bodies of qphs/body.h are plain
 *    structs instead, owned by the caller, with _init/_clear pairs.
 *  - Each pointer parameter says whether it is borrowed (the library keeps
 *    no reference after the call), copied, or transferred (the library frees
 *    it).  Returned pointers say who frees them.
 *  - The library prints nothing unless a log handler is installed.
 */
#ifndef QPHS_H
#define QPHS_H

#include "qphs/export.h"
#include "qphs/error.h"
#include "qphs/log.h"
#include "qphs/json.h"
#include "qphs/frame.h"
#include "qphs/addr.h"
#include "qphs/body.h"
#include "qphs/config.h"
#include "qphs/daemon.h"
#include "qphs/client.h"
#include "qphs/rdma.h"

#endif
