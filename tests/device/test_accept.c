/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_accept.c - accept cannot be held (issue 30): requesters that send a
 * valid connection request and go away before the connection is
 * established do not end rdmig_accept, and the real source that comes
 * after them is served.
 *
 * Before issue 30 the destination waited for each accepted request's
 * ESTABLISHED and ended rdmig_accept (and `rdmig recv`) when the
 * requester went away instead; a requester gone before the QP was made
 * failed every inline rung with EINVAL and was blamed on the inline
 * ladder.  Now handshakes run on the listener's channel, one that ends
 * (REJECTED, reset, nothing before its deadline) is dropped, and the wait
 * goes on.
 *
 * Two ways to vanish (rawpeer.h): right after rdma_connect, with a QP
 * (both devices: the destination may find the requester gone while it
 * makes the QP, or after its accept), and, on InfiniBand/RoCE (rxe), after
 * the destination's accept arrived, without completing the handshake
 * (iWARP has no connect without a QP).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "rawpeer.h"

/* Requesters that vanish before the real source: more than the
 * handshakes a listener keeps in flight (8), so the oldest are dropped
 * for new ones too. */
#define VANISHERS 12

static const char hello[] = "the real source";

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The connection accepted must be the real source's: its first message. */
static void dest_takes_the_real_source(struct rdmig_conn *c, void *arg)
{
	struct rdmig_msg m;

	(void)arg;
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_QEMU_FILE, &m));
	CHECK_EQ(m.len, sizeof(hello));
	CHECK_MEM_EQ(m.payload, hello, sizeof(hello));
}

static void dest_must_accept(struct rdmig_listener *l, int code, void *arg)
{
	(void)arg;
	CHECK_FAIL_AT("accept ended with %s (%s) before the real source came",
		      rdmig_err_name(code), rdmig_listener_errmsg(l));
}

DEVICE_TEST(requesters_that_vanish_do_not_hold_the_accept)
{
	struct pair p = {.dev = dev, .dest = dest_takes_the_real_source,
			 .dest_accept_failed = dest_must_accept};
	struct rdmig_caps caps = {RDMIG_CAP_VERSION, 0};
	uint8_t pdata[RDMIG_CAPS_SIZE];
	bool ib = !strcmp(dev->kind, "rxe");
	struct rdmig_conn *c = NULL;
	struct rdmig_opts o;
	double t0, t1;

	rdmig_encode_caps(&caps, pdata);
	test_opts(&p.dest_opts);
	p.dest_opts.timeout_ms = 5000; /* a handshake that hears nothing */
	CHECK_OK(pair_start(&p));
	t0 = now_ms();
	for (int i = 0; i < VANISHERS; i++)
		CHECK_OK(raw_cm_vanish(dev->ip, p.port, pdata, sizeof(pdata),
				       ib && i % 2 ? RAW_VANISH_AFTER_ACCEPT : RAW_VANISH_AT_ONCE));
	t1 = now_ms();
	test_opts(&o);
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, sizeof(hello), hello}));
	fprintf(stderr, "%s: %d requesters vanished in %.0f ms; the real source was connected "
		"%.0f ms after the last\n", dev->name, VANISHERS, t1 - t0, now_ms() - t1);
	CHECK_OK(pair_finish(&p, 60));
	rdmig_conn_destroy(c);
}

CHECK_MAIN()
