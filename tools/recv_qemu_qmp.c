/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_qemu_qmp.c - `rdmig recv --qemu --source-qmp SOCKET`: what the
 * source QEMU tells over its QMP socket that its migration stream does
 * not carry.
 *
 * Before the migration, its `info ramblock` (human-monitor-command): the
 * RAM offsets by which it registers memory.  It is asked before the
 * destination listens, because once the migration starts QEMU's main loop
 * may wait for this destination (its setup holds the big lock until the
 * RAM blocks are exchanged), and a question then would never be answered.
 * RAM blocks do not change while QEMU migrates.
 *
 * After the end, query-migrate: the status, the downtime and the total
 * time QEMU measured.  The socket is held only for each question: QEMU
 * serves one QMP client at a time, and whoever started the migration may
 * be waiting on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "qmp.h"
#include "recv_qemu.h"

/* How long a question may wait for the socket and its answer. */
#define RQ_QMP_TIMEOUT_S 10.0

int rq_qmp_ramblocks(struct rq_state *s)
{
	struct qmp q;
	struct json_object *args = json_object_new_object(), *ret;
	char *text;
	FILE *f;
	int r;

	if (!args) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return -1;
	}
	json_object_object_add(args, "command-line", json_object_new_string("info ramblock"));
	if (qmp_open(&q, s->source_qmp, RQ_QMP_TIMEOUT_S, s->err, sizeof(s->err))) {
		json_object_put(args);
		return -1;
	}
	ret = qmp_call(&q, "human-monitor-command", args, s->err, sizeof(s->err));
	qmp_close(&q);
	if (!ret)
		return -1;
	if (!json_object_is_type(ret, json_type_string)) {
		snprintf(s->err, sizeof(s->err), "QMP human-monitor-command: no text in the answer");
		json_object_put(ret);
		return -1;
	}
	/* the table as a file, for the parser --ramblocks uses (a copy:
	 * fmemopen takes a writable buffer, and never an empty one) */
	text = malloc((size_t)json_object_get_string_len(ret) + 2);
	if (text)
		sprintf(text, "%s\n", json_object_get_string(ret));
	json_object_put(ret);
	if (!text || !(f = fmemopen(text, strlen(text), "r"))) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		free(text);
		return -1;
	}
	r = rq_parse_ramblocks(s, f, "the source's 'info ramblock' (--source-qmp)");
	fclose(f);
	free(text);
	return r;
}

/* A millisecond member of query-migrate's answer in seconds, or -1. */
static double ms_member(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	return (double)json_object_get_int64(v) / 1e3;
}

static bool status_final(const char *st)
{
	return !strcmp(st, "completed") || !strcmp(st, "failed") || !strcmp(st, "cancelled");
}

void rq_qmp_times(struct rq_state *s)
{
	char err[512];
	struct qmp q;
	double give_up = rdmig_monotonic_seconds() + RQ_QMP_TIMEOUT_S;

	if (qmp_open(&q, s->source_qmp, RQ_QMP_TIMEOUT_S, err, sizeof(err))) {
		fprintf(stderr, "rdmig: recv: note: no downtime from the source: %s\n", err);
		return;
	}
	/* the source completes before it disconnects, but its status may
	 * lag behind the disconnect this side saw: ask until it settles */
	for (;;) {
		struct json_object *ret = qmp_call(&q, "query-migrate", NULL, err, sizeof(err)), *v;
		const char *st = "";

		if (!ret) {
			fprintf(stderr, "rdmig: recv: note: no downtime from the source: %s\n", err);
			break;
		}
		if (json_object_object_get_ex(ret, "status", &v) &&
		    json_object_is_type(v, json_type_string))
			st = json_object_get_string(v);
		snprintf(s->qemu_status, sizeof(s->qemu_status), "%s", st);
		s->qemu_downtime_s = ms_member(ret, "downtime");
		s->qemu_total_s = ms_member(ret, "total-time");
		json_object_put(ret);
		if (status_final(s->qemu_status) || rdmig_monotonic_seconds() > give_up)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
	}
	qmp_close(&q);
}
