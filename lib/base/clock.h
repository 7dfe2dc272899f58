/* clock.h — the one clock every timing of the library reads. */
#ifndef QPHS__CLOCK_H
#define QPHS__CLOCK_H

/* CLOCK_MONOTONIC in milliseconds. */
double qphs__mono_ms(void);

#endif
