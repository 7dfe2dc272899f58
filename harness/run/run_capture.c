/* The lab's capture process and each scenario's share of it
 * (run_capture.h); tshark for the wire expectations. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lab_conf.h"
#include "run.h"
#include "run_capture.h"
#include "run_spawn.h"

double run_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(double ms)
{
	struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6)};

	nanosleep(&ts, NULL);
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

/* tcpdump says "listening on IF" on stderr once its socket is open. */
static bool listening(const char *log)
{
	char buf[2048] = "";
	FILE *f = fopen(log, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strstr(buf, "listening on") != NULL;
}

static void reap(struct run_cap *c, int deadline_ms)
{
	double end = run_now_ms() + deadline_ms;
	int st;

	while (c->pid > 0) {
		pid_t w = waitpid(c->pid, &st, WNOHANG);

		if (w == c->pid || (w < 0 && errno == ECHILD)) {
			c->pid = 0;
			return;
		}
		if (run_now_ms() > end) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &st, 0);
			c->pid = 0;
			return;
		}
		sleep_ms(5);
	}
}

/* Shared mode: every host in one namespace, and a handshake between two
 * of them goes over lo (only RoCE is steered out of the lab links:
 * netns/topo's pair rules match rxe's bound source addresses).  So it
 * listens on every interface: RoCEv2 outgoing (each packet once, as it
 * leaves its host, after the egress qdisc, before a veth can drop it),
 * the lab's TCP incoming (libpcap drops lo's outgoing copies, so a TCP
 * segment is seen once, where it arrives). */
#define SHARED_FILTER                                                                               \
	"(udp port 4791 and outbound) or (inbound and tcp and (net " QPLAB_LAB_NET4 ".0.0/16 or net "  \
	QPLAB_LAB_NET6 "::/32))"
int run_cap_start(struct run_cap *c, const struct run_topo *t, const char *dir, char *err, size_t errlen)
{
	const struct run_host *h = &t->hosts[0];
	char log[4300];
	bool bridge = t->bridge[0] != '\0', shared = !strcmp(t->mode, "shared");
	const char *ifname = shared ? "any" : bridge ? t->bridge : h->ifname;
	/* -B: in immediate mode libpcap rings TPACKET_V2 frames sized for the
	 * snaplen (256 KiB where the interface offloads, as veth does), so
	 * its default 2 MiB buffer holds 8 packets and a burst of short
	 * connections under TCG lost packets; 32 MiB holds 128. */
	char *argv[] = {(char *)"tcpdump", (char *)"-i", (char *)ifname, (char *)"-n", (char *)"-U",
			(char *)"--immediate-mode", (char *)"-B", (char *)"32768", (char *)"-w", c->path,
			(char *)(shared ? SHARED_FILTER : "tcp or udp port 4791"), NULL};
	struct run_spawn sp = {.argv = argv, .err_path = log, .own_group = true};
	double end;

	memset(c, 0, sizeof(*c));
	if (!t->nhosts || !ifname[0]) {
		snprintf(err, errlen, "capture: the topology names no interface to listen on");
		return -1;
	}
	snprintf(c->path, sizeof(c->path), "%s/.topo-%s.pcap", dir, t->id);
	snprintf(log, sizeof(log), "%s.log", c->path);
	unlink(log);
	if (shared) {
		snprintf(c->point, sizeof(c->point), "every interface (shared mode: RoCE as it leaves, the handshake as it arrives over lo)");
	} else if (bridge) {
		snprintf(c->point, sizeof(c->point), "bridge %s", ifname);
	} else {
		snprintf(c->point, sizeof(c->point), "%s's lab interface %s", h->name, ifname);
		snprintf(c->host, sizeof(c->host), "%s", h->name);
		sp.netns = h->netns[0] ? h->netns : NULL;
	}
	if (run_spawn_start(&sp)) {
		snprintf(err, errlen, "capture: cannot start tcpdump: %s (scripts/deps.sh installs it)",
			 strerror(errno));
		return -1;
	}
	close(sp.from_fd);
	c->pid = sp.pid;
	end = run_now_ms() + 5000 * run_mult();
	while (!listening(log)) {
		if (waitpid(c->pid, NULL, WNOHANG) == c->pid || run_now_ms() > end || qplab_run_interrupted) {
			snprintf(err, errlen, "capture: tcpdump on %s did not start (see %s)", c->point, log);
			c->pid = c->pid > 0 && kill(c->pid, 0) == 0 ? c->pid : 0;
			run_cap_stop(c);
			return -1;
		}
		sleep_ms(5);
	}
	unlink(log);
	c->offset = 0;
	return 0;
}

bool run_cap_alive(struct run_cap *c)
{
	if (c->pid > 0 && waitpid(c->pid, NULL, WNOHANG) == c->pid)
		c->pid = 0;
	return c->pid > 0;
}

void run_cap_stop(struct run_cap *c)
{
	char log[4300];

	if (c->pid > 0) {
		kill(c->pid, SIGTERM);
		reap(c, (int)(3000 * run_mult()));
	}
	if (c->path[0]) {
		unlink(c->path);
		snprintf(log, sizeof(log), "%s.log", c->path);
		unlink(log);
	}
	memset(c, 0, sizeof(*c));
}

void run_cap_take(struct run_cap *c, double t0, const char *dst, struct run_cap_result *r)
{
	double t1 = run_wall_s(), end = run_now_ms() + 1000 * run_mult();
	long size = file_size(c->path);

	/* tcpdump -U writes each packet as it comes: wait until two looks
	 * 20 ms apart find the file the same size. */
	for (;;) {
		long now;

		sleep_ms(20);
		now = file_size(c->path);
		if (now == size || run_now_ms() > end || !run_cap_alive(c))
			break;
		size = now;
	}
	snprintf(r->path, sizeof(r->path), "%s", dst);
	snprintf(r->point, sizeof(r->point), "%s", c->point);
	snprintf(r->host, sizeof(r->host), "%s", c->host);
	if (run_pcap_split(c->path, &c->offset, t0, t1, dst, RUN_CAPTURE_MAX_BYTES, r, r->error,
			   sizeof(r->error)) == 0)
		r->captured = true;
}

const char *run_cap_dissector(void)
{
	static char path[4300];
	const char *env = getenv("QPLAB_WIRESHARK_LUA");

	if (env && *env)
		return env;
	snprintf(path, sizeof(path), "%s/wireshark/mooncake.lua", qplab_root());
	if (access(path, R_OK))
		snprintf(path, sizeof(path), "%s/../wireshark/mooncake.lua", qplab_script_dir());
	return path;
}

void run_cap_decode(struct run_cap_result *r)
{
	char lua[4400];
	char *argv[] = {(char *)"tshark", (char *)"-n", (char *)"-X", lua, (char *)"-r", r->path,
			(char *)"-Y", (char *)"mooncake || infiniband", (char *)"-T", (char *)"ek",
			RUN_TSHARK_FIELDS, NULL};
	char *out = NULL, *line, *save = NULL;
	size_t cap = 0;
	int rc;

	snprintf(lua, sizeof(lua), "lua_script:%s", run_cap_dissector());
	rc = run_capture_err(argv, &out, "/dev/null");
	if (rc != 0) {
		snprintf(r->error, sizeof(r->error), "tshark -r %.150s failed (exit %d; scripts/deps.sh installs it)",
			 r->path, rc);
		free(out);
		return;
	}
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct qplab_wire_pkt p;
		char err[256];
		int k = qplab_wire_pkt_parse(line, strlen(line), &p, err, sizeof(err));

		if (k < 0) {
			snprintf(r->error, sizeof(r->error), "tshark's output: %.200s", err);
			free(out);
			return;
		}
		if (k > 0)
			continue;
		if (r->npkts == cap) {
			struct qplab_wire_pkt *n = realloc(r->pkts, (cap = cap ? cap * 2 : 64) * sizeof(*n));

			if (!n) {
				qplab_wire_pkt_free(&p);
				snprintf(r->error, sizeof(r->error), "out of memory");
				free(out);
				return;
			}
			r->pkts = n;
		}
		r->pkts[r->npkts++] = p;
	}
	free(out);
	r->decoded = true;
}

void run_cap_result_free(struct run_cap_result *r)
{
	for (size_t i = 0; i < r->npkts; i++)
		qplab_wire_pkt_free(&r->pkts[i]);
	free(r->pkts);
	r->pkts = NULL;
	r->npkts = 0;
}
