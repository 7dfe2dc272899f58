/* thread.h — every thread of the library starts here. */
#ifndef QPHS__THREAD_H
#define QPHS__THREAD_H

#include <pthread.h>

/* Starts fn(arg) on a new thread named name (top -H, perf, gdb).  Returns 0,
 * or the errno pthread_create returned (EAGAIN: no thread or stack could be
 * had, EPERM, EINVAL): the caller reports it as QPHS_ERR_THREAD with
 * strerror of it, never as a guess such as out of memory. */
int qphs__thread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *name);

/* Tests only: fn replaces pthread_create for every later start (NULL
 * restores it), so a suite can make a start fail with the errno it wants.
 * Set it while no other thread of the library starts one. */
typedef int (*qphs__thread_create_fn)(pthread_t *t, const pthread_attr_t *attr,
				      void *(*fn)(void *), void *arg);
void qphs__thread_set_create(qphs__thread_create_fn fn);

#endif
