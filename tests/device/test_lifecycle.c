/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_lifecycle.c - peers that die, fall silent or are not welcome, on
 * real devices, in-process:
 *
 *  - a peer killed with SIGKILL mid-migration: the survivor's next call
 *    ends within the bound (10 s, the tool's default --timeout), and its
 *    handles tear down leaving no file descriptor and no verbs resource
 *    (MR, QP, CQ, PD, cm_id, as `rdma resource show` lists them per pid);
 *  - a silent peer (stopped, connection kept): the wait times out;
 *  - rdmig_opts.cancel, raised by a signal, ends a wait at once;
 *  - the accept filter and the capability check reject a source before
 *    the destination has allocated or registered anything;
 *  - the destination's memory cannot be read remotely, and its control
 *    buffers cannot be written remotely.
 *
 * Where the destination survives, this process is the destination and the
 * source runs in a forked child (fork_source); otherwise the pair harness
 * of devenv.h forks the destination.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "testhooks.h"
#include "conn.h"
#include "devenv.h"

#define MIB (1024u * 1024u)
#define BLOCK_LEN (16 * MIB)
/* The tool's default --timeout: a dead peer must be noticed before it. */
#define BOUND_MS 10000

/* Peers die here on purpose, and a dead peer can make siw raise SIGPIPE
 * in the thread that posts (rdmig.h): ignore it, as rdmig does. */
__attribute__((constructor)) static void ignore_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint8_t *map_block(size_t len, uint32_t seed)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (seed)
		fill_pattern(p, len, seed);
	return p;
}

/* ------------------------------------------------- what we hold -- */

struct footprint {
	int fds, mr, qp, cq, pd, cm_id;
};

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/*
 * Lines of `rdma resource show KIND` that belong to pid; -1 if the tool
 * does not run (a broken guest: fail, never skip).  PDs count only when
 * something uses them: librdmacm allocates one empty PD per device for its
 * own use as soon as a cm_id is bound to the device (a connection request
 * is), and frees it with the last cm_id.
 */
static int rdma_res_count(const char *kind, pid_t pid)
{
	char cmd[96], line[1024], needle[32];
	bool pd = !strcmp(kind, "pd");
	FILE *f;
	int n = 0, status;

	snprintf(cmd, sizeof(cmd), "rdma resource show %s 2>&1", kind);
	snprintf(needle, sizeof(needle), " pid %d ", (int)pid);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, needle))
			continue;
		if (pd && getenv("RDMIG_TEST_DEBUG"))
			fprintf(stderr, "# %s", line);
		n += !(pd && strstr(line, " users 0 "));
	}
	status = pclose(f);
	return status == 0 ? n : -1;
}

static int take_footprint(struct footprint *fp)
{
	pid_t me = getpid();

	fp->fds = count_fds();
	fp->mr = rdma_res_count("mr", me);
	fp->qp = rdma_res_count("qp", me);
	fp->cq = rdma_res_count("cq", me);
	fp->pd = rdma_res_count("pd", me);
	fp->cm_id = rdma_res_count("cm_id", me);
	if (fp->fds < 0 || fp->mr < 0 || fp->qp < 0 || fp->cq < 0 || fp->pd < 0 || fp->cm_id < 0) {
		fprintf(stderr, "cannot count descriptors or run `rdma resource show`\n");
		return -1;
	}
	return 0;
}

static void print_footprint(const char *when, const struct footprint *fp)
{
	fprintf(stderr, "# %s: %d fds, %d MR, %d QP, %d CQ, %d PD in use, %d cm_id\n", when,
		fp->fds, fp->mr, fp->qp, fp->cq, fp->pd, fp->cm_id);
}

/* Nothing of the library is left in this process. */
static void check_no_verbs_resources(const struct footprint *fp)
{
	CHECK_EQ(fp->mr, 0);
	CHECK_EQ(fp->qp, 0);
	CHECK_EQ(fp->cq, 0);
	CHECK_EQ(fp->pd, 0);
	CHECK_EQ(fp->cm_id, 0);
}

/*
 * The peer of a scenario: a destination child (the pair harness) or a
 * source child (fork_source).  Peers are forked before this process uses a
 * device: verbs contexts do not survive into a child forked after the
 * parent opened them.
 */
struct child {
	pid_t pid;
	int port_fd; /* write end: the port, once we listen */
};

struct peer {
	struct pair pair;   /* a destination child */
	struct child child; /* or a source child */
};

struct scenario {
	int (*fork_peer)(const struct dev *dev, bool pin_all, struct peer *p);
	void (*run)(const struct dev *dev, bool pin_all, struct peer *p);
};

/*
 * Run a scenario twice and compare: after each run no verbs resource of
 * ours may exist, and the second leaves exactly as many descriptors open
 * as the first (the first may open what libraries keep for the process,
 * such as a device context).
 */
static void twice_without_leaks(const struct dev *dev, const struct scenario *sc, bool pin_all)
{
	struct peer peers[2];
	struct footprint fp[2];
	int round;

	memset(peers, 0, sizeof(peers));
	for (round = 0; round < 2; round++)
		CHECK_OK(sc->fork_peer(dev, pin_all, &peers[round]));
	for (round = 0; round < 2 && !check_failed; round++) {
		sc->run(dev, pin_all, &peers[round]);
		if (check_failed)
			break;
		if (take_footprint(&fp[round])) {
			check_failed = 1;
			break;
		}
		/* the port pipes of peers yet to run are ours too, for now */
		for (int k = round + 1; k < 2; k++)
			fp[round].fds -= peers[k].child.port_fd > 0;
		print_footprint(round ? "after the second run" : "after the first run", &fp[round]);
		check_no_verbs_resources(&fp[round]);
	}
	if (check_failed) {
		/* a peer that did not get its turn must not outlive us */
		for (; round < 2; round++) {
			if (peers[round].pair.pid > 0)
				kill(peers[round].pair.pid, SIGKILL);
			if (peers[round].child.pid > 0)
				kill(peers[round].child.pid, SIGKILL);
		}
		return;
	}
	CHECK_EQ(fp[1].fds, fp[0].fds);
}

/* While a migration runs, the counting must see it (or it proves nothing). */
static void check_resources_visible(void)
{
	struct footprint live;

	CHECK_OK(take_footprint(&live));
	print_footprint("during the migration", &live);
	CHECK(live.mr >= 1);
	CHECK(live.qp >= 1);
	CHECK(live.cq >= 2);
	CHECK(live.pd >= 1);
	CHECK(live.cm_id >= 1);
}

/* ------------------------------------ a source in a forked child -- */

/*
 * This process listens (port 0 on dev->ip) and a child connects as the
 * source and runs fn; the child learns the port through a pipe, so it
 * inherits no verbs or rdma_cm descriptor.  Its exit status is its
 * check_failed.
 */
typedef void (*source_fn)(const struct dev *dev, const char *port, void *arg);

static int fork_source(struct child *ch, const struct dev *dev, source_fn fn, void *arg)
{
	int fds[2];

	if (pipe(fds))
		return -1;
	fflush(NULL);
	ch->pid = fork();
	if (ch->pid < 0)
		return -1;
	if (ch->pid == 0) {
		char port[8] = "";

		close(fds[1]);
		alarm(120);
		check_failed = 0;
		if (read(fds[0], port, sizeof(port)) != (ssize_t)sizeof(port) || !port[0])
			_exit(3);
		close(fds[0]);
		fn(dev, port, arg);
		fflush(NULL);
		_exit(check_failed ? 1 : 0);
	}
	close(fds[0]);
	ch->port_fd = fds[1];
	return 0;
}

static int child_go(struct child *ch, uint16_t port_num)
{
	char port[8] = "";
	ssize_t n;

	snprintf(port, sizeof(port), "%u", port_num);
	n = write(ch->port_fd, port, sizeof(port));
	close(ch->port_fd);
	ch->port_fd = -1;
	return n == (ssize_t)sizeof(port) ? 0 : -1;
}

/* The child's exit status, within timeout_s (then it is killed). */
static int child_wait(struct child *ch, int timeout_s)
{
	struct pair p = {.pid = ch->pid};
	return pair_finish(&p, timeout_s);
}

static int listen_here(const struct dev *dev, struct rdmig_opts *o, struct rdmig_listener **l)
{
	int ret = rdmig_listener_create(o, l);

	if (!ret)
		ret = rdmig_listen(*l, dev->ip, "0");
	if (ret)
		fprintf(stderr, "listen on %s: %s\n", dev->ip, rdmig_listener_errmsg(*l));
	return ret;
}

/* ------------------------------- the destination is killed -- */

/* Serve the migration until the parent kills us. */
static void dest_serves_until_killed(struct rdmig_conn *c, void *argp)
{
	uint8_t *mem = map_block(BLOCK_LEN, 0);
	struct rdmig_block b = {"ram", mem, BLOCK_LEN, 0};
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev;
	int ret;

	CHECK(mem != NULL);
	CHECK_OK(rdmig_dest_create(c, &d));
	CHECK_OK(rdmig_dest_set_blocks(d, &b, 1));
	do
		ret = rdmig_dest_next(d, &ev);
	while (ret == 0 && ev.type != RDMIG_EV_END);
	rdmig_dest_destroy(d);
	munmap(mem, BLOCK_LEN);
}

static int fork_serving_destination(const struct dev *dev, bool pin_all, struct peer *peer)
{
	peer->pair = (struct pair){.dev = dev, .dest = dest_serves_until_killed};
	test_opts(&peer->pair.dest_opts);
	peer->pair.dest_opts.pin_all = pin_all;
	return pair_start(&peer->pair);
}

static void source_sees_destination_die(const struct dev *dev, bool pin_all, struct peer *peer)
{
	struct pair *p = &peer->pair;
	uint8_t *mem = map_block(BLOCK_LEN, 11);
	struct rdmig_block b = {"ram", mem, BLOCK_LEN, 0};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;
	long long t0, elapsed;
	int ret = 0;

	CHECK(mem != NULL);
	test_opts(&o);
	o.timeout_ms = 2 * BOUND_MS; /* so that the bound is not the timeout */
	o.pin_all = pin_all;
	CHECK_OK(test_connect(p, &o, &c));
	CHECK_OK(rdmig_source_create(c, &b, 1, &s));
	CHECK_OK(rdmig_source_setup(s));
	for (uint64_t off = 0; off < 4 * MIB; off += MIB)
		CHECK_OK(rdmig_source_write(s, 0, off, MIB));
	check_resources_visible();
	if (check_failed)
		return;

	CHECK_OK(kill(p->pid, SIGKILL));
	t0 = now_ms();
	for (uint64_t off = 4 * MIB; !ret && off < BLOCK_LEN; off += MIB)
		ret = rdmig_source_write(s, 0, off, MIB);
	if (!ret)
		ret = rdmig_source_end_iteration(s);
	elapsed = now_ms() - t0;
	fprintf(stderr, "# %s, %s: the source noticed after %lld ms: %s: %s\n", dev->kind,
		pin_all ? "pin-all" : "dynamic", elapsed, rdmig_err_name(ret),
		rdmig_source_errmsg(s));
	CHECK(ret != 0);
	CHECK(ret != RDMIG_ETIMEDOUT);
	CHECK(elapsed < BOUND_MS);
	rdmig_source_destroy(s);
	rdmig_conn_destroy(c);
	pair_finish(p, 10); /* reaps the killed child */
	munmap(mem, BLOCK_LEN);
}

static const struct scenario destination_dies = {fork_serving_destination,
						 source_sees_destination_die};

DEVICE_TEST(killed_destination_is_noticed_and_nothing_leaks_dynamic)
{
	twice_without_leaks(dev, &destination_dies, false);
}

DEVICE_TEST(killed_destination_is_noticed_and_nothing_leaks_pin_all)
{
	twice_without_leaks(dev, &destination_dies, true);
}

/* ---------------------------------------- the source is killed -- */

/* Migrate slowly, say "mid" in the stream after the first chunks, and wait
 * to be killed. */
static void source_until_killed(const struct dev *dev, const char *port, void *argp)
{
	const bool *pin_all = argp;
	uint8_t *mem = map_block(BLOCK_LEN, 12);
	struct rdmig_block b = {"ram", mem, BLOCK_LEN, 0};
	struct pair p = {.dev = dev};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;

	CHECK(mem != NULL);
	snprintf(p.port, sizeof(p.port), "%s", port);
	test_opts(&o);
	o.pin_all = *pin_all;
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_source_create(c, &b, 1, &s));
	CHECK_OK(rdmig_source_setup(s));
	for (uint64_t off = 0; off < 2 * MIB; off += MIB)
		CHECK_OK(rdmig_source_write(s, 0, off, MIB));
	CHECK_OK(rdmig_source_write_stream(s, "mid", 3));
	for (uint64_t off = 2 * MIB; off < BLOCK_LEN; off += MIB) {
		struct timespec pause = {0, 100 * 1000 * 1000};
		if (rdmig_source_write(s, 0, off, MIB))
			break;
		nanosleep(&pause, NULL);
	}
	sleep(60); /* the parent kills us long before */
}

static int fork_slow_source(const struct dev *dev, bool pin_all, struct peer *peer)
{
	static bool modes[2] = {false, true}; /* the child reads its copy */

	return fork_source(&peer->child, dev, source_until_killed, &modes[pin_all]);
}

static void destination_sees_source_die(const struct dev *dev, bool pin_all, struct peer *peer)
{
	struct child *ch = &peer->child;
	uint8_t *mem = map_block(BLOCK_LEN, 0);
	struct rdmig_block b = {"ram", mem, BLOCK_LEN, 0};
	struct rdmig_opts o;
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev = {0};
	long long t0 = 0, elapsed;
	int ret;

	CHECK(mem != NULL);
	test_opts(&o);
	o.timeout_ms = 2 * BOUND_MS;
	o.pin_all = pin_all;
	CHECK_OK(listen_here(dev, &o, &l));
	CHECK_OK(child_go(ch, rdmig_listener_port(l)));
	CHECK_OK(rdmig_accept(l, &c));
	CHECK_OK(rdmig_dest_create(c, &d));
	for (;;) {
		ret = rdmig_dest_next(d, &ev);
		if (ret || ev.type == RDMIG_EV_END)
			break;
		if (ev.type == RDMIG_EV_BLOCKS_NEEDED)
			CHECK_OK(rdmig_dest_set_blocks(d, &b, 1));
		if (ev.type == RDMIG_EV_STREAM && ev.len == 3 && !memcmp(ev.data, "mid", 3)) {
			check_resources_visible();
			if (check_failed)
				break;
			CHECK_OK(kill(ch->pid, SIGKILL));
			t0 = now_ms();
		}
	}
	elapsed = now_ms() - t0;
	fprintf(stderr, "# %s, %s: the destination noticed after %lld ms: %s (%s)\n", dev->kind,
		pin_all ? "pin-all" : "dynamic", elapsed,
		ret ? rdmig_err_name(ret) : "RDMIG_EV_END", rdmig_dest_errmsg(d));
	CHECK(t0 != 0);
	/* a source that vanishes reads as the end: the caller (rdmig recv)
	 * then finds its stream incomplete */
	CHECK_EQ(ret, 0);
	CHECK_EQ(ev.type, RDMIG_EV_END);
	CHECK(elapsed < BOUND_MS);
	rdmig_dest_destroy(d);
	rdmig_conn_destroy(c);
	rdmig_listener_destroy(l);
	child_wait(ch, 10);
	munmap(mem, BLOCK_LEN);
}

static const struct scenario source_dies = {fork_slow_source, destination_sees_source_die};

DEVICE_TEST(killed_source_is_noticed_and_nothing_leaks_dynamic)
{
	twice_without_leaks(dev, &source_dies, false);
}

DEVICE_TEST(killed_source_is_noticed_and_nothing_leaks_pin_all)
{
	twice_without_leaks(dev, &source_dies, true);
}

/* ------------------------------------------------ silent peers -- */

/* Accept, then stop: the connection stays, nothing is ever answered. */
static void dest_stops(struct rdmig_conn *c, void *argp)
{
	raise(SIGSTOP);
}

DEVICE_TEST(silent_destination_is_detected_by_the_timeout)
{
	struct pair p = {.dev = dev, .dest = dest_stops};
	uint8_t *mem = map_block(MIB, 13);
	struct rdmig_block b = {"ram", mem, MIB, 0};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;
	long long t0, elapsed;
	int ret;

	test_opts(&o);
	o.timeout_ms = 2000;
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_source_create(c, &b, 1, &s));
	t0 = now_ms();
	ret = rdmig_source_setup(s);
	elapsed = now_ms() - t0;
	fprintf(stderr, "# %s: %s after %lld ms: %s\n", dev->kind, rdmig_err_name(ret), elapsed,
		rdmig_source_errmsg(s));
	CHECK_EQ(ret, RDMIG_ETIMEDOUT);
	CHECK(elapsed >= 1900 && elapsed < 4000);
	CHECK_STR_CONTAINS(rdmig_source_errmsg(s), "timed out after 2000 ms");
	kill(p.pid, SIGKILL);
	rdmig_source_destroy(s);
	rdmig_conn_destroy(c);
	pair_finish(&p, 10);
	munmap(mem, MIB);
}

/* Connect, set up, then stop. */
static void source_stops(const struct dev *dev, const char *port, void *argp)
{
	uint8_t *mem = map_block(MIB, 14);
	struct rdmig_block b = {"ram", mem, MIB, 0};
	struct pair p = {.dev = dev};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;

	snprintf(p.port, sizeof(p.port), "%s", port);
	test_opts(&o);
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_source_create(c, &b, 1, &s));
	CHECK_OK(rdmig_source_setup(s));
	raise(SIGSTOP);
}

DEVICE_TEST(silent_source_is_detected_by_the_timeout)
{
	uint8_t *mem = map_block(MIB, 0);
	struct rdmig_block b = {"ram", mem, MIB, 0};
	struct rdmig_opts o;
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev;
	struct child ch;
	long long t0, elapsed;
	int ret;

	test_opts(&o);
	o.timeout_ms = 2000;
	CHECK_OK(fork_source(&ch, dev, source_stops, NULL));
	CHECK_OK(listen_here(dev, &o, &l));
	CHECK_OK(child_go(&ch, rdmig_listener_port(l)));
	CHECK_OK(rdmig_accept(l, &c));
	CHECK_OK(rdmig_dest_create(c, &d));
	CHECK_OK(rdmig_dest_set_blocks(d, &b, 1));
	/* RAM_BLOCKS is served inside; then the source falls silent */
	t0 = now_ms();
	do
		ret = rdmig_dest_next(d, &ev);
	while (ret == 0 && ev.type != RDMIG_EV_END);
	elapsed = now_ms() - t0;
	fprintf(stderr, "# %s: %s after %lld ms: %s\n", dev->kind, rdmig_err_name(ret), elapsed,
		rdmig_dest_errmsg(d));
	CHECK_EQ(ret, RDMIG_ETIMEDOUT);
	CHECK(elapsed >= 1900 && elapsed < 6000);
	kill(ch.pid, SIGKILL);
	rdmig_dest_destroy(d);
	rdmig_conn_destroy(c);
	rdmig_listener_destroy(l);
	child_wait(&ch, 10);
	munmap(mem, MIB);
}

/* ------------------------------------------------ cancellation -- */

static volatile sig_atomic_t cancel_flag;

static void on_sigusr1(int sig)
{
	cancel_flag = 1;
}

/* SIGUSR1 in ms milliseconds, whose handler raises cancel_flag (a timer,
 * not alarm(2): the test runner's own time limit is an alarm). */
static int cancel_in(int ms, timer_t *timer)
{
	struct sigaction sa = {.sa_handler = on_sigusr1};
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	struct itimerspec when = {.it_value = {ms / 1000, (long)(ms % 1000) * 1000000}};

	cancel_flag = 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) || timer_create(CLOCK_MONOTONIC, &sev, timer))
		return -1;
	return timer_settime(*timer, 0, &when, NULL);
}

DEVICE_TEST(cancel_ends_a_wait_for_a_silent_destination)
{
	struct pair p = {.dev = dev, .dest = dest_stops};
	uint8_t *mem = map_block(MIB, 15);
	struct rdmig_block b = {"ram", mem, MIB, 0};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;
	timer_t timer;
	long long t0, elapsed;
	int ret;

	test_opts(&o);
	o.timeout_ms = 30000;
	o.cancel = &cancel_flag;
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_source_create(c, &b, 1, &s));
	CHECK_OK(cancel_in(1000, &timer));
	t0 = now_ms();
	ret = rdmig_source_setup(s);
	elapsed = now_ms() - t0;
	timer_delete(timer);
	fprintf(stderr, "# %s: %s after %lld ms: %s\n", dev->kind, rdmig_err_name(ret), elapsed,
		rdmig_source_errmsg(s));
	CHECK_EQ(ret, RDMIG_ECANCELED);
	CHECK(elapsed >= 900 && elapsed < 2000);
	CHECK_STR_CONTAINS(rdmig_source_errmsg(s), "cancelled while waiting for");
	kill(p.pid, SIGKILL);
	rdmig_source_destroy(s);
	rdmig_conn_destroy(c);
	pair_finish(&p, 10);
	munmap(mem, MIB);
}

DEVICE_TEST(cancel_ends_accept)
{
	struct rdmig_opts o;
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	timer_t timer;
	long long t0, elapsed;
	int ret;

	test_opts(&o);
	o.accept_timeout_ms = 0; /* forever, but for the cancel */
	o.cancel = &cancel_flag;
	CHECK_OK(listen_here(dev, &o, &l));
	CHECK_OK(cancel_in(800, &timer));
	t0 = now_ms();
	ret = rdmig_accept(l, &c);
	elapsed = now_ms() - t0;
	timer_delete(timer);
	fprintf(stderr, "# %s: %s after %lld ms: %s\n", dev->kind, rdmig_err_name(ret), elapsed,
		rdmig_listener_errmsg(l));
	CHECK_EQ(ret, RDMIG_ECANCELED);
	CHECK(c == NULL);
	CHECK(elapsed >= 700 && elapsed < 1800);
	rdmig_listener_destroy(l);
}

/* ------------------------------- rejected before anything exists -- */

struct filter_log {
	int calls;
	int allow_from_call; /* refuse the calls before this one */
	char seen[64];
	struct footprint at_first;
	int footprint_ret;
};

static bool record_and_filter(void *ctx, const struct sockaddr *sa)
{
	struct filter_log *f = ctx;

	if (++f->calls == 1) {
		f->footprint_ret = take_footprint(&f->at_first);
		if (sa && sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
				  f->seen, sizeof(f->seen));
	}
	return f->calls >= f->allow_from_call;
}

/* Connect twice: the first is refused, the second accepted. */
static void source_knocks_twice(const struct dev *dev, const char *port, void *argp)
{
	struct pair p = {.dev = dev};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	int ret;

	snprintf(p.port, sizeof(p.port), "%s", port);
	test_opts(&o);
	CHECK_OK(rdmig_conn_create(&o, &c));
	ret = rdmig_connect(c, dev->ip, port);
	fprintf(stderr, "# first connect: %s: %s\n", rdmig_err_name(ret), rdmig_conn_errmsg(c));
	CHECK_EQ(ret, RDMIG_EREJECTED);
	rdmig_conn_destroy(c);
	c = NULL;
	CHECK_OK(test_connect(&p, &o, &c));
	rdmig_conn_destroy(c);
}

DEVICE_TEST(accept_filter_rejects_before_anything_is_registered)
{
	struct filter_log log = {.allow_from_call = 2};
	struct rdmig_opts o;
	struct rdmig_listener *l = NULL;
	struct rdmig_conn *c = NULL;
	struct child ch;

	test_opts(&o);
	CHECK_OK(fork_source(&ch, dev, source_knocks_twice, NULL));
	CHECK_OK(listen_here(dev, &o, &l));
	rdmig_listener_set_filter(l, record_and_filter, &log);
	CHECK_OK(child_go(&ch, rdmig_listener_port(l)));
	/* one call: the refused request is forgotten, the next accepted */
	CHECK_OK(rdmig_accept(l, &c));
	CHECK_EQ(log.calls, 2);
	CHECK(!strcmp(log.seen, dev->ip));
	CHECK_OK(log.footprint_ret);
	print_footprint("when the filter ran", &log.at_first);
	/* a listener has cm_ids; nothing else may exist yet */
	CHECK_EQ(log.at_first.mr, 0);
	CHECK_EQ(log.at_first.qp, 0);
	CHECK_EQ(log.at_first.cq, 0);
	CHECK_EQ(log.at_first.pd, 0);
	rdmig_conn_destroy(c);
	rdmig_listener_destroy(l);
	CHECK_OK(child_wait(&ch, 30));
}

/* The destination: the request is refused (capabilities) and accept waits
 * on until its timeout; at that moment nothing may be allocated or
 * registered. */
static void dest_refuses_version(struct rdmig_listener *l, int code, void *argp)
{
	struct footprint fp;

	CHECK_EQ(code, RDMIG_ETIMEDOUT);
	CHECK_STR_CONTAINS(rdmig_listener_errmsg(l), "the source asked for capability version 2");
	CHECK_OK(take_footprint(&fp));
	print_footprint("destination after refusing version 2", &fp);
	CHECK_EQ(fp.mr, 0);
	CHECK_EQ(fp.qp, 0);
	CHECK_EQ(fp.cq, 0);
	CHECK_EQ(fp.pd, 0);
}

static void dest_unreachable(struct rdmig_conn *c, void *argp)
{
	CHECK_FAIL_AT("a source with capability version 2 was accepted");
}

DEVICE_TEST(bad_capabilities_are_rejected_before_anything_is_registered)
{
	struct pair p = {.dev = dev, .dest = dest_unreachable,
			 .dest_accept_failed = dest_refuses_version};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;

	test_opts(&o);
	test_opts(&p.dest_opts);
	p.dest_opts.accept_timeout_ms = 3000;
	CHECK_OK(pair_start(&p));
	CHECK_OK(rdmig_conn_create(&o, &c));
	rdmig__conn_set_cap_version(c, 2);
	CHECK_EQ(rdmig_connect(c, dev->ip, p.port), RDMIG_EVERSION);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 30));
}

/* --------------------------------------------- least exposure -- */

/* Post one RDMA operation on the connection's QP from its send buffer and
 * return the completion status of that work request. */
static int raw_rdma(struct rdmig_conn *c, enum ibv_wr_opcode op, uint64_t remote, uint32_t rkey,
		    uint32_t len)
{
	const uint64_t id = 0x5e1f7e57;
	struct ibv_sge sge = {.addr = (uintptr_t)conn_slot_buf(c, SLOT_SEND), .length = len,
			      .lkey = rdmig__vres_buf_mr(c->res)->lkey};
	struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {.remote_addr = remote, .rkey = rkey}}, *bad;
	long long deadline = now_ms() + 10000;

	if (ibv_post_send(rdmig__cml_qp(c->cm), &wr, &bad))
		return -1;
	while (now_ms() < deadline) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(rdmig__vres_cq(c->res, VRES_SEND), 1, &wc);
		if (n < 0)
			return -1;
		if (n == 1 && wc.wr_id == id)
			return wc.status;
	}
	return -2;
}

static void dest_serves(struct rdmig_conn *c, void *argp)
{
	uint8_t *mem = map_block(MIB, 0);
	struct rdmig_block b = {"ram", mem, MIB, 0};
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev;
	int ret;

	CHECK_OK(rdmig_dest_create(c, &d));
	CHECK_OK(rdmig_dest_set_blocks(d, &b, 1));
	do /* until the source's bad request breaks the connection */
		ret = rdmig_dest_next(d, &ev);
	while (ret == 0 && ev.type != RDMIG_EV_END);
	rdmig_dest_destroy(d);
	munmap(mem, MIB);
}

/*
 * rxe only: siw (Linux 6.1) does not check IB_ACCESS_REMOTE_READ when it
 * answers a READ (siw_qp_tx.c checks the response's memory with no
 * permission), so there any registered memory of the connection's PD can be
 * read whatever rdmig asks for (docs/security.md).
 */
TEST(destination_blocks_refuse_remote_reads_rxe)
{
	struct dev rxe, *dev = &rxe;

	if (dev_lookup("rxe", &rxe))
		return;
	struct pair p = {.dev = dev, .dest = dest_serves};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_msg reply;
	struct rdmig_dest_block db;
	int st;

	test_opts(&o);
	o.pin_all = true; /* the reply carries the block's rkey */
	test_opts(&p.dest_opts);
	p.dest_opts.pin_all = true;
	CHECK_OK(pair_start(&p));
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_request(c, &(struct rdmig_msg){RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, 0, NULL},
			       RDMIG_MSG_RAM_BLOCKS_RESULT, &reply));
	CHECK_EQ(reply.len, RDMIG_DEST_BLOCK_SIZE);
	rdmig_decode_dest_block(reply.payload, &db);
	/* the key and address are right: a write goes through ... */
	st = raw_rdma(c, IBV_WR_RDMA_WRITE, db.remote_host_addr, db.remote_rkey, 4096);
	fprintf(stderr, "# %s: RDMA WRITE to the block: %s\n", dev->kind,
		st >= 0 ? ibv_wc_status_str(st) : "no completion");
	CHECK_EQ(st, IBV_WC_SUCCESS);
	/* ... and a read of the same bytes is refused */
	st = raw_rdma(c, IBV_WR_RDMA_READ, db.remote_host_addr, db.remote_rkey, 4096);
	fprintf(stderr, "# %s: RDMA READ of the block: %s\n", dev->kind,
		st >= 0 ? ibv_wc_status_str(st) : "no completion");
	CHECK_EQ(st, IBV_WC_REM_ACCESS_ERR);
	rdmig_conn_destroy(c);
	pair_finish(&p, 30);
}

#define CONTROL_PROBE_LEN 64
#define CONTROL_PROBE_BYTE 0xEE

struct leak_pipe {
	int fd; /* write end: the destination's control buffer address and rkey */
};

/* Tell the source where our control buffers are (as if it could guess),
 * serve until it breaks the connection, then check they are unchanged. */
static void dest_leaks_control_key(struct rdmig_conn *c, void *argp)
{
	const struct leak_pipe *lp = argp;
	uint64_t addr_key[2] = {(uintptr_t)conn_slot_buf(c, SLOT_READY),
			       rdmig__vres_buf_mr(c->res)->rkey};
	uint8_t probe[CONTROL_PROBE_LEN];
	struct rdmig_msg m;

	CHECK_EQ(write(lp->fd, addr_key, sizeof(addr_key)), (ssize_t)sizeof(addr_key));
	while (rdmig_recv(c, RDMIG_MSG_NONE, &m) == 0)
		;
	memset(probe, CONTROL_PROBE_BYTE, sizeof(probe));
	if (!memcmp(conn_slot_buf(c, SLOT_READY), probe, sizeof(probe)))
		CHECK_FAIL_AT("the source's RDMA WRITE landed in our control buffers");
}

DEVICE_TEST(control_buffers_refuse_remote_writes)
{
	struct leak_pipe lp;
	struct pair p = {.dev = dev, .dest = dest_leaks_control_key, .arg = &lp};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	uint64_t addr_key[2];
	int fds[2], st;

	CHECK_OK(pipe(fds));
	lp.fd = fds[1];
	test_opts(&o);
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	close(fds[1]);
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_EQ(read(fds[0], addr_key, sizeof(addr_key)), (ssize_t)sizeof(addr_key));
	close(fds[0]);
	memset(conn_slot_buf(c, SLOT_SEND), CONTROL_PROBE_BYTE, CONTROL_PROBE_LEN);
	st = raw_rdma(c, IBV_WR_RDMA_WRITE, addr_key[0], (uint32_t)addr_key[1], CONTROL_PROBE_LEN);
	fprintf(stderr, "# %s: RDMA WRITE to the destination's control buffers: %s\n", dev->kind,
		st >= 0 ? ibv_wc_status_str(st) : "no completion");
	/* RoCE acknowledges every write: the refusal comes back.  iWARP
	 * completes a write once sent; the responder then checks and
	 * terminates the connection, and the destination checks its bytes. */
	if (!strcmp(dev->kind, "rxe"))
		CHECK_EQ(st, IBV_WC_REM_ACCESS_ERR);
	else
		CHECK(st >= 0);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 30));
}

CHECK_MAIN()
