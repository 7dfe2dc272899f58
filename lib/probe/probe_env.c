/*
 * The probe's two sides (device, PD, CQ, MR) and the QP steps the probes
 * are built from.  Attributes are those of a real setup (qp.c), so a probe
 * differs from Mooncake's setup only in the one thing it probes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdma/gidrank.h"
#include "probe_int.h"
#include "qphs/error.h"

static void set_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static void read_netdev(const char *dev, int port, int index, char *out, size_t len)
{
	char path[256];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", dev,
		 port, index);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* The automatic choice (gidrank.c) over the port's whole GID table. */
static int auto_gid(struct qphs__side *s, char *err, size_t errlen)
{
	struct qphs__gid_entry *e = calloc((size_t)s->pa.gid_tbl_len, sizeof(*e));
	char reason[256];
	int idx;

	if (!e)
		return QPHS_ERR_MEMORY;
	for (int i = 0; i < s->pa.gid_tbl_len; i++) {
		union ibv_gid g;
		int type = 0;

		e[i].index = i;
		e[i].ok = !qphs__verbs_query_gid(s->ib, s->port, i, &g, &type);
		if (!e[i].ok)
			continue;
		memcpy(e[i].gid, g.raw, 16);
		e[i].kind = type == IBV_GID_TYPE_ROCE_V2 ? QPHS__GID_ROCE_V2
			    : type == IBV_GID_TYPE_ROCE_V1 ? QPHS__GID_ROCE_V1 : QPHS__GID_IB;
		read_netdev(s->dev, s->port, i, e[i].netdev, sizeof(e[i].netdev));
	}
	idx = qphs__gid_choose(e, (size_t)s->pa.gid_tbl_len, reason, sizeof(reason));
	free(e);
	if (idx < 0) {
		set_err(err, errlen, "%s port %d: no suitable GID [%s]", s->dev, s->port, reason);
		return QPHS_ERR_NO_SUITABLE_GID;
	}
	s->gid_index = idx;
	return 0;
}

/* The first rxe device: rxe reports vendor id 0xffffff (RXE_VENDOR_ID). */
static int first_rxe(char *out, size_t len, char *err, size_t errlen)
{
	char names[32][64];
	int n = qphs__verbs_device_names(names, 32);

	for (int i = 0; i < n; i++) {
		uint32_t vendor = 0;

		if (!qphs__verbs_device_vendor(names[i], &vendor) && vendor == 0xffffff) {
			snprintf(out, len, "%.63s", names[i]);
			return 0;
		}
	}
	set_err(err, errlen, "no rxe device found (%d RDMA device%s present); name one with --device",
		n < 0 ? 0 : n, n == 1 ? "" : "s");
	return QPHS_ERR_DEVICE_NOT_FOUND;
}

static int side_open(struct qphs__side *s, const char *dev, const char *quirk, int port,
		     int gid_index, char *err, size_t errlen)
{
	int rc, type = 0;

	snprintf(s->dev, sizeof(s->dev), "%s", dev);
	s->port = (uint8_t)port;
	if ((rc = qphs__verbs_open(dev, &s->ib, err, errlen)))
		return rc;
	if (qphs__verbs_init(&s->v, quirk, s->ib, s->port)) {
		set_err(err, errlen, "unknown quirk profile '%s'", quirk);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	s->verbs_ready = 1;
	if ((rc = s->v.ops->query_device(&s->v, s->ib, &s->da)) ||
	    (rc = s->v.ops->query_port(&s->v, s->ib, s->port, &s->pa))) {
		set_err(err, errlen, "%s port %d: query failed: %s", dev, port, strerror(rc));
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if (s->pa.state != IBV_PORT_ACTIVE) {
		set_err(err, errlen, "%s port %d is %s, not ACTIVE", dev, port,
			qphs__verbs_port_state_name(s->pa.state));
		return QPHS_ERR_PORT_NOT_ACTIVE;
	}
	s->gid_index = gid_index;
	if (gid_index < 0 && (rc = auto_gid(s, err, errlen)))
		return rc;
	/* An explicit index is used as given: probing a bad one is the point. */
	if (qphs__verbs_query_gid(s->ib, s->port, s->gid_index, &s->gid, &type))
		memset(&s->gid, 0, sizeof(s->gid));
	s->pd = qphs__verbs_alloc_pd(s->ib);
	s->cq = s->pd ? qphs__verbs_create_cq(s->ib, 64) : NULL;
	s->buf = s->cq ? calloc(1, QPHS__PROBE_BUF) : NULL;
	s->mr = s->buf ? qphs__verbs_reg_mr(s->pd, s->buf, QPHS__PROBE_BUF,
					    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ)
		       : NULL;
	if (!s->mr) {
		set_err(err, errlen, "%s: PD, CQ or MR failed: %s", dev, strerror(errno));
		return QPHS_ERR_CONTEXT;
	}
	return 0;
}

/* Undoes side_open in reverse, whatever it reached. */
static void side_close(struct qphs__side *s)
{
	if (s->mr)
		qphs__verbs_dereg_mr(s->mr);
	free(s->buf);
	if (s->cq)
		qphs__verbs_destroy_cq(s->cq);
	if (s->pd)
		qphs__verbs_dealloc_pd(s->pd);
	if (s->verbs_ready)
		qphs__verbs_fini(&s->v);
	if (s->ib)
		qphs__verbs_close(s->ib);
	memset(s, 0, sizeof(*s));
}

int qphs__probe_env_open(struct qphs__probe_env *e, const struct qphs_probe_opts *o, char *err,
			 size_t errlen)
{
	char dev[QPHS_PROBE_DEV_LEN];
	const char *peer;
	int rc;

	memset(e, 0, sizeof(*e));
	e->o = o;
	e->next_wr_id = 1;
	if (o->port < 1 || o->port > 255) {
		set_err(err, errlen, "port %d out of range 1-255", o->port);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	if (o->device && o->device[0])
		snprintf(dev, sizeof(dev), "%s", o->device);
	else if ((rc = first_rxe(dev, sizeof(dev), err, errlen)))
		return rc;
	peer = o->peer_device && o->peer_device[0] ? o->peer_device : dev;
	rc = side_open(&e->loc, dev, o->quirk, o->port, o->gid_index, err, errlen);
	if (!rc)
		rc = side_open(&e->peer, peer, NULL, o->port, o->peer_gid_index, err, errlen);
	if (rc)
		qphs__probe_env_close(e);
	return rc;
}

void qphs__probe_env_close(struct qphs__probe_env *e)
{
	side_close(&e->peer);
	side_close(&e->loc);
}
