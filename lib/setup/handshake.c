/*
 * The bodies this side puts on the wire: our Connection desc (with the lab
 * hooks applied), our segment descriptor for Metadata requests, and the
 * one-request helpers both setup halves use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "qphs/body.h"
#include "handshake.h"
#include "hs/client_int.h"
#include "base/log.h"
#include "qphs/client.h"
#include "qphs/error.h"
#include "setup_int.h"

/* Path MTU we advertise: min(the active MTU of this setup, MC_MTU). */
int qphs__local_path_mtu(struct qphs_endpoint *ep)
{
	int active = qphs__ep_mtu(ep);

	return active && active < ep->ctx->cfg->mtu ? active : ep->ctx->cfg->mtu;
}

/* How many QP numbers we advertise: ep's QPs, or a hook's count. */
static size_t advertised_qp_count(const struct qphs_endpoint *ep, const struct qphs_rdma_hooks *h)
{
	return h->advertise_qp_count > 0 ? (size_t)h->advertise_qp_count : (size_t)ep->nqp;
}

/* The n QP numbers we advertise, into qpn: ep's QPs' (repeated when a
 * hook asks for more), or a hook's one number for all. */
static void advertised_qpns(const struct qphs_endpoint *ep, const struct qphs_rdma_hooks *h,
			    uint32_t *qpn, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ibv_qp *qp = ep->qp[i % (size_t)ep->nqp].qp;

		qpn[i] = h->advertise_qpn_set || h->advertise_qpn ? h->advertise_qpn
			 : qp ? qp->qp_num : 0;
	}
}

/* ctx->hook_lock held: the hooks into *h, and the nic path and GID we
 * advertise: a hook's server (formatted into path) or ctx->nic_path,
 * which is set once when the context opens; a hook's GID or ours.  The
 * GID may be a hook's buffer: copy it before the lock goes. */
static void advertised_strings(struct qphs_context *ctx, struct qphs_rdma_hooks *h,
			       char *path, size_t path_len, const char **nic, const char **gid)
{
	*h = ctx->hooks;
	if (h->advertise_server)
		snprintf(path, path_len, "%s@%s", ctx->hook_server, ctx->device);
	*nic = h->advertise_server ? path : ctx->nic_path;
	*gid = h->advertise_gid ? ctx->hook_gid : ctx->gid_str;
}

int qphs__hs_local_block(struct qphs_endpoint *ep, struct qphs_hs_desc *d, void **block)
{
	struct qphs_context *ctx = ep->ctx;
	struct qphs_rdma_hooks h;
	char path[QPHS__PATH_LEN + 256];
	const char *s[3];
	size_t len[3], n, size;
	char *b, *at;

	memset(d, 0, sizeof(*d));
	*block = NULL;
	pthread_mutex_lock(&ctx->hook_lock);
	advertised_strings(ctx, &h, path, sizeof(path), &s[0], &s[1]);
	s[2] = ep->peer_path;
	n = advertised_qp_count(ep, &h);
	size = n * sizeof(uint32_t) + 1; /* the last byte: reply_msg and payload, "" */
	for (int i = 0; i < 3; i++)
		size += (len[i] = strlen(s[i])) + 1;
	b = malloc(size);
	if (b) {
		/* qp_num first, at malloc's alignment; the hook strings are
		 * copied under hook_lock, which guards them. */
		advertised_qpns(ep, &h, (uint32_t *)(void *)b, n);
		at = b + n * sizeof(uint32_t);
		for (int i = 0; i < 3; i++) {
			memcpy(at, s[i], len[i] + 1);
			at += len[i] + 1;
		}
		*at = '\0';
	}
	pthread_mutex_unlock(&ctx->hook_lock);
	if (!b)
		return QPHS_ERR_MEMORY;
	d->qp_num = n ? (uint32_t *)(void *)b : NULL;
	d->qp_count = n;
	at = b + n * sizeof(uint32_t);
	d->local_nic_path = at;
	d->local_gid = at += len[0] + 1;
	d->peer_nic_path = at += len[1] + 1;
	d->reply_msg = d->payload = at + len[2] + 1;
	d->local_lid = ctx->lid;
	d->path_mtu = ctx->cfg->mtu_negotiation ? qphs__local_path_mtu(ep) : 0;
	*block = b;
	return 0;
}

static int fill_qpns(struct qphs_endpoint *ep, const struct qphs_rdma_hooks *h,
		     struct qphs_hs_desc *d)
{
	size_t n = advertised_qp_count(ep, h);

	free(d->qp_num);
	d->qp_num = calloc(n, sizeof(*d->qp_num));
	if (!d->qp_num)
		return QPHS_ERR_MEMORY;
	d->qp_count = n;
	advertised_qpns(ep, h, d->qp_num, n);
	return 0;
}

/* d: initialised by the caller.  Reads ep's QPs: call with ep->lock held. */
int qphs__hs_local_desc(struct qphs_endpoint *ep, struct qphs_hs_desc *d)
{
	struct qphs_context *ctx = ep->ctx;
	struct qphs_rdma_hooks h;
	char path[QPHS__PATH_LEN + 256];
	const char *nic, *gid;
	int rc;

	pthread_mutex_lock(&ctx->hook_lock);
	advertised_strings(ctx, &h, path, sizeof(path), &nic, &gid);
	rc = qphs_desc_set_str(&d->local_gid, gid);
	pthread_mutex_unlock(&ctx->hook_lock);
	if (rc || (rc = qphs_desc_set_str(&d->local_nic_path, nic)) ||
	    (rc = qphs_desc_set_str(&d->peer_nic_path, ep->peer_path)) ||
	    (rc = fill_qpns(ep, &h, d)))
		return rc ? rc : QPHS_ERR_MEMORY;
	d->local_lid = ctx->lid;
	d->path_mtu = ctx->cfg->mtu_negotiation ? qphs__local_path_mtu(ep) : 0;
	return 0;
}

/* Sends a Connection body and parses the reply into *reply (initialised
 * here; the caller clears it when this returns 0 or
 * QPHS_ERR_REJECT_HANDSHAKE).  errtxt gets the transport's words. */
int qphs__hs_send(const struct qphs_config *cfg, const char *server,
		  const struct qphs_hs_desc *d, struct qphs_hs_desc *reply, void **block,
		  char *errtxt, size_t errlen, double *connect_ms)
{
	struct qphs_client_result res;
	char *json = NULL;
	size_t len = 0;
	int rc;

	if ((rc = qphs_hs_desc_encode(d, &json, &len)))
		return rc;
	memset(&res, 0, sizeof(res));
	/* The reply comes back parsed: the client read it to check it. */
	rc = qphs__client_request_desc(cfg, server,
				       cfg->old_protocol ? QPHS_HS_OLD_PROTOCOL
							 : QPHS_HS_CONNECTION,
				       json, len, &res, reply, block);
	free(json);
	/* Most requests succeed: no format call (and its deep stack frame,
	 * a page fault in a fresh thread) for an empty text. */
	if (res.errstr[0])
		snprintf(errtxt, errlen, "%s", res.errstr);
	else if (errlen)
		errtxt[0] = '\0';
	if (connect_ms)
		*connect_ms = res.connect_ms;
	return rc;
}

/* The buffer name of our check region in our segment descriptor: a
 * location, as Mooncake names every buffer it registers (the C API's
 * registerLocalMemory(location), "cpu:<NUMA node>" for host memory:
 * memory_location.cpp). */
#define REGION_LOCATION "cpu:0"

/* priority_matrix: one location, every device preferred in devices[]
 * order, so Mooncake's Topology::resolve numbers them as devices[] does. */
static struct json_object *topology(struct qphs_rdma *r)
{
	struct json_object *pm = json_object_new_object(), *entry = json_object_new_array(),
			   *pref = json_object_new_array(), *rest = json_object_new_array();
	int bad = !pm || !entry || !pref || !rest;

	for (int i = 0; !bad && i < r->nctx; i++)
		bad = json_object_array_add(pref, json_object_new_string(r->ctx[i]->device));
	if (!bad && !json_object_array_add(entry, pref)) {
		pref = NULL;
		if (!json_object_array_add(entry, rest)) {
			rest = NULL;
			bad = json_object_object_add(pm, REGION_LOCATION, entry);
			entry = bad ? entry : NULL;
		}
	} else {
		bad = 1;
	}
	json_object_put(pref);
	json_object_put(rest);
	json_object_put(entry);
	if (bad) {
		json_object_put(pm);
		return NULL;
	}
	return pm;
}

/* The time of writing, as Mooncake stamps every descriptor it encodes:
 * local time, "YYYY-MM-DD HH:MM:SS.uuuuuu" (getCurrentDateTime, common.h). */
static int now_text(char **out)
{
	struct timespec ts;
	struct tm tm;
	char buf[64], day[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, sizeof(buf), "%s.%06ld", day, ts.tv_nsec / 1000);
	return qphs_desc_set_str(out, buf);
}

/* Our segment descriptor, as Mooncake's RdmaTransport writes its own
 * (allocateLocalSegmentID, registerLocalMemoryInternal: rdma_transport.cpp):
 * one device per context, the check region as one buffer with an rkey and
 * lkey per device, and a priority_matrix, without which a Mooncake
 * initiator selects no device and every transfer to us fails.  With
 * crc_len > 0 (a qphs-checksum request) it carries the CRC-32 of the
 * region's first crc_len bytes. */
int qphs__seg_local(struct qphs_rdma *r, size_t crc_len, struct qphs_segment_desc *s)
{
	int rc = qphs_segment_desc_init(s);
	struct qphs_seg_buffer *b;

	if (rc)
		return rc;
	pthread_mutex_lock(&r->lock);
	size_t n = (size_t)r->nctx;
	s->devices = calloc(n ? n : 1, sizeof(*s->devices));
	s->buffers = b = calloc(1, sizeof(*s->buffers));
	rc = (!s->devices || !b) ? QPHS_ERR_MEMORY : 0;
	if (!rc && n) {
		s->buffer_count = 1;
		b->addr = (uint64_t)(uintptr_t)r->region;
		b->length = QPHS_CHECK_REGION_BYTES;
		b->rkey = calloc(n, sizeof(uint32_t));
		b->lkey = calloc(n, sizeof(uint32_t));
		rc = (!b->rkey || !b->lkey || qphs_desc_set_str(&b->name, REGION_LOCATION) ||
		      !(s->priority_matrix = topology(r))) ? QPHS_ERR_MEMORY : 0;
		b->rkey_count = b->lkey_count = rc ? 0 : n;
	}
	for (size_t i = 0; !rc && i < n; i++) {
		struct qphs_context *c = r->ctx[i];

		s->device_count = i + 1;
		s->devices[i].lid = c->lid;
		b->rkey[i] = c->region_mr->rkey;
		b->lkey[i] = c->region_mr->lkey;
		if (qphs_desc_set_str(&s->devices[i].name, c->device) ||
		    qphs_desc_set_str(&s->devices[i].gid, c->gid_str))
			rc = QPHS_ERR_MEMORY;
	}
	if (!rc && r->cfg.checksum_extension) {
		s->qphs_checksum = true;
		if (crc_len > 0 && crc_len <= QPHS_CHECK_REGION_BYTES) {
			s->has_crc = true;
			s->crc_len = crc_len;
			s->crc32 = qphs__crc32(r->region, crc_len);
		}
	}
	pthread_mutex_unlock(&r->lock);
	if (!rc && ((rc = qphs_desc_set_str(&s->name, r->server)) ||
		    (rc = qphs_desc_set_str(&s->protocol, "rdma")) ||
		    (rc = now_text(&s->timestamp))))
		rc = QPHS_ERR_MEMORY;
	s->tcp_proto_version = 1;
	if (rc)
		qphs_segment_desc_clear(s);
	return rc;
}

/* Metadata request to server; the request body names what we want
 * ("qphs-checksum DEV LEN" asks for a checksum), the reply is parsed into
 * *out (caller clears). */
int qphs__seg_fetch(struct qphs_context *ctx, const char *server, const char *ask,
		    struct qphs_segment_desc *out, char *errtxt, size_t errlen)
{
	struct qphs_segment_desc req;
	struct qphs_client_result res;
	char *json = NULL;
	size_t len = 0;
	int rc;

	if ((rc = qphs_segment_desc_init(&req)))
		return rc;
	rc = qphs_desc_set_str(&req.name, ask ? ask : ctx->rdma->server);
	if (!rc)
		rc = qphs_desc_set_str(&req.protocol, "rdma");
	if (!rc)
		rc = qphs_segment_desc_encode(&req, &json, &len);
	qphs_segment_desc_clear(&req);
	if (rc)
		return rc;
	memset(&res, 0, sizeof(res));
	rc = qphs_client_request(ctx->cfg, server, QPHS_HS_METADATA, json, len, &res);
	free(json);
	snprintf(errtxt, errlen, "%s", res.errstr);
	if (!rc)
		rc = qphs_segment_desc_parse(res.reply, res.reply_len, out, errtxt, errlen);
	free(res.reply);
	return rc;
}

/* A peer that sent no local_gid (Mooncake before 2026-05): take gid and lid
 * of the device its nic path names from its segment descriptor. */
int qphs__peer_gid_by_metadata(struct qphs_context *ctx, const char *nic_path, uint8_t gid[16],
			       uint16_t *lid, char *errtxt, size_t errlen)
{
	struct qphs_segment_desc s;
	char *server = NULL, *dev = NULL;
	int rc = qphs_nic_path_split(nic_path, &server, &dev);

	if (rc) {
		snprintf(errtxt, errlen, "Parse peer nic path failed: %s", nic_path);
		return rc;
	}
	rc = qphs__seg_fetch(ctx, server, NULL, &s, errtxt, errlen);
	if (!rc) {
		rc = QPHS_ERR_DEVICE_NOT_FOUND;
		for (size_t i = 0; i < s.device_count; i++)
			if (!strcmp(s.devices[i].name, dev) && !qphs_gid_parse(s.devices[i].gid, gid)) {
				*lid = s.devices[i].lid;
				rc = 0;
			}
		if (rc)
			snprintf(errtxt, errlen, "Peer nic not found in that server: %s", nic_path);
		qphs_segment_desc_clear(&s);
	}
	free(server);
	free(dev);
	return rc;
}

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
		crc_table[i] = c;
	}
}

/* CRC-32 (IEEE), table-driven: the peer checksums up to 1 MiB under TCG. */
uint32_t qphs__crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	pthread_once(&crc_once, crc_init);
	for (size_t i = 0; i < n; i++)
		c = crc_table[(c ^ p[i]) & 0xffu] ^ (c >> 8);
	return ~c;
}
