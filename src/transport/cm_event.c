/* SPDX-License-Identifier: BSD-2-Clause */
/* cm_event.c - rdma_cm event channels that never block forever, and cancellable waits. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include "clock.h"
#include "cm_event.h"

struct rdma_event_channel *rdmig__cm_channel_create(void)
{
	struct rdma_event_channel *ec = rdma_create_event_channel();
	int flags;

	if (!ec)
		return NULL;
	flags = fcntl(ec->fd, F_GETFL);
	if (flags < 0 || fcntl(ec->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		int err = errno;
		rdma_destroy_event_channel(ec);
		errno = err;
		return NULL;
	}
	return ec;
}

int rdmig__cm_event_wait_cancellable(struct rdma_event_channel *ec, int timeout_ms,
			      const struct rdmig_opts *opts, struct rdma_cm_event **ev)
{
	long long deadline = timeout_ms > 0 ? rdmig__now_ms() + timeout_ms : -1;

	for (;;) {
		struct pollfd pfd[2] = {{.fd = ec->fd, .events = POLLIN}, cancel_pollfd(opts)};
		long long left = -1;

		if (rdma_get_cm_event(ec, ev) == 0)
			return 0;
		if (errno != EAGAIN)
			return errno;
		if (wait_cancelled(opts))
			return ECANCELED;
		if (deadline >= 0) {
			left = deadline - rdmig__now_ms();
			if (left <= 0)
				return ETIMEDOUT;
		}
		/* EINTR: a signal, maybe the one that cancels: look again.
		 * A readable cancel_fd ends the poll; the next turn sees it. */
		if (poll(pfd, 2, wait_slice_ms(opts, left)) < 0 && errno != EINTR)
			return errno;
	}
}

int rdmig__cm_event_wait(struct rdma_event_channel *ec, int timeout_ms, struct rdma_cm_event **ev)
{
	return rdmig__cm_event_wait_cancellable(ec, timeout_ms, NULL, ev);
}
