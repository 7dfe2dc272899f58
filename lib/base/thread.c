/* Thread start: one place, named threads, the real errno on failure. */
#include "thread.h"

static qphs__thread_create_fn create_fn = pthread_create;

void qphs__thread_set_create(qphs__thread_create_fn fn)
{
	create_fn = fn ? fn : pthread_create;
}

int qphs__thread_start(pthread_t *t, void *(*fn)(void *), void *arg, const char *name)
{
	int rc = create_fn(t, NULL, fn, arg);

	if (rc == 0)
		pthread_setname_np(*t, name);
	return rc;
}
