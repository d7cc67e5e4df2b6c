/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cm_event.h - what every wait of the library shares: waiting for one
 * rdma_cm event with a timeout, and cancellation (rdmig_opts.cancel and
 * cancel_fd).
 */
#ifndef RDMIG_CM_EVENT_H
#define RDMIG_CM_EVENT_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <rdma/rdma_cma.h>
#include "opts.h"
#include "rdmig.h"

/* A wait sleeps at most this long at a time when it can be cancelled by
 * the flag: the signal that sets it may land just before poll(2) starts
 * sleeping, and then nothing else would wake it.  cancel_fd needs no such
 * slice: it is polled with the wait's own fds, so it wakes the wait. */
#define WAIT_CANCEL_SLICE_MS 100

/* The longest one poll(2) of a wait may sleep, given the time left. */
static inline int wait_slice_ms(const struct rdmig_opts *opts, long long left_ms)
{
	long long cap = opts && opts->cancel ? WAIT_CANCEL_SLICE_MS : 1000000;
	return (int)(left_ms < 0 || left_ms > cap ? cap : left_ms);
}

/* The code of a positive errno that ended a wait: -errno (ETIMEDOUT and
 * ECANCELED are RDMIG_ETIMEDOUT and RDMIG_ECANCELED). */
static inline int wait_errcode(int err)
{
	return err > 0 ? -err : -EIO;
}

/*
 * Wait up to timeout_ms (<= 0: forever) for the next event on ec (whose fd
 * must be non-blocking).  Returns 0 with *ev set (to be acked by the
 * caller), or a positive errno: ETIMEDOUT on timeout, and in the
 * cancellable form ECANCELED when opts->cancel was set or opts->cancel_fd
 * became readable (opts may be NULL).
 * Every wait of the library's handles is the cancellable one.
 */
int rdmig__cm_event_wait_cancellable(struct rdma_event_channel *ec, int timeout_ms,
			      const struct rdmig_opts *opts, struct rdma_cm_event **ev);
int rdmig__cm_event_wait(struct rdma_event_channel *ec, int timeout_ms, struct rdma_cm_event **ev);


/* The pollfd of the caller's cancel_fd (fd -1, which poll(2) skips, when
 * there is none), to poll beside a wait's own fds. */
static inline struct pollfd cancel_pollfd(const struct rdmig_opts *opts)
{
	return (struct pollfd){.fd = opts ? opts->cancel_fd : -1, .events = POLLIN};
}

/* A non-blocking rdma_cm event channel, or NULL with errno set. */
struct rdma_event_channel *rdmig__cm_channel_create(void);

#endif
