/* The body check of a request, and the worker thread that runs it for
 * large bodies, so that no parse blocks the loop thread: a probe waits
 * behind nothing but I/O while peers send megabyte bodies with a hundred
 * thousand keys (docs/hs.md "Limits").  Bodies up to INLINE_PARSE_MAX
 * bytes are checked on the loop, where the parse costs less than the
 * hand-over.
 *
 * The worker takes requests from its queue (parser.mu), checks them and
 * posts them back through the door as REQ_PARSED; the loop then goes on
 * as if it had checked them itself.  A connection closed meanwhile only
 * unlinks itself from the request (req->conn = NULL), which the loop sees
 * when the request comes back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_int.h"
#include "base/log.h"
#include "base/thread.h"
#include "codec/descfast.h"
#include "qphs/body.h"
#include "qphs/error.h"
#include "qphs/json.h"

/* The body's shape for its type.  A Connection body is parsed into *desc. */
static int check_body(int type, const char *json, size_t len, struct qphs_hs_desc *desc,
		      char *err, size_t errlen)
{
	struct qphs_notify n;
	struct qphs_segment_desc s;
	int rc;

	switch (type) {
	case QPHS_HS_PROBE:
		return qphs_probe_parse(json, len, err, errlen);
	case QPHS_HS_NOTIFY:
		rc = qphs_notify_parse(json, len, &n, err, errlen);
		if (rc == 0)
			qphs_notify_clear(&n);
		return rc;
	case QPHS_HS_METADATA:
		rc = qphs_segment_desc_parse(json, len, &s, err, errlen);
		if (rc == 0)
			qphs_segment_desc_clear(&s);
		return rc;
	default: /* qphs__request_check tried the fast reader already */
		return qphs__hs_desc_parse_json(json, len, desc, err, errlen);
	}
}

void qphs__request_check(const struct qphs_config *cfg, struct qphs_request *req)
{
	int htype = req->type == QPHS_HS_OLD_PROTOCOL ? QPHS_HS_CONNECTION : req->type;
	struct qphs_json_shape shape;
	struct qphs_hs_desc desc;
	size_t members;
	void *block;

	req->check_err[0] = '\0';
	/* The common Connection body, read without json-c (codec/descfast.h)
	 * into one allocation: the same result, at a fraction of the cost.
	 * Any other body, or one above the limit, takes the path below, which
	 * words every refusal. */
	if (htype == QPHS_HS_CONNECTION &&
	    qphs__hs_desc_fast_block(req->json, req->json_len, &desc, &members, &block)) {
		if (members <= (size_t)cfg->max_body_keys) {
			req->check_rc = 0;
			req->desc = desc;
			req->desc_block = block;
			req->has_desc = true;
			return;
		}
		free(block);
	}
	/* Counted before json-c builds a hash table for every key. */
	qphs_json_shape(req->json, req->json_len, &shape);
	if (shape.keys + shape.elements > (size_t)cfg->max_body_keys) {
		req->check_rc = QPHS_ERR_BODY_TOO_MANY_KEYS;
		snprintf(req->check_err, sizeof(req->check_err),
			 "a %s body of %zu bytes holds %zu keys and %zu array elements, above "
			 "this daemon's limit of %d (max_body_keys)",
			 qphs_msg_type_name(req->type), req->json_len, shape.keys,
			 shape.elements, cfg->max_body_keys);
		return;
	}
	memset(&desc, 0, sizeof(desc));
	req->check_rc = check_body(htype, req->json, req->json_len, &desc, req->check_err,
				   sizeof(req->check_err));
	if (htype == QPHS_HS_CONNECTION && req->check_rc == 0) {
		/* The request owns the parsed body from here on. */
		req->desc = desc;
		req->has_desc = true;
	}
}

static void *parser_main(void *arg)
{
	struct qphs_daemon *d = arg;
	struct parser *p = &d->parser;
	struct qphs_request *req;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && !p->head)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		req = p->head;
		p->head = req->next;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->mu);
		qphs__request_check(&d->cfg, req);
		req->action = REQ_PARSED;
		qphs__door_post(req);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int qphs__parser_start(struct qphs_daemon *d)
{
	struct parser *p = &d->parser;
	int rc;

	p->head = p->tail = NULL;
	p->stop = false;
	rc = qphs__thread_start(&p->thread, parser_main, d, "qphs-parse");
	p->running = rc == 0;
	return rc;
}

void qphs__parser_stop(struct qphs_daemon *d)
{
	struct parser *p = &d->parser;
	struct qphs_request *req, *next;

	if (!p->running)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	p->running = false;
	req = p->head;
	p->head = p->tail = NULL;
	for (; req; req = next) {
		next = req->next;
		if (req->conn)
			req->conn->req = NULL;
		qphs__request_free(req);
	}
}

bool qphs__parser_push(struct qphs_daemon *d, struct qphs_request *req)
{
	struct parser *p = &d->parser;

	if (!p->running)
		return false;
	req->next = NULL;
	pthread_mutex_lock(&p->mu);
	if (p->tail)
		p->tail->next = req;
	else
		p->head = req;
	p->tail = req;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return true;
}
