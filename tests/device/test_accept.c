/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_accept.c - accept cannot be held: requesters that send a
 * valid connection request and go away before the connection is
 * established do not end rdmig_accept, and the real source that comes
 * after them is served.
 *
 * Before the listener kept handshakes in flight, the destination waited for each accepted request's
 * ESTABLISHED and ended rdmig_accept (and `rdmig recv`) when the
 * requester went away instead; a requester gone before the QP was made
 * failed every inline rung with EINVAL and was blamed on the inline
 * ladder.  Now handshakes run on the listener's channel, one that ends
 * (REJECTED, reset, nothing before its deadline) is dropped, and the wait
 * goes on.
 *
 * On iWARP a requester that vanishes after our accept was established on
 * our side (iWARP's handshake has no third message), so the connection
 * handed out dies before its first message: the test's destination, like
 * any careful caller there, accepts again (dest_accepts_until_the_real_source).
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

/*
 * Accept until the real source: its first message says so.  On iWARP
 * (siw) our side of a connection is ESTABLISHED as soon as our accept (the
 * MPA reply) went out, with no third message from the requester; one that
 * vanished right after its request is then a connection that dies before
 * its first message, and a destination accepts again.  On InfiniBand and
 * RoCE (rxe) the requester's RTU completes the handshake, so a vanished
 * requester never reaches ESTABLISHED and nothing but the real source may
 * be accepted.
 */
struct dest_verdict {
	bool iwarp;
	unsigned died_established; /* accepted, then gone before a message */
};

static void dest_accepts_until_the_real_source(struct rdmig_listener *l, void *arg)
{
	struct dest_verdict *v = arg;

	for (;;) {
		struct rdmig_conn *c = NULL;
		struct rdmig_msg m;
		int ret = rdmig_accept(l, &c);

		if (ret)
			CHECK_FAIL_AT("accept ended with %s (%s) before the real source came",
				      rdmig_err_name(ret), rdmig_listener_errmsg(l));
		ret = rdmig_recv(c, RDMIG_MSG_QEMU_FILE, &m);
		if (ret == RDMIG_EDISCONNECTED && v->iwarp && v->died_established < VANISHERS) {
			v->died_established++;
			rdmig_conn_destroy(c);
			continue;
		}
		if (ret)
			fprintf(stderr, "dest: %s\n", rdmig_conn_errmsg(c));
		CHECK_EQ(ret, 0);
		CHECK_EQ(m.len, sizeof(hello));
		CHECK_MEM_EQ(m.payload, hello, sizeof(hello));
		fprintf(stderr, "dest: the real source accepted after %u vanished requester%s "
			"that our side saw established\n", v->died_established,
			v->died_established == 1 ? "" : "s");
		rdmig_conn_destroy(c);
		return;
	}
}

DEVICE_TEST(requesters_that_vanish_do_not_hold_the_accept)
{
	struct dest_verdict v = {.iwarp = !strcmp(dev->kind, "siw")};
	struct pair p = {.dev = dev, .dest_listener = dest_accepts_until_the_real_source,
			 .arg = &v};
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
