/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_source_qmp.c - what the source QEMU tells the recorder
 * (qemu_recorder.h) over its QMP socket (qmp.h) that its migration stream
 * does not carry.
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
#include <rdmig/private.h>
#include "qemu_recorder.h"
#include "qmp.h"

/* How long a question may wait for the socket and its answer. */
#define QMP_QUESTION_TIMEOUT_S 10.0

/* `info ramblock` as QEMU's monitor prints it: a new string, or NULL
 * with err. */
static char *ask_info_ramblock(const char *socket, char *err, size_t errlen)
{
	struct json_object *args = json_object_new_object(), *ret;
	struct qmp q;
	char *text;

	if (!args) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	json_object_object_add(args, "command-line", json_object_new_string("info ramblock"));
	if (qmp_open(&q, socket, QMP_QUESTION_TIMEOUT_S, err, errlen)) {
		json_object_put(args);
		return NULL;
	}
	ret = qmp_call(&q, "human-monitor-command", args, err, errlen);
	qmp_close(&q);
	if (!ret)
		return NULL;
	if (!json_object_is_type(ret, json_type_string)) {
		snprintf(err, errlen, "QMP human-monitor-command: no text in the answer");
		json_object_put(ret);
		return NULL;
	}
	/* with a newline after it: the parser reads lines (and fmemopen
	 * takes a writable buffer, never an empty one) */
	text = malloc((size_t)json_object_get_string_len(ret) + 2);
	if (text)
		sprintf(text, "%s\n", json_object_get_string(ret));
	else
		snprintf(err, errlen, "out of memory");
	json_object_put(ret);
	return text;
}

int qemu_rec_qmp_ramblocks(struct qemu_recorder *r, const char *socket, char *err, size_t errlen)
{
	char *text = ask_info_ramblock(socket, err, errlen);
	FILE *f;
	int ret;

	if (!text)
		return -1;
	if (!(f = fmemopen(text, strlen(text), "r"))) {
		snprintf(err, errlen, "out of memory");
		free(text);
		return -1;
	}
	ret = qemu_rec_parse_ramblocks(r, f, "the source's 'info ramblock' (--source-qmp)", err,
				       errlen);
	fclose(f);
	free(text);
	r->rows_from = "the source's 'info ramblock'";
	return ret;
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

int qemu_rec_qmp_times(struct qemu_recorder *r, const char *socket, char *note, size_t notelen)
{
	char err[512];
	struct qmp q;
	double give_up = rdmig_monotonic_seconds() + QMP_QUESTION_TIMEOUT_S;
	int ret = 0;

	if (qmp_open(&q, socket, QMP_QUESTION_TIMEOUT_S, err, sizeof(err))) {
		snprintf(note, notelen, "no downtime from the source: %s", err);
		return -1;
	}
	/* the source completes before it disconnects, but its status may
	 * lag behind the disconnect this side saw: ask until it settles */
	for (;;) {
		struct json_object *ans = qmp_call(&q, "query-migrate", NULL, err, sizeof(err)), *v;
		const char *st = "";

		if (!ans) {
			snprintf(note, notelen, "no downtime from the source: %s", err);
			ret = -1;
			break;
		}
		if (json_object_object_get_ex(ans, "status", &v) &&
		    json_object_is_type(v, json_type_string))
			st = json_object_get_string(v);
		snprintf(r->qemu_status, sizeof(r->qemu_status), "%s", st);
		r->qemu_downtime_s = ms_member(ans, "downtime");
		r->qemu_total_s = ms_member(ans, "total-time");
		json_object_put(ans);
		if (status_final(r->qemu_status) || rdmig_monotonic_seconds() > give_up)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
	}
	qmp_close(&q);
	return ret;
}
