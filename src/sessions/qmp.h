/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qmp.h - a QMP client for the tool (json-c): ask a QEMU, over its QMP
 * unix socket, a command at a time.  A session (src/sessions), not
 * installed.
 *
 * QEMU's QMP socket serves one client at a time (others wait until it is
 * free): callers open, ask and close, and never keep the socket while a
 * migration needs it.
 */
#ifndef RDMIG_QMP_H
#define RDMIG_QMP_H

#include <stddef.h>
#include <json-c/json.h>

struct qmp {
	int fd;
	double deadline; /* rdmig_monotonic_seconds() by which every answer must come */
	char *buf;       /* bytes read after the last line handed out */
	size_t len, cap;
};

/* Connect to the QMP socket PATH, read QEMU's greeting and leave the
 * capabilities negotiation, all within timeout_s seconds (a socket another
 * client holds answers only once it is free).  0, or -1 with err. */
int qmp_open(struct qmp *q, const char *path, double timeout_s, char *err, size_t errlen);
/* Run command (args: NULL or an object, which the call takes) and return
 * its "return" value (the caller's reference: json_object_put it), or
 * NULL with err for a QMP error, a socket error or the deadline.  Events
 * that come meanwhile are skipped. */
struct json_object *qmp_call(struct qmp *q, const char *command, struct json_object *args,
			     char *err, size_t errlen);
void qmp_close(struct qmp *q);

#endif
