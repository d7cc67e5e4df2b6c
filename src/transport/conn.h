/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * conn.h - the connection handle, the transport's alone (the layers above
 * see it through conn_session.h and conn_engine.h).  It is a handle over
 * four parts, each an opaque object whose one file edits it: the rdma_cm
 * side (cm_link.c), the verbs resources (verbs_res.c), the control
 * channel's slots and credits (channel.c) and the send queue's ledger and
 * write window (send_queue.c).  What stays here is the connection's own:
 * its options and error buffer, role and capabilities, counters, the
 * epoll fd (conn_fd.c), the cancel flag and the admission hold
 * (admission.c, through admission.h).
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
#include "send_queue.h"
#include "admission.h"
#include "qp_attr.h"
#include "cm_link.h"
#include "verbs_res.h"
#include "credits.h"

/* The engines (engine.h) reach a connection only through engine_io.h. */
#ifdef RDMIG_ENGINE_H
#error "engine code must not include conn.h: go through engine_io.h"
#endif

enum conn_role { ROLE_SOURCE, ROLE_DEST };

struct rdmig_conn {
	struct rdmig_opts opts;
	char errmsg[RDMIG_ERRMSG_SIZE];
	enum conn_role role;

	/* the rdma_cm side (cm_link.h, its one owner): the event channel,
	 * the cm_id, established, ended and why; made with the handle */
	struct rdmig_cm_link *cm;

	/* the verbs resources (verbs_res.h, their one owner): PD, CQs and
	 * their channels, the control buffers, the QP; made once the cm_id
	 * knows its device */
	struct rdmig_vres *res;
	/* the receive side (credits.h, its one owner): the receive slots
	 * and the READY credits; made with the handle */
	struct rdmig_rx *rx;
	/* the send side of the control channel (channel.c, its one owner):
	 * the copied send's buffer, the next send's signal, what became of
	 * inline posts; made with the handle */
	struct rdmig_channel *ch;

	/* negotiated capabilities */
	struct rdmig_caps caps;
	uint32_t cap_version; /* what the source sends: 1 (tests send others) */

	/* the send queue's ledger and write window (send_queue.h, its one
	 * owner): what is posted, signaled and done; created with the QP's
	 * resources */
	struct rdmig_sq *sq;
	uint64_t writes_signaled; /* the caller's writes with a signaled piece */

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

static inline uint8_t *conn_slot_buf(const struct rdmig_conn *c, enum conn_slot s)
{
	return rdmig__vres_slot(c->res, s);
}

/* channel.c: the channel's state, made and freed with the connection. */
struct rdmig_channel *rdmig__channel_create(void);
void rdmig__channel_destroy(struct rdmig_channel *ch);
/* channel.c: the inline size the QP was granted (0 until it is made:
 * every message goes copied). */
void rdmig__channel_set_inline(struct rdmig_channel *ch, uint32_t granted);

/* connect.c: make the connection's verbs resources and send queue
 * ledger once its cm_id knows the device, and watch their channels in
 * the epoll set (errmsg says why not); free them (safe when none). */
int rdmig__conn_res_create(struct rdmig_conn *c);
void rdmig__conn_res_destroy(struct rdmig_conn *c);

/* connect.c: allocate a connection with validated options (src NULL = defaults).  On
 * failure *out is NULL, errmsg (may be NULL) says why and the code is
 * returned. */
int rdmig__conn_alloc(const struct rdmig_opts *opts, enum conn_role role, struct rdmig_conn **out,
	       char *errmsg);

/* conn_fd.c: add a channel's fd to the epoll set when the channel is made
 * (nothing while no rdmig_conn_fd call has made the set), close the epoll
 * and kick fds (destroy). */
int rdmig__conn_fd_watch(struct rdmig_conn *c, int fd, const char *what);
void rdmig__conn_fd_close(struct rdmig_conn *c);
/* conn_fd.c: a new connection has no epoll set (rdmig_conn_fd makes it). */
void rdmig__conn_fd_init(struct rdmig_conn *c);
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
/* channel_flush.c: post a signaled zero-length WRITE, so that every WR before
 * it is reported done when it is. */
int rdmig__conn_post_flush(struct rdmig_conn *c);
#endif
