/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rawpeer.h - a peer that breaks the rules, for the hostile-peer tests.
 *
 * The public API only sends well-formed messages.  These helpers reach into
 * an rdmig connection (src/transport/conn.h) to post any bytes as a SEND, with or
 * without waiting for the peer's READY credit, to post raw RDMA WRITEs, and
 * to connect or accept over rdma_cm with any private data.
 */
#ifndef RDMIG_RAWPEER_H
#define RDMIG_RAWPEER_H

#include <rdma/rdma_cma.h>
#include <stddef.h>
#include <stdint.h>
#include "devenv.h"

/* A frame: the header as given (len, type, repeat, whatever follows) and
 * payload_len bytes of payload.  Returns the frame's size. */
size_t raw_frame(uint8_t *out, uint32_t type, uint32_t repeat, uint32_t len, const void *payload,
		 size_t payload_len);

/* Post len bytes as one SEND now, ignoring credits, and wait for its
 * completion.  0 or the code of the failed completion. */
int raw_post(struct rdmig_conn *c, const void *bytes, size_t len);

/* Like rdmig_send, but the bytes are not checked: take the owed READY, post
 * the READY-slot receive, post the bytes; a READY is then owed again. */
int raw_send(struct rdmig_conn *c, const void *bytes, size_t len);

/* Wait for the next message in the READY slot without sending READY (the
 * peer sends without a credit, e.g. ERROR); returns rdmig_msg_parse's code. */
int raw_wait_message(struct rdmig_conn *c);

/* Wait until the connection ends (the peer left or a work request failed):
 * RDMIG_EDISCONNECTED, RDMIG_ECOMPLETION, or RDMIG_ETIMEDOUT. */
int raw_wait_end(struct rdmig_conn *c);

/* One signaled RDMA WRITE of len pattern bytes to remote/rkey; waits for its
 * completion: 0 or the code of the failure. */
int raw_write(struct rdmig_conn *c, uint64_t remote, uint32_t rkey, uint32_t len);

/* Register len bytes at addr for remote writes on the connection's PD. */
struct ibv_mr *raw_reg_remote(struct rdmig_conn *c, void *addr, size_t len);

/* A bare rdma_cm source that connects with any private data. */
struct raw_cm {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	enum rdma_cm_event_type event; /* how the connect ended */
	uint8_t pdata[RDMIG_CAPS_SIZE]; /* the first bytes of the peer's private data */
	size_t plen;
};

/* Connect to ip:port with pdata; r->event says how it ended.  0, or -1 when
 * no connect could be attempted (the reason is printed). */
int raw_cm_connect(struct raw_cm *r, const char *ip, const char *port, const void *pdata,
		   uint8_t plen);
void raw_cm_close(struct raw_cm *r);

/* How a requester that sends a valid request goes away. */
enum raw_vanish {
	RAW_VANISH_AT_ONCE,      /* with a QP, closed right after rdma_connect */
	RAW_VANISH_AFTER_ACCEPT, /* no QP: waits for the destination's accept
				  * (CONNECT_RESPONSE), then closes instead of
				  * completing the handshake (InfiniBand, RoCE) */
};
/* Connect to ip:port with pdata and go away as `how` says.  0, or -1 when
 * it could not (the reason is printed). */
int raw_cm_vanish(const char *ip, const char *port, const void *pdata, uint8_t plen,
		  enum raw_vanish how);

/* A bare rdma_cm destination in a child process: listens on dev's address,
 * accepts one connection with echo as its private data, and stays until the
 * source leaves.  Sets p->pid and p->port; finish with pair_finish. */
int raw_listener_start(struct pair *p, const void *echo, uint8_t echo_len);

#endif
