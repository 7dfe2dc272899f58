/*
 * The only file that calls ibv_* functions.
 *
 * The real ops pass straight through to libibverbs and turn its two error
 * styles into one (0 or a positive errno).  The quirk profiles wrap the real
 * ops to imitate drivers that cannot run in the lab; each fakes exactly one
 * rule, documented above its wrapper, and only ever turns a success into a
 * failure (or reports smaller limits): it never invents a success.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qphs/error.h"
#include "qphs/config.h"
#include "verbs.h"

/* ThreadSanitizer cannot see an ordering the kernel makes: an async event
 * of a QP comes after the ibv_create_qp that made the QP.  The event
 * thread reads that QP (its number; libibverbs's mutex and condition in
 * ibv_ack_async_event) through the pointer the event carries, while the
 * QP was created, and its memory written, by a worker or the pool filler.
 * A release after each create and an acquire on each QP event tell TSan
 * what the kernel guarantees; other builds compile them away. */
#if defined(__SANITIZE_THREAD__)
#define QPHS__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define QPHS__TSAN 1
#endif
#endif
#ifdef QPHS__TSAN
#include <sanitizer/tsan_interface.h>
#define tsan_release(p) __tsan_release(p)
#define tsan_acquire(p) __tsan_acquire(p)
#else
#define tsan_release(p) ((void)(p))
#define tsan_acquire(p) ((void)(p))
#endif

/* ---- the real driver -------------------------------------------------- */

static int real_query_device(struct qphs__verbs *v, struct ibv_context *c,
			     struct ibv_device_attr *a)
{
	(void)v;
	return ibv_query_device(c, a);
}

static int real_query_port(struct qphs__verbs *v, struct ibv_context *c, uint8_t port,
			   struct ibv_port_attr *a)
{
	(void)v;
	return ibv_query_port(c, port, a);
}

static int real_create_qp(struct qphs__verbs *v, struct ibv_pd *pd,
			  struct ibv_qp_init_attr *init, struct qphs__qp *out)
{
	(void)v;
	errno = 0;
	out->qp = ibv_create_qp(pd, init);
	out->flags = 0;
	out->rd_atom_held = 0;
	out->reached_rts = 0;
	if (!out->qp)
		return errno ? errno : ENOMEM;
	tsan_release(out->qp);
	return 0;
}

static int real_destroy_qp(struct qphs__verbs *v, struct qphs__qp *qp)
{
	(void)v;
	return ibv_destroy_qp(qp->qp);
}

static int real_modify_qp(struct qphs__verbs *v, struct qphs__qp *qp,
			  struct ibv_qp_attr *attr, int mask)
{
	(void)v;
	return ibv_modify_qp(qp->qp, attr, mask);
}

static int real_query_qp(struct qphs__verbs *v, struct qphs__qp *qp,
			 struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init)
{
	(void)v;
	return ibv_query_qp(qp->qp, attr, mask, init);
}

static const struct qphs__verbs_ops real_ops = {
	.name = "",
	.query_device = real_query_device,
	.query_port = real_query_port,
	.create_qp = real_create_qp,
	.destroy_qp = real_destroy_qp,
	.modify_qp = real_modify_qp,
	.query_qp = real_query_qp,
};

static enum ibv_qp_state current_state(struct qphs__verbs *v, struct qphs__qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (v->real->query_qp(v, qp, &a, IBV_QP_STATE, &ia))
		return IBV_QPS_UNKNOWN;
	return a.qp_state;
}

static int is_to(const struct ibv_qp_attr *attr, int mask, enum ibv_qp_state s)
{
	return (mask & IBV_QP_STATE) && attr->qp_state == s;
}

/* ---- e810 --------------------------------------------------------------
 * Intel E810 (irdma): a QP moved RESET -> RESET then refuses the next
 * RESET -> INIT with EINVAL.  Source: Mooncake issue 1143 and PR 722 (which
 * made Mooncake skip the RESET step when the QP is already in RESET).
 * Fakes: remembers a RESET -> RESET per QP and fails the next INIT once. */
static int e810_modify_qp(struct qphs__verbs *v, struct qphs__qp *qp,
			  struct ibv_qp_attr *attr, int mask)
{
	if (is_to(attr, mask, IBV_QPS_RESET) && current_state(v, qp) == IBV_QPS_RESET)
		qp->flags |= QPHS__QPF_RESET_RESET;
	else if (is_to(attr, mask, IBV_QPS_INIT) && (qp->flags & QPHS__QPF_RESET_RESET)) {
		qp->flags &= ~QPHS__QPF_RESET_RESET;
		return EINVAL;
	}
	return v->real->modify_qp(v, qp, attr, mask);
}

/* ---- erdma -------------------------------------------------------------
 * Alibaba eRDMA: "QP that reached RTS cannot be reliably reset" (Mooncake's
 * CONFIG_ERDMA reconstruct path, before f20b70610).  Fakes: a QP that ever
 * reached RTS fails RESET -> INIT with EINVAL, so the `reuse` reset policy
 * fails and `reconstruct` (fresh QPs) works. */
static int erdma_modify_qp(struct qphs__verbs *v, struct qphs__qp *qp,
			   struct ibv_qp_attr *attr, int mask)
{
	int rc;

	if (is_to(attr, mask, IBV_QPS_INIT) && (qp->flags & QPHS__QPF_REACHED_RTS))
		return EINVAL;
	rc = v->real->modify_qp(v, qp, attr, mask);
	if (!rc && is_to(attr, mask, IBV_QPS_RTS))
		qp->flags |= QPHS__QPF_REACHED_RTS;
	return rc;
}

/* ---- strict-path-mtu ---------------------------------------------------
 * Drivers that validate path_mtu against the port's active MTU (mlx5 and
 * others; rxe checks only the port's max_mtu).  Fakes: INIT -> RTR with a
 * path_mtu above the port's current active_mtu fails with EINVAL.  The
 * active MTU is queried at the call, so a netdev MTU lowered after the
 * context was opened triggers it. */
static int strict_mtu_modify_qp(struct qphs__verbs *v, struct qphs__qp *qp,
				struct ibv_qp_attr *attr, int mask)
{
	struct ibv_port_attr pa;

	if (is_to(attr, mask, IBV_QPS_RTR) && (mask & IBV_QP_PATH_MTU) &&
	    !v->real->query_port(v, v->ctx, v->port, &pa) && attr->path_mtu > pa.active_mtu)
		return EINVAL;
	return v->real->modify_qp(v, qp, attr, mask);
}

/* ---- ionic-atomic ------------------------------------------------------
 * AMD Pensando ionic: reports max_qp_rd_atom = max_qp_init_rd_atom = 8 and
 * has a device-wide budget of 16 responder resources; a QP whose RTR asks
 * max_dest_rd_atomic above what is left fails with EINVAL (Mooncake PR 3977,
 * which clamps to the reported caps and shares the budget across a nominal
 * 16 QPs: see setup.c).  Fakes: the two caps and
 * max_res_rd_atom = 16 in query_device, and the budget (taken at RTR, given
 * back when the QP goes to RESET or is destroyed). */
#define IONIC_RD_ATOM 8
#define IONIC_RES_BUDGET 16

static int ionic_query_device(struct qphs__verbs *v, struct ibv_context *c,
			      struct ibv_device_attr *a)
{
	int rc = v->real->query_device(v, c, a);

	if (!rc) {
		a->max_qp_rd_atom = IONIC_RD_ATOM;
		a->max_qp_init_rd_atom = IONIC_RD_ATOM;
		a->max_res_rd_atom = IONIC_RES_BUDGET;
	}
	return rc;
}

static void ionic_release(struct qphs__verbs *v, struct qphs__qp *qp)
{
	pthread_mutex_lock(&v->lock);
	v->rd_atom_budget += qp->rd_atom_held;
	qp->rd_atom_held = 0;
	pthread_mutex_unlock(&v->lock);
}

static int ionic_modify_qp(struct qphs__verbs *v, struct qphs__qp *qp,
			   struct ibv_qp_attr *attr, int mask)
{
	int want, rc;

	if (is_to(attr, mask, IBV_QPS_RESET))
		ionic_release(v, qp);
	if (!is_to(attr, mask, IBV_QPS_RTR) || !(mask & IBV_QP_MAX_DEST_RD_ATOMIC))
		return v->real->modify_qp(v, qp, attr, mask);
	want = attr->max_dest_rd_atomic;
	pthread_mutex_lock(&v->lock);
	if (want > v->rd_atom_budget) {
		pthread_mutex_unlock(&v->lock);
		return EINVAL;
	}
	v->rd_atom_budget -= want;
	pthread_mutex_unlock(&v->lock);
	rc = v->real->modify_qp(v, qp, attr, mask);
	if (rc) {
		pthread_mutex_lock(&v->lock);
		v->rd_atom_budget += want;
		pthread_mutex_unlock(&v->lock);
	} else {
		qp->rd_atom_held += want;
	}
	return rc;
}

static int ionic_destroy_qp(struct qphs__verbs *v, struct qphs__qp *qp)
{
	int rc = v->real->destroy_qp(v, qp);

	if (!rc)
		ionic_release(v, qp);
	return rc;
}

/* A profile that replaces only modify_qp. */
#define WRAP_MODIFY(n, fn)                                                     \
	{ .name = n, .query_device = real_query_device, .query_port = real_query_port, \
	  .create_qp = real_create_qp, .destroy_qp = real_destroy_qp,          \
	  .modify_qp = fn, .query_qp = real_query_qp }

static const struct qphs__verbs_ops e810_ops = WRAP_MODIFY("e810", e810_modify_qp);
static const struct qphs__verbs_ops erdma_ops = WRAP_MODIFY("erdma", erdma_modify_qp);
static const struct qphs__verbs_ops strict_mtu_ops =
	WRAP_MODIFY("strict-path-mtu", strict_mtu_modify_qp);
static const struct qphs__verbs_ops ionic_ops = {
	.name = "ionic-atomic",
	.query_device = ionic_query_device,
	.query_port = real_query_port,
	.create_qp = real_create_qp,
	.destroy_qp = ionic_destroy_qp,
	.modify_qp = ionic_modify_qp,
	.query_qp = real_query_qp,
};

static const struct qphs__verbs_ops *const profiles[] = {
	&real_ops, &e810_ops, &erdma_ops, &strict_mtu_ops, &ionic_ops,
};

static const char *const profile_names[] = {
	"e810", "erdma", "strict-path-mtu", "ionic-atomic", NULL,
};

const char *const *qphs_quirk_profiles(void)
{
	return profile_names;
}

int qphs__verbs_init(struct qphs__verbs *v, const char *profile,
		     struct ibv_context *ctx, uint8_t port)
{
	memset(v, 0, sizeof(*v));
	v->real = &real_ops;
	v->ctx = ctx;
	v->port = port;
	v->rd_atom_budget = IONIC_RES_BUDGET;
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		if (!strcmp(profiles[i]->name, profile ? profile : "")) {
			v->ops = profiles[i];
			pthread_mutex_init(&v->lock, NULL);
			return 0;
		}
	}
	return QPHS_ERR_INVALID_ARGUMENT;
}

void qphs__verbs_fini(struct qphs__verbs *v)
{
	if (v->ops)
		pthread_mutex_destroy(&v->lock);
	v->ops = NULL;
}

/* ---- passthroughs ------------------------------------------------------ */

int qphs__verbs_open(const char *name, struct ibv_context **out, char *err, size_t errlen)
{
	struct ibv_device **list;
	int n = 0, rc = QPHS_ERR_DEVICE_NOT_FOUND;

	*out = NULL;
	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(err, errlen, "ibv_get_device_list failed: %s", strerror(errno));
		return QPHS_ERR_CONTEXT;
	}
	for (int i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		*out = ibv_open_device(list[i]);
		rc = *out ? 0 : QPHS_ERR_CONTEXT;
		if (!*out)
			snprintf(err, errlen, "ibv_open_device(%s) failed: %s", name,
				 strerror(errno));
		break;
	}
	if (rc == QPHS_ERR_DEVICE_NOT_FOUND)
		snprintf(err, errlen, "RDMA device %s not found (%d device%s present)", name, n,
			 n == 1 ? "" : "s");
	ibv_free_device_list(list);
	return rc;
}

int qphs__verbs_device_names(char (*names)[64], int max)
{
	struct ibv_device **list;
	int n = 0, i;

	list = ibv_get_device_list(&n);
	if (!list)
		return errno ? -errno : -ENODEV;
	for (i = 0; i < n && i < max; i++)
		snprintf(names[i], 64, "%s", ibv_get_device_name(list[i]));
	ibv_free_device_list(list);
	return i;
}

int qphs__verbs_device_vendor(const char *name, uint32_t *vendor_id)
{
	struct ibv_device_attr da;
	char err[160];
	struct ibv_context *c;
	int rc;

	if (qphs__verbs_open(name, &c, err, sizeof(err)))
		return ENODEV;
	rc = ibv_query_device(c, &da);
	if (!rc)
		*vendor_id = da.vendor_id;
	ibv_close_device(c);
	return rc;
}

int qphs__verbs_close(struct ibv_context *c) { return ibv_close_device(c); }

int qphs__verbs_query_gid(struct ibv_context *c, uint8_t port, int index,
			  union ibv_gid *gid, int *gid_type)
{
	struct ibv_gid_entry e;
	int rc = ibv_query_gid_ex(c, port, (uint32_t)index, &e, 0);

	if (rc)
		return rc;
	memcpy(gid, &e.gid, sizeof(*gid));
	*gid_type = (int)e.gid_type;
	return 0;
}

int qphs__verbs_gid_table_len(struct ibv_context *c, uint8_t port, int *len)
{
	struct ibv_port_attr pa;
	int rc = ibv_query_port(c, port, &pa);

	if (!rc)
		*len = pa.gid_tbl_len;
	return rc;
}

struct ibv_pd *qphs__verbs_alloc_pd(struct ibv_context *c) { return ibv_alloc_pd(c); }
int qphs__verbs_dealloc_pd(struct ibv_pd *pd) { return ibv_dealloc_pd(pd); }
struct ibv_cq *qphs__verbs_create_cq(struct ibv_context *c, int cqe)
{
	return ibv_create_cq(c, cqe, NULL, NULL, 0);
}
int qphs__verbs_destroy_cq(struct ibv_cq *cq) { return ibv_destroy_cq(cq); }
struct ibv_mr *qphs__verbs_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	return ibv_reg_mr(pd, addr, len, access);
}
int qphs__verbs_dereg_mr(struct ibv_mr *mr) { return ibv_dereg_mr(mr); }
int qphs__verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;

	return ibv_post_send(qp, wr, &bad);
}
int qphs__verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, n, wc);
}
int qphs__verbs_get_async_event(struct ibv_context *c, struct ibv_async_event *ev)
{
	if (ibv_get_async_event(c, ev))
		return errno ? errno : EIO;
	switch (ev->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		if (ev->element.qp)
			tsan_acquire(ev->element.qp);
		break;
	default:
		break;
	}
	return 0;
}
void qphs__verbs_ack_async_event(struct ibv_async_event *ev) { ibv_ack_async_event(ev); }

const char *qphs__verbs_wc_status_name(enum ibv_wc_status s)
{
	static const char *const names[] = {
		"IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR",
		"IBV_WC_LOC_EEC_OP_ERR", "IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR",
		"IBV_WC_MW_BIND_ERR", "IBV_WC_BAD_RESP_ERR", "IBV_WC_LOC_ACCESS_ERR",
		"IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_REM_OP_ERR",
		"IBV_WC_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR",
		"IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR", "IBV_WC_INV_EECN_ERR",
		"IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR", "IBV_WC_RESP_TIMEOUT_ERR",
		"IBV_WC_GENERAL_ERR", "IBV_WC_TM_ERR", "IBV_WC_TM_RNDV_INCOMPLETE",
	};

	if ((unsigned)s < sizeof(names) / sizeof(names[0]))
		return names[s];
	return "IBV_WC_UNKNOWN";
}

const char *qphs__verbs_port_state_name(int state)
{
	return ibv_port_state_str((enum ibv_port_state)state);
}

const char *qphs__verbs_event_name(enum ibv_event_type t)
{
	return ibv_event_type_str(t);
}

const char *qphs__verbs_qp_state_name(int state)
{
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	if (state >= 0 && state < (int)(sizeof(names) / sizeof(names[0])))
		return names[state];
	return "UNKNOWN";
}

int qphs__verbs_qp_state(struct qphs__verbs *v, struct qphs__qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!qp->qp || v->ops->query_qp(v, qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return (int)a.qp_state;
}

int qphs__verbs_mtu_bytes(enum ibv_mtu m)
{
	return (m >= IBV_MTU_256 && m <= IBV_MTU_4096) ? 128 << m : 0;
}

enum ibv_mtu qphs__verbs_mtu_enum(int bytes)
{
	for (int m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if ((128 << m) == bytes)
			return (enum ibv_mtu)m;
	return (enum ibv_mtu)0;
}
