/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * devenv.h - running a test on a real RDMA device, with two processes.
 *
 * Device tests run inside scripts/rdma-vm, which exports RDMAVM_RXE_IP and
 * RDMAVM_SIW_IP.  Outside it they FAIL (never skip): a missing device is a
 * broken test setup, not a reason to pass.
 *
 * DEVICE_TEST(name) { ... } defines a body taking `const struct dev *dev`
 * and registers two cases, name_rxe and name_siw.
 */
#ifndef RDMIG_DEVENV_H
#define RDMIG_DEVENV_H

#include "check.h"
#include "rdmig.h"
#include <rdmig/private.h>

struct dev {
	const char *name; /* "rxe0" */
	const char *ip;   /* its address inside the guest */
	const char *kind; /* "rxe" or "siw" */
};

/* Fills *d from the environment; returns 0 or fails the test. */
int dev_lookup(const char *kind, struct dev *d);

#define DEVICE_TEST(name)                                                                          \
	static void devtest_##name(const struct dev *dev);                                         \
	TEST(name##_rxe)                                                                           \
	{                                                                                          \
		struct dev d;                                                                      \
		if (dev_lookup("rxe", &d) == 0)                                                    \
			devtest_##name(&d);                                                        \
	}                                                                                          \
	TEST(name##_siw)                                                                           \
	{                                                                                          \
		struct dev d;                                                                      \
		if (dev_lookup("siw", &d) == 0)                                                    \
			devtest_##name(&d);                                                        \
	}                                                                                          \
	static void devtest_##name(const struct dev *dev)

/*
 * The destination half of a test runs in a child process: it creates a
 * listener on dev->ip (port 0), reports the port, accepts one connection
 * and calls dest(conn, arg) (or dest_accept_failed(listener, code, arg) when
 * accept fails and that callback is given).  CHECK failures in the child
 * fail the test.  The parent gets the port and runs the source half.
 */
struct pair {
	const struct dev *dev;
	struct rdmig_opts dest_opts;
	void (*dest)(struct rdmig_conn *c, void *arg);
	void (*dest_accept_failed)(struct rdmig_listener *l, int code, void *arg);
	/* instead of the accept and dest: the test accepts itself */
	void (*dest_listener)(struct rdmig_listener *l, void *arg);
	void *arg;
	/* internal */
	int pid;
	char port[8];
};

/* Start the destination child; returns 0 with p->port set. */
int pair_start(struct pair *p);
/* Wait (at most timeout_s) for the child; returns 0 when it passed. */
int pair_finish(struct pair *p, int timeout_s);

/* Options for tests: short timeouts, logs to stderr when RDMIG_TEST_DEBUG. */
void test_opts(struct rdmig_opts *o);

/* Connect a source to the pair's destination; fails the test on error. */
int test_connect(const struct pair *p, const struct rdmig_opts *o, struct rdmig_conn **c);

/* Deterministic test bytes. */
void fill_pattern(void *buf, size_t len, uint32_t seed);

#endif
