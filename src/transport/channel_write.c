/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * channel_write.c - the RDMA WRITEs of a connection, posted within the
 * write window (below), on the send queue the control messages of
 * channel.c share.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "completion.h"
#include "conn_engine.h"
#include "wrid.h"

/*
 * The write window: the bytes of RDMA WRITE that may be queued on the send
 * queue at once.  The destination sees no one-sided write; what tells it
 * the source is alive is the next control message (with PIN_ALL the
 * source's keep-alives), and on an RC QP that message waits behind every
 * write posted before it.  Unbounded, a 32 MiB write on a lossy or slow
 * path kept it from the destination for longer than its --timeout
 * (docs/reliability.md, "Slow paths and --timeout").
 *
 * So the window holds what the path carries in a quarter of the timeout,
 * at the rate its writes completed over the last 100 ms, and at least
 * 4 MiB; one WR carries at most a quarter of the window, and a write is
 * signaled when a quarter of the window went since the last signaled WR,
 * so that the window always holds one whose completion frees it.  A path
 * that moves 4 MiB/s or more (every RDMA device at work) soon gets a
 * window of tens of MiB or more at a 10 s timeout, and its writes go
 * uncut as before; a slow one keeps 4 MiB queued, which reaches the
 * destination within 4 MiB / its rate.  Without a timeout nothing is
 * bounded.  The send queue's ledger keeps the window (send_queue.c); this
 * file cuts and posts the writes within it.
 */
static bool write_window_room(const struct rdmig_conn *c, const void *arg)
{
	return rdmig__sq_window_room(c->sq, *(const uint32_t *)arg);
}

/* Wait until len more bytes fit the window.  The window may have shrunk
 * below writes posted unsignaled under a larger one, which complete only
 * with a later signaled WR: post one first (as the flush does). */
static int wait_window_room(struct rdmig_conn *c, uint32_t len)
{
	int ret = 0;

	if (rdmig__sq_tail_unsignaled(c->sq)) {
		ret = rdmig__conn_sq_wait_room(c);
		if (!ret)
			ret = rdmig__conn_post_flush(c);
	}
	return ret ? ret : rdmig__conn_wait(c, write_window_room, &len, "room in the write window");
}

static int post_write_piece(struct rdmig_conn *c, const void *local, uint32_t len, uint32_t lkey,
			    uint64_t remote, uint32_t rkey, bool force_signal, uint64_t wr_id,
			    bool *signaled_any)
{
	struct ibv_sge sge = {.addr = (uintptr_t)local, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = {.remote_addr = remote, .rkey = rkey},
	}, *bad;
	bool signaled;
	int ret = rdmig__conn_sq_wait_room(c);

	if (!ret && !rdmig__sq_window_room(c->sq, len))
		ret = wait_window_room(c, len);
	if (ret)
		return ret;
	if (rdmig__cml_ended(c->cm))
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EDISCONNECTED,
				   "cannot write: the peer disconnected (%s)", rdmig__cml_end_reason(c->cm));
	signaled = force_signal || rdmig__sq_window_signal_due(c->sq, len);
	wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
	ret = verbs_errno(ibv_post_send(rdmig__cml_qp(c->cm), &wr, &bad));
	if (ret)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(ret),
				   "ibv_post_send (RDMA WRITE of %u bytes to 0x%llx): %s%s", len,
				   (unsigned long long)remote, strerror(ret),
				   rdmig__cml_qp_error_hint(c->cm, ret));
	rdmig__sq_record(c->sq, signaled, len);
	*signaled_any |= signaled;
	return 0;
}

/* One write of the caller's becomes pieces of a quarter window at most, each
 * with the caller's wr_id (it names the block and chunk of a failure); the
 * caller's signal request goes to the last piece.  writes_signaled counts
 * the caller's writes with a signaled piece. */
int rdmig__conn_post_write(struct rdmig_conn *c, const void *local, uint32_t len, uint32_t lkey,
		    uint64_t remote, uint32_t rkey, bool force_signal, uint64_t wr_id)
{
	const uint8_t *at = local;
	bool signaled = false;
	int ret = 0;

	rdmig__sq_window_measure(c->sq, c->opts.timeout_ms, rdmig__now_ms());
	do {
		uint32_t piece_max = rdmig__sq_window_piece_max(c->sq), piece = len > piece_max ? piece_max : len;

		len -= piece;
		ret = post_write_piece(c, at, piece, lkey, remote, rkey, force_signal && !len, wr_id,
				       &signaled);
		at += piece;
		remote += piece;
	} while (!ret && len);
	c->writes_signaled += signaled;
	return ret;
}
