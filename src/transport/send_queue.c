/* SPDX-License-Identifier: BSD-2-Clause */
/* send_queue.c - a connection's send-queue ledger and write window
 * (send_queue.h). */
#include <stdlib.h>
#include "send_queue.h"

/* The window's bounds, and how long a rate is measured over. */
#define WINDOW_MIN (4ull << 20)
#define WINDOW_MAX (1ull << 40)
#define WINDOW_MEASURE_MS 100

struct sig_mark {
	uint64_t seq;   /* the signaled WR's sequence number */
	uint64_t bytes; /* bytes_posted once it was posted */
};

struct rdmig_sq {
	uint32_t max_wr;
	uint64_t posted, completed;
	uint64_t last_signaled; /* sequence of the newest signaled WR */
	/* the signaled WRs in flight, oldest at head: max_wr entries */
	struct sig_mark *ring;
	uint32_t head, count;
	/* bytes of RDMA WRITE: posted, done, and posted up to the newest
	 * signaled WR */
	uint64_t bytes_posted, bytes_done, bytes_at_last_signal;
	/* the write window: its size, and the mark its rate is measured from */
	uint64_t window;
	int64_t mark_ms;
	uint64_t mark_bytes;
};

struct rdmig_sq *rdmig__sq_create(uint32_t max_send_wr)
{
	struct rdmig_sq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->max_wr = max_send_wr ? max_send_wr : 1;
	q->ring = calloc(q->max_wr, sizeof(*q->ring));
	if (!q->ring) {
		free(q);
		return NULL;
	}
	return q;
}

void rdmig__sq_destroy(struct rdmig_sq *q)
{
	if (!q)
		return;
	free(q->ring);
	free(q);
}

uint64_t rdmig__sq_record(struct rdmig_sq *q, bool signaled, uint32_t write_bytes)
{
	uint64_t seq = ++q->posted;

	q->bytes_posted += write_bytes;
	if (signaled) {
		q->ring[(q->head + q->count) % q->max_wr] =
			(struct sig_mark){.seq = seq, .bytes = q->bytes_posted};
		q->count++;
		q->last_signaled = seq;
		q->bytes_at_last_signal = q->bytes_posted;
	}
	return seq;
}

void rdmig__sq_signaled_done(struct rdmig_sq *q)
{
	if (!q->count)
		return; /* cannot happen: only signaled WRs complete successfully */
	q->completed = q->ring[q->head].seq;
	q->bytes_done = q->ring[q->head].bytes;
	q->head = (q->head + 1) % q->max_wr;
	q->count--;
}

bool rdmig__sq_signal_due(const struct rdmig_sq *q)
{
	return q->posted + 1 - q->last_signaled >= q->max_wr / 4;
}

bool rdmig__sq_tail_unsignaled(const struct rdmig_sq *q)
{
	return q->last_signaled != q->posted;
}

uint64_t rdmig__sq_outstanding(const struct rdmig_sq *q)
{
	return q->posted - q->completed;
}

bool rdmig__sq_has_room(const struct rdmig_sq *q)
{
	return rdmig__sq_outstanding(q) < q->max_wr;
}

uint64_t rdmig__sq_completed(const struct rdmig_sq *q)
{
	return q->completed;
}

/* Size the window by the rate of the last measure: what completed since
 * the mark, over the time since.  Time with an empty queue counts too, so
 * a source busy elsewhere shrinks its window: the safe direction. */
void rdmig__sq_window_measure(struct rdmig_sq *q, int timeout_ms, int64_t now_ms)
{
	int64_t elapsed;
	uint64_t per_quarter;

	if (timeout_ms <= 0) {
		q->window = WINDOW_MAX;
		return;
	}
	if (!q->mark_ms || !q->window) {
		q->window = WINDOW_MIN;
		q->mark_ms = now_ms;
		q->mark_bytes = q->bytes_done;
		return;
	}
	elapsed = now_ms - q->mark_ms;
	if (elapsed < WINDOW_MEASURE_MS)
		return;
	per_quarter = (q->bytes_done - q->mark_bytes) / (uint64_t)elapsed * (uint64_t)(timeout_ms / 4);
	q->window = per_quarter < WINDOW_MIN ? WINDOW_MIN : per_quarter > WINDOW_MAX ? WINDOW_MAX : per_quarter;
	q->mark_ms = now_ms;
	q->mark_bytes = q->bytes_done;
}

uint32_t rdmig__sq_window_piece_max(const struct rdmig_sq *q)
{
	uint64_t quarter = q->window / 4;

	return quarter > UINT32_MAX ? UINT32_MAX : (uint32_t)quarter;
}

bool rdmig__sq_window_room(const struct rdmig_sq *q, uint32_t len)
{
	uint64_t queued = q->bytes_posted - q->bytes_done;

	return queued == 0 || queued + len <= q->window;
}

bool rdmig__sq_window_signal_due(const struct rdmig_sq *q, uint32_t len)
{
	return rdmig__sq_signal_due(q) ||
	       q->bytes_posted + len - q->bytes_at_last_signal >= rdmig__sq_window_piece_max(q);
}
