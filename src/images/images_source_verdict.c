/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_source_verdict.c - the source's end of the verdict
 * (images_verdict.h): after the trailer, wait for the destination's one
 * message and judge it against what was sent.
 */
#include <stdio.h>
#include "conn_session.h"
#include "images_int.h"
#include "images_verdict.h"

/* No verdict came: what ended the wait decides the code, and whether the
 * destination committed is unknown. */
static int unknown(struct rdmig_conn *c, int ret, struct rdmig_images_verdict *v, char *err,
		   size_t errlen)
{
	v->state = RDMIG_VERDICT_UNKNOWN;
	snprintf(v->reason, sizeof(v->reason), "%s", rdmig_conn_errmsg(c));
	snprintf(err, errlen, "no verdict from the destination: %.300s; whether it committed the "
		 "images is unknown", rdmig_conn_errmsg(c));
	return ret;
}

/* The failed state with its reason, and the code. */
static int failed(struct rdmig_images_verdict *v, const char *reason, int ret)
{
	v->state = RDMIG_VERDICT_FAILED;
	snprintf(v->reason, sizeof(v->reason), "%s", reason);
	return ret;
}

int rdmig__images_await_verdict(struct rdmig_conn *c, int wait_ms, const struct verdict_sent *sent,
				struct rdmig_images_verdict *v, bool *peer_knows, char *err,
				size_t errlen)
{
	struct rdmig_msg m;
	struct verdict got;
	char why[512];
	int ret;

	*peer_knows = true; /* gone, failed or committed: nothing more to tell it */
	if ((ret = rdmig__conn_take_unasked(c, RDMIG_MSG_QEMU_FILE, wait_ms, &m)))
		return unknown(c, ret, v, err, errlen);
	if (verdict_decode(m.payload, m.len, &got, why, sizeof(why))) {
		*peer_knows = false;
		v->state = RDMIG_VERDICT_UNKNOWN;
		snprintf(v->reason, sizeof(v->reason), "%s", why);
		snprintf(err, errlen, "the destination's verdict is malformed (%.300s): whether it "
			 "committed the images is unknown", why);
		return RDMIG_EPROTO;
	}
	if (got.outcome == VERDICT_FAILED) {
		snprintf(err, errlen, "the destination did not commit the images: %.400s", got.reason);
		return failed(v, got.reason, RDMIG_EPEER);
	}
	if (verdict_check(&got, sent->digest, sent->blocks, sent->n, why, sizeof(why))) {
		snprintf(err, errlen, "%s", why);
		return failed(v, why, RDMIG_EPROTO);
	}
	v->state = RDMIG_VERDICT_COMMITTED;
	v->images = sent->n;
	v->bytes = sent->bytes;
	return 0;
}
