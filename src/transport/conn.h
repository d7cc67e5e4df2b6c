/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * conn.h - the connection object, the transport's alone (the layers above
 * see it through conn_session.h and conn_engine.h).  Its parts, and the
 * file that edits each: the rdma_cm state (connect.c and listen.c make
 * it, completion.c marks its end), the verbs resources (verbs_res.c), the
 * send queue's ledger and write window (send_queue.c, an object of its
 * own), the receive slots and credits (channel.c), the epoll fd
 * (conn_fd.c) and the admission hold (admission.c, through admission.h).
 */
#ifndef RDMIG_CONN_H
#define RDMIG_CONN_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "log.h"
#include "opts.h"
#include "rdmig.h"
#include "conn_session.h" /* the part of the transport sessions see */
#include "conn_engine.h"  /* the part the engines' seam sees */
#include "send_queue.h"
#include "admission.h"
#include "qp_attr.h"
#include "cm_link.h"

/* The engines (engine.h) reach a connection only through engine_io.h. */
#ifdef RDMIG_ENGINE_H
#error "engine code must not include conn.h: go through engine_io.h"
#endif

/*
 * Control buffers: one registered region of three 512 KiB slots, as QEMU
 * has, because a peer may send any message up to the 512 KiB bound.
 *
 *   +-------------------+-------------------+-------------------+
 *   | SLOT_READY (recv) | SLOT_DATA (recv)  | SLOT_SEND (copy)  |
 *   +-------------------+-------------------+-------------------+
 *
 * SLOT_READY receives READY credits (source) or every message (destination);
 * SLOT_DATA receives replies; SLOT_SEND is only used by messages that do not
 * fit the granted inline size.
 */
enum conn_slot { SLOT_READY = 0, SLOT_DATA = 1, SLOT_SEND = 2, SLOT_COUNT = 3 };

enum conn_role { ROLE_SOURCE, ROLE_DEST };

struct recv_slot {
	bool posted;
	bool done;         /* completed, not yet consumed */
	uint32_t byte_len; /* of the completion */
};

struct rdmig_conn {
	struct rdmig_opts opts;
	char errmsg[RDMIG_ERRMSG_SIZE];
	enum conn_role role;

	/* the rdma_cm side (cm_link.h, its one owner): the event channel,
	 * the cm_id, established, ended and why; made with the handle */
	struct rdmig_cm_link *cm;

	/* verbs resources (verbs_res.c) */
	struct ibv_pd *pd;
	struct ibv_comp_channel *send_cc, *recv_cc;
	struct ibv_cq *send_cq, *recv_cq;
	uint8_t *bufs; /* SLOT_COUNT * RDMIG_CONTROL_BUFFER */
	struct ibv_mr *buf_mr;
	bool qp_created;
	struct rdmig_inline_info inl;
	/* The most an inline send may carry (header + payload): inl.granted,
	 * lowered below a message the provider refused to post inline
	 * (channel.c), so that such messages go copied from then on. */
	uint32_t inline_max;
	uint32_t inline_refusals; /* inline posts refused, then copied */
	/* tests (testhooks.h): the next refuse_left inline posts return
	 * refuse_ret, as a provider's post_send would, without posting */
	int refuse_ret;
	uint32_t refuse_left;

	/* negotiated capabilities */
	struct rdmig_caps caps;
	uint32_t cap_version; /* what the source sends: 1 (tests send others) */

	/* the send queue's ledger and write window (send_queue.h, its one
	 * owner): what is posted, signaled and done; created with the QP's
	 * resources */
	struct rdmig_sq *sq;
	uint64_t writes_signaled; /* the caller's writes with a signaled piece */

	/* the receive slots and the credit flow: channel.c alone edits them
	 * (completion.c reports a receive through rdmig__conn_recv_completed) */
	struct recv_slot recv[2]; /* SLOT_READY, SLOT_DATA */
	bool ready_owed;   /* a READY must arrive before the next send */
	bool message_owed; /* we sent READY; the peer's message has not arrived */
	bool signal_next;  /* the next control send is signaled, due or not */
	uint64_t send_buf_seq; /* sequence of the last copied control send */

	struct rdmig_counters counters;

	/* rdmig_conn_fd (conn_fd.c): an epoll fd over ec and the two
	 * completion channels, and an eventfd in it that says "work already
	 * pending" when no channel can. */
	int epfd, kickfd;

	/* rdmig_conn_cancel, from any thread: the flag every wait and the
	 * engines over this connection look at, and an eventfd the waits
	 * poll so that one asleep wakes at once (-1 when none could be made:
	 * the flag alone then ends a wait at its next slice). */
	atomic_bool cancelled;
	int cancel_efd;

	/* admission.h: the slot this connection holds of its listener's
	 * admission, and what it reserved (admission.c alone edits it) */
	struct rdmig_admission_hold admission;
};


/* Whether the connection's own waits must end: its opts (cancel,
 * cancel_fd) or rdmig_conn_cancel. */
static inline bool conn_cancelled(const struct rdmig_conn *c)
{
	return atomic_load(&c->cancelled) || wait_cancelled(&c->opts);
}

/*
 * ibv_post_send/ibv_post_recv/ibv_req_notify_cq are documented to return a
 * positive errno, but some providers return -1 (errno set) or -errno.
 * Normalise to a positive errno (0 = success).
 */
static inline int verbs_errno(int ret)
{
	if (ret == 0)
		return 0;
	if (ret > 0)
		return ret;
	return ret == -1 && errno ? errno : -ret;
}

static inline uint8_t *conn_slot_buf(struct rdmig_conn *c, enum conn_slot s)
{
	return c->bufs + (size_t)s * RDMIG_CONTROL_BUFFER;
}

static inline const uint8_t *conn_slot_buf_const(const struct rdmig_conn *c, enum conn_slot s)
{
	return c->bufs + (size_t)s * RDMIG_CONTROL_BUFFER;
}

/* channel.c, the one editor of the receive slots and the credits: a
 * receive of slot completed with byte_len bytes (completion.c's
 * dispatch); whether a message sits in a slot, not yet taken; whether one
 * of them is the peer's ERROR; and the credits of a source that has just
 * connected (its first send waits for the destination's READY). */
void rdmig__conn_recv_completed(struct rdmig_conn *c, enum conn_slot slot, uint32_t byte_len);
bool rdmig__conn_message_waiting(const struct rdmig_conn *c);
bool rdmig__conn_error_waiting(const struct rdmig_conn *c);
void rdmig__conn_credits_start(struct rdmig_conn *c);

/* verbs_res.c: PD, completion channels, CQs, buffers, then the QP through
 * the inline ladder, all on the cm_id's device.  Safe to call destroy on a
 * half-built connection. */
int rdmig__conn_res_create(struct rdmig_conn *c);
void rdmig__conn_res_destroy(struct rdmig_conn *c);

/* Allocate a connection with validated options (src NULL = defaults).  On
 * failure *out is NULL, errmsg (may be NULL) says why and the code is
 * returned. */
int rdmig__conn_alloc(const struct rdmig_opts *opts, enum conn_role role, struct rdmig_conn **out,
	       char *errmsg);

/* conn_fd.c: add a channel's fd to the epoll set when the channel is made
 * (nothing while no rdmig_conn_fd call has made the set), close the epoll
 * and kick fds (destroy). */
int rdmig__conn_fd_watch(struct rdmig_conn *c, int fd, const char *what);
void rdmig__conn_fd_close(struct rdmig_conn *c);
/* completion.c: get the channels ready for a sleep on the epoll fd:
 * consume their pending events, arm the CQs, reap what came meanwhile;
 * *pending when a call would find work at once (nothing can then wake
 * the fd).  Error: the connection failed (errmsg). */
int rdmig__conn_fd_prepare(struct rdmig_conn *c, bool *pending);

/* completion.c: wait until the send queue has room for one more WR. */
int rdmig__conn_sq_wait_room(struct rdmig_conn *c);

/* channel.c: post the receive of a slot (no-op when already posted). */
int rdmig__conn_post_recv(struct rdmig_conn *c, enum conn_slot slot);
/* completion.c: when TYPE ends the connection (DISCONNECTED,
 * DEVICE_REMOVAL, TIMEWAIT_EXIT), mark it disconnected with the event as
 * the reason, and say so. */
bool rdmig__conn_cm_event_ends(struct rdmig_conn *c, enum rdma_cm_event_type type);
/* channel.c: post a signaled zero-length WRITE, so that every WR before
 * it is reported done when it is. */
int rdmig__conn_post_flush(struct rdmig_conn *c);
/* channel.c: " (the connection is in error ...)" when the QP is in the
 * error state, to follow a failed post's errno; else "". */
const char *rdmig__conn_qp_state_hint(const struct rdmig_conn *c);
#endif
