/* The request API: the one door into the daemon from other threads.
 *
 * A handler may complete its request on the loop thread (inside the
 * handler, or later from a timer of its own) or from any other thread.  On
 * the loop thread the completion is acted on at once; from elsewhere it is
 * queued under the door's mutex and the loop is woken through the eventfd.
 * Once the daemon has stopped, completions only free the request. */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/descfast.h"
#include "daemon_int.h"
#include "qphs/body.h"
#include "qphs/error.h"

struct door *qphs__door_new(void)
{
	struct door *door = calloc(1, sizeof(*door));

	if (!door)
		return NULL;
	if (pthread_mutex_init(&door->mu, NULL) != 0) {
		free(door);
		return NULL;
	}
	atomic_init(&door->refs, 1);
	door->efd = -1;
	atomic_init(&door->live_bytes, 0);
	return door;
}

void qphs__door_unref(struct door *door)
{
	/* The last reference: no other thread can reach the door any more. */
	if (atomic_fetch_sub(&door->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&door->mu);
	free(door);
}

struct qphs_request *qphs__request_new(struct qphs_daemon *d, struct conn *c,
				       int type, const char *json, size_t len)
{
	struct qphs_request *req = malloc(sizeof(*req) + len + 1);

	if (!req)
		return NULL;
	memset(req, 0, sizeof(*req));
	req->door = d->door;
	req->conn = c;
	req->type = type;
	req->json_len = len;
	memcpy(req->json, json, len);
	req->json[len] = '\0';
	memcpy(req->peer, c->peer, sizeof(req->peer));
	atomic_fetch_add(&d->door->refs, 1);
	atomic_fetch_add(&d->door->live_bytes, (int64_t)(sizeof(*req) + len + 1));
	return req;
}

void qphs__request_free(struct qphs_request *req)
{
	struct door *door = req->door;

	atomic_fetch_sub(&door->live_bytes,
			 (int64_t)(sizeof(*req) + req->json_len + 1 + req->reply_len));
	if (req->has_desc)
		qphs__hs_desc_release(&req->desc, req->desc_block);
	if (req->reply)
		free(req->reply - REPLY_ROOM);
	free(req);
	qphs__door_unref(door);
}

/* Appends req to the door's queue and wakes the loop.  door->mu held. */
static void enqueue(struct door *door, struct qphs_request *req)
{
	static const uint64_t one = 1;
	ssize_t n;

	req->next = NULL;
	if (door->tail)
		door->tail->next = req;
	else
		door->head = req;
	door->tail = req;
	do
		n = write(door->efd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
	/* EAGAIN means the counter is already non-zero: the loop will wake. */
}

/* Hands a completed request to the loop.  Returns QPHS_ERR_STOPPED (and
 * frees req) when there is no loop any more. */
static int door_complete(struct qphs_request *req)
{
	struct door *door = req->door;

	pthread_mutex_lock(&door->mu);
	if (door->stopped) {
		pthread_mutex_unlock(&door->mu);
		qphs__request_free(req);
		return QPHS_ERR_STOPPED;
	}
	if (door->loop_running && pthread_equal(pthread_self(), door->loop_thread)) {
		/* On the loop thread (inside a handler): act at once. */
		pthread_mutex_unlock(&door->mu);
		qphs__conn_complete(door->daemon, req);
		return 0;
	}
	enqueue(door, req);
	pthread_mutex_unlock(&door->mu);
	return 0;
}

void qphs__door_post(struct qphs_request *req)
{
	struct door *door = req->door;

	pthread_mutex_lock(&door->mu);
	if (door->stopped) {
		pthread_mutex_unlock(&door->mu);
		qphs__request_free(req);
		return;
	}
	enqueue(door, req);
	pthread_mutex_unlock(&door->mu);
}

int qphs_request_reply(struct qphs_request *req, const char *json, size_t len)
{
	if (!req)
		return QPHS_ERR_INVALID_ARGUMENT;
	if (!json || !len) {
		qphs_request_close(req);
		return QPHS_ERR_INVALID_ARGUMENT;
	}
	/* Room for the frame header first: the loop frames it in place. */
	req->reply = len < SIZE_MAX - REPLY_ROOM ? malloc(REPLY_ROOM + len + 1) : NULL;
	if (!req->reply) {
		qphs_request_close(req);
		return QPHS_ERR_MEMORY;
	}
	req->reply += REPLY_ROOM;
	memcpy(req->reply, json, len);
	req->reply[len] = '\0';
	req->reply_len = len;
	atomic_fetch_add(&req->door->live_bytes, (int64_t)len);
	req->action = REQ_REPLY;
	return door_complete(req);
}

void qphs_request_close(struct qphs_request *req)
{
	if (!req)
		return;
	req->action = REQ_CLOSE;
	door_complete(req);
}

int qphs__error_reply(const struct qphs_hs_desc *asked, const char *msg, char **out,
		      size_t *out_len)
{
	struct qphs_hs_desc rep;
	int rc = qphs_hs_desc_init(&rep);

	if (rc)
		return rc;
	if (asked) {
		rc = qphs_desc_set_str(&rep.local_nic_path, asked->peer_nic_path);
		if (!rc)
			rc = qphs_desc_set_str(&rep.peer_nic_path, asked->local_nic_path);
	}
	if (!rc)
		rc = qphs_desc_set_str(&rep.reply_msg, msg);
	if (!rc)
		rc = qphs_hs_desc_encode(&rep, out, out_len);
	qphs_hs_desc_clear(&rep);
	return rc;
}

int qphs_request_fail(struct qphs_request *req, int code, const char *text)
{
	char msg[128], *body = NULL;
	size_t len = 0;
	int rc;

	if (!req)
		return QPHS_ERR_INVALID_ARGUMENT;
	if (req->type != QPHS_HS_CONNECTION && req->type != QPHS_HS_OLD_PROTOCOL) {
		qphs_request_close(req);
		return 0;
	}
	if (!text || !*text) {
		snprintf(msg, sizeof(msg), "Handshake callback failed: %d", code);
		text = msg;
	}
	/* Pure work, on the caller's thread. */
	rc = qphs__error_reply(req->has_desc ? &req->desc : NULL, text, &body, &len);
	if (rc) {
		qphs_request_close(req);
		return rc;
	}
	rc = qphs_request_reply(req, body, len);
	free(body);
	return rc;
}

const struct qphs_hs_desc *qphs_request_desc(const struct qphs_request *req)
{
	return req && req->has_desc ? &req->desc : NULL;
}

void qphs__door_drain(struct qphs_daemon *d)
{
	struct qphs_request *req, *next;
	uint64_t v;
	ssize_t n;

	do
		n = read(d->door->efd, &v, sizeof(v));
	while (n < 0 && errno == EINTR);
	pthread_mutex_lock(&d->door->mu);
	req = d->door->head;
	d->door->head = d->door->tail = NULL;
	pthread_mutex_unlock(&d->door->mu);
	for (; req; req = next) {
		next = req->next;
		qphs__conn_complete(d, req);
	}
}

int qphs_request_type(const struct qphs_request *req)
{
	return req->type;
}

const char *qphs_request_json(const struct qphs_request *req, size_t *len)
{
	if (len)
		*len = req->json_len;
	return req->json;
}

const char *qphs_request_peer(const struct qphs_request *req)
{
	return req->peer;
}
