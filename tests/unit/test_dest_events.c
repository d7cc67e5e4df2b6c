/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_dest_events.c - the destination reports what it served, when asked
 * (rdmig_dest_set_events): nothing by default; one event per
 * REGISTER_REQUEST, COMPRESS or UNREGISTER_REQUEST record, in order, each
 * with its block, chunk and byte range, handed out one per call after the
 * reply went and before the next message is read; only the kinds asked
 * for.  No device: the channel and registration are the fake engine_io of
 * tests/fuzz/fake_io.h.
 */
#include <sys/mman.h>
#include "check.h"
#include "fake_io.h"

#define MIB (1024ull * 1024)
#define MAX_SEEN 16

/* Two blocks: "a" of four chunks (the last short), "b" of two, laid out
 * by the library at RAM offsets 0 and 4 MiB. */
#define LEN_A (3 * MIB + 12345)
#define LEN_B (2 * MIB)
#define OFFSET_B (4 * MIB)

/* An event as the test saw it, and what had happened by then. */
struct seen {
	int type;
	struct rdmig_dest_range r;
	size_t len;
	unsigned recvs, replies;
};

struct run {
	struct fake_frames q;
	struct fake_conn conn;
	struct rdmig_dest *d;
	uint8_t *block[2];
	struct seen seen[MAX_SEEN];
	size_t nseen;
};

static bool next_frame(void *ctx, const uint8_t **buf, size_t *len)
{
	struct run *r = ctx;

	return fake_frames_next(&r->q, buf, len);
}

static void delivered(void *ctx, int rc, const struct rdmig_msg *m)
{
	(void)ctx, (void)rc, (void)m;
}

static void check_reg(void *ctx, const uint8_t *addr, size_t len, enum engine_access access)
{
	(void)ctx, (void)addr, (void)len, (void)access;
}

static void add_frame(struct run *r, uint32_t type, uint32_t repeat, const void *payload,
		      uint32_t len)
{
	fake_frames_add(&r->q, type, repeat, payload, len);
}

/* One REGISTER_REQUEST or UNREGISTER_REQUEST of n records. */
static void add_registers(struct run *r, uint32_t type, const struct rdmig_register *g, uint32_t n)
{
	uint8_t recs[4 * RDMIG_REGISTER_SIZE];

	CHECK(n <= 4);
	for (uint32_t i = 0; i < n; i++)
		rdmig_encode_register(&g[i], recs + i * RDMIG_REGISTER_SIZE);
	add_frame(r, type, n, recs, n * RDMIG_REGISTER_SIZE);
}

static void add_compresses(struct run *r, const struct rdmig_compress *cp, uint32_t n)
{
	uint8_t recs[4 * RDMIG_COMPRESS_SIZE];

	CHECK(n <= 4);
	for (uint32_t i = 0; i < n; i++)
		rdmig_encode_compress(&cp[i], recs + i * RDMIG_COMPRESS_SIZE);
	add_frame(r, RDMIG_MSG_COMPRESS, n, recs, n * RDMIG_COMPRESS_SIZE);
}

/* A destination over the fake seam with blocks a and b, asking for the
 * reports of mask, and the RAM_BLOCKS exchange as the first message. */
static void start(struct run *r, unsigned mask)
{
	struct fake_hooks hooks = {next_frame, NULL, delivered, check_reg, NULL, r};
	static const uint64_t lengths[2] = {LEN_A, LEN_B};
	struct rdmig_block b[2];

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < 2; i++) {
		r->block[i] = mmap(NULL, lengths[i], PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		CHECK(r->block[i] != MAP_FAILED);
		b[i] = (struct rdmig_block){i ? "b" : "a", r->block[i], lengths[i], 0};
	}
	rdmig_opts_init(&r->conn.opts);
	r->conn.established = true;
	r->conn.caps = (struct rdmig_caps){RDMIG_CAP_VERSION, 0};
	fake_begin(&r->conn, &hooks, 0);
	CHECK_OK(rdmig__dest_create(&fake.io, &r->d));
	if (mask)
		CHECK_OK(rdmig_dest_set_events(r->d, mask));
	CHECK_OK(rdmig_dest_set_blocks(r->d, b, 2));
	add_frame(r, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
}

static void finish(struct run *r)
{
	static const uint64_t lengths[2] = {LEN_A, LEN_B};

	rdmig_dest_destroy(r->d);
	fake_end();
	for (size_t i = 0; i < 2; i++)
		munmap(r->block[i], lengths[i]);
	fake_frames_free(&r->q);
}

/* Run until the end or a failure, keeping every event but END: the code. */
static int run(struct run *r)
{
	struct rdmig_event ev = {0};
	int ret;

	while (!(ret = rdmig_dest_next(r->d, &ev)) && ev.type != RDMIG_EV_END) {
		struct seen *s;

		if (r->nseen == MAX_SEEN)
			fake_fail("more than %d events", MAX_SEEN);
		s = &r->seen[r->nseen++];
		*s = (struct seen){.type = ev.type, .len = ev.len, .recvs = fake.recvs,
				   .replies = fake.nreplies};
		if (ev.type >= RDMIG_EV_REGISTERED && ev.data)
			memcpy(&s->r, ev.data, sizeof(s->r));
	}
	return ret;
}

static void check_range(const struct seen *s, int type, uint32_t block, uint32_t chunk,
			uint64_t offset, uint64_t len)
{
	CHECK_EQ(s->type, type);
	CHECK_EQ(s->len, sizeof(struct rdmig_dest_range));
	CHECK_EQ(s->r.block, block);
	CHECK_EQ(s->r.chunk, chunk);
	CHECK_EQ(s->r.offset, offset);
	CHECK_EQ(s->r.len, len);
}

/* One of each request the destination serves, then REGISTER_FINISHED. */
static void add_one_of_each(struct run *r)
{
	struct rdmig_register reg = {MIB + 100, 0, 0}, unreg = {1, 0, 0};
	struct rdmig_compress cp = {0, 1, OFFSET_B + 4096, 8192};

	add_registers(r, RDMIG_MSG_REGISTER_REQUEST, &reg, 1);
	add_compresses(r, &cp, 1);
	add_registers(r, RDMIG_MSG_UNREGISTER_REQUEST, &unreg, 1);
	add_frame(r, RDMIG_MSG_REGISTER_FINISHED, 1, NULL, 0);
}

TEST(events_off_report_nothing_new)
{
	static struct run r;

	start(&r, 0);
	add_one_of_each(&r);
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.nseen, 1);
	CHECK_EQ(r.seen[0].type, RDMIG_EV_ITERATION_DONE);
	CHECK_EQ(fake.nreplies, 3); /* RAM_BLOCKS, REGISTER, UNREGISTER results */
	finish(&r);
}

TEST(every_kind_is_reported_after_its_reply)
{
	static struct run r;

	start(&r, RDMIG_DEST_REPORT_REGISTER | RDMIG_DEST_REPORT_COMPRESS |
			  RDMIG_DEST_REPORT_UNREGISTER);
	add_one_of_each(&r);
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.nseen, 4);
	check_range(&r.seen[0], RDMIG_EV_REGISTERED, 0, 1, MIB, MIB);
	CHECK_EQ(r.seen[0].replies, 2); /* REGISTER_RESULT went first */
	check_range(&r.seen[1], RDMIG_EV_COMPRESSED, 1, 0, 4096, 8192);
	check_range(&r.seen[2], RDMIG_EV_UNREGISTERED, 0, 1, MIB, MIB);
	CHECK_EQ(r.seen[2].replies, 3); /* UNREGISTER_FINISHED went first */
	CHECK_EQ(r.seen[3].type, RDMIG_EV_ITERATION_DONE);
	finish(&r);
}

/* repeat 4: four events in the records' order, handed out one per call
 * with no message read in between; a multi-chunk record is one range, and
 * the last chunk of a block is short. */
TEST(a_register_of_several_records_reports_each_in_order)
{
	static struct run r;
	struct rdmig_register g[4] = {
		{3 * MIB + 5, 0, 0},     /* a: the short last chunk */
		{OFFSET_B, 1, 1},        /* b: chunks 0..1, one region */
		{7, 0, 0},               /* a: chunk 0 */
		{2 * MIB, 0, 0},         /* a: chunk 2 */
	};

	start(&r, RDMIG_DEST_REPORT_REGISTER);
	add_registers(&r, RDMIG_MSG_REGISTER_REQUEST, g, 4);
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.nseen, 4);
	check_range(&r.seen[0], RDMIG_EV_REGISTERED, 0, 3, 3 * MIB, 12345);
	check_range(&r.seen[1], RDMIG_EV_REGISTERED, 1, 0, 0, 2 * MIB);
	check_range(&r.seen[2], RDMIG_EV_REGISTERED, 0, 0, 0, MIB);
	check_range(&r.seen[3], RDMIG_EV_REGISTERED, 0, 2, 2 * MIB, MIB);
	for (size_t i = 0; i < 4; i++) {
		CHECK_EQ(r.seen[i].recvs, r.seen[0].recvs);
		CHECK_EQ(r.seen[i].replies, 2);
	}
	finish(&r);
}

/* A chunk registered again inside its region is served with the same key,
 * and reported again: the caller sees every record served. */
TEST(a_chunk_asked_for_twice_is_reported_twice)
{
	static struct run r;
	struct rdmig_register g = {MIB, 0, 0};

	start(&r, RDMIG_DEST_REPORT_REGISTER);
	add_registers(&r, RDMIG_MSG_REGISTER_REQUEST, &g, 1);
	add_registers(&r, RDMIG_MSG_REGISTER_REQUEST, &g, 1);
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.nseen, 2);
	check_range(&r.seen[0], RDMIG_EV_REGISTERED, 0, 1, MIB, MIB);
	check_range(&r.seen[1], RDMIG_EV_REGISTERED, 0, 1, MIB, MIB);
	CHECK(r.seen[1].recvs > r.seen[0].recvs);
	CHECK_EQ(fake.regs, 1);
	finish(&r);
}

/* COMPRESS ranges as the source gave them, in block terms; a range across
 * chunks names the chunk it begins in; an empty one is not reported. */
TEST(compress_reports_each_range_zeroed)
{
	static struct run r;
	struct rdmig_compress cp[3] = {
		{0, 0, MIB - 4096, 3 * 4096},  /* a: across chunks 0 and 1 */
		{0, 1, OFFSET_B + MIB, 0},     /* b: empty */
		{0, 1, OFFSET_B + MIB, MIB},   /* b: chunk 1 whole */
	};

	start(&r, RDMIG_DEST_REPORT_COMPRESS);
	add_compresses(&r, cp, 3);
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.nseen, 2);
	check_range(&r.seen[0], RDMIG_EV_COMPRESSED, 0, 0, MIB - 4096, 3 * 4096);
	check_range(&r.seen[1], RDMIG_EV_COMPRESSED, 1, 1, MIB, MIB);
	finish(&r);
}

/* UNREGISTER: every record, released or not (chunk 0 of b shares its
 * region with chunk 1, so it stays registered). */
TEST(unregister_reports_each_chunk_named)
{
	static struct run r;
	struct rdmig_register reg[2] = {{OFFSET_B, 1, 1}, {3 * MIB, 0, 0}};
	struct rdmig_register unreg[2] = {{0, 1, 0}, {3, 0, 0}};

	start(&r, RDMIG_DEST_REPORT_UNREGISTER);
	add_registers(&r, RDMIG_MSG_REGISTER_REQUEST, reg, 2);
	add_registers(&r, RDMIG_MSG_UNREGISTER_REQUEST, unreg, 2);
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.nseen, 2);
	check_range(&r.seen[0], RDMIG_EV_UNREGISTERED, 1, 0, 0, MIB);
	check_range(&r.seen[1], RDMIG_EV_UNREGISTERED, 0, 3, 3 * MIB, 12345);
	CHECK_EQ(fake.live_regions, 1); /* b's shared region stays */
	finish(&r);
}

TEST(a_mask_of_one_kind_reports_only_that_kind)
{
	static struct run r;

	start(&r, RDMIG_DEST_REPORT_COMPRESS);
	add_one_of_each(&r);
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.nseen, 2);
	check_range(&r.seen[0], RDMIG_EV_COMPRESSED, 1, 0, 4096, 8192);
	CHECK_EQ(r.seen[1].type, RDMIG_EV_ITERATION_DONE);
	finish(&r);
}

/* A message refused (record 1 out of range) reports none of its records,
 * not even the first, which was served before the check failed. */
TEST(a_refused_message_reports_nothing)
{
	static struct run r;
	struct rdmig_register g[2] = {{0, 0, 0}, {0, 7, 0}};

	start(&r, RDMIG_DEST_REPORT_REGISTER);
	add_registers(&r, RDMIG_MSG_REGISTER_REQUEST, g, 2);
	CHECK_EQ(run(&r), RDMIG_ERANGE);
	CHECK_EQ(r.nseen, 0);
	finish(&r);
}

TEST(unknown_report_bits_are_refused)
{
	static struct run r;

	start(&r, 0);
	CHECK_EQ(rdmig_dest_set_events(r.d, 0x8), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(r.conn.errmsg, "unknown bits 0x8");
	CHECK_OK(rdmig_dest_set_events(r.d, 0));
	CHECK_EQ(rdmig_dest_set_events(NULL, RDMIG_DEST_REPORT_REGISTER), RDMIG_EINVAL);
	finish(&r);
}

/* The largest message, RDMIG_MAX_REPEAT records (all of one chunk, which
 * the first registers and the others find registered), reports every one,
 * with no message read until the last is out. */
TEST(a_message_of_max_repeat_records_reports_them_all)
{
	static struct run r;
	static uint8_t recs[RDMIG_MAX_REPEAT * RDMIG_REGISTER_SIZE];
	struct rdmig_register g = {2 * MIB + 1, 0, 0};
	struct rdmig_event ev;
	unsigned recvs = 0;
	uint32_t n = 0;

	start(&r, RDMIG_DEST_REPORT_REGISTER);
	for (uint32_t i = 0; i < RDMIG_MAX_REPEAT; i++)
		rdmig_encode_register(&g, recs + (size_t)i * RDMIG_REGISTER_SIZE);
	add_frame(&r, RDMIG_MSG_REGISTER_REQUEST, RDMIG_MAX_REPEAT, recs, sizeof(recs));
	while (!rdmig_dest_next(r.d, &ev) && ev.type == RDMIG_EV_REGISTERED) {
		const struct rdmig_dest_range *range = ev.data;

		if (!n)
			recvs = fake.recvs;
		CHECK_EQ(fake.recvs, recvs);
		CHECK(range->chunk == 2 && range->offset == 2 * MIB && range->len == MIB);
		n++;
	}
	CHECK_EQ(n, RDMIG_MAX_REPEAT);
	CHECK_EQ(ev.type, RDMIG_EV_END);
	CHECK_EQ(fake.regs, 1);
	finish(&r);
}

/* The mask applies to the messages served after the call: turned off
 * between two messages, the second reports nothing. */
TEST(turning_events_off_stops_the_reports)
{
	static struct run r;
	struct rdmig_register g = {MIB, 0, 0};
	struct rdmig_event ev;

	start(&r, RDMIG_DEST_REPORT_REGISTER);
	add_registers(&r, RDMIG_MSG_REGISTER_REQUEST, &g, 1);
	add_registers(&r, RDMIG_MSG_REGISTER_REQUEST, &g, 1);
	CHECK_OK(rdmig_dest_next(r.d, &ev));
	CHECK_EQ(ev.type, RDMIG_EV_REGISTERED);
	CHECK_OK(rdmig_dest_set_events(r.d, 0));
	CHECK_EQ(run(&r), 0);
	CHECK_EQ(r.nseen, 0);
	CHECK_EQ(fake.nreplies, 3); /* both were served */
	finish(&r);
}

CHECK_MAIN()
