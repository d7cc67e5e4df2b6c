/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * conn_fd.c - rdmig_conn_fd: one fd an event loop can sleep on for a
 * connection.
 *
 * An epoll fd holds the connection's rdma_cm event channel, its two
 * completion channels and a "kick" eventfd.  A completion channel only
 * becomes readable for a CQ that was armed, and only for completions after
 * the arming, so rdmig_conn_fd gets everything ready for a sleep first
 * (rdmig__conn_fd_prepare): what already came is reaped, and when that
 * leaves work for the next call the kick makes the fd readable at once.
 */
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "conn.h"

static int watch(struct rdmig_conn *c, int fd, const char *what)
{
	/* level-triggered: readable for as long as something is pending */
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev))
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno),
				   "epoll_ctl (%s channel): %s", what, strerror(errno));
	return 0;
}

/* The set is made at the first rdmig_conn_fd call, not with the handle:
 * a connection whose owner never asks for the fd (the tool, most callers)
 * costs no epoll instance and no eventfd.  It takes the channels the
 * connection has by then; rdmig__conn_fd_watch adds later ones. */
static int open_set(struct rdmig_conn *c)
{
	int ret;

	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno), "epoll_create1: %s",
				   strerror(errno));
	c->kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->kickfd < 0)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno), "eventfd: %s",
				   strerror(errno));
	ret = watch(c, c->kickfd, "kick");
	if (!ret && rdmig__cml_channel(c->cm))
		ret = watch(c, rdmig__cml_channel_fd(c->cm), "rdma_cm");
	if (!ret && rdmig__vres_cc(c->res, VRES_SEND))
		ret = watch(c, rdmig__vres_cc(c->res, VRES_SEND)->fd, "send");
	if (!ret && rdmig__vres_cc(c->res, VRES_RECV))
		ret = watch(c, rdmig__vres_cc(c->res, VRES_RECV)->fd, "recv");
	return ret;
}

int rdmig__conn_fd_watch(struct rdmig_conn *c, int fd, const char *what)
{
	return c->epfd < 0 ? 0 : watch(c, fd, what);
}

void rdmig__conn_fd_init(struct rdmig_conn *c)
{
	c->epfd = c->kickfd = -1;
}

void rdmig__conn_fd_close(struct rdmig_conn *c)
{
	/* A closed channel leaves the epoll set by itself; these are ours. */
	if (c->kickfd >= 0)
		close(c->kickfd);
	if (c->epfd >= 0)
		close(c->epfd);
	c->kickfd = c->epfd = -1;
}

/* rdmig_conn_fd's failure: errmsg says why, the caller gets -1. */
static int eventfd_failed(struct rdmig_conn *c, const char *op)
{
	rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno), "eventfd %s: %s", op,
		    strerror(errno));
	return -1;
}

int rdmig_conn_fd(struct rdmig_conn *c)
{
	uint64_t n;
	bool pending;

	if (!c)
		return -1;
	if (c->epfd < 0 && open_set(c)) {
		rdmig__conn_fd_close(c);
		return -1;
	}
	/* The last kick was for work the caller has since had a call for. */
	if (read(c->kickfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return eventfd_failed(c, "read");
	if (rdmig__conn_fd_prepare(c, &pending))
		return -1;
	n = 1;
	if (pending && write(c->kickfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return eventfd_failed(c, "write");
	return c->epfd;
}
