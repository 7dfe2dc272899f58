/*
 * pcapgen — synthetic loopback TCP captures for the dissector tests.
 *
 *   pcapgen unhex [FILE...]      hex text (tests/golden's format: two hex
 *                                digits a byte, whitespace ignored, '#' to
 *                                the end of a line) to bytes on stdout
 *   pcapgen pcap OUT < SCRIPT    a pcap (Ethernet, like Linux's lo) from a
 *                                script, one command a line:
 *
 *     conn CPORT SPORT           a new connection 127.0.0.1:CPORT ->
 *                                127.0.0.1:SPORT (SYN, SYN-ACK, ACK)
 *     send c|s FILE [CUTS]       FILE's bytes from the client (c) or the
 *                                server (s) of the last connection, in
 *                                segments: CUTS is "every:N" (N bytes a
 *                                segment) or offsets where segments end,
 *                                comma-separated and rising ("3,8,9");
 *                                offsets past the end are ignored.  Without
 *                                CUTS, segments of at most 65000 bytes.
 *     fin c|s                    a FIN from that side
 *     rst c|s                    a RST from that side
 *
 * Sequence numbers follow the bytes sent; checksums are right.  Exit 0,
 * 1 on an I/O error, 2 on a bad script line (named with its number).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEGMENT 65000
#define MAX_CUTS 64

struct side {
	uint16_t port;
	uint32_t seq; /* next sequence number this side sends */
};

struct gen {
	FILE *out;
	uint32_t usec; /* timestamp of the next packet, 1 ms apart */
	struct side c, s;
	int have_conn;
};

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t acc)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		acc += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		acc += (uint32_t)p[n - 1] << 8;
	return acc;
}

static uint16_t fold(uint32_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)~acc;
}

/* A pcap record: header in host order (the magic tells readers which). */
static int write_record(struct gen *g, const uint8_t *pkt, size_t len)
{
	uint32_t rec[4] = {1700000000u + g->usec / 1000000u, g->usec % 1000000u,
			   (uint32_t)len, (uint32_t)len};

	g->usec += 1000;
	return fwrite(rec, sizeof(rec), 1, g->out) == 1 && fwrite(pkt, 1, len, g->out) == len ? 0 : -1;
}

enum { FIN = 0x01, SYN = 0x02, RST = 0x04, PSH = 0x08, ACK = 0x10 };

/* One TCP segment from `from` to `to` with flags and len bytes of data. */
static int segment(struct gen *g, struct side *from, const struct side *to, int flags,
		   const uint8_t *data, size_t len)
{
	static uint8_t pkt[14 + 20 + 20 + MAX_SEGMENT];
	uint8_t *ip = pkt + 14, *tcp = ip + 20, pseudo[12] = {127, 0, 0, 1, 127, 0, 0, 1, 0, 6};
	size_t iplen = 20 + 20 + len;

	memset(pkt, 0, 14 + 40);
	put16(pkt + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, (unsigned)iplen);
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, pseudo, 8);
	put16(ip + 10, fold(sum16(ip, 20, 0)));
	put16(tcp, from->port);
	put16(tcp + 2, to->port);
	put32(tcp + 4, from->seq);
	put32(tcp + 8, flags & ACK ? to->seq : 0);
	tcp[12] = 5 << 4;
	tcp[13] = (uint8_t)flags;
	put16(tcp + 14, 65535);
	memcpy(tcp + 20, data, len);
	put16(pseudo + 10, (unsigned)(20 + len));
	put16(tcp + 16, fold(sum16(tcp, 20 + len, sum16(pseudo, 12, 0))));
	from->seq += (uint32_t)len + ((flags & (SYN | FIN)) ? 1 : 0);
	return write_record(g, pkt, 14 + iplen);
}

static int connect_sides(struct gen *g, unsigned cport, unsigned sport)
{
	g->c = (struct side){(uint16_t)cport, 1000u + 7919u * cport};
	g->s = (struct side){(uint16_t)sport, 5000u + 104729u * cport};
	g->have_conn = 1;
	if (segment(g, &g->c, &g->s, SYN, NULL, 0) || segment(g, &g->s, &g->c, SYN | ACK, NULL, 0))
		return -1;
	return segment(g, &g->c, &g->s, ACK, NULL, 0);
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	if (ferror(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* CUTS -> segment end offsets (*n of them), or a segment size (*every). */
static int parse_cuts(const char *spec, size_t *cuts, int *n, size_t *every)
{
	char *end;

	*n = 0;
	*every = MAX_SEGMENT;
	if (!spec)
		return 0;
	if (!strncmp(spec, "every:", 6)) {
		unsigned long v = strtoul(spec + 6, &end, 10);
		if (end == spec + 6 || *end || v == 0 || v > MAX_SEGMENT)
			return -1;
		*every = v;
		return 0;
	}
	for (const char *p = spec; *p; p = end + (*end == ',')) {
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || (*end && *end != ',') || *n == MAX_CUTS ||
		    (*n > 0 && v <= cuts[*n - 1]) || v == 0)
			return -1;
		cuts[(*n)++] = v;
	}
	return 0;
}

static int send_bytes(struct gen *g, int from_client, const uint8_t *data, size_t len,
		      const size_t *cuts, int ncuts, size_t every)
{
	struct side *from = from_client ? &g->c : &g->s, *to = from_client ? &g->s : &g->c;
	size_t pos = 0;
	int k = 0;

	while (pos < len) {
		size_t end = pos + every;

		while (k < ncuts && cuts[k] <= pos)
			k++;
		if (k < ncuts && cuts[k] < end)
			end = cuts[k];
		if (end > len)
			end = len;
		if (segment(g, from, to, PSH | ACK, data + pos, end - pos))
			return -1;
		pos = end;
	}
	return 0;
}

static int bad_line(unsigned long line, const char *why)
{
	fprintf(stderr, "pcapgen: script line %lu: %s\n", line, why);
	return 2;
}

/* One script line; returns 0, 1 (I/O) or 2 (bad line). */
static int run_line(struct gen *g, char *text, unsigned long line)
{
	char *argv[5] = {0};
	int argc = 0;

	for (char *tok = strtok(text, " \t\r\n"); tok && argc < 5; tok = strtok(NULL, " \t\r\n"))
		argv[argc++] = tok;
	if (argc == 0 || argv[0][0] == '#')
		return 0;
	if (!strcmp(argv[0], "conn") && argc == 3)
		return connect_sides(g, (unsigned)atoi(argv[1]), (unsigned)atoi(argv[2])) ? 1 : 0;
	if (!g->have_conn)
		return bad_line(line, "no connection yet (conn CPORT SPORT)");
	if (argc < 2 || (strcmp(argv[1], "c") && strcmp(argv[1], "s")))
		return bad_line(line, "the side must be c or s");
	if ((!strcmp(argv[0], "fin") || !strcmp(argv[0], "rst")) && argc == 2) {
		int c = argv[1][0] == 'c', flags = argv[0][0] == 'f' ? FIN | ACK : RST | ACK;
		return segment(g, c ? &g->c : &g->s, c ? &g->s : &g->c, flags, NULL, 0) ? 1 : 0;
	}
	if (!strcmp(argv[0], "send") && (argc == 3 || argc == 4)) {
		size_t cuts[MAX_CUTS], len = 0, every;
		int ncuts, rc;
		uint8_t *data;

		if (parse_cuts(argc == 4 ? argv[3] : NULL, cuts, &ncuts, &every))
			return bad_line(line, "CUTS must be every:N or rising offsets a,b,c");
		if (!(data = read_file(argv[2], &len))) {
			fprintf(stderr, "pcapgen: %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		rc = send_bytes(g, argv[1][0] == 'c', data, len, cuts, ncuts, every) ? 1 : 0;
		free(data);
		return rc;
	}
	return bad_line(line, "unknown command (conn, send, fin, rst)");
}

static int make_pcap(const char *path)
{
	static const uint32_t hdr[6] = {0xa1b2c3d4u, 2u | 4u << 16, 0, 0, 262144, 1};
	struct gen g = {0};
	char text[4096];
	unsigned long line = 0;
	int rc = 0;

	if (!(g.out = fopen(path, "wb")) || fwrite(hdr, sizeof(hdr), 1, g.out) != 1) {
		fprintf(stderr, "pcapgen: %s: %s\n", path, strerror(errno));
		if (g.out)
			fclose(g.out);
		return 1;
	}
	while (rc == 0 && fgets(text, sizeof(text), stdin))
		rc = run_line(&g, text, ++line);
	if (fclose(g.out) != 0 && rc == 0) {
		fprintf(stderr, "pcapgen: %s: %s\n", path, strerror(errno));
		rc = 1;
	}
	return rc;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int unhex(FILE *in, const char *name)
{
	int c, hi = -1, comment = 0;

	while ((c = getc(in)) != EOF) {
		if (comment || c == '#') {
			comment = c != '\n';
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (hexval(c) < 0) {
			fprintf(stderr, "pcapgen: %s: '%c' is not a hex digit\n", name, c);
			return 2;
		}
		if (hi < 0) {
			hi = hexval(c);
		} else {
			putchar(hi << 4 | hexval(c));
			hi = -1;
		}
	}
	if (hi >= 0) {
		fprintf(stderr, "pcapgen: %s: odd number of hex digits\n", name);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc == 3 && !strcmp(argv[1], "pcap"))
		return make_pcap(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "unhex")) {
		if (argc == 2)
			rc = unhex(stdin, "stdin");
		for (int i = 2; i < argc && rc == 0; i++) {
			FILE *f = fopen(argv[i], "r");
			if (!f) {
				fprintf(stderr, "pcapgen: %s: %s\n", argv[i], strerror(errno));
				return 1;
			}
			rc = unhex(f, argv[i]);
			fclose(f);
		}
		return fflush(stdout) == 0 && rc == 0 ? rc : (rc ? rc : 1);
	}
	fprintf(stderr, "usage: pcapgen unhex [FILE...] | pcapgen pcap OUT < SCRIPT\n");
	return 2;
}
