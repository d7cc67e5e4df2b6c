/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * channel_flush.c - draining the send queue: every WR posted (control
 * sends and RDMA WRITEs) reported done before a disconnect could flush
 * it, with a signaled zero-length WRITE behind an unsignaled tail.
 */
#include <string.h>
#include "completion.h"
#include "conn_session.h"
#include "wrid.h"

static bool sends_done(const struct rdmig_conn *c, const void *arg)
{
	(void)arg;
	return rdmig__sq_outstanding(c->sq) == 0;
}

/* Done, or some send completed since *arg (the ledger's completed then). */
static bool sends_done_or_moved(const struct rdmig_conn *c, const void *arg)
{
	return sends_done(c, NULL) || rdmig__sq_completed(c->sq) != *(const uint64_t *)arg;
}

/* Unsignaled WRs complete only with a later signaled one: when the newest
 * WR is unsignaled, post a signaled zero-length RDMA WRITE (it needs no
 * memory key and touches no memory) so that the wait below can end.  A
 * signaled WR in flight is not enough: it reports only itself and the WRs
 * before it, and those after it would stay outstanding until the timeout
 * (seen on siw: a write signaled because one was due, then a span record,
 * then the end of the iteration). */
int rdmig__conn_post_flush(struct rdmig_conn *c)
{
	struct ibv_send_wr wr = {
		.wr_id = wrid_make(WRID_FLUSH, 0, 0),
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret = verbs_errno(ibv_post_send(rdmig__cml_qp(c->cm), &wr, &bad));

	if (ret)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(ret), "ibv_post_send (flush): %s%s",
				   strerror(ret), rdmig__cml_qp_error_hint(c->cm, ret));
	rdmig__sq_record(c->sq, true, 0);
	return 0;
}

int rdmig__conn_flush_sends(struct rdmig_conn *c, int timeout_ms)
{
	int saved_timeout = c->opts.timeout_ms;
	int ret = 0;

	if (!rdmig__cml_established(c->cm) || rdmig__cml_ended(c->cm) || !rdmig__sq_outstanding(c->sq))
		return 0;
	if (rdmig__sq_tail_unsignaled(c->sq)) {
		ret = rdmig__conn_sq_wait_room(c);
		if (!ret)
			ret = rdmig__conn_post_flush(c);
		if (ret)
			return ret;
	}
	if (timeout_ms > 0)
		c->opts.timeout_ms = timeout_ms;
	/* The timeout bounds a wait without progress, not the whole tail: a
	 * lossy or slow path (retransmissions, 10 ms of delay) can take longer
	 * than one timeout to drain a send queue full of chunk writes that
	 * all complete in the end. */
	do {
		uint64_t seen = rdmig__sq_completed(c->sq);

		ret = rdmig__conn_wait(c, sends_done_or_moved, &seen, "the last sends to complete");
	} while (!ret && !sends_done(c, NULL));
	c->opts.timeout_ms = saved_timeout;
	return ret;
}
