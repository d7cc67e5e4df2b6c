/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_conn_fd.c - rdmig_conn_fd without a device: NULL, a connection not
 * yet connected (its fd exists, stays the same, has nothing to say), and
 * that rdmig_conn_destroy closes it; a listener's fd and rdmig_try_accept
 * before it listens (after: dev_event_loop, which needs rdma_cm).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include "check.h"
#include "rdmig.h"

TEST(no_connection_has_no_fd)
{
	CHECK_EQ(rdmig_conn_fd(NULL), -1);
}

TEST(a_fresh_connection_has_a_quiet_fd_until_destroyed)
{
	struct rdmig_conn *c = NULL;
	struct pollfd p = {.events = POLLIN};
	int fd;

	CHECK_OK(rdmig_conn_create(NULL, &c));
	fd = rdmig_conn_fd(c);
	CHECK(fd >= 0);
	CHECK_EQ(rdmig_conn_fd(c), fd); /* the same fd before every sleep */
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC); /* not leaked into children */
	p.fd = fd;
	CHECK_EQ(poll(&p, 1, 0), 0); /* not connected: nothing can come */
	rdmig_conn_destroy(c);
	CHECK_EQ(fcntl(fd, F_GETFD), -1); /* the library's: closed with c */
	CHECK_EQ(errno, EBADF);
}

TEST(a_listener_has_no_fd_before_it_listens)
{
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = (struct rdmig_conn *)&c; /* must be set to NULL */

	CHECK_EQ(rdmig_listener_fd(NULL), -1);
	CHECK_EQ(rdmig_try_accept(NULL, &c), RDMIG_EINVAL);
	CHECK_OK(rdmig_listener_create(NULL, &l));
	CHECK_EQ(rdmig_listener_fd(l), -1);
	CHECK_EQ(rdmig_try_accept(l, NULL), RDMIG_EINVAL);
	CHECK_EQ(rdmig_try_accept(l, &c), RDMIG_ESTATE);
	CHECK(c == NULL);
	CHECK_STR_CONTAINS(rdmig_listener_errmsg(l), "before listen");
	rdmig_listener_destroy(l);
}

TEST(rdmig_eagain_is_rdmigs_own_code_and_no_failure_text)
{
	CHECK(!RDMIG_IS_ERRNO(RDMIG_EAGAIN));
	CHECK(RDMIG_EAGAIN != -EAGAIN);
	CHECK_STR_CONTAINS(rdmig_strerror(RDMIG_EAGAIN), "call again");
	CHECK_STR_CONTAINS(rdmig_err_name(RDMIG_EAGAIN), "RDMIG_EAGAIN");
}

CHECK_MAIN()
