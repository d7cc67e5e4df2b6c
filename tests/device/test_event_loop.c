/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_event_loop.c - a destination driven by an event loop on real
 * devices: rdmig_dest_try_next with poll(2) on rdmig_conn_fd
 * against a real source engine (the data arrives byte for byte, the loop
 * sleeps while the source is quiet instead of spinning, one READY per
 * message, rdmig_dest_next mixed in; a cancelled receive leaves its READY
 * out, and the next sends none); and a listener polled on
 * rdmig_listener_fd with rdmig_try_accept, which neither waits for a
 * request before one came nor after it refused one.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "devenv.h"

#define MIB (1024u * 1024u)
#define PAGE 4096u
/* One block: data in chunks 0 and 2, chunk 1 zero (COMPRESS with dynamic
 * registration), a short last chunk. */
#define BLOCK_LEN (3 * MIB + 5000)
/* How long the source stays quiet between its iteration and the end of
 * its stream: the destination's loop must sleep through it. */
#define QUIET_MS 1500

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void make_block(uint8_t *p)
{
	memset(p, 0, BLOCK_LEN);
	fill_pattern(p, MIB, 1);
	fill_pattern(p + 2 * MIB + PAGE, MIB - PAGE + 5000, 2);
}

/* ------------------------------------- the destination's event loop -- */

struct loop_stats {
	unsigned eagains;  /* RDMIG_EAGAIN from rdmig_dest_try_next */
	double longest;    /* the longest sleep on the fd, seconds */
	bool mixed;        /* rdmig_dest_next was called after an RDMIG_EAGAIN */
};

/* Sleep on the connection's fd (at most 20 s: the source is never that
 * quiet); the seconds slept, or -1 when it did not wake. */
static double sleep_on(struct rdmig_conn *c)
{
	struct pollfd p = {.events = POLLIN};
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	p.fd = rdmig_conn_fd(c);
	if (p.fd < 0 || poll(&p, 1, 20000) != 1)
		return -1;
	return elapsed_s(&t0);
}

/* The next event as an event loop gets it: try, sleep, try again.  The
 * first RDMIG_EAGAIN is answered with rdmig_dest_next instead (it must
 * wait for the message the READY asked for, and send no second READY). */
static int loop_next(struct rdmig_conn *c, struct rdmig_dest *d, struct rdmig_event *ev,
		     struct loop_stats *ls)
{
	int ret;

	while ((ret = rdmig_dest_try_next(d, ev)) == RDMIG_EAGAIN) {
		double slept;

		if (ls->eagains++ == 0) {
			ls->mixed = true;
			return rdmig_dest_next(d, ev);
		}
		slept = sleep_on(c);
		if (slept < 0) {
			fprintf(stderr, "dest: rdmig_conn_fd did not wake: %s\n",
				rdmig_conn_errmsg(c));
			return RDMIG_ETIMEDOUT;
		}
		if (slept > ls->longest)
			ls->longest = slept;
	}
	return ret;
}

static void dest_event_loop(struct rdmig_conn *c, void *arg)
{
	uint8_t *mem = mmap(NULL, BLOCK_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	struct rdmig_block block = {"ram", mem, BLOCK_LEN, 0};
	struct rdmig_counters n = {.size = sizeof(n)};
	struct loop_stats ls = {0};
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev = {0};
	char stream[64] = "";
	size_t got = 0;
	uint64_t received = 0;
	uint8_t *want;
	int iterations = 0;

	(void)arg;
	CHECK(mem != MAP_FAILED);
	memset(mem, 0xAA, BLOCK_LEN); /* a missed write or COMPRESS shows */
	CHECK_OK(rdmig_dest_create(c, &d));
	for (;;) {
		CHECK_OK(loop_next(c, d, &ev, &ls));
		if (ev.type == RDMIG_EV_END)
			break;
		if (ev.type == RDMIG_EV_BLOCKS_NEEDED)
			CHECK_OK(rdmig_dest_set_blocks(d, &block, 1));
		if (ev.type == RDMIG_EV_ITERATION_DONE)
			iterations++;
		if (ev.type == RDMIG_EV_STREAM) {
			CHECK(got + ev.len < sizeof(stream));
			memcpy(stream + got, ev.data, ev.len);
			got += ev.len;
		}
	}
	CHECK_EQ(iterations, 1);
	CHECK(!strcmp(stream, "begin;end"));
	want = malloc(BLOCK_LEN);
	make_block(want);
	CHECK_MEM_EQ(mem, want, BLOCK_LEN);
	free(want);
	/* it slept through the source's quiet time, and did not spin */
	CHECK(ls.mixed);
	CHECK(ls.longest >= 0.5);
	CHECK(ls.eagains < 200);
	/* one READY per message: at most one more, for the message the end
	 * came instead of */
	rdmig_conn_counters(c, &n);
	for (int t = 0; t < RDMIG_MSG_TYPE_COUNT; t++)
		received += n.received[t];
	CHECK(n.sent[RDMIG_MSG_READY] >= received);
	CHECK(n.sent[RDMIG_MSG_READY] <= received + 1);
	rdmig_dest_destroy(d);
	munmap(mem, BLOCK_LEN);
}

static void run_event_loop(const struct dev *dev, bool pin_all)
{
	struct pair p = {.dev = dev, .dest = dest_event_loop};
	const struct timespec quiet = {QUIET_MS / 1000, (QUIET_MS % 1000) * 1000000L};
	struct rdmig_block block;
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;
	uint8_t *mem;

	test_opts(&o);
	o.pin_all = pin_all;
	test_opts(&p.dest_opts);
	p.dest_opts.pin_all = true;
	CHECK_OK(pair_start(&p));
	mem = malloc(BLOCK_LEN);
	make_block(mem);
	block = (struct rdmig_block){"ram", mem, BLOCK_LEN, 0};
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_source_create(c, &block, 1, &s));
	CHECK_OK(rdmig_source_write_stream(s, "begin;", 6));
	CHECK_OK(rdmig_source_setup(s));
	CHECK_OK(rdmig_source_write(s, 0, 0, BLOCK_LEN));
	CHECK_OK(rdmig_source_end_iteration(s));
	nanosleep(&quiet, NULL);
	CHECK_OK(rdmig_source_write_stream(s, "end", 4));
	rdmig_source_destroy(s);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 120));
	free(mem);
}

DEVICE_TEST(dest_try_next_sleeps_on_conn_fd)
{
	run_event_loop(dev, false);
}

DEVICE_TEST(dest_try_next_sleeps_on_conn_fd_pin_all)
{
	run_event_loop(dev, true);
}

/* ------------------------------------------- one READY per message -- */

/* The destination's READY goes out once per message: a receive that gave
 * it and was cancelled before the message came leaves it given, and the
 * next receive only waits.  arg: the cancel pipe, whose read end is the
 * destination's opts.cancel_fd. */
static void dest_cancelled_then_receives(struct rdmig_conn *c, void *arg)
{
	const int *cancel = arg;
	struct rdmig_counters n = {.size = sizeof(n)};
	struct rdmig_msg m;
	char b = 1;

	CHECK_EQ(write(cancel[1], &b, 1), 1);
	CHECK_EQ(rdmig_recv(c, RDMIG_MSG_NONE, &m), RDMIG_ECANCELED);
	CHECK_EQ(read(cancel[0], &b, 1), 1);
	rdmig_conn_counters(c, &n);
	CHECK_EQ(n.sent[RDMIG_MSG_READY], 1);
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_QEMU_FILE, &m));
	CHECK_MEM_EQ(m.payload, "x", 1);
	rdmig_conn_counters(c, &n);
	CHECK_EQ(n.sent[RDMIG_MSG_READY], 1);
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_QEMU_FILE, &m));
	CHECK_MEM_EQ(m.payload, "y", 1);
	rdmig_conn_counters(c, &n);
	CHECK_EQ(n.sent[RDMIG_MSG_READY], 2);
}

DEVICE_TEST(a_cancelled_receive_leaves_one_ready_out)
{
	int cancel[2];
	struct pair p = {.dev = dev, .dest = dest_cancelled_then_receives, .arg = cancel};
	const struct timespec late = {1, 0};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_counters n = {.size = sizeof(n)};

	CHECK_OK(pipe(cancel));
	test_opts(&o);
	test_opts(&p.dest_opts);
	p.dest_opts.cancel_fd = cancel[0];
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	nanosleep(&late, NULL); /* the destination's first receive is cancelled meanwhile */
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 1, "x"}));
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 1, "y"}));
	/* no READY for a third: the destination leaves instead */
	CHECK_EQ(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 1, "z"}),
		 RDMIG_EDISCONNECTED);
	rdmig_conn_counters(c, &n);
	CHECK_EQ(n.received[RDMIG_MSG_READY], 2);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
	close(cancel[0]);
	close(cancel[1]);
}

/* --------------------------------------------- a listener in a loop -- */

/* The source: learns the port from rfd, waits, connects (refused once
 * first when `refused_first`), sends one stream message and waits for
 * the destination to leave. */
static void source_main(const struct dev *dev, bool refused_first, int rfd)
{
	const struct timespec wait = {1, 0};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	char port[8] = "";

	CHECK_EQ(read(rfd, port, sizeof(port)), (ssize_t)sizeof(port));
	test_opts(&o);
	nanosleep(&wait, NULL); /* the parent polls meanwhile */
	if (refused_first) {
		CHECK_OK(rdmig_conn_create(&o, &c));
		CHECK_EQ(rdmig_connect(c, dev->ip, port), RDMIG_EREJECTED);
		rdmig_conn_destroy(c);
		c = NULL;
		nanosleep(&wait, NULL);
	}
	CHECK_OK(rdmig_conn_create(&o, &c));
	CHECK_OK(rdmig_connect(c, dev->ip, port));
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 2, "hi"}));
	/* the destination reads it and leaves: wait for that */
	CHECK_EQ(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 2, "hi"}),
		 RDMIG_EDISCONNECTED);
	rdmig_conn_destroy(c);
}

/* The source in a child, forked before the parent makes any RDMA
 * resource; *port_wfd: where the parent writes the port. */
static pid_t source_child(const struct dev *dev, bool refused_first, int *port_wfd)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid != 0) {
		close(fds[0]);
		*port_wfd = fds[1];
		return pid;
	}
	close(fds[1]);
	alarm(60); /* a hung child must not hang the suite */
	check_failed = 0;
	source_main(dev, refused_first, fds[0]);
	fflush(NULL);
	_exit(check_failed ? 1 : 0);
}

static bool refuse_first(void *ctx, const struct sockaddr *source)
{
	unsigned *asked = ctx;

	(void)source;
	return (*asked)++ > 0;
}

static double poll_listener(struct rdmig_listener *l, int timeout_ms)
{
	struct pollfd p = {.fd = rdmig_listener_fd(l), .events = POLLIN};
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	return elapsed_s(&t0);
}

static void run_listener_loop(const struct dev *dev, bool refused_first)
{
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	struct rdmig_opts o;
	struct rdmig_msg m;
	struct timespec t0;
	unsigned asked = 0;
	char port[8] = "";
	int wfd = -1, status = 0, ret;
	pid_t pid = source_child(dev, refused_first, &wfd);

	CHECK(pid > 0);
	test_opts(&o);
	o.accept_timeout_ms = 0; /* rdmig_accept would wait for ever */
	CHECK_OK(rdmig_listener_create(&o, &l));
	CHECK_EQ(rdmig_listener_fd(l), -1); /* not listening yet */
	CHECK_OK(rdmig_listen(l, dev->ip, "0"));
	if (refused_first)
		rdmig_listener_set_filter(l, refuse_first, &asked);
	CHECK(rdmig_listener_fd(l) >= 0);
	CHECK_EQ(rdmig_listener_fd(l), rdmig_listener_fd(l));
	/* nothing queued: no wait, no connection */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_EQ(rdmig_try_accept(l, &c), RDMIG_EAGAIN);
	CHECK(c == NULL);
	CHECK(elapsed_s(&t0) < 0.5);
	snprintf(port, sizeof(port), "%u", rdmig_listener_port(l));
	CHECK_EQ(write(wfd, port, sizeof(port)), (ssize_t)sizeof(port));
	close(wfd);
	/* the fd wakes for the request (the source waits a second first) */
	CHECK(poll_listener(l, 10000) >= 0.5);
	if (refused_first) {
		/* refused: rejected and forgotten, and no wait for the next */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK_EQ(rdmig_try_accept(l, &c), RDMIG_EAGAIN);
		CHECK(elapsed_s(&t0) < 0.9);
		CHECK_EQ(asked, 1);
		CHECK(poll_listener(l, 10000) >= 0);
	}
	/* a wake may be for another event: try, sleep, try again */
	for (int wakes = 0; (ret = rdmig_try_accept(l, &c)) == RDMIG_EAGAIN; wakes++) {
		CHECK(wakes < 10);
		if (wakes >= 10 || poll_listener(l, 10000) < 0)
			break;
	}
	CHECK_OK(ret);
	CHECK(c != NULL);
	if (refused_first)
		CHECK_EQ(asked, 2);
	if (c) {
		CHECK_OK(rdmig_recv(c, RDMIG_MSG_QEMU_FILE, &m));
		CHECK_EQ(m.len, 2);
		CHECK_MEM_EQ(m.payload, "hi", 2);
	}
	rdmig_conn_destroy(c);
	rdmig_listener_destroy(l);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

DEVICE_TEST(listener_fd_wakes_for_a_request)
{
	run_listener_loop(dev, false);
}

DEVICE_TEST(try_accept_does_not_wait_after_a_refused_request)
{
	run_listener_loop(dev, true);
}

CHECK_MAIN()
