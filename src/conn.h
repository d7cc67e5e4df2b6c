/*
 * conn.h - the connection object shared by cm.c (connect/accept),
 * verbs_res.c (PD, CQs, buffers, QP), completion.c (waiting) and channel.c
 * (control messages and READY credits).
 */
#ifndef RDMIG_CONN_H
#define RDMIG_CONN_H

#include <errno.h>
#include <stdbool.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "log.h"
#include "rdmig.h"

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

	/* rdma_cm */
	struct rdma_event_channel *ec; /* this connection's own channel */
	struct rdma_cm_id *id;
	bool established;
	bool disconnected; /* DISCONNECTED (or worse) seen */
	char disconnect_reason[128];

	/* verbs resources (verbs_res.c) */
	struct ibv_pd *pd;
	struct ibv_comp_channel *send_cc, *recv_cc;
	struct ibv_cq *send_cq, *recv_cq;
	uint8_t *bufs; /* SLOT_COUNT * RDMIG_CONTROL_BUFFER */
	struct ibv_mr *buf_mr;
	bool qp_created;
	struct rdmig_inline_info inl;

	/* negotiated capabilities */
	struct rdmig_caps caps;

	/* completion state (completion.c) */
	struct recv_slot recv[2]; /* SLOT_READY, SLOT_DATA */
	bool send_buf_busy;       /* a copied send has not completed yet */
	uint32_t sq_outstanding;  /* signaled sends not yet completed */

	/* credit flow (channel.c) */
	bool ready_owed; /* a READY must arrive before the next send */

	struct rdmig_counters counters;
};

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

/* verbs_res.c: PD, completion channels, CQs, buffers, then the QP through
 * the inline ladder, all on the cm_id's device.  Safe to call destroy on a
 * half-built connection. */
int conn_res_create(struct rdmig_conn *c);
void conn_res_destroy(struct rdmig_conn *c);
/* The QP caps every rdmig connection asks for (the ladder varies inline). */
void conn_qp_base_attr(struct ibv_qp_init_attr *attr, uint32_t max_send_wr, struct ibv_cq *send_cq,
		       struct ibv_cq *recv_cq);

/* Allocate a connection with validated options (src NULL = defaults).  With
 * invalid options *out is still set (errmsg says why) and the code returned. */
int conn_alloc(const struct rdmig_opts *opts, enum conn_role role, struct rdmig_conn **out,
	       char *errmsg);

/* channel.c: post the receive of a slot (no-op when already posted). */
int conn_post_recv(struct rdmig_conn *c, enum conn_slot slot);
/* channel.c: wait (at most timeout_ms) until every posted send completed,
 * so that a disconnect does not flush the last messages away. */
int conn_flush_sends(struct rdmig_conn *c, int timeout_ms);

#endif
