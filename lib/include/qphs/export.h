/* qphs/export.h — symbol visibility.  The library is built with
 * -fvisibility=hidden; only declarations marked QPHS_EXPORT are part of
 * libqphs.so's ABI. */
#ifndef QPHS_EXPORT_H
#define QPHS_EXPORT_H
#if defined(__GNUC__)
#define QPHS_EXPORT __attribute__((visibility("default")))
#else
#define QPHS_EXPORT
#endif
#endif
