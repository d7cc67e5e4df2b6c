/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_engine.c - the migration engine on real devices: blocks of every
 * shape arrive byte for byte, with dynamic registration and with PIN_ALL;
 * zero chunks travel as COMPRESS; registrations are asked for ahead of
 * the previous chunk's write where they can be; a second iteration
 * re-sends changed pages; a block-count mismatch is refused; the end of an
 * iteration waits for every send, also when a signaled write is still in
 * flight behind which an unsignaled send was posted; skipping zero pages
 * (rdmig_source_set_skip_zero), the destination's zero pages are never
 * touched, neither written nor COMPRESSed.  (A hostile
 * peer, field by field: test_hostile.c.)
 *
 * The destination's memory starts as garbage (0xAA), so a missed COMPRESS
 * or write shows up as a difference.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "devenv.h"

#define MIB (1024u * 1024u)
#define PAGE 4096u

struct shape {
	const char *name;
	uint64_t length;
};

static const struct shape shapes[] = {
	{"random", 3 * MIB + 123},
	{"zero", 2 * MIB},
	{"sparse", 5 * MIB},
	{"empty", 0},
	{"small", 5000},
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* The content of block i in iteration `iter` (1 or 2). */
static void make_content(uint8_t *p, size_t i, int iter)
{
	uint64_t len = shapes[i].length;

	memset(p, 0, len);
	if (!strcmp(shapes[i].name, "random") || !strcmp(shapes[i].name, "small"))
		fill_pattern(p, len, (uint32_t)(100 + i));
	if (!strcmp(shapes[i].name, "sparse")) {
		fill_pattern(p + 3 * PAGE, PAGE, 7);           /* chunk 0 */
		fill_pattern(p + 2 * MIB + 2 * PAGE, 100, 8);  /* chunk 2 */
	}
	if (iter == 2) {
		if (!strcmp(shapes[i].name, "random")) {
			fill_pattern(p + MIB + 5 * PAGE, PAGE, 9); /* changed page */
			memset(p + 2 * PAGE, 0, PAGE);             /* page now zero */
		}
		if (!strcmp(shapes[i].name, "sparse"))
			fill_pattern(p + 4 * MIB + PAGE, PAGE, 10); /* data in a zero chunk */
	}
}

/* Pages that differ between iteration 1 and 2 (what iteration 2 sends). */
static const struct {
	size_t block;
	uint64_t offset, len;
} changed[] = {
	{0, MIB + 5 * PAGE, PAGE},
	{0, 2 * PAGE, PAGE},
	{2, 4 * MIB + PAGE, PAGE},
};

struct engine_arg {
	int iterations;
	size_t dest_blocks; /* how many blocks the destination offers */
	int expect_fail;    /* destination expects the migration to be refused */
	bool skip_zero;     /* the source skips zero pages */
};

/* Skipping zero pages, what the destination holds: the source's pages,
 * but the garbage it started with where the source's page is all zero. */
static void keep_garbage_in_zero_pages(uint8_t *want, uint64_t len)
{
	for (uint64_t at = 0; at < len; at += PAGE) {
		uint64_t n = len - at < PAGE ? len - at : PAGE;
		if (rdmig_is_zero(want + at, n))
			memset(want + at, 0xAA, n);
	}
}

static void *garbage_block(uint64_t len)
{
	void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0xAA, len);
	return p;
}

static void dest_engine(struct rdmig_conn *c, void *argp)
{
	const struct engine_arg *a = argp;
	struct rdmig_block blocks[NSHAPES];
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev;
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct rdmig_caps caps;
	int iterations = 0, ended = 0;
	char stream[64] = "";
	size_t got = 0;

	for (size_t i = 0; i < a->dest_blocks; i++)
		blocks[i] = (struct rdmig_block){shapes[i].name, garbage_block(shapes[i].length),
						 shapes[i].length, 0};
	CHECK_OK(rdmig_dest_create(c, &d));
	while (!ended) {
		int ret = rdmig_dest_next(d, &ev);
		if (a->expect_fail && ret == RDMIG_EPEER)
			break; /* the source refused our blocks */
		CHECK_OK(ret);
		switch (ev.type) {
		case RDMIG_EV_STREAM:
			CHECK(got + ev.len < sizeof(stream));
			memcpy(stream + got, ev.data, ev.len);
			got += ev.len;
			break;
		case RDMIG_EV_BLOCKS_NEEDED:
			CHECK_OK(rdmig_dest_set_blocks(d, blocks, a->dest_blocks));
			break;
		case RDMIG_EV_ITERATION_DONE:
			iterations++;
			break;
		case RDMIG_EV_END:
			ended = 1;
			break;
		}
	}
	if (!a->expect_fail) {
		CHECK_EQ(iterations, a->iterations);
		CHECK(!strcmp(stream, "begin;end"));
		for (size_t i = 0; i < NSHAPES; i++) {
			uint8_t *want = malloc(shapes[i].length + 1);
			make_content(want, i, a->iterations);
			if (a->skip_zero)
				keep_garbage_in_zero_pages(want, shapes[i].length);
			CHECK_MEM_EQ(blocks[i].host, want, shapes[i].length);
			free(want);
		}
		rdmig_dest_stats(d, &st);
		CHECK_EQ(st.iterations, a->iterations);
		rdmig_conn_caps(c, &caps);
		/* dynamic: the zero block and the zero chunks of "sparse" went as COMPRESS */
		if (a->skip_zero)
			CHECK_EQ(st.bytes_compressed, 0);
		else if (!(caps.flags & RDMIG_CAP_PIN_ALL))
			CHECK(st.bytes_compressed >= 2 * MIB + 3 * MIB);
		else
			CHECK_EQ(st.bytes_compressed, 0);
	}
	rdmig_dest_destroy(d);
}

/* Send every block whole (the library finds the zero chunks). */
static int send_all(struct rdmig_source *s)
{
	for (size_t i = 0; i < NSHAPES; i++) {
		int ret = rdmig_source_write(s, (uint32_t)i, 0, shapes[i].length);
		if (ret)
			return ret;
	}
	return rdmig_source_end_iteration(s);
}

static void run_engine(const struct dev *dev, bool pin_all, int iterations, bool skip_zero)
{
	struct engine_arg a = {iterations, NSHAPES, 0, skip_zero};
	struct pair p = {.dev = dev, .dest = dest_engine, .arg = &a};
	struct rdmig_block blocks[NSHAPES];
	uint8_t *mem[NSHAPES];
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	test_opts(&o);
	o.pin_all = pin_all;
	test_opts(&p.dest_opts);
	p.dest_opts.pin_all = true;
	CHECK_OK(pair_start(&p));
	/* after the fork: the destination child must not inherit (and leak) these */
	for (size_t i = 0; i < NSHAPES; i++) {
		mem[i] = malloc(shapes[i].length + 1);
		make_content(mem[i], i, 1);
		blocks[i] = (struct rdmig_block){shapes[i].name, mem[i], shapes[i].length, 0};
	}
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_source_create(c, blocks, NSHAPES, &s));
	CHECK_OK(rdmig_source_set_skip_zero(s, skip_zero));
	CHECK_OK(rdmig_source_write_stream(s, "begin;", 6));
	CHECK_OK(rdmig_source_setup(s));
	CHECK_OK(send_all(s));
	if (iterations == 2) {
		for (size_t i = 0; i < NSHAPES; i++)
			make_content(mem[i], i, 2);
		for (size_t k = 0; k < sizeof(changed) / sizeof(changed[0]); k++)
			CHECK_OK(rdmig_source_write(s, (uint32_t)changed[k].block, changed[k].offset,
						    changed[k].len));
		CHECK_OK(rdmig_source_end_iteration(s));
	}
	CHECK_OK(rdmig_source_write_stream(s, "end", 4));
	rdmig_source_stats(s, &st);
	CHECK(st.writes_posted > 0);
	CHECK(st.writes_signaled <= st.writes_posted);
	if (skip_zero) {
		/* Only pages with data: random whole, one page in each of
		 * sparse's chunks 0 and 2, small whole; the same 7 requests,
		 * each but random's first asked ahead, since no COMPRESS comes
		 * between a write and the next chunk's. */
		CHECK_EQ(st.bytes_written, 3 * MIB + 123 + 2 * PAGE + 5000);
		CHECK_EQ(st.bytes_compressed, 0);
		CHECK_EQ(st.register_requests, pin_all ? 0 : 7);
		CHECK_EQ(st.register_ahead, pin_all ? 0 : 6);
	} else if (!pin_all) {
		/* One request per chunk with data: random 4, sparse 2, small 1,
		 * and in iteration 2 the new data in sparse's zero chunk 4.
		 * Asked ahead (before the previous write was posted): random's
		 * chunks 1-3, whose predecessor had its key, and iteration 2's
		 * request, which follows a page of random; never a chunk that
		 * follows a COMPRESSed one (its own COMPRESS came first). */
		CHECK_EQ(st.register_requests, iterations == 2 ? 8 : 7);
		CHECK_EQ(st.register_ahead, iterations == 2 ? 4 : 3);
	} else {
		CHECK_EQ(st.register_requests, 0);
		CHECK_EQ(st.register_ahead, 0);
	}
	rdmig_source_destroy(s);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 120));
	for (size_t i = 0; i < NSHAPES; i++)
		free(mem[i]);
}

DEVICE_TEST(blocks_of_every_shape_dynamic)
{
	run_engine(dev, false, 1, false);
}

DEVICE_TEST(blocks_of_every_shape_pin_all)
{
	run_engine(dev, true, 1, false);
}

DEVICE_TEST(second_iteration_resends_changed_pages)
{
	run_engine(dev, false, 2, false);
}

DEVICE_TEST(second_iteration_pin_all)
{
	run_engine(dev, true, 2, false);
}

DEVICE_TEST(skip_zero_leaves_zero_pages_untouched_dynamic)
{
	run_engine(dev, false, 1, true);
}

DEVICE_TEST(skip_zero_leaves_zero_pages_untouched_pin_all)
{
	run_engine(dev, true, 1, true);
}

DEVICE_TEST(block_count_mismatch_is_refused)
{
	struct engine_arg a = {1, NSHAPES - 1, 1};
	struct pair p = {.dev = dev, .dest = dest_engine, .arg = &a};
	struct rdmig_block blocks[NSHAPES];
	uint8_t *mem[NSHAPES];
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;

	test_opts(&o);
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	for (size_t i = 0; i < NSHAPES; i++) {
		mem[i] = calloc(1, shapes[i].length + 1);
		blocks[i] = (struct rdmig_block){shapes[i].name, mem[i], shapes[i].length, 0};
	}
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_source_create(c, blocks, NSHAPES, &s));
	CHECK_EQ(rdmig_source_setup(s), RDMIG_ERANGE);
	CHECK_STR_CONTAINS(rdmig_source_errmsg(s), "the destination has 4 RAM blocks, the source 5");
	rdmig_source_destroy(s);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
	for (size_t i = 0; i < NSHAPES; i++)
		free(mem[i]);
}

/* ------------------------------------------- the end waits for the tail -- */

#define TAIL_LEN (16 * MIB)
#define TAIL_PADS 4 /* iterations, with 0, 1, 2 and 3 padding messages */
#define TAIL_DEPTH 8 /* the send queue: every 2nd WR is signaled */

/* One block of TAIL_LEN; the data must match after every iteration. */
static void dest_tail(struct rdmig_conn *c, void *argp)
{
	struct rdmig_block b = {"ram", garbage_block(TAIL_LEN), TAIL_LEN, 0};
	uint8_t *want = malloc(TAIL_LEN);
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev;
	int iterations = 0, ended = 0;

	(void)argp;
	fill_pattern(want, TAIL_LEN, 7);
	CHECK_OK(rdmig_dest_create(c, &d));
	while (!ended && !check_failed) {
		CHECK_OK(rdmig_dest_next(d, &ev));
		if (ev.type == RDMIG_EV_BLOCKS_NEEDED)
			CHECK_OK(rdmig_dest_set_blocks(d, &b, 1));
		else if (ev.type == RDMIG_EV_ITERATION_DONE)
			iterations += !memcmp(b.host, want, TAIL_LEN);
		ended = ev.type == RDMIG_EV_END;
	}
	CHECK_EQ(iterations, TAIL_PADS);
	rdmig_dest_destroy(d);
	munmap(b.host, TAIL_LEN);
	free(want);
}

/*
 * With a send queue of 8 every 2nd WR is signaled.  Each iteration sends
 * its padding messages, the block as 2 MiB writes (they take a while on a
 * soft device), one stream message, and ends: in some iteration the last
 * write is signaled and the stream message after it is not.  The end must
 * not take that write's completion for the end of the queue: it used to
 * wait there until its timeout (found with rdmig send --pin-all
 * --chunk-size 1M on siw; this case timed out on siw, not on rxe).  One
 * pair per test process: a second destination forked after a connection
 * inherits that connection's device mappings.
 */
DEVICE_TEST(end_waits_for_sends_behind_a_signaled_write)
{
	struct pair p = {.dev = dev, .dest = dest_tail};
	struct rdmig_block b;
	uint8_t *mem = malloc(TAIL_LEN);
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;

	test_opts(&o);
	o.pin_all = true;
	o.max_send_wr = TAIL_DEPTH;
	o.timeout_ms = 10000;
	test_opts(&p.dest_opts);
	p.dest_opts.pin_all = true;
	CHECK_OK(pair_start(&p));
	fill_pattern(mem, TAIL_LEN, 7);
	b = (struct rdmig_block){"ram", mem, TAIL_LEN, 0};
	CHECK_OK(test_connect(&p, &o, &c));
	CHECK_OK(rdmig_source_create(c, &b, 1, &s));
	CHECK_OK(rdmig_source_setup(s));
	for (int pad = 0; pad < TAIL_PADS && !check_failed; pad++) {
		double t0 = rdmig_monotonic_seconds();
		for (int k = 0; k < pad; k++)
			CHECK_OK(rdmig_source_write_stream(s, "pad", 3));
		CHECK_OK(rdmig_source_write(s, 0, 0, TAIL_LEN));
		CHECK_OK(rdmig_source_write_stream(s, "tail", 4));
		CHECK_OK(rdmig_source_end_iteration(s));
		printf("# %d padding: the iteration ended after %.2f s\n", pad,
		       rdmig_monotonic_seconds() - t0);
	}
	rdmig_source_destroy(s);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 120));
	free(mem);
}

CHECK_MAIN()
