/* procstat.h — clocks and CPU and TCP counters, for the RDMA benches
 * (rdma_setup, setup_floor, fanin): the monotonic clock, the guest's busy
 * time, the process's CPU time and context switches, a thread's run time,
 * the process's threads by name, the TcpExt counters of the caller's
 * network namespace, perf's control fifo and a wait for a quiet guest. */
#ifndef QPLAB_BENCH_PROCSTAT_H
#define QPLAB_BENCH_PROCSTAT_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* The monotonic clock, ms. */
static inline double bench_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* This process's CPU time so far (user and system, all its threads), ms,
 * and in *csw (when not NULL) its context switches, voluntary or not;
 * from getrusage.  -1 (and *csw -1) when unreadable. */
static inline double bench_proc_ms(long *csw)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru)) {
		if (csw)
			*csw = -1;
		return -1;
	}
	if (csw)
		*csw = ru.ru_nvcsw + ru.ru_nivcsw;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* One TcpExt counter of /proc/net/netstat (a names line, then a values
 * line): the caller's network namespace.  -1 when unreadable. */
static inline long bench_tcpext(const char *name)
{
	char names[4096], vals[4096], *sn, *sv;
	FILE *f = fopen("/proc/net/netstat", "r");
	long v = -1;

	if (!f)
		return -1;
	while (fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		if (strncmp(names, "TcpExt:", 7))
			continue;
		char *n = strtok_r(names, " \n", &sn), *x = strtok_r(vals, " \n", &sv);
		for (; n && x; n = strtok_r(NULL, " \n", &sn), x = strtok_r(NULL, " \n", &sv))
			if (!strcmp(n, name))
				v = atol(x);
	}
	fclose(f);
	return v;
}

/* The machine's CPU time so far from /proc/stat, ms: *busy (not idle, not
 * iowait: softirqs and kworkers included) and *total.  0, or -1. */
static inline int bench_guest_cpu(double *busy, double *total)
{
	unsigned long long v[8] = {0};
	double tick = 1000.0 / (double)sysconf(_SC_CLK_TCK), all = 0;
	FILE *f = fopen("/proc/stat", "r");
	int ok;

	*busy = *total = 0;
	if (!f)
		return -1;
	ok = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		    &v[4], &v[5], &v[6], &v[7]) == 8;
	fclose(f);
	if (!ok)
		return -1;
	for (int i = 0; i < 8; i++)
		all += (double)v[i];
	*total = all * tick;
	*busy = (all - (double)v[3] - (double)v[4]) * tick;
	return 0;
}

/* The machine's CPU time so far from /proc/schedstat, ms: the time tasks
 * ran on every CPU, kept in nanoseconds (each CPU line's seventh field,
 * rq_cpu_time; a task's run is added when it leaves the CPU).  /proc/stat
 * counts in ticks (10 ms under the lab's kernels: at 64 connections,
 * steps of 0.16 ms a connection), too coarse to tell CPU differences of
 * a few percent.  -1 when the kernel keeps no schedstats. */
static inline double bench_guest_run_ms(void)
{
	char line[512];
	double ms = 0;
	int cpus = 0;
	FILE *f = fopen("/proc/schedstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long run;

		if (sscanf(line, "cpu%*d %*u %*u %*u %*u %*u %*u %llu", &run) == 1) {
			ms += (double)run / 1e6;
			cpus++;
		}
	}
	fclose(f);
	return cpus ? ms : -1;
}

/* This process's threads now: TIDs, and their names (comm) when names is
 * not NULL.  Returns how many (at most max). */
static inline int bench_tasks(int *tids, char (*names)[16], int max)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (dir && n < max && (e = readdir(dir))) {
		int tid = atoi(e->d_name);
		char path[64];
		FILE *f;

		if (tid <= 0)
			continue;
		tids[n] = tid;
		if (names) {
			snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
			names[n][0] = 0;
			if ((f = fopen(path, "r"))) {
				if (fgets(names[n], 16, f))
					names[n][strcspn(names[n], "\n")] = 0;
				fclose(f);
			}
		}
		n++;
	}
	if (dir)
		closedir(dir);
	return n;
}

/* Thread tid's schedstat: its first field (ns on a CPU) and its second
 * (ns runnable, waiting for one).  Returns 0, or -1 when the kernel does
 * not say or the thread is gone. */
static inline int bench_schedstat(int tid, unsigned long long *run, unsigned long long *wait)
{
	char path[64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	if (!(f = fopen(path, "r")))
		return -1;
	ok = fscanf(f, "%llu %llu", run, wait) == 2;
	fclose(f);
	return ok ? 0 : -1;
}

/* A thread of ours' time spent runnable but waiting for a CPU, ms; -1
 * when the kernel does not say. */
static inline double bench_task_wait_ms(int tid)
{
	unsigned long long run, wait;

	return bench_schedstat(tid, &run, &wait) ? -1 : (double)wait / 1e6;
}

/* Run time of thread tid of this process so far, ms: schedstat's first
 * field (ns on CPU), or utime + stime of stat where schedstat is absent;
 * -1 when the thread is gone. */
static inline double bench_task_ms(int tid)
{
	char path[64], line[1024], *p;
	unsigned long long ns, wait, ut, st;
	FILE *f;

	if (!bench_schedstat(tid, &ns, &wait))
		return (double)ns / 1e6;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (!(f = fopen(path, "r")))
		return -1;
	/* comm may hold spaces: the fields after it start after the last ')'. */
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -1;
	return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

/* QPLAB_BENCH_PERF_CTL=FIFO: "enable" / "disable" around each timed
 * burst, for `perf record -D -1 --control fifo:FIFO` (profiling the timed
 * part alone; the library's threads are named, so `perf report --sort
 * comm` splits qphs-loop and qphs-worker from the callers).
 * QPLAB_BENCH_PERF_ACK=FIFO (perf's --control fifo:CTL,ACK): wait for
 * perf's "ack", so the command took effect before the burst starts. */
static inline void bench_perf_ctl(const char *what)
{
	const char *p = getenv("QPLAB_BENCH_PERF_CTL"), *ack = getenv("QPLAB_BENCH_PERF_ACK");
	FILE *f = p ? fopen(p, "w") : NULL;
	char line[16];

	if (!f)
		return;
	fprintf(f, "%s\n", what);
	fclose(f);
	if (ack && (f = fopen(ack, "r"))) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
}

/* Waits (bounded: 15 s) until the machine's CPUs are quiet (under 10 %
 * busy over 200 ms): the teardown of a previous phase (QPs destroyed,
 * contexts closed) goes on in kworkers and RCU for a while, and must not
 * be billed to the next. */
static inline void bench_settle(void)
{
	struct timespec nap = {0, 200 * 1000000L};
	double b0, t0, b1, t1;

	for (int i = 0; i < 75; i++) {
		bench_guest_cpu(&b0, &t0);
		nanosleep(&nap, NULL);
		bench_guest_cpu(&b1, &t1);
		if (t1 > t0 && b1 - b0 < 0.1 * (t1 - t0))
			return;
	}
}

#endif
