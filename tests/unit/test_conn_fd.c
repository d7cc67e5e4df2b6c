/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_conn_fd.c - rdmig_conn_fd without a device: NULL, a connection not
 * yet connected (its fd exists, stays the same, has nothing to say), and
 * that rdmig_conn_destroy closes it.
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

CHECK_MAIN()
