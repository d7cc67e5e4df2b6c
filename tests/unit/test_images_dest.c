/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_images_dest.c - the image-set destination (rdmig/images.h,
 * src/images/images_dest.c) over the real destination engine and the fake
 * engine_io of tests/fuzz/fake_io.h: no device.  The "source" is a list of
 * frames (the image stream in QEMU_FILE messages, RAM_BLOCKS_REQUEST,
 * REGISTER_FINISHED); it writes no memory, so the blocks stay zero and
 * the digests it announces are those of zeros (or not, for a mismatch).
 *
 * What is checked: a whole run commits through the sink exactly what was
 * verified; a stream that is not one, a chunk size that disagrees, a
 * source without digests, a sink that fails (create, write), a cancel and
 * a digest that differs each end the run with their code and message,
 * abort the sink and commit nothing; the sink never gets a pointer into
 * the memory the source may write, and a rewrite of that memory after the
 * records cannot make the image differ from what was verified.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "check.h"
#include "fake_io.h"
#include "images_dest_int.h"
#include "images_int.h"

#define MIB (1024ull * 1024)
#define SPAN_SHIFT 20 /* 1 MiB spans */
#define CHUNK_SHIFT 20
#define BLOCK_LEN (2 * MIB + 4096) /* 3 spans, the last short */

struct sink_log {
	unsigned headers, creates, set_sizes, commits, aborts, streams;
	int fail_create, fail_write; /* the code to return, 0: succeed */
	uint8_t *image;              /* what the sink was written: BLOCK_LEN bytes */
	uint64_t written;
	const uint8_t *reg_addr;     /* the block as registered (PIN_ALL) */
	size_t reg_len;
	bool pointer_into_registered;
	bool rewrite_after_records;  /* the "source" writes 0xff after the records */
};

struct run {
	struct fake_frames q;
	struct fake_conn conn;
	struct sink_log log;
	struct rdmig_images_dest *d;
	size_t delivered;
	size_t hold_frame; /* non-zero: that frame waits until all 3 chunks are queued */
};

static struct run r;

static int s_header(void *ctx, const struct rdmig_imgs_block *b, uint32_t n,
		    const struct rdmig_imgs_params *prm, char *err, size_t errlen)
{
	struct sink_log *l = ctx;

	(void)b, (void)n, (void)prm, (void)err, (void)errlen;
	l->headers++;
	return 0;
}

static int s_create(void *ctx, uint32_t i, const struct rdmig_imgs_block *b, char *err,
		    size_t errlen)
{
	struct sink_log *l = ctx;

	(void)i, (void)b;
	l->creates++;
	if (l->fail_create)
		snprintf(err, errlen, "test sink: no room for the image");
	return l->fail_create;
}

static int s_write(void *ctx, uint32_t i, uint64_t off, const void *data, size_t len)
{
	struct sink_log *l = ctx;
	const uint8_t *p = data;

	(void)i;
	if (l->reg_addr && p < l->reg_addr + l->reg_len && p + len > l->reg_addr)
		l->pointer_into_registered = true;
	if (l->fail_write)
		return l->fail_write;
	memcpy(l->image + off, data, len);
	__atomic_add_fetch(&l->written, len, __ATOMIC_SEQ_CST);
	return 0;
}

static int s_set_size(void *ctx, uint32_t i, uint64_t len, char *err, size_t errlen)
{
	struct sink_log *l = ctx;

	(void)i, (void)err, (void)errlen;
	l->set_sizes += len == BLOCK_LEN;
	return 0;
}

static int s_stream(void *ctx, const void *data, size_t len, char *err, size_t errlen)
{
	struct sink_log *l = ctx;

	(void)data, (void)len, (void)err, (void)errlen;
	l->streams++;
	return 0;
}

static int s_commit(void *ctx, char *err, size_t errlen)
{
	struct sink_log *l = ctx;

	(void)err, (void)errlen;
	l->commits++;
	return 0;
}

static void s_abort(void *ctx)
{
	struct sink_log *l = ctx;

	l->aborts++;
}

/* Chunks the hashing threads queued for release (images_dest_release.c). */
static size_t held_chunks_queued(struct run *rr)
{
	size_t n;

	pthread_mutex_lock(&rr->d->rel.lock);
	n = rr->d->rel.queued;
	pthread_mutex_unlock(&rr->d->rel.lock);
	return n;
}

static bool next_frame(void *ctx, const uint8_t **buf, size_t *len)
{
	struct run *rr = ctx;

	/* the hashing threads are the test's only clock: until every chunk
	 * of the block is queued to be given back, 10 s at most */
	for (int ms = 0; rr->hold_frame && rr->q.next == rr->hold_frame && ms < 10000 &&
			 held_chunks_queued(rr) < 3; ms++)
		usleep(1000);
	return fake_frames_next(&rr->q, buf, len);
}

/* The hostile source: once its records are out, it rewrites the block. */
static void delivered(void *ctx, int rc, const struct rdmig_msg *m)
{
	struct run *rr = ctx;

	(void)rc;
	if (m && m->type == RDMIG_MSG_REGISTER_FINISHED && rr->log.rewrite_after_records &&
	    rr->log.reg_addr)
		memset((void *)(uintptr_t)rr->log.reg_addr, 0xff, rr->log.reg_len);
}

static void check_reg(void *ctx, const uint8_t *addr, size_t len, enum engine_access access)
{
	struct run *rr = ctx;

	(void)access;
	if (len >= BLOCK_LEN) { /* the block, pinned whole */
		rr->log.reg_addr = addr;
		rr->log.reg_len = len;
	}
}

static void add_stream(const uint8_t *bytes, size_t len)
{
	fake_frames_add(&r.q, RDMIG_MSG_QEMU_FILE, 1, bytes, (uint32_t)len);
}

/* The header of one block of BLOCK_LEN bytes, chunk_shift as given. */
static void add_header(uint32_t digest, uint32_t chunk_shift, struct rdmig_imgs_block *b)
{
	struct rdmig_imgs_params prm = {digest, SPAN_SHIFT, chunk_shift};
	uint8_t *buf;
	size_t len;
	char err[256];

	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "disk");
	b->length = BLOCK_LEN;
	CHECK_OK(rdmig_imgs_encode_header(&prm, b, 1, &buf, &len, err, sizeof(err)));
	add_stream(buf, len);
	free(buf);
}

/* Records of every span (digests of zeros, or of ones when `lie`), the
 * end of the iteration and the trailer. */
static void add_records_and_trailer(uint32_t alg, struct rdmig_imgs_block *b, bool lie)
{
	size_t ds = rdmig_digest_size(alg);
	uint8_t *zero = calloc(1, MIB), digests[3 * RDMIG_DIGEST_MAX], *buf;
	size_t len;
	char err[256];

	CHECK(zero != NULL);
	if (lie)
		memset(zero, 1, MIB);
	for (uint32_t i = 0; i < 3; i++) {
		uint8_t d[RDMIG_DIGEST_MAX];

		rdmig_digest_compute(alg, zero, i == 2 ? 4096 : MIB, d);
		memcpy(digests + i * ds, d, ds);
	}
	CHECK_OK(rdmig_imgs_encode_record(alg, 0, 0, 3, digests, &buf, &len, err, sizeof(err)));
	add_stream(buf, len);
	free(buf);
	fake_frames_add(&r.q, RDMIG_MSG_REGISTER_FINISHED, 1, NULL, 0);
	rdmig_imgs_block_digest(alg, digests, 3, b->digest);
	CHECK_OK(rdmig_imgs_encode_trailer(alg, b, 1, &buf, &len, err, sizeof(err)));
	add_stream(buf, len);
	free(buf);
	free(zero);
}

static void start(bool pin_all, uint64_t chunk_given)
{
	struct fake_hooks hooks = {next_frame, NULL, delivered, check_reg, NULL, &r};
	struct rdmig_images_sink sink = {&r.log, s_header, s_create, s_write, s_set_size,
					 s_stream, s_commit, s_abort};
	struct rdmig_images_dest_opts o;
	struct rdmig_dest *engine;
	char err[512] = "";

	fake_frames_free(&r.q);
	memset(&r, 0, sizeof(r));
	r.log.image = calloc(1, BLOCK_LEN);
	CHECK(r.log.image != NULL);
	rdmig_opts_init(&r.conn.opts);
	r.conn.established = true;
	r.conn.caps = (struct rdmig_caps){RDMIG_CAP_VERSION, pin_all ? RDMIG_CAP_PIN_ALL : 0};
	fake_begin(&r.conn, &hooks, 0);
	CHECK_OK(rdmig__dest_create(&fake.io, &engine));
	rdmig_images_dest_opts_init(&o);
	o.max_total = 1ull << 30;
	o.chunk_size = chunk_given;
	o.hash_threads = 2;
	CHECK_OK(rdmig__images_dest_wrap(engine, NULL, &o, &sink, &r.d, err, sizeof(err)));
}

static void finish(void)
{
	rdmig_images_dest_destroy(r.d);
	fake_end();
	free(r.log.image);
	fake_frames_free(&r.q);
}

/* Steps to DONE or a failure: the code. */
static int run(void)
{
	return rdmig_images_dest_run(r.d, NULL, NULL);
}

static bool image_is(uint8_t byte)
{
	for (size_t i = 0; i < BLOCK_LEN; i++)
		if (r.log.image[i] != byte)
			return false;
	return true;
}

TEST(a_whole_run_commits_what_was_verified)
{
	struct rdmig_imgs_block b;
	struct rdmig_images_stats st = {.size = sizeof(st)};
	struct rdmig_verify_block res;
	struct rdmig_images_event ev;
	uint32_t n;

	start(false, 0);
	add_header(RDMIG_DIGEST_XXH64, CHUNK_SHIFT, &b);
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	add_records_and_trailer(RDMIG_DIGEST_XXH64, &b, false);
	CHECK_OK(rdmig_images_dest_step(r.d, &ev));
	CHECK_EQ(ev.type, RDMIG_IMAGES_EV_HEADER);
	CHECK_EQ(ev.bytes_total, BLOCK_LEN);
	CHECK(rdmig_images_dest_blocks(r.d, &n) != NULL && n == 1);
	CHECK_OK(run());
	CHECK_EQ(r.log.headers, 1);
	CHECK_EQ(r.log.creates, 1);
	CHECK_EQ(r.log.written, BLOCK_LEN);
	CHECK_EQ(r.log.set_sizes, 1);
	CHECK_EQ(r.log.commits, 1);
	CHECK_EQ(r.log.aborts, 0);
	CHECK(r.log.streams >= 3);
	CHECK(image_is(0));
	rdmig_images_dest_stats(r.d, &st);
	CHECK(st.verified);
	CHECK_EQ(st.blocks_mismatched, 0);
	CHECK_EQ(st.bytes_total, BLOCK_LEN);
	CHECK(st.header_seconds >= 0 && st.transfer_seconds >= 0 && st.hash_wait_seconds >= 0 &&
	      st.commit_seconds >= 0 && st.teardown_seconds >= 0);
	CHECK_OK(rdmig_images_dest_result(r.d, 0, &res));
	CHECK(res.ok);
	CHECK_EQ(rdmig_images_dest_result(r.d, 1, &res), RDMIG_ERANGE);
	CHECK_EQ(rdmig_images_dest_step(r.d, &ev), RDMIG_ESTATE);
	finish();
}

TEST(a_stream_that_is_not_an_image_stream_is_refused)
{
	static const uint8_t junk[16] = "not a header....";

	start(false, 0);
	add_stream(junk, sizeof(junk));
	CHECK_EQ(run(), RDMIG_EPROTO);
	CHECK_STR_CONTAINS(rdmig_images_dest_errmsg(r.d), "not an rdmig image stream");
	CHECK_EQ(r.log.creates, 0);
	CHECK_EQ(r.log.commits, 0);
	CHECK_EQ(r.log.aborts, 1);
	CHECK_EQ(run(), RDMIG_EPROTO); /* sticky */
	finish();
}

TEST(blocks_asked_for_before_the_header_are_refused)
{
	start(false, 0);
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	CHECK_EQ(run(), RDMIG_EPROTO);
	CHECK_STR_CONTAINS(rdmig_images_dest_errmsg(r.d), "before describing them");
	finish();
}

TEST(a_chunk_size_that_disagrees_with_the_header_is_refused)
{
	struct rdmig_imgs_block b;

	start(false, 4 * MIB);
	add_header(RDMIG_DIGEST_XXH64, CHUNK_SHIFT, &b);
	CHECK_EQ(run(), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(rdmig_images_dest_errmsg(r.d), "chunk-size mismatch");
	CHECK_STR_CONTAINS(rdmig_images_dest_errmsg(r.d), "4194304");
	CHECK_STR_CONTAINS(rdmig_images_dest_errmsg(r.d), "1048576");
	CHECK_EQ(r.log.creates, 0);
	CHECK_EQ(r.log.aborts, 1);
	finish();
}

TEST(a_source_without_digests_is_refused_when_verifying)
{
	struct rdmig_imgs_block b;

	start(false, 0);
	add_header(RDMIG_DIGEST_OFF, CHUNK_SHIFT, &b);
	CHECK_EQ(run(), RDMIG_EPROTO);
	CHECK_STR_CONTAINS(rdmig_images_dest_errmsg(r.d), "no digests");
	CHECK_EQ(r.log.creates, 0);
	finish();
}

TEST(a_sink_that_cannot_create_ends_the_run)
{
	struct rdmig_imgs_block b;

	start(false, 0);
	r.log.fail_create = -ENOSPC;
	add_header(RDMIG_DIGEST_XXH64, CHUNK_SHIFT, &b);
	CHECK_EQ(run(), -ENOSPC);
	CHECK_STR_CONTAINS(rdmig_images_dest_errmsg(r.d), "no room for the image");
	CHECK_EQ(r.log.aborts, 1);
	CHECK_EQ(r.log.commits, 0);
	finish();
}

TEST(a_sink_that_cannot_write_ends_the_run_uncommitted)
{
	struct rdmig_imgs_block b;

	start(false, 0);
	r.log.fail_write = -EIO;
	add_header(RDMIG_DIGEST_XXH64, CHUNK_SHIFT, &b);
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	add_records_and_trailer(RDMIG_DIGEST_XXH64, &b, false);
	CHECK_EQ(run(), -EIO);
	CHECK_STR_CONTAINS(rdmig_images_dest_errmsg(r.d), "cannot write");
	CHECK_EQ(r.log.commits, 0);
	CHECK_EQ(r.log.aborts, 1);
	finish();
}

TEST(a_cancel_ends_the_next_step)
{
	struct rdmig_imgs_block b;
	struct rdmig_images_event ev;

	start(false, 0);
	add_header(RDMIG_DIGEST_XXH64, CHUNK_SHIFT, &b);
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	add_records_and_trailer(RDMIG_DIGEST_XXH64, &b, false);
	CHECK_OK(rdmig_images_dest_step(r.d, &ev));
	rdmig_images_dest_cancel(r.d);
	CHECK_EQ(rdmig_images_dest_step(r.d, &ev), RDMIG_ECANCELED);
	CHECK_EQ(r.log.commits, 0);
	CHECK_EQ(r.log.aborts, 1);
	finish();
}

TEST(a_digest_that_differs_commits_nothing_and_names_the_span)
{
	struct rdmig_imgs_block b;
	struct rdmig_images_stats st = {.size = sizeof(st)};
	struct rdmig_verify_block res;

	start(false, 0);
	add_header(RDMIG_DIGEST_XXH64, CHUNK_SHIFT, &b);
	fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
	add_records_and_trailer(RDMIG_DIGEST_XXH64, &b, true);
	CHECK_EQ(run(), RDMIG_EPROTO);
	rdmig_images_dest_stats(r.d, &st);
	CHECK_EQ(st.blocks_mismatched, 1);
	CHECK(!st.verified);
	CHECK_OK(rdmig_images_dest_result(r.d, 0, &res));
	CHECK(!res.ok);
	CHECK_EQ(res.bad_span, 0);
	CHECK_EQ(r.log.commits, 0);
	CHECK_EQ(r.log.aborts, 1);
	finish();
}

/* PIN_ALL registers the block whole: the test sees where it is, and plays
 * a source that rewrites it after its records.  Whichever way the race
 * with the hashing threads goes, what the sink got is what was verified:
 * committed zeros, or a mismatch and nothing committed.  And the sink
 * never reads the registered memory itself. */
TEST(a_rewrite_after_the_records_cannot_reach_the_image)
{
	for (int trial = 0; trial < 20; trial++) {
		struct rdmig_imgs_block b;
		struct rdmig_images_stats st = {.size = sizeof(st)};
		int ret;

		start(true, 0);
		r.log.rewrite_after_records = true;
		add_header(RDMIG_DIGEST_XXH64, CHUNK_SHIFT, &b);
		fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
		add_records_and_trailer(RDMIG_DIGEST_XXH64, &b, false);
		ret = run();
		CHECK(r.log.reg_addr != NULL);
		CHECK(!r.log.pointer_into_registered);
		rdmig_images_dest_stats(r.d, &st);
		if (ret == 0) {
			CHECK(st.verified);
			CHECK(image_is(0));
			CHECK_EQ(r.log.commits, 1);
		} else {
			CHECK_EQ(ret, RDMIG_EPROTO);
			CHECK_EQ(st.blocks_mismatched, 1);
			CHECK_EQ(r.log.commits, 0);
		}
		finish();
	}
}

/* The source's REGISTER_REQUEST for one chunk of the block at OFFSET. */
static void add_register(uint64_t offset)
{
	struct rdmig_register reg = {.key = offset, .block_index = 0, .chunks = 0};
	uint8_t rec[RDMIG_REGISTER_SIZE];

	rdmig_encode_register(&reg, rec);
	fake_frames_add(&r.q, RDMIG_MSG_REGISTER_REQUEST, 1, rec, sizeof(rec));
}

/* Dynamic registration: a chunk registered on its own goes back (its
 * region deregistered, its pages dropped) once every span over it is in
 * the image, before the end; PIN_ALL keeps the block whole. */
TEST(a_chunk_whose_spans_are_in_the_image_is_given_back)
{
	for (int pin_all = 0; pin_all < 2; pin_all++) {
		struct rdmig_imgs_block b;
		struct rdmig_images_stats st = {.size = sizeof(st)};

		start(pin_all, 0);
		add_header(RDMIG_DIGEST_XXH64, CHUNK_SHIFT, &b);
		fake_frames_add(&r.q, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
		if (!pin_all)
			add_register(0);
		/* REGISTER_FINISHED, after the records, waits for the sink */
		r.hold_frame = r.q.n + 1;
		add_records_and_trailer(RDMIG_DIGEST_XXH64, &b, false);
		CHECK_OK(run());
		CHECK(image_is(0));
		CHECK_EQ(r.log.commits, 1);
		rdmig_images_dest_stats(r.d, &st);
		CHECK(st.verified);
		CHECK_EQ(st.bytes_released, pin_all ? 0 : MIB);
		finish();
	}
}

TEST(options_and_sink_are_checked)
{
	struct fake_hooks hooks = {next_frame, NULL, delivered, check_reg, NULL, &r};
	struct rdmig_images_sink sink = {&r.log, NULL, s_create, NULL, s_set_size, NULL,
					 s_commit, s_abort};
	struct rdmig_images_dest_opts o;
	struct rdmig_images_dest *d = NULL;
	struct rdmig_dest *engine;
	char err[512] = "";

	memset(&r, 0, sizeof(r));
	rdmig_opts_init(&r.conn.opts);
	r.conn.established = true;
	fake_begin(&r.conn, &hooks, 0);
	rdmig_images_dest_opts_init(&o);
	o.max_total = 1;
	CHECK_OK(rdmig__dest_create(&fake.io, &engine));
	CHECK_EQ(rdmig__images_dest_wrap(engine, NULL, &o, &sink, &d, err, sizeof(err)),
		 RDMIG_EINVAL);
	CHECK_STR_CONTAINS(err, "the sink needs");
	CHECK(d == NULL);
	sink.write = s_write;
	o.max_total = 0;
	CHECK_OK(rdmig__dest_create(&fake.io, &engine));
	CHECK_EQ(rdmig__images_dest_wrap(engine, NULL, &o, &sink, &d, err, sizeof(err)),
		 RDMIG_EINVAL);
	CHECK_STR_CONTAINS(err, "max_total");
	fake_end();
}

/* The hashing copies a server must admit beside the blocks: one span per
 * thread, but never more than the largest block, none without
 * verification.  A source's span may be 1 GiB: its copies were a whole
 * span each, whatever the blocks. */
TEST(hashing_copies_are_a_span_per_thread_at_most_the_largest_block)
{
	const uint64_t mib = 1ull << 20, gib = 1ull << 30;
	struct rdmig_imgs_block small[2] = {{.length = 4 * mib}, {.length = mib}};
	struct rdmig_imgs_block big[1] = {{.length = 2 * gib}};
	struct rdmig_imgs_params prm = {.digest = RDMIG_DIGEST_XXH64, .span_shift = 30};
	struct rdmig_images_dest_opts o;

	rdmig_images_dest_opts_init(&o);
	o.hash_threads = 4;
	CHECK_EQ(rdmig_images_dest_copy_bytes(&o, &prm, small, 2), 16 * mib);
	CHECK_EQ(rdmig_images_dest_copy_bytes(&o, &prm, big, 1), 4 * gib);
	prm.span_shift = 20;
	CHECK_EQ(rdmig_images_dest_copy_bytes(&o, &prm, big, 1), 4 * mib);
	o.hash_threads = 100; /* the pool runs at most its maximum */
	CHECK_EQ(rdmig_images_dest_copy_bytes(&o, &prm, big, 1),
		 RDMIG_HASH_POOL_MAX_THREADS * mib);
	o.verify = false;
	CHECK_EQ(rdmig_images_dest_copy_bytes(&o, &prm, big, 1), 0);
	o.verify = true;
	prm.digest = RDMIG_DIGEST_OFF;
	CHECK_EQ(rdmig_images_dest_copy_bytes(&o, &prm, big, 1), 0);
	CHECK_EQ(rdmig_images_dest_copy_bytes(NULL, &prm, big, 1), 0);
}

CHECK_MAIN()
