/* rss.h — a process's resident set, for the benches' memory figures. */
#ifndef QPLAB_BENCH_RSS_H
#define QPLAB_BENCH_RSS_H

#include <stdio.h>
#include <sys/types.h>

/* VmRSS of pid (0: this process) in KiB, from /proc; -1 when unreadable. */
static inline long bench_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

#endif
