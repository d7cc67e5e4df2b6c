/* cm_event.c - rdma_cm event channels that never block forever. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include "cm_event.h"

struct rdma_event_channel *cm_channel_create(void)
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

static long long clock_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cm_event_wait(struct rdma_event_channel *ec, int timeout_ms, struct rdma_cm_event **ev)
{
	long long deadline = timeout_ms > 0 ? clock_ms() + timeout_ms : -1;

	for (;;) {
		struct pollfd pfd = {.fd = ec->fd, .events = POLLIN};
		int wait = -1;

		if (rdma_get_cm_event(ec, ev) == 0)
			return 0;
		if (errno != EAGAIN)
			return errno;
		if (deadline >= 0) {
			long long left = deadline - clock_ms();
			if (left <= 0)
				return ETIMEDOUT;
			wait = left > 1000000 ? 1000000 : (int)left;
		}
		if (poll(&pfd, 1, wait) < 0 && errno != EINTR)
			return errno;
	}
}
