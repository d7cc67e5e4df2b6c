/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * conn_engine.h - what the engines' seam over a connection
 * (engine/engine_io_conn.c) asks of it: its protection domain, the
 * negotiated capabilities, its cancel flag and the calls that move
 * writes and control messages, so that conn.h stays the transport's.
 * Defined by the transport's files (conn_engine.c, channel.c,
 * channel_write.c).  Internal.
 */
#ifndef RDMIG_CONN_ENGINE_H
#define RDMIG_CONN_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "conn_session.h"

/* conn_engine.c: the protection domain its memory is registered on. */
struct ibv_pd *rdmig__conn_pd(const struct rdmig_conn *c);
/* conn_engine.c: the capabilities both ends agreed on. */
const struct rdmig_caps *rdmig__conn_caps(const struct rdmig_conn *c);
/* conn_engine.c: the flag rdmig_conn_cancel sets, from any thread. */
const atomic_bool *rdmig__conn_cancel_flag(const struct rdmig_conn *c);
/* conn_engine.c: the capability exchange is done. */
bool rdmig__conn_established(const struct rdmig_conn *c);
/* conn_engine.c: the caller's writes posted with a signaled piece. */
uint64_t rdmig__conn_writes_signaled(const struct rdmig_conn *c);

/* channel.c: a request in two halves, so the caller can work while the
 * reply travels (the source registers its own chunk meanwhile). */
int rdmig__conn_request_send(struct rdmig_conn *c, const struct rdmig_msg *msg);
int rdmig__conn_request_reply(struct rdmig_conn *c, uint32_t reply_type, struct rdmig_msg *reply);
/* channel.c: rdmig_recv waiting at most timeout_ms, when that is shorter
 * than the connection's timeout (<= 0: the connection's). */
int rdmig__conn_recv_within(struct rdmig_conn *c, uint32_t expect, int timeout_ms,
			    struct rdmig_msg *out);
/* channel.c: rdmig_recv without the wait: give the peer its READY unless
 * it has it, then take its message if it came; RDMIG_EAGAIN when it did
 * not yet (call again: no second READY goes out). */
int rdmig__conn_try_recv(struct rdmig_conn *c, uint32_t expect, struct rdmig_msg *out);
/* channel_write.c: post one RDMA WRITE (signaled when force or when
 * due), cut and held back to the write window. */
int rdmig__conn_post_write(struct rdmig_conn *c, const void *local, uint32_t len, uint32_t lkey,
		    uint64_t remote, uint32_t rkey, bool force_signal, uint64_t wr_id);

#endif
