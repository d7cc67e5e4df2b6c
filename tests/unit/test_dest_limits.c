/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_dest_limits.c - what keeps a source from holding the destination
 * at no cost to itself, without a device: the channel and
 * registration are the fake engine_io of tests/fuzz/fake_io.h.
 *
 *  - The progress deadline (rdmig_opts.idle_timeout_ms, src/engine/dest_idle.h):
 *    its clock arithmetic, then a source that sends only keep-alives
 *    (empty QEMU_FILE messages) is ended once the deadline passed, with
 *    ERROR to it, while one that sends stream bytes at the same pace is
 *    served to its end.
 *  - The re-registration budget (rdmig_opts.repin_budget): a source that
 *    unregisters and registers the same chunk again is refused at the
 *    re-registration past the budget, with ERROR to it; -1 lifts it.
 *  - The connection's cancel (rdmig_conn_cancel, engine_io.cancel): a
 *    source that keeps the engine busy with messages that raise no event
 *    is ended between two of them, and a long COMPRESS within a slice.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include "check.h"
#include "dest_idle.h"
#include "engine.h"
#include "fake_io.h"
#include "opts.h"

#define MIB (1024ull * 1024)
#define BLOCK_LEN (4 * MIB)

struct run {
	struct fake_frames q;
	struct fake_conn conn;
	struct rdmig_dest *d;
	uint8_t *block;
	int sleep_ms; /* before each message after the first: the source's pace */
	unsigned delivered;
	bool dirty_first_byte; /* write block[0] before each message */
	unsigned cancel_at;    /* cancel the connection before this message (0: never) */
};

static bool next_frame(void *ctx, const uint8_t **buf, size_t *len)
{
	struct run *r = ctx;

	return fake_frames_next(&r->q, buf, len);
}

static void before_recv(void *ctx)
{
	struct run *r = ctx;
	struct timespec ts = {r->sleep_ms / 1000, (long)(r->sleep_ms % 1000) * 1000000};

	fake_clear_replies(); /* each message's replies are not looked at here */
	if (r->sleep_ms && fake.recvs > 0)
		nanosleep(&ts, NULL);
	if (r->dirty_first_byte)
		r->block[0] = 0x5a;
	if (r->cancel_at && fake.recvs == r->cancel_at)
		atomic_store(&r->conn.cancelled, true); /* as another thread would */
}

static void delivered(void *ctx, int rc, const struct rdmig_msg *m)
{
	struct run *r = ctx;

	(void)m;
	if (!rc)
		r->delivered++;
}

static void any_reg(void *ctx, const uint8_t *addr, size_t len, enum engine_access access)
{
	(void)ctx, (void)addr, (void)len, (void)access;
}

/* A destination over the fake seam with one block of four chunks, the
 * RAM_BLOCKS exchange as the first message. */
static void start(struct run *r, int idle_timeout_ms, int repin_budget, int sleep_ms)
{
	struct fake_hooks hooks = {next_frame, before_recv, delivered, any_reg, NULL, r};
	struct rdmig_block b;

	memset(r, 0, sizeof(*r));
	r->sleep_ms = sleep_ms;
	r->block = mmap(NULL, BLOCK_LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(r->block != MAP_FAILED);
	b = (struct rdmig_block){"ram", r->block, BLOCK_LEN, 0};
	rdmig_opts_init(&r->conn.opts);
	r->conn.opts.idle_timeout_ms = idle_timeout_ms;
	r->conn.opts.repin_budget = repin_budget;
	r->conn.established = true;
	r->conn.caps = (struct rdmig_caps){RDMIG_CAP_VERSION, 0};
	fake_begin(&r->conn, &hooks, 0);
	CHECK_OK(rdmig__dest_create(&fake.io, &r->d));
	CHECK_OK(rdmig_dest_set_blocks(r->d, &b, 1));
	fake_frames_add(&r->q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
}

static void finish(struct run *r)
{
	rdmig_dest_destroy(r->d);
	fake_end();
	munmap(r->block, BLOCK_LEN);
	fake_frames_free(&r->q);
}

/* Run until the end or a failure: the code (0 at the end). */
static int run(struct run *r)
{
	struct rdmig_event ev = {0};
	int ret;

	while (!(ret = rdmig_dest_next(r->d, &ev)) && ev.type != RDMIG_EV_END)
		;
	return ret;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ the clock -- */

TEST(idle_clock_without_a_limit_never_expires)
{
	struct dest_idle c;

	dest_idle_start(&c, 0, 1e6);
	CHECK_EQ(dest_idle_left_ms(&c, 1e6), -1);
	CHECK(!dest_idle_expired(&c, 1e15));
	dest_idle_start(&c, -5, 1e6);
	CHECK(!dest_idle_expired(&c, 1e15));
}

TEST(idle_clock_counts_from_the_last_progress_and_rounds_up)
{
	struct dest_idle c;

	dest_idle_start(&c, 1000, 5e6);          /* deadline at 6 s */
	CHECK_EQ(dest_idle_left_ms(&c, 5e6), 1000);
	CHECK_EQ(dest_idle_left_ms(&c, 5.9995e6), 1); /* 0.5 ms left: a wait of 1 ms */
	CHECK(!dest_idle_expired(&c, 5.9995e6));
	CHECK(dest_idle_expired(&c, 6e6));
	dest_idle_progress(&c, 5.5e6);            /* deadline moves to 6.5 s */
	CHECK(!dest_idle_expired(&c, 6e6));
	CHECK_EQ(dest_idle_left_ms(&c, 6e6), 500);
	CHECK(dest_idle_expired(&c, 6.5e6));
}

TEST(idle_clock_does_not_count_the_callers_time)
{
	struct dest_idle c;

	dest_idle_start(&c, 1000, 0);
	dest_idle_pause(&c, 0.5e6);     /* an event went out at 0.5 s */
	dest_idle_resume(&c, 10.5e6);   /* the caller took 10 s over it */
	CHECK_EQ(dest_idle_left_ms(&c, 10.5e6), 500);
	CHECK(dest_idle_expired(&c, 11e6));
	dest_idle_resume(&c, 20e6);     /* not paused: nothing moves */
	CHECK(dest_idle_expired(&c, 11e6));
}

/* ---------------------------------------------------- the idle deadline -- */

/* A keep-alive every 50 ms against a deadline of 300 ms: ended after
 * about six of them, with ERROR to the source, not at the end of the
 * twenty queued. */
TEST(a_source_of_only_keep_alives_is_ended_at_the_deadline)
{
	static struct run r;
	double t0;
	int ret;

	start(&r, 300, RDMIG_REPIN_BUDGET, 50);
	for (int i = 0; i < 20; i++)
		fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, NULL, 0);
	t0 = now_ms();
	ret = run(&r);
	CHECK_EQ(ret, RDMIG_ETIMEDOUT);
	CHECK(now_ms() - t0 >= 300);
	CHECK(now_ms() - t0 < 300 + 3 * 50 + 200); /* the deadline, a message late at most */
	CHECK(r.delivered < 15);
	CHECK(fake.errors_sent >= 1);
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(r.d), "moved no data");
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(r.d), "idle timeout of 0.3 s");
	finish(&r);
}

/* Any other message that moves nothing counts no more than a keep-alive. */
TEST(register_finished_and_repeated_registers_are_no_progress)
{
	static struct run r;
	struct rdmig_register reg = {0, 0, 0};
	uint8_t rec[RDMIG_REGISTER_SIZE];

	rdmig_encode_register(&reg, rec);
	start(&r, 300, RDMIG_REPIN_BUDGET, 50);
	for (int i = 0; i < 10; i++) {
		fake_frames_add(&r.q, RDMIG_MSG_REGISTER_FINISHED, 1, NULL, 0);
		/* the first registers chunk 0 (progress); the rest are answered
		 * from its region */
		fake_frames_add(&r.q, RDMIG_MSG_REGISTER_REQUEST, 1, rec, sizeof(rec));
	}
	CHECK_EQ(run(&r), RDMIG_ETIMEDOUT);
	CHECK(r.delivered < 19);
	finish(&r);
}

/* A caller that takes long over each event (here 100 ms, of a deadline of
 * 300 ms, with keep-alives coming at once) is not the source's fault: the
 * keep-alives are cut off by the source's time only, after about 300 ms of
 * it, not 300 ms of the caller's. */
TEST(the_callers_time_does_not_count_against_the_source)
{
	static struct run r;
	struct timespec slow = {0, 100 * 1000000L};
	struct rdmig_event ev;
	int ret, events = 0;

	start(&r, 300, RDMIG_REPIN_BUDGET, 0);
	for (int i = 0; i < 20; i++)
		fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, NULL, 0);
	while (!(ret = rdmig_dest_next(r.d, &ev)) && ev.type != RDMIG_EV_END) {
		events++;
		nanosleep(&slow, NULL);
	}
	CHECK_EQ(ret, 0); /* 20 keep-alives in no time of the source's */
	CHECK_EQ(events, 20);
	finish(&r);
}

/* The same pace with one stream byte a message: served to the end. */
TEST(a_source_that_sends_stream_bytes_is_not_ended)
{
	static struct run r;
	static const uint8_t byte = 0x5a;

	start(&r, 300, RDMIG_REPIN_BUDGET, 50);
	for (int i = 0; i < 20; i++)
		fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, &byte, 1);
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.delivered, 21);
	CHECK_EQ(fake.errors_sent, 0);
	finish(&r);
}

/* COMPRESS of a range that is zero already moves nothing: a source that
 * sends one byte's COMPRESS every 50 ms is ended at the deadline as one of
 * keep-alives is, not served without end. */
TEST(compress_of_a_zero_range_is_no_progress)
{
	static struct run r;
	struct rdmig_compress cp = {0, 0, 0, 1};
	uint8_t rec[RDMIG_COMPRESS_SIZE];

	rdmig_encode_compress(&cp, rec);
	start(&r, 300, RDMIG_REPIN_BUDGET, 50);
	for (int i = 0; i < 20; i++)
		fake_frames_add(&r.q, RDMIG_MSG_COMPRESS, 1, rec, sizeof(rec));
	CHECK_EQ(run(&r), RDMIG_ETIMEDOUT);
	CHECK(r.delivered < 15);
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(r.d), "idle timeout of 0.3 s");
	finish(&r);
}

/* COMPRESS that zeroes bytes that were not zero is progress. */
TEST(compress_that_zeroes_data_is_progress)
{
	static struct run r;
	struct rdmig_compress cp = {0, 0, 0, 1};
	uint8_t rec[RDMIG_COMPRESS_SIZE];

	rdmig_encode_compress(&cp, rec);
	start(&r, 300, RDMIG_REPIN_BUDGET, 0);
	r.sleep_ms = 50;
	for (int i = 0; i < 10; i++)
		fake_frames_add(&r.q, RDMIG_MSG_COMPRESS, 1, rec, sizeof(rec));
	/* the peer's write before each message, as an RDMA write would be */
	r.dirty_first_byte = true;
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.delivered, 11);
	finish(&r);
}

/* Without a deadline (the library's default) keep-alives are served. */
TEST(without_an_idle_timeout_keep_alives_are_served)
{
	static struct run r;

	start(&r, 0, RDMIG_REPIN_BUDGET, 20);
	for (int i = 0; i < 20; i++)
		fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, NULL, 0);
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.delivered, 21);
	finish(&r);
}

/* ------------------------------------------------- the overall deadline -- */

/* A source that sends stream bytes at a steady pace moves data, so the
 * idle deadline never ends it; the overall deadline does, with ERROR. */
TEST(the_overall_deadline_ends_a_source_that_trickles_bytes)
{
	static struct run r;
	uint8_t byte = 0x42;
	double t0;

	start(&r, 300, RDMIG_REPIN_BUDGET, 50);
	r.conn.opts.deadline_ms = 400;
	rdmig_dest_destroy(r.d); /* the deadline is the engine's from its creation */
	CHECK_OK(rdmig__dest_create(&fake.io, &r.d));
	{
		struct rdmig_block b = {"ram", r.block, BLOCK_LEN, 0};

		CHECK_OK(rdmig_dest_set_blocks(r.d, &b, 1));
	}
	for (int i = 0; i < 25; i++) /* 1.25 s of bytes at 50 ms */
		fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, &byte, 1);
	t0 = now_ms();
	CHECK_EQ(run(&r), RDMIG_ETIMEDOUT);
	CHECK(now_ms() - t0 < 1500);
	CHECK(r.delivered < 20);
	CHECK_EQ(fake.errors_sent, 1);
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(r.d), "whole deadline of 0.4 s");
	finish(&r);
}

/* A deadline below 0 is refused; 0 (the default) is none. */
TEST(the_overall_deadline_is_checked)
{
	struct rdmig_opts o, copy;
	char err[RDMIG_ERRMSG_SIZE];

	rdmig_opts_init(&o);
	CHECK_EQ(o.deadline_ms, 0);
	o.deadline_ms = -1;
	CHECK_EQ(rdmig__opts_copy(&copy, &o, err), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(err, "deadline");
}

/* ------------------------------------------------------- the cancel -- */

/* A source that sends COMPRESS after COMPRESS raises no event the caller
 * would see (no step returns): the connection's cancel must still end it,
 * between two messages, with ECANCELED, and not serve the rest. */
TEST(a_cancel_of_the_connection_ends_a_source_of_only_compress)
{
	static struct run r;
	struct rdmig_compress cp = {0, 0, 0, 1};
	uint8_t rec[RDMIG_COMPRESS_SIZE];

	rdmig_encode_compress(&cp, rec);
	start(&r, 0, RDMIG_REPIN_BUDGET, 0);
	r.cancel_at = 5;
	r.dirty_first_byte = true;
	for (int i = 0; i < 30; i++)
		fake_frames_add(&r.q, RDMIG_MSG_COMPRESS, 1, rec, sizeof(rec));
	CHECK_EQ(run(&r), RDMIG_ECANCELED);
	/* the cancel came while the sixth message was asked for (the RAM_BLOCKS
	 * request and five COMPRESS): that one is served, none after it */
	CHECK_EQ(r.delivered, 6);
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(r.d), "cancelled");
	finish(&r);
}

/* Zeroing a long range looks at the connection's cancel every slice: it
 * stops with most of a 64 MiB range left as it was. */
TEST(a_cancel_of_the_connection_stops_zeroing)
{
	const uint64_t len = 64 * MIB;
	struct fake_conn conn;
	struct engine_io io;
	uint64_t written = 0;
	uint8_t *p = malloc(len);

	CHECK(p != NULL);
	memset(p, 0x5a, len);
	memset(&conn, 0, sizeof(conn));
	rdmig_opts_init(&conn.opts);
	io = fake_io_of(&conn);
	CHECK(rdmig__engine_zero_range(p, len, &io, &written));
	CHECK_EQ(written, len);
	memset(p, 0x5a, len);
	written = 0;
	atomic_store(&conn.cancelled, true);
	CHECK(!rdmig__engine_zero_range(p, len, &io, &written));
	CHECK(written <= 2 * MIB);
	CHECK_EQ(p[len - 1], 0x5a);
	free(p);
}

/* ------------------------------------------------- RAM_BLOCKS_RESULT -- */

/* A block of no bytes has no memory: its address in RAM_BLOCKS_RESULT is 0,
 * not whatever the caller passed (librdmig's own images destination passes
 * a static, whose address would tell any source where the library is
 * loaded).  A block with bytes keeps its address: the source writes there. */
TEST(an_empty_block_is_told_without_an_address)
{
	static struct run r;
	static uint8_t placeholder;
	struct fake_hooks hooks = {next_frame, NULL, delivered, any_reg, NULL, &r};
	struct rdmig_block b[2];
	struct rdmig_dest_block db0, db1;
	const struct fake_reply *res = NULL;

	memset(&r, 0, sizeof(r));
	r.block = mmap(NULL, BLOCK_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(r.block != MAP_FAILED);
	b[0] = (struct rdmig_block){"ram", r.block, BLOCK_LEN, 0};
	b[1] = (struct rdmig_block){"empty", &placeholder, 0, BLOCK_LEN};
	rdmig_opts_init(&r.conn.opts);
	r.conn.established = true;
	r.conn.caps = (struct rdmig_caps){RDMIG_CAP_VERSION, 0};
	fake_begin(&r.conn, &hooks, 0);
	CHECK_OK(rdmig__dest_create(&fake.io, &r.d));
	CHECK_OK(rdmig_dest_set_blocks(r.d, b, 2));
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	CHECK_EQ(run(&r), 0);
	for (unsigned i = 0; i < fake.nreplies; i++)
		if (fake.replies[i].type == RDMIG_MSG_RAM_BLOCKS_RESULT)
			res = &fake.replies[i];
	CHECK(res != NULL);
	CHECK_EQ(res->len, 2 * RDMIG_DEST_BLOCK_SIZE);
	rdmig_decode_dest_block(res->payload, &db0);
	rdmig_decode_dest_block(res->payload + RDMIG_DEST_BLOCK_SIZE, &db1);
	CHECK(db0.remote_host_addr == (uintptr_t)r.block);
	CHECK(db1.remote_host_addr == 0);
	CHECK_EQ(db1.length, 0);
	finish(&r);
}

/* ---------------------------------------------- the re-pinning budget -- */

/* REGISTER chunk 1, then `cycles` times UNREGISTER and REGISTER it again. */
static void add_churn(struct run *r, int cycles)
{
	struct rdmig_register reg = {MIB, 0, 0}, unreg = {1, 0, 0};
	uint8_t regrec[RDMIG_REGISTER_SIZE], unregrec[RDMIG_REGISTER_SIZE];

	rdmig_encode_register(&reg, regrec);
	rdmig_encode_register(&unreg, unregrec);
	fake_frames_add(&r->q, RDMIG_MSG_REGISTER_REQUEST, 1, regrec, sizeof(regrec));
	for (int i = 0; i < cycles; i++) {
		fake_frames_add(&r->q, RDMIG_MSG_UNREGISTER_REQUEST, 1, unregrec, sizeof(unregrec));
		fake_frames_add(&r->q, RDMIG_MSG_REGISTER_REQUEST, 1, regrec, sizeof(regrec));
	}
}

TEST(re_registration_past_the_budget_is_refused)
{
	static struct run r;
	struct rdmig_engine_stats st;

	start(&r, 0, 3, 0);
	add_churn(&r, 5);
	CHECK_EQ(run(&r), RDMIG_EPROTO);
	CHECK(fake.errors_sent >= 1);
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(r.d), "registered again after UNREGISTER");
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(r.d), "the budget is 3");
	st.size = sizeof(st);
	rdmig_dest_stats(r.d, &st);
	CHECK_EQ(st.chunks_registered, 4); /* the first time and three again */
	/* blocks, register, then 3 re-pins of two messages each, and the
	 * fourth UNREGISTER and its REGISTER (refused) */
	CHECK_EQ(r.delivered, 1 + 1 + 3 * 2 + 2);
	CHECK_EQ(fake.live_regions, 0); /* the last region was unregistered */
	finish(&r);
}

TEST(a_budget_of_zero_refuses_the_first_re_registration)
{
	static struct run r;

	start(&r, 0, 0, 0);
	add_churn(&r, 1);
	CHECK_EQ(run(&r), RDMIG_EPROTO);
	CHECK_STR_CONTAINS(rdmig_dest_errmsg(r.d), "the budget is 0");
	finish(&r);
}

TEST(no_budget_serves_any_churn)
{
	static struct run r;

	start(&r, 0, -1, 0);
	add_churn(&r, 10);
	CHECK_EQ(run(&r), 0);
	finish(&r);
}

TEST(the_default_budget_is_documented_and_taken)
{
	struct rdmig_opts o;
	struct rdmig_opts copy;
	char err[RDMIG_ERRMSG_SIZE];

	rdmig_opts_init(&o);
	CHECK_EQ(o.repin_budget, RDMIG_REPIN_BUDGET);
	CHECK_EQ(RDMIG_REPIN_BUDGET, 4096);
	CHECK_EQ(o.idle_timeout_ms, 0);
	o.repin_budget = -2;
	CHECK_EQ(rdmig__opts_copy(&copy, &o, err), RDMIG_EINVAL);
	o.repin_budget = -1;
	o.idle_timeout_ms = -1;
	CHECK_EQ(rdmig__opts_copy(&copy, &o, err), RDMIG_EINVAL);
}

CHECK_MAIN()
