/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qmp.c - the tool's QMP client (qmp.h): one JSON object per line both
 * ways, QEMU's answers read under a deadline with poll, so that a QEMU
 * that never answers costs the caller its timeout, not a hang.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <rdmig.h>
#include <rdmig/private.h>
#include "qmp.h"

/* A QMP answer longer than this is not one the tool asked for: `info
 * ramblock` of a machine with hundreds of blocks is tens of KiB. */
#define QMP_MAX_LINE (4u << 20)

static int qmp_errno(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "QMP: %s: %s", what, strerror(errno));
	return -1;
}

/* Wait until fd is readable (or writable) before the deadline. */
static int qmp_wait(const struct qmp *q, short events, char *err, size_t errlen)
{
	for (;;) {
		double left = q->deadline - rdmig_monotonic_seconds();
		struct pollfd p = {.fd = q->fd, .events = events};
		int r;

		if (left <= 0) {
			snprintf(err, errlen, "QMP: QEMU did not answer in time (is another client "
				 "connected to its QMP socket?)");
			return -1;
		}
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return qmp_errno(err, errlen, "poll");
	}
}

/* The next line QEMU sent, parsed: an object (the caller's reference), or
 * NULL with err. */
static struct json_object *qmp_read(struct qmp *q, char *err, size_t errlen)
{
	for (;;) {
		char *nl = q->len ? memchr(q->buf, '\n', q->len) : NULL;

		if (nl) {
			size_t n = (size_t)(nl - q->buf) + 1;
			struct json_object *o;

			*nl = '\0';
			o = json_tokener_parse(q->buf);
			memmove(q->buf, q->buf + n, q->len - n);
			q->len -= n;
			if (!o || !json_object_is_type(o, json_type_object)) {
				json_object_put(o);
				snprintf(err, errlen, "QMP: QEMU sent a line that is not a JSON object");
				return NULL;
			}
			return o;
		}
		if (q->len + 4096 > q->cap) {
			char *b;

			if (q->cap >= QMP_MAX_LINE) {
				snprintf(err, errlen, "QMP: an answer longer than %u bytes",
					 QMP_MAX_LINE);
				return NULL;
			}
			if (!(b = realloc(q->buf, q->cap ? q->cap * 2 : 65536))) {
				snprintf(err, errlen, "out of memory");
				return NULL;
			}
			q->buf = b;
			q->cap = q->cap ? q->cap * 2 : 65536;
		}
		if (qmp_wait(q, POLLIN, err, errlen))
			return NULL;
		ssize_t r = read(q->fd, q->buf + q->len, q->cap - q->len - 1);
		if (r == 0) {
			snprintf(err, errlen, "QMP: QEMU closed the socket");
			return NULL;
		}
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			qmp_errno(err, errlen, "read");
			return NULL;
		}
		q->len += (size_t)r;
	}
}

static int qmp_write(struct qmp *q, const char *text, char *err, size_t errlen)
{
	size_t len = strlen(text), done = 0;

	while (done < len) {
		ssize_t w;

		if (qmp_wait(q, POLLOUT, err, errlen))
			return -1;
		w = send(q->fd, text + done, len - done, MSG_NOSIGNAL);
		if (w < 0 && errno != EINTR && errno != EAGAIN)
			return qmp_errno(err, errlen, "write");
		if (w > 0)
			done += (size_t)w;
	}
	return 0;
}

struct json_object *qmp_call(struct qmp *q, const char *command, struct json_object *args,
			     char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *ans, *v;
	const char *text;

	if (!req) {
		json_object_put(args);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	json_object_object_add(req, "execute", json_object_new_string(command));
	if (args)
		json_object_object_add(req, "arguments", args);
	text = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	if (!text || qmp_write(q, text, err, errlen) || qmp_write(q, "\n", err, errlen)) {
		if (!text)
			snprintf(err, errlen, "out of memory");
		json_object_put(req);
		return NULL;
	}
	json_object_put(req);
	/* asynchronous events may come before the answer */
	while ((ans = qmp_read(q, err, errlen)) && json_object_object_get_ex(ans, "event", NULL))
		json_object_put(ans);
	if (!ans)
		return NULL;
	if (json_object_object_get_ex(ans, "return", &v)) {
		json_object_get(v);
		json_object_put(ans);
		return v;
	}
	if (json_object_object_get_ex(ans, "error", &v) &&
	    json_object_object_get_ex(v, "desc", &v))
		snprintf(err, errlen, "QMP %s: %.300s", command, json_object_get_string(v));
	else
		snprintf(err, errlen, "QMP %s: an answer with neither return nor error", command);
	json_object_put(ans);
	return NULL;
}

int qmp_open(struct qmp *q, const char *path, double timeout_s, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct json_object *o;

	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->deadline = rdmig_monotonic_seconds() + timeout_s;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "QMP socket '%.300s': the path is too long", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(q->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "QMP socket '%.300s': %s", path, strerror(errno));
		qmp_close(q);
		return -1;
	}
	/* the greeting: {"QMP": {"version": ..., "capabilities": [...]}} */
	if (!(o = qmp_read(q, err, errlen)) || !json_object_object_get_ex(o, "QMP", NULL)) {
		if (o)
			snprintf(err, errlen, "QMP socket '%.300s': no QMP greeting", path);
		json_object_put(o);
		qmp_close(q);
		return -1;
	}
	json_object_put(o);
	if (!(o = qmp_call(q, "qmp_capabilities", NULL, err, errlen))) {
		qmp_close(q);
		return -1;
	}
	json_object_put(o);
	return 0;
}

void qmp_close(struct qmp *q)
{
	if (q->fd >= 0)
		close(q->fd);
	free(q->buf);
	memset(q, 0, sizeof(*q));
	q->fd = -1;
}
