/* SPDX-License-Identifier: BSD-2-Clause */
/* completion.c - completion dispatch and the one wait loop of the library. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "cm_event.h"
#include "completion.h"
#include "wrid.h"

#define REAP_BATCH 32

static const char *wrid_kind_name(enum wrid_kind k)
{
	switch (k) {
	case WRID_SEND_COPY: return "control send (copied)";
	case WRID_SEND_INLINE: return "control send (inline)";
	case WRID_RECV_READY: return "control receive (READY slot)";
	case WRID_RECV_DATA: return "control receive (DATA slot)";
	case WRID_WRITE: return "RDMA write";
	case WRID_FLUSH: return "send-queue flush";
	}
	return "unknown work request";
}

/*
 * A flush after the peer went away is a disconnect, not a local bug: note
 * it and go on reaping, because a message that completed before it (an
 * ERROR, say) must still be seen.  Any other failure is an error at once;
 * when the peer's ERROR came first (receives are reaped first), that is
 * the cause: a destination that aborts sends ERROR, then drops its memory,
 * and our writes still on their way fail with a remote access error.
 */
static int completion_failed(struct rdmig_conn *c, const struct ibv_wc *wc)
{
	enum wrid_kind k = wrid_kind(wc->wr_id);

	if (wc->status == IBV_WC_WR_FLUSH_ERR || wc->status == IBV_WC_RETRY_EXC_ERR) {
		rdmig__cml_end(c->cm, "%s failed: %s", wrid_kind_name(k),
			       ibv_wc_status_str(wc->status));
		return 0;
	}
	if (rdmig__rx_error_waiting(c->rx, c->res)) {
		c->counters.received[RDMIG_MSG_ERROR]++;
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EPEER,
				   "the peer sent ERROR (then our %s failed: %s)", wrid_kind_name(k),
				   ibv_wc_status_str(wc->status));
	}
	if (k == WRID_WRITE) {
		/* With dynamic registration a write outside what the destination
		 * registered for its chunk is a remote access error: the likely
		 * cause is a destination with a smaller chunk size than ours. */
		char hint[96] = "";
		if (wc->status == IBV_WC_REM_ACCESS_ERR && !(c->caps.flags & RDMIG_CAP_PIN_ALL))
			snprintf(hint, sizeof(hint),
				 "; a chunk-size mismatch? this side uses %llu-byte chunks",
				 (unsigned long long)c->opts.chunk_size);
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_ECOMPLETION,
				   "RDMA write of block %u chunk %u failed: %s (vendor error 0x%x)%s",
				   wrid_block(wc->wr_id), wrid_chunk(wc->wr_id),
				   ibv_wc_status_str(wc->status), wc->vendor_err, hint);
	}
	return rdmig__fail(&c->opts, c->errmsg, RDMIG_ECOMPLETION, "%s failed: %s (vendor error 0x%x)",
			   wrid_kind_name(k), ibv_wc_status_str(wc->status), wc->vendor_err);
}

static bool sq_has_room(const struct rdmig_conn *c, const void *arg)
{
	(void)arg;
	return rdmig__sq_has_room(c->sq);
}

int rdmig__conn_sq_wait_room(struct rdmig_conn *c)
{
	if (sq_has_room(c, NULL))
		return 0;
	return rdmig__conn_wait(c, sq_has_room, NULL, "room in the send queue");
}

static int dispatch(struct rdmig_conn *c, const struct ibv_wc *wc)
{
	enum wrid_kind k = wrid_kind(wc->wr_id);

	if (wc->status != IBV_WC_SUCCESS)
		return completion_failed(c, wc);
	switch (k) {
	case WRID_SEND_COPY:
	case WRID_SEND_INLINE:
	case WRID_WRITE:
	case WRID_FLUSH:
		rdmig__sq_signaled_done(c->sq);
		return 0;
	case WRID_RECV_READY:
		rdmig__rx_completed(c->rx, SLOT_READY, wc->byte_len);
		return 0;
	case WRID_RECV_DATA:
		rdmig__rx_completed(c->rx, SLOT_DATA, wc->byte_len);
		return 0;
	}
	return rdmig__fail(&c->opts, c->errmsg, RDMIG_EPROTO,
			   "completion with unknown work-request id 0x%llx",
			   (unsigned long long)wc->wr_id);
}

static int reap_cq(struct rdmig_conn *c, struct ibv_cq *cq)
{
	struct ibv_wc wc[REAP_BATCH];
	int n;

	do {
		n = ibv_poll_cq(cq, REAP_BATCH, wc);
		if (n < 0)
			return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(-n), "ibv_poll_cq failed (%d)",
					   n);
		for (int i = 0; i < n; i++) {
			int ret = dispatch(c, &wc[i]);
			if (ret)
				return ret;
		}
	} while (n == REAP_BATCH);
	return 0;
}

int rdmig__conn_reap(struct rdmig_conn *c)
{
	int ret = reap_cq(c, rdmig__vres_cq(c->res, VRES_RECV));
	return ret ? ret : reap_cq(c, rdmig__vres_cq(c->res, VRES_SEND));
}

static int arm_cqs(struct rdmig_conn *c)
{
	int err = verbs_errno(rdmig__vres_arm(c->res));

	if (err)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(err), "ibv_req_notify_cq: %s",
				   strerror(err));
	return 0;
}

/* A CM event on an established connection can only be bad news. */
static int handle_cm_event(struct rdmig_conn *c)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;

	if (rdma_get_cm_event(rdmig__cml_channel(c->cm), &ev))
		return errno == EAGAIN ? 0 : rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno),
							 "rdma_get_cm_event: %s", strerror(errno));
	type = ev->event;
	rdma_ack_cm_event(ev);
	if (!rdmig__conn_cm_event_ends(c, type))
		rdmig__log(&c->opts, RDMIG_LOG_DEBUG, "ignored rdma_cm event %s",
			   rdma_event_str(type));
	return 0;
}

bool rdmig__conn_cm_event_ends(struct rdmig_conn *c, enum rdma_cm_event_type type)
{
	if (type != RDMA_CM_EVENT_DISCONNECTED && type != RDMA_CM_EVENT_DEVICE_REMOVAL &&
	    type != RDMA_CM_EVENT_TIMEWAIT_EXIT)
		return false;
	rdmig__cml_end(c->cm, "%s", rdma_event_str(type));
	return true;
}

/* Whether fd has something to read right now. */
static bool fd_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/* Consume the rdma_cm events already queued (a bounded number: a peer
 * cannot keep us here). */
static int take_cm_events(struct rdmig_conn *c)
{
	int ret = 0;

	for (int i = 0; i < 16 && !ret && fd_readable(rdmig__cml_channel_fd(c->cm)); i++)
		ret = handle_cm_event(c);
	return ret;
}

int rdmig__conn_fd_prepare(struct rdmig_conn *c, bool *pending)
{
	uint64_t completed;
	int ret;

	*pending = false;
	if (!rdmig__cml_channel(c->cm) || !rdmig__vres_cq(c->res, VRES_SEND) ||
	    !rdmig__vres_cq(c->res, VRES_RECV))
		return 0; /* not connected yet: no channel can have news */
	completed = rdmig__sq_completed(c->sq);
	/* Old channel events would keep the fd readable for nothing. */
	rdmig__vres_drain(c->res, VRES_SEND);
	rdmig__vres_drain(c->res, VRES_RECV);
	ret = take_cm_events(c);
	/* Arm, then reap: what completed before the arming raises no event. */
	if (!ret)
		ret = arm_cqs(c);
	if (!ret)
		ret = rdmig__conn_reap(c);
	*pending = rdmig__cml_ended(c->cm) || rdmig__rx_waiting(c->rx) ||
		   rdmig__sq_completed(c->sq) != completed;
	return ret;
}

static int sleep_for_events(struct rdmig_conn *c, int timeout_ms)
{
	/* The caller's cancel_fd ends the sleep; the wait then sees it. */
	struct pollfd fds[5] = {
		{.fd = rdmig__vres_cc(c->res, VRES_SEND)->fd, .events = POLLIN},
		{.fd = rdmig__vres_cc(c->res, VRES_RECV)->fd, .events = POLLIN},
		{.fd = rdmig__cml_channel_fd(c->cm), .events = POLLIN},
		cancel_pollfd(&c->opts),
		{.fd = c->cancel_efd, .events = POLLIN}, /* rdmig_conn_cancel */
	};
	int n = poll(fds, 5, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno),
							 "poll: %s", strerror(errno));
	if (fds[0].revents)
		rdmig__vres_drain(c->res, VRES_SEND);
	if (fds[1].revents)
		rdmig__vres_drain(c->res, VRES_RECV);
	if (fds[2].revents)
		return handle_cm_event(c);
	return 0;
}

/* What a wait for `what` returns once the peer is gone. */
static int disconnected_code(struct rdmig_conn *c, const char *what)
{
	if (rdmig__rx_error_waiting(c->rx, c->res)) {
		/* it said why before it went: that is the cause */
		c->counters.received[RDMIG_MSG_ERROR]++;
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EPEER,
				   "the peer sent ERROR and disconnected while we waited "
				   "for %s", what);
	}
	/* Not necessarily an error: a source ends a migration this way.
	 * The caller decides; log it at INFO only. */
	snprintf(c->errmsg, sizeof(c->errmsg), "the peer disconnected while we waited for %s%s%s",
		 what, rdmig__cml_end_reason(c->cm)[0] ? ": " : "", rdmig__cml_end_reason(c->cm));
	rdmig__log(&c->opts, RDMIG_LOG_INFO, "%s", c->errmsg);
	return RDMIG_EDISCONNECTED;
}

/* The wait below without the sleep: one look at the CM channel and both
 * CQs.  Queued rdma_cm events are taken first, then completions, so a
 * message that came before the disconnect is still seen, as in a wait. */
int rdmig__conn_check(struct rdmig_conn *c, conn_cond_fn cond, const void *arg, const char *what)
{
	int ret = take_cm_events(c);

	if (!ret)
		ret = rdmig__conn_reap(c);
	if (ret || cond(c, arg))
		return ret;
	return rdmig__cml_ended(c->cm) ? disconnected_code(c, what) : RDMIG_EAGAIN;
}

int rdmig__conn_wait(struct rdmig_conn *c, conn_cond_fn cond, const void *arg, const char *what)
{
	int64_t deadline = c->opts.timeout_ms > 0 ? rdmig__now_ms() + c->opts.timeout_ms : INT64_MAX;
	int ret;

	double spin_until = c->opts.spin_us > 0 ? rdmig__now_us() + c->opts.spin_us : 0;

	for (;;) {
		ret = rdmig__conn_reap(c);
		if (ret || cond(c, arg))
			return ret;
		/* Busy-poll a little first: most answers come within microseconds,
		 * and waking from poll(2) can cost a scheduler tick. */
		if (spin_until && !rdmig__cml_ended(c->cm) && rdmig__now_us() < spin_until)
			continue;
		if (rdmig__cml_ended(c->cm))
			return disconnected_code(c, what);
		/* Arm, then look once more: a completion may have slipped in between. */
		ret = arm_cqs(c);
		if (!ret)
			ret = rdmig__conn_reap(c);
		if (ret || cond(c, arg))
			return ret;
		if (conn_cancelled(c))
			return rdmig__fail(&c->opts, c->errmsg, RDMIG_ECANCELED,
					   "cancelled while waiting for %s", what);
		int64_t left = deadline - rdmig__now_ms();
		if (left <= 0)
			return rdmig__fail(&c->opts, c->errmsg, RDMIG_ETIMEDOUT,
					   "timed out after %d ms waiting for %s", c->opts.timeout_ms,
					   what);
		ret = sleep_for_events(c, wait_slice_ms(&c->opts, left));
		if (ret)
			return ret;
	}
}
