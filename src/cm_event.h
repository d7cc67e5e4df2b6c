/* cm_event.h - waiting for one rdma_cm event with a timeout. */
#ifndef RDMIG_CM_EVENT_H
#define RDMIG_CM_EVENT_H

#include <rdma/rdma_cma.h>

/*
 * Wait up to timeout_ms (<= 0: forever) for the next event on ec (whose fd
 * must be non-blocking).  Returns 0 with *ev set (to be acked by the
 * caller), or a positive errno (ETIMEDOUT on timeout).
 */
int cm_event_wait(struct rdma_event_channel *ec, int timeout_ms, struct rdma_cm_event **ev);

/* A non-blocking rdma_cm event channel, or NULL with errno set. */
struct rdma_event_channel *cm_channel_create(void);

#endif
