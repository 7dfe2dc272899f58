/* One scenario's window of the topology's capture (run_capture.h): pcap
 * records copied by timestamp, bounded. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "run_capture.h"

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_HDR 24
#define REC_HDR 16
#define REC_MAX (256 * 1024) /* tcpdump's largest snaplen */

static uint32_t u32(const unsigned char *b, bool swap)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static int fail(char *err, size_t errlen, const char *what, const char *path)
{
	snprintf(err, errlen, "%s: %s%s%s", path, what, errno ? ": " : "", errno ? strerror(errno) : "");
	return -1;
}

int run_pcap_split(const char *src, long *offset, double t0, double t1, const char *dst, long max_bytes,
		   struct run_cap_result *r, char *err, size_t errlen)
{
	unsigned char hdr[PCAP_HDR], rec[REC_HDR];
	static unsigned char data[REC_MAX];
	FILE *in, *out;
	bool swap;
	double unit;
	uint32_t magic;
	int rc = 0;

	errno = 0;
	if (!(in = fopen(src, "rb")))
		return fail(err, errlen, "cannot open", src);
	if (fread(hdr, 1, PCAP_HDR, in) != PCAP_HDR) {
		fclose(in);
		errno = 0;
		return fail(err, errlen, "no pcap header (the capture wrote nothing)", src);
	}
	memcpy(&magic, hdr, 4);
	swap = magic == __builtin_bswap32(PCAP_MAGIC_US) || magic == __builtin_bswap32(PCAP_MAGIC_NS);
	magic = swap ? __builtin_bswap32(magic) : magic;
	if (magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS) {
		fclose(in);
		errno = 0;
		return fail(err, errlen, "not a pcap file", src);
	}
	unit = magic == PCAP_MAGIC_NS ? 1e-9 : 1e-6;
	if (!(out = fopen(dst, "wb"))) {
		fclose(in);
		return fail(err, errlen, "cannot create", dst);
	}
	fwrite(hdr, 1, PCAP_HDR, out);
	if (*offset < PCAP_HDR)
		*offset = PCAP_HDR;
	if (fseek(in, *offset, SEEK_SET)) {
		rc = fail(err, errlen, "cannot seek", src);
		goto out;
	}
	for (;;) {
		uint32_t incl;
		double ts;

		if (fread(rec, 1, REC_HDR, in) != REC_HDR)
			break; /* the end, or a record header still being written */
		incl = u32(rec + 8, swap);
		if (incl > REC_MAX) {
			errno = 0;
			rc = fail(err, errlen, "a record larger than any snaplen (not a pcap tcpdump wrote)", src);
			break;
		}
		if (fread(data, 1, incl, in) != incl)
			break; /* cut short: the next call reads it whole */
		ts = u32(rec, swap) + u32(rec + 4, swap) * unit;
		if (ts > t1)
			break;
		*offset += REC_HDR + (long)incl;
		if (ts < t0)
			continue;
		if (r->bytes + REC_HDR + (long)incl > max_bytes) {
			r->dropped++;
			r->truncated = true;
			continue;
		}
		fwrite(rec, 1, REC_HDR, out);
		fwrite(data, 1, incl, out);
		r->packets++;
		r->bytes += REC_HDR + (long)incl;
	}
out:
	fclose(in);
	if (fclose(out) && !rc)
		rc = fail(err, errlen, "cannot write", dst);
	return rc;
}
