/* Lab hosts for the rdma suites: daemon + qphs_rdma + device per host. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "rdmatest.h"

static void nth(const char *list, int i, char *out, size_t len)
{
	const char *p = list ? list : "";

	for (; i > 0 && p; i--) {
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	snprintf(out, len, "%.*s", p ? (int)strcspn(p, ",") : 0, p ? p : "");
}

double lab_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void lab_config(struct qphs_config *cfg)
{
	qphs_config_init(cfg);
	cfg->reply_timeout_ms = rdma_ms(10000);
	cfg->connect_timeout_s = 5;
}

void lab_up(struct lab_host *h, int i, const struct qphs_config *cfg_in)
{
	lab_up_named(h, i, cfg_in, NULL);
}

void lab_up_named(struct lab_host *h, int i, const struct qphs_config *cfg_in,
		  const char *server)
{
	struct qphs_config cfg;
	char err[512] = "";
	int rc;

	memset(h, 0, sizeof(*h));
	if (cfg_in)
		cfg = *cfg_in;
	else
		lab_config(&cfg);
	nth(getenv("QPLAB_RDMA_DEVS"), i, h->dev, sizeof(h->dev));
	nth(getenv("QPLAB_RDMA_ADDRS"), i, h->addr, sizeof(h->addr));
	nth(getenv("QPLAB_RDMA_NETDEVS"), i, h->netdev, sizeof(h->netdev));
	ck_assert_msg(h->dev[0] && h->addr[0], "QPLAB_RDMA_DEVS/ADDRS not set");
	ck_assert_int_eq(qphs_daemon_new(&cfg, &h->d), 0);
	rc = qphs_daemon_listen(h->d, h->addr, 0);
	ck_assert_msg(rc == 0, "listen on %s: %s", h->addr, qphs_daemon_errstr(h->d));
	rc = qphs_rdma_new(&cfg, server ? server : qphs_daemon_address(h->d), &h->r, err,
			   sizeof(err));
	ck_assert_msg(rc == 0, "qphs_rdma_new: %s", err);
	rc = qphs_rdma_open_device(h->r, h->dev, &h->ctx);
	ck_assert_msg(rc == 0, "open %s: %s (%s)", h->dev, qphs_errname(rc), qphs_rdma_errstr(h->r));
	ck_assert_int_eq(qphs_rdma_attach(h->r, h->d), 0);
	ck_assert_int_eq(qphs_daemon_start(h->d), 0);
	snprintf(h->path, sizeof(h->path), "%s", qphs_context_nic_path(h->ctx));
}

void lab_down(struct lab_host *h)
{
	if (h->d)
		qphs_daemon_stop(h->d);
	qphs_rdma_free(h->r);
	qphs_daemon_free(h->d);
	memset(h, 0, sizeof(*h));
}

void lab_down_clean(struct lab_host *a, struct lab_host *b)
{
	char da[sizeof(a->dev)], db[sizeof(b->dev)];

	snprintf(da, sizeof(da), "%s", a->dev);
	snprintf(db, sizeof(db), "%s", b->dev);
	lab_down(a);
	lab_down(b);
	ck_assert_int_eq(lab_count_qps(da), 0);
	ck_assert_int_eq(lab_count_qps(db), 0);
}

/* `rdma -j resource show qp`: entries with our pid on dev. */
int lab_count_qps(const char *dev)
{
	FILE *p = popen("rdma -j resource show qp 2>/dev/null", "r");
	char *buf = calloc(1, 1 << 20);
	size_t n = 0;
	struct json_object *arr;
	int count = 0;

	ck_assert(p && buf);
	while (n < (1 << 20) - 1) {
		size_t r = fread(buf + n, 1, (1 << 20) - 1 - n, p);
		if (!r)
			break;
		n += r;
	}
	pclose(p);
	if (getenv("QPLAB_RDMA_DEBUG_QPS"))
		printf("# rdma -j resource show qp: %s\n", buf);
	arr = json_tokener_parse(buf);
	free(buf);
	ck_assert_msg(arr && json_object_is_type(arr, json_type_array), "rdma -j output not JSON");
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i), *v;

		char task[64];

		/* The kernel records the creating thread.  A QP made by one of our
		 * threads shows its id; one made by a thread that has exited shows
		 * neither pid nor comm (kernel QPs carry comm "ib_core" and no pid):
		 * the suite is the only RDMA user in the VM, so those are ours. */
		if (json_object_object_get_ex(e, "pid", &v)) {
			snprintf(task, sizeof(task), "/proc/self/task/%d", json_object_get_int(v));
			if (access(task, F_OK) != 0)
				continue;
		} else if (json_object_object_get_ex(e, "comm", &v)) {
			continue;
		}
		if (json_object_object_get_ex(e, "ifname", &v) &&
		    !strcmp(json_object_get_string(v), dev))
			count++;
	}
	json_object_put(arr);
	return count;
}

void lab_set_mtu(const char *netdev, int mtu)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip link set dev %s mtu %d", netdev, mtu);
	/* rxe takes the new MTU in its netdev notifier, before `ip` returns. */
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
}

void lab_assert_rts(struct qphs_endpoint *ep, int nqp)
{
	struct qphs_endpoint_info info;

	ck_assert_int_eq(qphs_endpoint_info(ep, &info), 0);
	ck_assert_int_eq(info.qp_count, nqp);
	for (int i = 0; i < nqp; i++)
		ck_assert_msg(info.qp_state[i] == 3, "QP %d (qpn %u) is in state %d, not RTS", i,
			      info.qpn[i], info.qp_state[i]);
}

void lab_connect_ok(struct lab_host *a, struct lab_host *b, int nqp, struct qphs_endpoint **ea,
		    struct qphs_endpoint **eb)
{
	int rc = qphs_connect(a->ctx, b->path, ea);

	ck_assert_msg(rc == 0, "connect %s -> %s: %s: %s", a->path, b->path, qphs_errname(rc),
		      *ea ? qphs_endpoint_errstr(*ea) : "(no endpoint)");
	*eb = qphs_context_endpoint(b->ctx, a->path);
	ck_assert_msg(*eb, "no passive endpoint on %s for %s", b->path, a->path);
	rc = qphs_endpoint_wait_ready(*eb, rdma_ms(5000));
	ck_assert_msg(rc == 0, "passive endpoint not ready: %s", qphs_errname(rc));
	lab_assert_rts(*ea, nqp);
	lab_assert_rts(*eb, nqp);
}

void lab_assert_mooncake(const char *text, const char *prefix)
{
	ck_assert_msg(!strncmp(text, prefix, strlen(prefix)), "'%s' does not start with '%s'",
		      text, prefix);
	ck_assert_msg(strstr(text + strlen(prefix), " [") && text[strlen(text) - 1] == ']',
		      "'%s' has no ' [detail]'", text);
}

void lab_assert_reset(struct qphs_endpoint *ep)
{
	struct qphs_endpoint_info info;

	ck_assert_int_eq(qphs_endpoint_info(ep, &info), 0);
	for (int i = 0; i < info.qp_count; i++)
		ck_assert_msg(info.qp_state[i] == 0, "QP %d (qpn %u) left in state %d", i,
			      info.qpn[i], info.qp_state[i]);
}

/* netns/topo's fault command on the suite's topology (QPLAB_RDMA_TOPO is
 * the topo script, QPLAB_RDMA_TOPO_NAME the topology's name: main.c or
 * phase 60-rdma export both). */
int lab_topo_fault(const char *args)
{
	const char *topo = getenv("QPLAB_RDMA_TOPO"), *name = getenv("QPLAB_RDMA_TOPO_NAME");
	char cmd[512];

	if (!topo || !name)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s fault --name %s %s", topo, name, args);
	return system(cmd) == 0 ? 0 : -1;
}

int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	uname(&u);
	sscanf(u.release, "%d.%d", &ma, &mi);
	return ma > major || (ma == major && mi >= minor);
}
