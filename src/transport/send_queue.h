/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * send_queue.h - a connection's send-queue ledger: which send-side work
 * requests (control sends and RDMA WRITEs) are posted, which of them are
 * signaled, which are done, the bytes of RDMA WRITE in flight, and the
 * write window that bounds those bytes.  send_queue.c alone sees its
 * numbers; the connection holds one (conn.h), channel.c and
 * channel_write.c record what they post, completion.c what completed.
 *
 * Every posted WR takes the next sequence number.  Only some are
 * signaled; an RC send queue completes in order, so when a signaled WR
 * completes, it and every WR posted before it are done:
 *
 *   posted:    1  2  3  4  5  6  7        outstanding = posted - completed
 *   signaled:        *        *
 *   completion of 3  ->  completed = 3 (1, 2 were unsignaled)
 *
 * The bytes of RDMA WRITEs are counted the same way (each signaled WR
 * remembers the bytes posted up to it), so that the bytes queued ahead of
 * the next control message can be bounded: the write window.
 */
#ifndef RDMIG_SEND_QUEUE_H
#define RDMIG_SEND_QUEUE_H
#include <stdbool.h>
#include <stdint.h>

struct rdmig_sq;

/* A ledger for a send queue of max_send_wr WRs; NULL when out of memory. */
struct rdmig_sq *rdmig__sq_create(uint32_t max_send_wr);
void rdmig__sq_destroy(struct rdmig_sq *q);

/* A WR was posted (write_bytes: the bytes of an RDMA WRITE, else 0); its
 * sequence number. */
uint64_t rdmig__sq_record(struct rdmig_sq *q, bool signaled, uint32_t write_bytes);
/* The oldest signaled WR in flight completed: it and all before it are
 * done. */
void rdmig__sq_signaled_done(struct rdmig_sq *q);

/* Whether the next WR must be signaled so that no run of max_send_wr/4
 * WRs goes without one (the queue can then always drain). */
bool rdmig__sq_signal_due(const struct rdmig_sq *q);
/* Whether the newest WR posted is unsignaled (it completes only with a
 * later signaled one: a wait for it needs a flush). */
bool rdmig__sq_tail_unsignaled(const struct rdmig_sq *q);
/* Posted and not yet done; whether one more WR fits the queue. */
uint64_t rdmig__sq_outstanding(const struct rdmig_sq *q);
bool rdmig__sq_has_room(const struct rdmig_sq *q);
/* The sequence number up to which every WR is done (moves on with each
 * signaled completion). */
uint64_t rdmig__sq_completed(const struct rdmig_sq *q);

/* The write window (channel_write.c says why): sized from the rate the
 * writes completed at over the last measure, to what the path carries in
 * a quarter of timeout_ms (<= 0: unbounded); at most a quarter of it in
 * one WR; room for len more bytes; whether a write of len bytes must be
 * signaled so that the window always holds one whose completion frees
 * it. */
void rdmig__sq_window_measure(struct rdmig_sq *q, int timeout_ms, int64_t now_ms);
uint32_t rdmig__sq_window_piece_max(const struct rdmig_sq *q);
bool rdmig__sq_window_room(const struct rdmig_sq *q, uint32_t len);
bool rdmig__sq_window_signal_due(const struct rdmig_sq *q, uint32_t len);

#endif
