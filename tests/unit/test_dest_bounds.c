/*
 * test_dest_bounds.c - what one message may cost the destination engine
 * (src/engine/dest.c), without a device: the channel and registration are the
 * fake engine_io of tests/fuzz/fake_io.h.
 *
 * A COMPRESS of 4096 records is at most 98 KiB on the wire; before issue
 * 15 each record rescanned its range, so 4096 copies of a whole block cost
 * 4096 passes over it (about 1.4 hours for 64 GiB), and SIGINT/SIGTERM
 * could not end it.  Now the ranges of one message must not overlap, a
 * message costs at most one pass over the blocks, and the pass looks at
 * the cancel flag as it goes.
 *
 * The time bound is the issue's: a second per GiB of the destination's
 * RAM.  The timed blocks (256 MiB) are touched once before the clock
 * starts: the first touch of a page costs the kernel (and, on a virtual
 * machine, the hypervisor) a fault, up to 15 s per GiB on a loaded test
 * host, which no engine could beat and which a destination pays once for
 * its RAM however the source behaves.  The SIGTERM case uses an untouched
 * 16 GiB mapping (the zero page: time, no memory).
 *
 * An UNREGISTER of 4096 records looked for each region in the list of all
 * the destination's regions: 0.18 s at 65,536 regions, growing with them.
 * Each region now knows its place in the list.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "fake_io.h"

#define GIB (1024ull * 1024 * 1024)
#define TIMED_BLOCK (GIB / 4)

/* The frames the fake channel hands out, one per rdmig_recv. */
struct feed {
	struct fake_frames q;
};

static bool next_frame(void *ctx, const uint8_t **buf, size_t *len)
{
	struct feed *f = ctx;

	return fake_frames_next(&f->q, buf, len);
}

static void delivered(void *ctx, int rc, const struct rdmig_msg *m)
{
	(void)ctx, (void)rc, (void)m;
}

static void no_reg(void *ctx, const uint8_t *addr, size_t len, enum engine_access access)
{
	(void)ctx, (void)addr, (void)len, (void)access;
	fake_fail("no registration is due in these tests");
}

/* One frame: header and payload. */
static void add_frame(struct feed *f, uint32_t type, uint32_t repeat, const void *payload,
		      uint32_t len)
{
	fake_frames_add(&f->q, type, repeat, payload, len);
}

/* A COMPRESS of n records; record i covers [starts(i), +length) of block 0. */
static void add_compress(struct feed *f, uint32_t n, uint64_t (*start)(uint32_t, uint64_t),
			 uint64_t length)
{
	uint8_t *recs = calloc(n, RDMIG_COMPRESS_SIZE);

	CHECK(recs != NULL);
	for (uint32_t i = 0; i < n; i++) {
		struct rdmig_compress cp = {0, 0, start(i, length), length};
		rdmig_encode_compress(&cp, recs + (size_t)i * RDMIG_COMPRESS_SIZE);
	}
	add_frame(f, RDMIG_MSG_COMPRESS, n, recs, n * RDMIG_COMPRESS_SIZE);
	free(recs);
}

static uint64_t same_start(uint32_t i, uint64_t length)
{
	(void)i, (void)length;
	return 0;
}

static uint64_t next_start(uint32_t i, uint64_t length)
{
	return (uint64_t)i * length;
}

struct dest_run {
	struct feed feed;
	struct fake_conn conn;
	struct rdmig_dest *d;
	uint8_t *block;
	uint64_t length;
};

/* A destination with one block of length bytes (touched first when
 * `touch`); the RAM_BLOCKS exchange is its first message. */
static void start(struct dest_run *r, uint64_t length, bool touch,
		  const volatile sig_atomic_t *cancel)
{
	struct fake_hooks hooks = {next_frame, NULL, delivered, no_reg, NULL, &r->feed};
	struct rdmig_block b;

	r->length = length;
	r->block = mmap(NULL, length, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (touch ? MAP_POPULATE : 0),
			-1, 0);
	CHECK(r->block != MAP_FAILED);
	for (uint64_t i = 0; touch && i < length; i += 4096)
		((volatile uint8_t *)r->block)[i] = 0;
	b = (struct rdmig_block){"ram", r->block, length, 0};
	rdmig_opts_init(&r->conn.opts);
	r->conn.opts.cancel = cancel;
	r->conn.established = true;
	r->conn.caps = (struct rdmig_caps){RDMIG_CAP_VERSION, 0};
	fake_begin(&r->conn, &hooks, 0);
	CHECK_OK(rdmig__dest_create(&fake.io, &r->d));
	CHECK_OK(rdmig_dest_set_blocks(r->d, &b, 1));
	add_frame(&r->feed, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0); /* then the test's */
}

static void finish(struct dest_run *r)
{
	rdmig_dest_destroy(r->d);
	fake_end();
	munmap(r->block, r->length);
	fake_frames_free(&r->feed.q);
}

/*
 * The process's CPU time, not the wall clock: the bound is on the work a
 * message costs, and a loaded host stretches wall time (these cases
 * failed at a load average of 10 and passed alone), not CPU time.
 */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run the destination over its feed: the code of the first failure, or 0
 * at the end; *secs: how long it took. */
static int run_feed(struct dest_run *r, double *secs)
{
	struct rdmig_event ev = {0};
	double t0 = now_s();
	int ret;

	do
		ret = rdmig_dest_next(r->d, &ev);
	while (ret == 0 && ev.type != RDMIG_EV_END);
	*secs = now_s() - t0;
	return ret;
}

/* The worst a hostile source could send before: 4096 records, each the
 * whole block.  Refused at record 1, after one pass. */
TEST(compress_of_4096_copies_of_a_whole_block_is_refused_within_a_second_per_gib)
{
	static struct dest_run r;
	double secs;

	start(&r, TIMED_BLOCK, true, NULL);
	add_compress(&r.feed, RDMIG_MAX_REPEAT, same_start, TIMED_BLOCK);
	CHECK_EQ(run_feed(&r, &secs), RDMIG_EPROTO);
	fprintf(stderr, "# 4096 x 256 MiB COMPRESS: refused after %.3f s: %s\n", secs,
		r.conn.errmsg);
	CHECK_STR_CONTAINS(r.conn.errmsg, "COMPRESS record 1: range 0x0+268435456 of block 0 "
			   "overlaps record 0's");
	CHECK(secs < (double)TIMED_BLOCK / GIB);
	CHECK_EQ(fake.errors_sent, 1);
	finish(&r);
}

/* The worst a source may send now: 4096 disjoint ranges that cover the
 * block, one pass over it. */
TEST(compress_of_4096_ranges_covering_a_block_is_served_within_a_second_per_gib)
{
	static struct dest_run r;
	double secs;

	start(&r, TIMED_BLOCK, true, NULL);
	add_compress(&r.feed, RDMIG_MAX_REPEAT, next_start, TIMED_BLOCK / RDMIG_MAX_REPEAT);
	CHECK_EQ(run_feed(&r, &secs), 0);
	fprintf(stderr, "# 4096 ranges covering 256 MiB: served in %.3f s\n", secs);
	CHECK(secs < (double)TIMED_BLOCK / GIB);
	finish(&r);
}

/* SIGTERM, as rdmig recv handles it: the handler raises the cancel flag. */
static volatile sig_atomic_t cancel_flag;
static double signalled_at;

static void on_sigterm(int sig)
{
	(void)sig;
	cancel_flag = 1;
}

static void *send_sigterm(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	signalled_at = now_s();
	kill(getpid(), SIGTERM);
	return NULL;
}

/* A COMPRESS of a 16 GiB block (seconds of work): SIGTERM ends it. */
TEST(sigterm_during_a_long_compress_lands_within_100_ms)
{
	static struct dest_run r;
	struct sigaction sa = {.sa_handler = on_sigterm};
	pthread_t t;
	double secs, late;

	sigemptyset(&sa.sa_mask);
	CHECK_OK(sigaction(SIGTERM, &sa, NULL));
	start(&r, 16 * GIB, false, &cancel_flag);
	add_compress(&r.feed, 1, same_start, 16 * GIB);
	CHECK_OK(pthread_create(&t, NULL, send_sigterm, NULL));
	CHECK_EQ(run_feed(&r, &secs), RDMIG_ECANCELED);
	late = now_s() - signalled_at;
	pthread_join(t, NULL);
	fprintf(stderr, "# 16 GiB COMPRESS: SIGTERM landed after %.1f ms (%s)\n", late * 1000,
		r.conn.errmsg);
	CHECK(signalled_at > 0 && late < 0.1);
	CHECK_STR_CONTAINS(r.conn.errmsg, "cancelled while zeroing COMPRESS record 0");
	finish(&r);
}

/* ------------------------------------------------------- UNREGISTER -- */

#define REGIONS 65536u

/* When the UNREGISTER being timed was handed over, and when the engine
 * asked for the next message (it was done). */
struct unreg_clock {
	struct feed feed;
	double handed, done;
	int timing;
};

static bool unreg_next_frame(void *ctx, const uint8_t **buf, size_t *len)
{
	return next_frame(&((struct unreg_clock *)ctx)->feed, buf, len);
}

static void unreg_delivered(void *ctx, int rc, const struct rdmig_msg *m)
{
	struct unreg_clock *c = ctx;

	if (!rc && m->type == RDMIG_MSG_UNREGISTER_REQUEST && c->timing++ == 0)
		c->handed = now_s();
}

static void any_reg(void *ctx, const uint8_t *addr, size_t len, enum engine_access access)
{
	(void)ctx, (void)addr, (void)len, (void)access;
}

static void unreg_before_recv(void *ctx)
{
	struct unreg_clock *c = ctx;

	if (c->timing == 1 && !c->done)
		c->done = now_s();
	fake_clear_replies(); /* the replies are not looked at here */
}

/* n REGISTER or UNREGISTER records of block 0: chunk chunk(i) each. */
static void add_chunks(struct feed *f, uint32_t type, uint32_t n, uint32_t (*chunk)(uint32_t))
{
	uint8_t *recs = calloc(n, RDMIG_REGISTER_SIZE);

	CHECK(recs != NULL);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t c = chunk(i);
		/* REGISTER: an address in the RAM offset space; UNREGISTER: a chunk */
		struct rdmig_register r = {type == RDMIG_MSG_REGISTER_REQUEST ? c << RDMIG_CHUNK_SHIFT
									       : c, 0, 0};
		rdmig_encode_register(&r, recs + (size_t)i * RDMIG_REGISTER_SIZE);
	}
	add_frame(f, type, n, recs, n * RDMIG_REGISTER_SIZE);
	free(recs);
}

static uint32_t reg_base;
static uint32_t next_chunk(uint32_t i)
{
	return reg_base + i;
}

/* every 16th chunk, from the front and the back of the list in turn */
static uint32_t spread_chunk(uint32_t i)
{
	return (i & 1 ? REGIONS - 16 * (i / 2) - 1 : 16 * (i / 2)) ^ reg_base;
}

/* 65,536 regions of one chunk each, then an UNREGISTER of 4096 of them,
 * then another: each costs its records, not records x regions. */
TEST(unregister_of_4096_records_at_65536_regions_costs_its_records)
{
	static struct unreg_clock c;
	const uint64_t length = (uint64_t)REGIONS << RDMIG_CHUNK_SHIFT; /* 64 GiB, untouched */
	struct fake_hooks hooks = {unreg_next_frame, unreg_before_recv, unreg_delivered, any_reg,
				   NULL, &c};
	struct fake_conn conn = {0};
	struct rdmig_dest *d;
	struct rdmig_event ev = {0};
	struct rdmig_block b;
	uint8_t *block;
	double secs;
	int ret;

	block = mmap(NULL, length, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(block != MAP_FAILED);
	b = (struct rdmig_block){"ram", block, length, 0};
	rdmig_opts_init(&conn.opts);
	conn.established = true;
	conn.caps = (struct rdmig_caps){RDMIG_CAP_VERSION, 0};
	fake_begin(&conn, &hooks, 0);
	CHECK_OK(rdmig__dest_create(&fake.io, &d));
	CHECK_OK(rdmig_dest_set_blocks(d, &b, 1));
	add_frame(&c.feed, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	for (reg_base = 0; reg_base < REGIONS; reg_base += RDMIG_MAX_REPEAT)
		add_chunks(&c.feed, RDMIG_MSG_REGISTER_REQUEST, RDMIG_MAX_REPEAT, next_chunk);
	reg_base = 0;
	add_chunks(&c.feed, RDMIG_MSG_UNREGISTER_REQUEST, RDMIG_MAX_REPEAT, spread_chunk);
	reg_base = 1; /* its neighbours: regions the first one moved in the list */
	add_chunks(&c.feed, RDMIG_MSG_UNREGISTER_REQUEST, RDMIG_MAX_REPEAT, spread_chunk);
	do
		ret = rdmig_dest_next(d, &ev);
	while (ret == 0 && ev.type != RDMIG_EV_END);
	CHECK_OK(ret);
	CHECK_EQ(fake.live_regions, REGIONS - 2 * RDMIG_MAX_REPEAT);
	secs = c.done - c.handed;
	fprintf(stderr, "# UNREGISTER of 4096 records at 65536 regions: %.4f s\n", secs);
	CHECK(c.handed > 0 && c.done >= c.handed);
	CHECK(secs < 0.1);
	rdmig_dest_destroy(d); /* the fake refuses a region deregistered twice */
	CHECK_EQ(fake.live_regions, 0);
	fake_end();
	munmap(block, length);
	fake_frames_free(&c.feed.q);
}

CHECK_MAIN()
