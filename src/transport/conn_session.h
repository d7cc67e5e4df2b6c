/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * conn_session.h - what a session over a connection (the image sets,
 * images_*.c) asks of it beyond rdmig.h, so that the session sees the
 * connection as the opaque handle it is and conn.h stays the transport's.
 * Defined by the transport's files (conn_session.c, channel.c, connect.c).
 * Internal.
 */
#ifndef RDMIG_CONN_SESSION_H
#define RDMIG_CONN_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include "log.h" /* RDMIG_ERRMSG_SIZE */
#include "rdmig.h"

/* conn_session.c: the options the connection was created with. */
const struct rdmig_opts *rdmig__conn_opts(const struct rdmig_conn *c);
/* conn_session.c: cancelled by rdmig_conn_cancel or its opts.cancel. */
bool rdmig__conn_cancelled(const struct rdmig_conn *c);
/* conn_session.c: its error buffer (RDMIG_ERRMSG_SIZE bytes), which
 * rdmig_conn_errmsg returns: a session created over it reports there. */
char *rdmig__conn_errbuf(struct rdmig_conn *c);
/* channel.c: rdmig_reply, signaled: its own completion then says
 * the peer has it, with no flush after it that a peer already gone would
 * fail. */
int rdmig__conn_reply_signaled(struct rdmig_conn *c, const struct rdmig_msg *msg);

/* channel.c: wait (at most timeout_ms; <= 0: the connection's timeout)
 * until every posted send-side WR completed. */
int rdmig__conn_flush_sends(struct rdmig_conn *c, int timeout_ms);
/* connect.c: the end of a migration that went well: flush, disconnect,
 * and wait (at most the connection's timeout) for the peer's answer, so
 * that a lost disconnect request is sent again.  A peer that never
 * answers is logged, not a failure; a failed flush is. */
int rdmig__conn_close_after_end(struct rdmig_conn *c);
/* connect.c: the same without the flush, for an end whose every send the
 * peer has answered (the verdict came after them): the peer may already
 * be gone, and nothing is left to complete. */
int rdmig__conn_disconnect_and_wait(struct rdmig_conn *c);
/* channel.c: take a message the peer sends without our READY, into the
 * READY-slot receive our last rdmig_send posted (the verdict after the
 * image stream's trailer), waiting at most timeout_ms (<= 0: no bound).
 * RDMIG_ESTATE when no such receive is posted. */
int rdmig__conn_take_unasked(struct rdmig_conn *c, uint32_t expect, int timeout_ms,
			     struct rdmig_msg *out);

#endif
