/* One tshark for the whole run (run_capture.h): under TCG a tshark start
 * (every dissector registered, the Lua one loaded) costs tens of seconds,
 * so the scenarios' captures are fed to one tshark reading a pcap stream
 * on its stdin, each followed by a marker packet (UDP from 127.0.0.1 port
 * 9, which no lab host sends); its records up to the marker's are the
 * scenario's.  Any trouble stops it and that scenario is decoded by a
 * tshark of its own (run_cap_decode). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "run_capture.h"
#include "run_spawn.h"

#define PCAP_HDR 24

static int start(struct run_tshark *t)
{
	char lua[4400];
	char *argv[] = {(char *)"tshark", (char *)"-l", (char *)"-n", (char *)"-X", lua, (char *)"-r", (char *)"-",
			(char *)"-Y", (char *)"mooncake || infiniband || (udp.srcport == 9 && ip.src == 127.0.0.1)",
			(char *)"-T", (char *)"ek", RUN_TSHARK_FIELDS, (char *)"-e", (char *)"udp.srcport", NULL};
	struct run_spawn sp = {.argv = argv, .err_path = "/dev/null", .with_stdin = true, .own_group = true};

	snprintf(lua, sizeof(lua), "lua_script:%s", run_cap_dissector());
	if (run_spawn_start(&sp))
		return -1;
	t->pid = sp.pid;
	t->to_fd = sp.to_fd;
	/* Never block on a full pipe while tshark blocks on its output. */
	fcntl(t->to_fd, F_SETFL, fcntl(t->to_fd, F_GETFL) | O_NONBLOCK);
	t->from_fd = sp.from_fd;
	t->started = false;
	return 0;
}

void run_tshark_stop(struct run_tshark *t)
{
	if (t->pid > 0) {
		close(t->to_fd);
		close(t->from_fd);
		kill(t->pid, SIGTERM);
		run_spawn_wait(t->pid);
	}
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

/* The marker: IPv4 127.0.0.1 -> 127.0.0.1, UDP 9 -> 9, one byte, behind
 * the link header of the stream's link type (Ethernet, or Linux cooked
 * v1 or v2 for tcpdump -i any); stamped with the stream's last time so it sorts
 * after it. */
static size_t marker(unsigned char *m, const unsigned char rec_ts[8], unsigned int linktype)
{
	static const unsigned char eth[14] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00};
	static const unsigned char sll[16] = {0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00};
	/* LINKTYPE_LINUX_SLL2 (tcpdump -i any since libpcap 1.10): protocol,
	 * reserved, ifindex, ARPHRD, packet type, address length, address. */
	static const unsigned char sll2[20] = {0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6};
	static const unsigned char ip_udp[29] = {
		0x45, 0, 0, 29, 0, 0, 0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1, /* IPv4 */
		0, 9, 0, 9, 0, 9, 0, 0, 'm',                                        /* UDP 9 -> 9 */
	};
	const unsigned char *lh = linktype == 113 ? sll : linktype == 276 ? sll2 : eth; /* SLL, SLL2, Ethernet */
	unsigned int hl = linktype == 113 ? sizeof(sll) : linktype == 276 ? sizeof(sll2) : sizeof(eth);
	unsigned int len = hl + sizeof(ip_udp);

	memcpy(m, rec_ts, 8);
	memcpy(m + 8, &len, 4);
	memcpy(m + 12, &len, 4);
	memcpy(m + 16, lh, hl);
	memcpy(m + 16 + hl, ip_udp, sizeof(ip_udp));
	return 16 + len;
}

static int add_pkt(struct run_cap_result *r, struct qplab_wire_pkt *p)
{
	if ((r->npkts & 63) == 0) {
		struct qplab_wire_pkt *n = realloc(r->pkts, (r->npkts + 64) * sizeof(*n));

		if (!n)
			return -1;
		r->pkts = n;
	}
	r->pkts[r->npkts++] = *p;
	return 0;
}

/* Whole lines of t->buf: packets into r; 1 once the marker came. */
static int lines(struct run_tshark *t, struct run_cap_result *r)
{
	char *nl;
	int done = 0;

	while (!done && (nl = memchr(t->buf, '\n', t->len))) {
		size_t n = (size_t)(nl - t->buf) + 1;
		struct qplab_wire_pkt p;
		char err[256];
		int k = qplab_wire_pkt_parse(t->buf, n - 1, &p, err, sizeof(err));

		memmove(t->buf, t->buf + n, t->len - n);
		t->len -= n;
		if (k < 0)
			return -1;
		if (k > 0)
			continue;
		if (p.udp_sport == 9 && !strcmp(p.src, "127.0.0.1")) {
			qplab_wire_pkt_free(&p);
			done = 1;
		} else if (add_pkt(r, &p)) {
			qplab_wire_pkt_free(&p);
			return -1;
		}
	}
	return done;
}

/* Writes out (n bytes) to tshark while reading its records into r, until
 * the marker's record came back or the deadline. */
static int pump(struct run_tshark *t, const unsigned char *out, size_t n, struct run_cap_result *r,
		double deadline)
{
	size_t off = 0;

	for (;;) {
		struct pollfd pf[2] = {{.fd = t->from_fd, .events = POLLIN}, {.fd = t->to_fd, .events = POLLOUT}};
		int left = (int)(deadline - run_now_ms());
		int k;

		if (left <= 0 || qplab_run_interrupted)
			return -1;
		if (poll(pf, off < n ? 2 : 1, left > 200 ? 200 : left) < 0 && errno != EINTR)
			return -1;
		if (off < n && (pf[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(t->to_fd, out + off, n - off);

			if (w < 0 && errno != EINTR && errno != EAGAIN)
				return -1;
			off += w > 0 ? (size_t)w : 0;
		}
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t got;

			if (t->len + 65536 + 1 > t->cap) {
				char *b = realloc(t->buf, t->cap = t->len + 65536 + 1);

				if (!b)
					return -1;
				t->buf = b;
			}
			got = read(t->from_fd, t->buf + t->len, t->cap - t->len - 1);
			if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
				return -1; /* tshark ended */
			t->len += got > 0 ? (size_t)got : 0;
			if ((k = lines(t, r)) != 0)
				return k > 0 && off == n ? 0 : -1;
		}
	}
}

/* The scenario's pcap as stream bytes: its header only the first time
 * (a different header later: -1), its records, the marker. */
static unsigned char *stream_bytes(struct run_tshark *t, const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char hdr[PCAP_HDR], ts[8] = {0}, *buf = NULL;
	long size;
	size_t got, at = 0;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < PCAP_HDR || fseek(f, 0, SEEK_SET) ||
	    fread(hdr, 1, PCAP_HDR, f) != PCAP_HDR || (t->started && memcmp(hdr, t->hdr, PCAP_HDR)) ||
	    !(buf = malloc((size_t)size + 128))) {
		fclose(f);
		return NULL;
	}
	if (!t->started) {
		memcpy(buf, hdr, PCAP_HDR);
		memcpy(t->hdr, hdr, PCAP_HDR);
		at = PCAP_HDR;
	}
	got = fread(buf + at, 1, (size_t)size - PCAP_HDR, f);
	fclose(f);
	/* The last record's time for the marker: walk the records. */
	for (size_t o = at; o + 16 <= at + got;) {
		unsigned int incl;

		memcpy(ts, buf + o, 8);
		memcpy(&incl, buf + o + 8, 4);
		o += 16 + incl;
	}
	if (!got && t->last_ts_set)
		memcpy(ts, t->last_ts, 8);
	memcpy(t->last_ts, ts, 8);
	t->last_ts_set = true;
	{
		unsigned int linktype;

		memcpy(&linktype, hdr + 20, 4);
		*n = at + got + marker(buf + at + got, ts, linktype);
	}
	return buf;
}

void run_tshark_decode(struct run_tshark *t, struct run_cap_result *r)
{
	unsigned char *bytes;
	size_t n = 0;
	double deadline;

	if (t->broken || (t->pid <= 0 && start(t))) {
		t->broken = true;
		run_cap_decode(r);
		return;
	}
	deadline = run_now_ms() + (t->started ? 60000 : 180000) * run_mult();
	if (!(bytes = stream_bytes(t, r->path, &n)) || pump(t, bytes, n, r, deadline)) {
		free(bytes);
		run_tshark_stop(t);
		t->broken = true;
		run_cap_result_free(r);
		run_cap_decode(r);
		return;
	}
	free(bytes);
	t->started = true;
	r->decoded = true;
}
