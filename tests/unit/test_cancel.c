/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_cancel.c - rdmig_opts.cancel_fd: its default for new and old
 * callers, its validation, what counts as "cancel", and (where the host
 * has the rdma_cm device) that an rdma_cm wait ends at once on it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "cm_event.h"
#include "log.h"
#include "opts.h"
#include "rdmig.h"

TEST(opts_init_leaves_no_cancel_fd)
{
	struct rdmig_opts o, got;
	char err[RDMIG_ERRMSG_SIZE] = "";

	memset(&o, 0, sizeof(o)); /* 0 is stdin: init must not leave it */
	rdmig_opts_init(&o);
	CHECK_EQ(o.cancel_fd, -1);
	CHECK_OK(rdmig__opts_copy(&got, &o, err));
	CHECK_EQ(got.cancel_fd, -1);
	CHECK_OK(rdmig__opts_copy(&got, NULL, err));
	CHECK_EQ(got.cancel_fd, -1);
}

TEST(opts_of_an_older_program_have_no_cancel_fd)
{
	struct rdmig_opts o, got;
	char err[RDMIG_ERRMSG_SIZE] = "";

	/* built against the header before cancel_fd: its bytes past the old
	 * size are whatever the caller had there (0 here, i.e. stdin) */
	memset(&o, 0, sizeof(o));
	rdmig_opts_init_sized(&o, offsetof(struct rdmig_opts, cancel_fd));
	CHECK_OK(rdmig__opts_copy(&got, &o, err));
	CHECK_EQ(got.cancel_fd, -1);
	CHECK(!wait_cancelled(&got));
}

TEST(a_cancel_fd_below_minus_one_is_invalid)
{
	struct rdmig_opts o, got;
	char err[RDMIG_ERRMSG_SIZE] = "";

	rdmig_opts_init(&o);
	o.cancel_fd = -2;
	CHECK_EQ(rdmig__opts_copy(&got, &o, err), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(err, "cancel_fd");
	o.cancel_fd = 7;
	CHECK_OK(rdmig__opts_copy(&got, &o, err));
	CHECK_EQ(got.cancel_fd, 7);
}

TEST(a_readable_cancel_fd_cancels_until_drained)
{
	struct rdmig_opts o;
	int p[2];
	char b = 1;

	CHECK_OK(pipe2(p, O_NONBLOCK | O_CLOEXEC));
	rdmig_opts_init(&o);
	o.cancel_fd = p[0];
	CHECK(!wait_cancelled(&o));
	CHECK_EQ(write(p[1], &b, 1), 1);
	CHECK(wait_cancelled(&o));
	CHECK(wait_cancelled(&o)); /* the library never drains it */
	CHECK_EQ(read(p[0], &b, 1), 1); /* the caller does, to wait again */
	CHECK(!wait_cancelled(&o));
	close(p[1]); /* hung up: the writer is gone, nothing can wake us */
	CHECK(wait_cancelled(&o));
	close(p[0]);
}

TEST(the_flag_still_cancels_beside_a_cancel_fd)
{
	static volatile sig_atomic_t flag;
	struct rdmig_opts o;
	int p[2];

	CHECK_OK(pipe2(p, O_NONBLOCK | O_CLOEXEC));
	rdmig_opts_init(&o);
	o.cancel = &flag;
	o.cancel_fd = p[0];
	CHECK(!wait_cancelled(&o));
	flag = 1;
	CHECK(wait_cancelled(&o));
	flag = 0;
	close(p[0]);
	close(p[1]);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Writes one byte to *fd after 50 ms: the "signal handler". */
static void *write_later(void *arg)
{
	const struct timespec d = {0, 50 * 1000 * 1000};
	char b = 1;

	nanosleep(&d, NULL);
	if (write(*(int *)arg, &b, 1) != 1)
		perror("write");
	return NULL;
}

TEST(an_rdma_cm_wait_ends_at_once_on_the_cancel_fd)
{
	struct rdma_event_channel *ec = rdmig__cm_channel_create();
	struct rdma_cm_event *ev = NULL;
	struct rdmig_opts o;
	pthread_t t;
	long long t0;
	int p[2];

	/* needs /dev/infiniband/rdma_cm (rdma_ucm): a device case, run in the
	 * test guest (tests/CMakeLists.txt), where its absence is a failure */
	if (!ec)
		CHECK_FAIL_AT("rdma_create_event_channel: %s (no rdma_ucm?)", strerror(errno));
	CHECK_OK(pipe2(p, O_NONBLOCK | O_CLOEXEC));
	rdmig_opts_init(&o);
	o.cancel_fd = p[0];
	t0 = now_ms();
	CHECK_OK(pthread_create(&t, NULL, write_later, &p[1]));
	/* no timeout and no flag: only the fd can end this wait */
	CHECK_EQ(rdmig__cm_event_wait_cancellable(ec, 0, &o, &ev), ECANCELED);
	CHECK(now_ms() - t0 < 1000);
	CHECK_OK(pthread_join(t, NULL));
	close(p[0]);
	close(p[1]);
	rdma_destroy_event_channel(ec);
}

CHECK_MAIN()
