/*
 * The agent option rdma_max (docs/scenarios.md "Hosts"): before it opens
 * its device the agent moves itself into a cgroup v2 child of its own
 * whose rdma.max limits that device ("DEV hca_handle=N hca_object=M"), so
 * the kernel refuses the verbs objects beyond the limit (ib_uverbs charges
 * every ucontext as an hca_handle and every PD, CQ, MR, QP... as an
 * hca_object: kernel/cgroup/rdma.c rdmacg_try_charge, -EAGAIN over the
 * limit).  Root is not exempt, unlike RLIMIT_MEMLOCK.  At exit it moves
 * back, sets the limits to max and removes the child.
 *
 * The limits go back to max before the rmdir because of what 6.12.117
 * did in the lab VM: a child removed while its resource pool for the
 * device still held a limit (no usage, so nothing freed the pool: the
 * kernel frees one on uncharge or on a write of rdma.max, when its usage
 * is 0 and every limit max) left that pool linked to the freed cgroup,
 * and the device's later deletion (rdma link del: rdmacg_unregister_device,
 * free_cg_rpool_locked) hit "list_del corruption" and a kernel BUG.
 * Writing max first frees the pool while the cgroup is alive.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

#define CG_ROOT "/sys/fs/cgroup"

static int write_file(const char *path, const char *text, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f) {
		snprintf(err, errlen, "rdma_max: open %s: %s", path, strerror(errno));
		return -1;
	}
	ok = fputs(text, f) >= 0;
	ok = (fclose(f) == 0) && ok;
	if (!ok)
		snprintf(err, errlen, "rdma_max: write \"%s\" to %s: %s", text, path, strerror(errno));
	return ok ? 0 : -1;
}

/* The agent's own cgroup directory (from /proc/self/cgroup "0::PATH"). */
static int own_cgroup(char *dir, size_t len, char *err, size_t errlen)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int found = 0;

	if (!f) {
		snprintf(err, errlen, "rdma_max: /proc/self/cgroup: %s", strerror(errno));
		return -1;
	}
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(dir, len, CG_ROOT "%.300s", strcmp(line + 3, "/") ? line + 3 : "");
			found = 1;
		}
	fclose(f);
	if (!found)
		snprintf(err, errlen, "rdma_max: no cgroup v2 entry in /proc/self/cgroup");
	return found ? 0 : -1;
}

int agent_cgroup_enter(struct agent *a, char *err, size_t errlen)
{
	char parent[400], path[600], limit[200], h[24] = "max", o[24] = "max";

	if (!a->rdma_max_set)
		return 0;
	/* Under `ip netns exec` /sys is the namespace's own and nothing is
	 * mounted on it; the mount stays in the agent's mount namespace. */
	if (access(CG_ROOT "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL)) {
		snprintf(err, errlen, "rdma_max: no cgroup v2 at " CG_ROOT " and mounting one "
			 "failed: %s", strerror(errno));
		return QPHS_ERR_CONTEXT;
	}
	if (own_cgroup(parent, sizeof(parent), err, errlen))
		return QPHS_ERR_CONTEXT;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", parent);
	if (write_file(path, "+rdma", err, errlen))
		return QPHS_ERR_CONTEXT;
	snprintf(a->cgroup, sizeof(a->cgroup), "%s/qplab-%s-%d", parent, a->host, (int)getpid());
	if (mkdir(a->cgroup, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "rdma_max: mkdir %s: %s", a->cgroup, strerror(errno));
		a->cgroup[0] = '\0';
		return QPHS_ERR_CONTEXT;
	}
	if (a->rdma_max_handle >= 0)
		snprintf(h, sizeof(h), "%d", a->rdma_max_handle);
	if (a->rdma_max_object >= 0)
		snprintf(o, sizeof(o), "%d", a->rdma_max_object);
	snprintf(limit, sizeof(limit), "%s hca_handle=%s hca_object=%s", a->device, h, o);
	snprintf(path, sizeof(path), "%s/rdma.max", a->cgroup);
	if (write_file(path, limit, err, errlen))
		return QPHS_ERR_CONTEXT;
	snprintf(path, sizeof(path), "%s/cgroup.procs", a->cgroup);
	if (write_file(path, "0", err, errlen))
		return QPHS_ERR_CONTEXT;
	snprintf(a->cgroup_parent, sizeof(a->cgroup_parent), "%s", parent);
	fprintf(stderr, "qplab agent %s: in cgroup %s, rdma.max \"%s\"\n", a->host, a->cgroup, limit);
	return 0;
}

void agent_cgroup_leave(struct agent *a)
{
	char path[600], err[300], limit[200];

	if (!a->cgroup[0])
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", a->cgroup_parent);
	if (a->cgroup_parent[0] && write_file(path, "0", err, sizeof(err)))
		fprintf(stderr, "qplab agent %s: %s\n", a->host, err);
	snprintf(limit, sizeof(limit), "%s hca_handle=max hca_object=max", a->device);
	snprintf(path, sizeof(path), "%s/rdma.max", a->cgroup);
	if (write_file(path, limit, err, sizeof(err)))
		fprintf(stderr, "qplab agent %s: %s\n", a->host, err);
	if (rmdir(a->cgroup))
		fprintf(stderr, "qplab agent %s: rmdir %s: %s\n", a->host, a->cgroup, strerror(errno));
	a->cgroup[0] = '\0';
}
