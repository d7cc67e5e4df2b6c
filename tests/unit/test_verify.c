/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_verify.c - span verification without a device (stream/verify.c,
 * stream/hash_pool.c): the send side hashes blocks and writes the records
 * into a buffer as spans are "handed over", the buffer (header, records,
 * trailer) goes through an rdmig_imgs_parser, and the receive side checks a copy
 * of the blocks as the records arrive.  A changed byte of the data shows
 * in exactly its block and span; a changed trailer in its block only.
 */
#include <stdbool.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include <rdmig/imgstream.h>

#define SHIFT 20 /* the smallest span the format allows: 1 MiB */
#define MIB (1ull << SHIFT)
#define NB 5

/* 0, 1, 4, 5 and 11 spans: 21 in all; first spans 0, 0, 1, 5, 10. */
static const uint64_t lengths[NB] = {0, 1, 4 * MIB, 4 * MIB + 1, 10 * MIB + 12345};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

/* The encoded stream, written to by the send side. */
struct buf {
	uint8_t *p;
	size_t n;
	int writes;
};

static int buf_write(void *ctx, const void *data, size_t len)
{
	struct buf *b = ctx;

	if (!(b->p = realloc(b->p, b->n + len)))
		abort();
	memcpy(b->p + b->n, data, len);
	b->n += len;
	b->writes++;
	return 0;
}

static int tick_go_on(void *ctx)
{
	(void)ctx;
	return 0;
}

/* What a run that is stopped writes, and its ticks (buf first: the
 * write callback gets the same context). */
struct sink {
	struct buf b;
	int ticks;
};

static int tick_stop(void *ctx)
{
	((struct sink *)ctx)->ticks++;
	return 1;
}

/* Source blocks of random data (or one mapping for big ones), their
 * header, and the stream the send side produced. */
struct world {
	enum rdmig_digest_alg alg;
	uint32_t n;
	struct rdmig_imgs_block b[NB];
	uint8_t *mem[NB];
	bool mapped;
	struct buf s;
	size_t hn;
};

static void world_free(struct world *w)
{
	for (uint32_t i = 0; i < w->n; i++) {
		if (w->mapped && w->b[i].length)
			munmap(w->mem[i], w->b[i].length);
		else if (!w->mapped)
			free(w->mem[i]);
	}
	free(w->s.p);
	memset(w, 0, sizeof(*w));
}

static void world_header(struct world *w)
{
	struct rdmig_imgs_params prm = {w->alg, SHIFT, SHIFT};
	uint8_t *h;
	size_t hn;
	char err[256];

	if (rdmig_imgs_encode_header(&prm, w->b, w->n, &h, &hn, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	buf_write(&w->s, h, hn);
	w->s.writes = 0;
	w->hn = hn;
	free(h);
}

/* The five blocks of `lengths`, random bytes. */
static void world_init(struct world *w, enum rdmig_digest_alg alg)
{
	memset(w, 0, sizeof(*w));
	w->alg = alg;
	w->n = NB;
	for (uint32_t i = 0; i < NB; i++) {
		snprintf(w->b[i].name, sizeof(w->b[i].name), "block%u", i);
		w->b[i].length = lengths[i];
		if (!(w->mem[i] = malloc(lengths[i] ? lengths[i] : 1)))
			abort();
		for (uint64_t k = 0; k + 8 <= lengths[i]; k += 8) {
			uint64_t r = rnd();
			memcpy(w->mem[i] + k, &r, 8);
		}
		for (uint64_t k = lengths[i] & ~7ull; k < lengths[i]; k++)
			w->mem[i][k] = (uint8_t)rnd();
	}
	world_header(w);
}

/* One block of `len` zero bytes, mapped, never written (no memory used);
 * populate: every page mapped up front (to the zero page), which costs far
 * less than a fault per page when it is all read. */
static void world_init_big(struct world *w, enum rdmig_digest_alg alg, uint64_t len, bool populate)
{
	memset(w, 0, sizeof(*w));
	w->alg = alg;
	w->n = 1;
	w->mapped = true;
	strcpy(w->b[0].name, "big");
	w->b[0].length = len;
	w->mem[0] = mmap(NULL, len, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (populate ? MAP_POPULATE : 0),
			 -1, 0);
	if (w->mem[0] == MAP_FAILED)
		abort();
	world_header(w);
}

/*
 * The send side: hash everything from the start, hand the spans over
 * `step` at a time (records may only cover handed spans that are hashed;
 * 0: none handed), stop three short of the end and let rdmig_verify_send_finish
 * send the rest, then the trailer.
 */
static void send_side(struct world *w, unsigned threads, uint64_t step)
{
	const uint8_t *mems[NB];
	struct rdmig_verify v;
	uint8_t *t;
	size_t tn;
	char err[256] = "";

	for (uint32_t i = 0; i < w->n; i++)
		mems[i] = w->mem[i];
	if (rdmig_verify_start(&v, w->alg, threads, w->b, w->n, SHIFT, mems, true, NULL, NULL, err,
			       sizeof(err)))
		CHECK_FAIL_AT("rdmig_verify_start: %s", err);
	if (w->alg == RDMIG_DIGEST_OFF)
		CHECK(v.pool == NULL);
	else
		CHECK_EQ(v.threads, threads);
	for (uint64_t h = 0; step && h + 3 <= v.spans; h += step) {
		if (v.pool) /* the digest off: nothing to wait for */
			CHECK(rdmig_hash_pool_wait(v.pool, (size_t)h, 30.0));
		if (rdmig_verify_send_ready(&v, w->b, w->n, h, buf_write, &w->s, err, sizeof(err)))
			CHECK_FAIL_AT("rdmig_verify_send_ready: %s", err);
		CHECK_EQ(v.sent, h);
	}
	if (rdmig_verify_send_finish(&v, w->b, w->n, buf_write, tick_go_on, &w->s, err,
				     sizeof(err)))
		CHECK_FAIL_AT("rdmig_verify_send_finish: %s", err);
	CHECK_EQ(v.sent, v.spans);
	CHECK(v.pool == NULL || w->alg == RDMIG_DIGEST_OFF);
	rdmig_verify_free(&v);
	if (rdmig_imgs_encode_trailer(w->alg, w->b, w->n, &t, &tn, err, sizeof(err)))
		CHECK_FAIL_AT("rdmig_imgs_encode_trailer: %s", err);
	buf_write(&w->s, t, tn);
	free(t);
}

/*
 * The receive side on copies of the blocks: the stream in pieces of
 * `piece` bytes; the check starts with the header and is given every span
 * whose record has arrived.  res[i] and the parser are the caller's.
 */
static void recv_side(const struct world *w, const uint8_t *stream, size_t len,
		      uint8_t *const *copies, enum rdmig_digest_alg alg, unsigned threads,
		      size_t piece, struct rdmig_imgs_parser *ps, struct rdmig_verify_block *res)
{
	const uint8_t *mems[NB];
	struct rdmig_verify v;
	bool started = false;
	char err[256] = "";

	memset(&v, 0, sizeof(v));
	for (uint32_t i = 0; i < w->n; i++)
		mems[i] = copies[i];
	rdmig_imgs_parser_init(ps, UINT64_MAX);
	for (size_t off = 0; off < len; off += piece) {
		int ev = rdmig_imgs_feed(ps, stream + off, len - off < piece ? len - off : piece);
		if (ev < 0)
			CHECK_FAIL_AT("rdmig_imgs_feed: %s", rdmig_imgs_errmsg(ps));
		if (ev & RDMIG_IMGS_EV_HEADER) {
			CHECK(!started);
			if (rdmig_verify_start(&v, alg, threads, ps->blocks, ps->count,
					       ps->prm.span_shift, mems, false, NULL, NULL, err,
					       sizeof(err)))
				CHECK_FAIL_AT("rdmig_verify_start: %s", err);
			started = true;
			CHECK_EQ(v.released, 0);
			if (v.pool)
				CHECK_EQ(rdmig_hash_pool_done(v.pool), 0);
		}
		if (ev & RDMIG_IMGS_EV_SPANS) {
			CHECK(started);
			rdmig_verify_release(&v, ps->spans_known);
			if (alg != RDMIG_DIGEST_OFF)
				CHECK_EQ(v.released, ps->spans_known);
		}
	}
	CHECK(started);
	if (rdmig_imgs_finish(ps))
		CHECK_FAIL_AT("rdmig_imgs_finish: %s", rdmig_imgs_errmsg(ps));
	CHECK_OK(rdmig_verify_recv_finish(&v, ps, res, tick_go_on, NULL));
	rdmig_verify_free(&v);
}

static uint8_t **copy_blocks(const struct world *w)
{
	uint8_t **c = calloc(w->n, sizeof(*c));

	for (uint32_t i = 0; c && i < w->n; i++) {
		if (!(c[i] = malloc(w->b[i].length ? w->b[i].length : 1)))
			abort();
		memcpy(c[i], w->mem[i], w->b[i].length);
	}
	return c;
}

static void free_copies(const struct world *w, uint8_t **c)
{
	for (uint32_t i = 0; i < w->n; i++)
		free(c[i]);
	free(c);
}

/* Every block as expected: ok (or, failing, its first bad span). */
static void check_results(const struct world *w, const struct rdmig_imgs_parser *ps,
			  const struct rdmig_verify_block *res, const bool *want_ok,
			  const int64_t *want_bad)
{
	for (uint32_t i = 0; i < w->n; i++) {
		bool ok = want_ok ? want_ok[i] : true;
		int64_t bad = want_bad ? want_bad[i] : -1;
		if (res[i].ok != ok || res[i].bad_span != bad)
			CHECK_FAIL_AT("block %u: ok %d bad_span %lld, want ok %d bad_span %lld", i,
				      res[i].ok, (long long)res[i].bad_span, ok, (long long)bad);
		if (ok)
			CHECK_MEM_EQ(res[i].digest, ps->blocks[i].digest,
				     rdmig_digest_size(w->alg));
	}
}

/* Send with send_threads, receive with recv_threads: every block ok. */
static void round_trip(enum rdmig_digest_alg alg, unsigned send_threads, unsigned recv_threads)
{
	struct world w;
	struct rdmig_imgs_parser ps;
	struct rdmig_verify_block res[NB];
	uint8_t **c;
	size_t dsize = rdmig_digest_size(alg);

	world_init(&w, alg);
	send_side(&w, send_threads, 2);
	if (check_failed)
		return;
	CHECK_EQ(w.b[0].nspans + w.b[1].nspans + w.b[2].nspans + w.b[3].nspans + w.b[4].nspans, 21);
	c = copy_blocks(&w);
	recv_side(&w, w.s.p, w.s.n, c, alg, recv_threads, 37, &ps, res);
	if (check_failed)
		return;
	CHECK_EQ(ps.spans_known, 21);
	check_results(&w, &ps, res, NULL, NULL);
	/* what the receiver computed is what the sender sent */
	for (uint32_t i = 0; i < NB; i++) {
		uint8_t d[RDMIG_DIGEST_MAX];
		CHECK_MEM_EQ(res[i].digest, w.b[i].digest, dsize);
		/* a block of one span: the digest of the digest of its bytes */
		if (w.b[i].nspans == 1) {
			rdmig_digest_compute(alg, w.mem[i], w.b[i].length, d);
			CHECK_MEM_EQ(ps.span_digests + w.b[i].first_span * dsize, d, dsize);
		}
	}
	rdmig_imgs_parser_free(&ps);
	free_copies(&w, c);
	world_free(&w);
}

TEST(round_trip_xxh3_1_thread)
{
	round_trip(RDMIG_DIGEST_XXH3_128, 1, 1);
}

TEST(round_trip_xxh3_4_threads)
{
	round_trip(RDMIG_DIGEST_XXH3_128, 4, 4);
}

TEST(round_trip_xxh64)
{
	round_trip(RDMIG_DIGEST_XXH64, 1, 4);
	round_trip(RDMIG_DIGEST_XXH64, 2, 2);
}

TEST(round_trip_sha256)
{
	round_trip(RDMIG_DIGEST_SHA256, 1, 4);
	round_trip(RDMIG_DIGEST_SHA256, 3, 1);
}

/* One changed byte: exactly its block fails, at its span. */
static void one_flip(enum rdmig_digest_alg alg, uint32_t block, uint64_t offset, int64_t span)
{
	struct world w;
	struct rdmig_imgs_parser ps;
	struct rdmig_verify_block res[NB];
	bool ok[NB] = {true, true, true, true, true};
	int64_t bad[NB] = {-1, -1, -1, -1, -1};
	uint8_t **c;

	world_init(&w, alg);
	send_side(&w, 2, 2);
	if (check_failed)
		return;
	c = copy_blocks(&w);
	c[block][offset] ^= 0x10;
	recv_side(&w, w.s.p, w.s.n, c, alg, 2, 4096, &ps, res);
	if (check_failed)
		return;
	ok[block] = false;
	bad[block] = span;
	check_results(&w, &ps, res, ok, bad);
	CHECK(memcmp(res[block].digest, ps.blocks[block].digest, rdmig_digest_size(alg)) != 0);
	rdmig_imgs_parser_free(&ps);
	free_copies(&w, c);
	world_free(&w);
}

TEST(flipped_byte_fails_its_block_and_span)
{
	one_flip(RDMIG_DIGEST_XXH3_128, 4, 5 * MIB + 17, 5);
	if (check_failed)
		return;
	one_flip(RDMIG_DIGEST_XXH3_128, 1, 0, 0);       /* the 1-byte block */
	if (check_failed)
		return;
	one_flip(RDMIG_DIGEST_XXH3_128, 3, 4 * MIB, 4); /* the last byte: a span of 1 byte */
	if (check_failed)
		return;
	one_flip(RDMIG_DIGEST_XXH3_128, 2, 4 * MIB - 1, 3);
	if (check_failed)
		return;
	one_flip(RDMIG_DIGEST_XXH3_128, 4, 0, 0);
	if (check_failed)
		return;
	one_flip(RDMIG_DIGEST_XXH3_128, 4, 10 * MIB + 12344, 10);
}

TEST(flipped_byte_sha256)
{
	one_flip(RDMIG_DIGEST_SHA256, 4, 7 * MIB + 3, 7);
}

TEST(flipped_byte_xxh64)
{
	one_flip(RDMIG_DIGEST_XXH64, 4, 9 * MIB + 5, 9);
	if (check_failed)
		return;
	one_flip(RDMIG_DIGEST_XXH64, 3, 4 * MIB, 4);
}

/* Changes in several blocks, two in one: each block its own first span. */
TEST(flipped_bytes_in_several_blocks)
{
	struct world w;
	struct rdmig_imgs_parser ps;
	struct rdmig_verify_block res[NB];
	bool ok[NB] = {true, false, true, false, false};
	int64_t bad[NB] = {-1, 0, -1, 1, 3};
	uint8_t **c;

	world_init(&w, RDMIG_DIGEST_XXH3_128);
	send_side(&w, 4, 2);
	if (check_failed)
		return;
	c = copy_blocks(&w);
	c[1][0]++;
	c[3][MIB + 5]++;
	c[3][3 * MIB]++;
	c[4][8 * MIB]++;
	c[4][3 * MIB + MIB - 1]++;
	recv_side(&w, w.s.p, w.s.n, c, RDMIG_DIGEST_XXH3_128, 4, 1 << 20, &ps, res);
	if (check_failed)
		return;
	check_results(&w, &ps, res, ok, bad);
	rdmig_imgs_parser_free(&ps);
	free_copies(&w, c);
	world_free(&w);
}

/* A changed byte in the trailer: the data is fine span by span, but the
 * block's digest differs: bad_span -1, not ok; the other blocks are ok. */
TEST(flipped_trailer_byte)
{
	struct world w;
	struct rdmig_imgs_parser ps;
	struct rdmig_verify_block res[NB];
	size_t dsize = 16, tstart;
	uint8_t **c;

	world_init(&w, RDMIG_DIGEST_XXH3_128);
	send_side(&w, 2, 2);
	if (check_failed)
		return;
	c = copy_blocks(&w);
	tstart = w.s.n - 4 - NB * dsize;
	CHECK_EQ(w.s.p[tstart], 'R');
	CHECK_EQ(w.s.p[tstart + 3], 'T');
	for (uint32_t b = 0; b < NB; b++) {
		bool ok[NB] = {true, true, true, true, true};
		uint8_t *s = malloc(w.s.n);

		memcpy(s, w.s.p, w.s.n);
		s[tstart + 4 + b * dsize + (b * 5) % dsize] ^= 0x01;
		recv_side(&w, s, w.s.n, c, RDMIG_DIGEST_XXH3_128, 1, 100, &ps, res);
		free(s);
		if (check_failed)
			return;
		ok[b] = false;
		check_results(&w, &ps, res, ok, NULL);
		CHECK_EQ(res[b].bad_span, -1);
		rdmig_imgs_parser_free(&ps);
	}
	free_copies(&w, c);
	world_free(&w);
}

/* A changed span digest in a record: that span is reported. */
TEST(flipped_record_byte)
{
	struct world w;
	struct rdmig_imgs_parser ps;
	struct rdmig_verify_block res[NB];
	bool ok[NB] = {true, true, true, true, true};
	int64_t bad[NB] = {-1, -1, -1, -1, -1};
	uint8_t **c, *s;
	size_t at = 0;

	world_init(&w, RDMIG_DIGEST_SHA256);
	send_side(&w, 2, 2);
	if (check_failed)
		return;
	c = copy_blocks(&w);
	/* where the digest of span 6 of the stream (block 3's span 1) ends */
	rdmig_imgs_parser_init(&ps, UINT64_MAX);
	for (at = 0; at < w.s.n && ps.spans_known < 7; at++)
		CHECK(rdmig_imgs_feed(&ps, w.s.p + at, 1) >= 0);
	rdmig_imgs_parser_free(&ps);
	CHECK(at < w.s.n);
	s = malloc(w.s.n);
	memcpy(s, w.s.p, w.s.n);
	s[at - 1] ^= 0x80; /* the last byte of span 6's digest */
	recv_side(&w, s, w.s.n, c, RDMIG_DIGEST_SHA256, 3, 64, &ps, res);
	free(s);
	if (check_failed)
		return;
	ok[3] = false;
	bad[3] = 1;
	check_results(&w, &ps, res, ok, bad);
	rdmig_imgs_parser_free(&ps);
	free_copies(&w, c);
	world_free(&w);
}

/*
 * The digest off: no pool, but the records still go out as the spans are
 * handed over (send_side checks v.sent == handed after each step and
 * v.sent == v.spans at the end), 16 bytes each with no digests, then a
 * bare trailer; no block digest is set, and nothing is verified.
 */
TEST(digest_off)
{
	struct world w;
	struct rdmig_imgs_parser ps;
	struct rdmig_verify_block res[NB];
	bool ok[NB] = {false, false, false, false, false};
	uint8_t zero[RDMIG_DIGEST_MAX] = {0};
	uint8_t **c;
	uint64_t known = 0;
	int records = 0;

	world_init(&w, RDMIG_DIGEST_OFF);
	send_side(&w, 2, 2);
	if (check_failed)
		return;
	/* handed 2 at a time up to 18, then the rest: spans [0,2) are in
	 * blocks 1 and 2, [4,6) in blocks 2 and 3, the others in one block
	 * each: 2+1+2+1+1+1+1+1+1 records, and 1 for [18,21) at the end */
	CHECK_EQ(w.s.writes, 12 + 1); /* and the trailer */
	CHECK_EQ(w.s.n, w.hn + 12 * 16 + 4);
	for (uint32_t i = 0; i < NB; i++)
		CHECK_MEM_EQ(w.b[i].digest, zero, RDMIG_DIGEST_MAX);
	/* the records, one by one: each advances spans_known by its count */
	rdmig_imgs_parser_init(&ps, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&ps, w.s.p, w.hn), RDMIG_IMGS_EV_HEADER);
	for (size_t at = w.hn; at + 4 < w.s.n; at += 16) {
		uint32_t n = (uint32_t)w.s.p[at + 12] << 24 | (uint32_t)w.s.p[at + 13] << 16 |
			     (uint32_t)w.s.p[at + 14] << 8 | w.s.p[at + 15];
		CHECK_EQ(rdmig_imgs_feed(&ps, w.s.p + at, 16), RDMIG_IMGS_EV_SPANS);
		known += n;
		CHECK_EQ(ps.spans_known, known);
		records++;
	}
	CHECK_EQ(records, 12);
	CHECK_EQ(known, 21);
	CHECK_EQ(rdmig_imgs_feed(&ps, w.s.p + w.s.n - 4, 4), RDMIG_IMGS_EV_TRAILER);
	CHECK_OK(rdmig_imgs_finish(&ps));
	rdmig_imgs_parser_free(&ps);
	/* the receive side, in pieces of 3 bytes */
	c = copy_blocks(&w);
	recv_side(&w, w.s.p, w.s.n, c, RDMIG_DIGEST_OFF, 2, 3, &ps, res);
	if (check_failed)
		return;
	CHECK_EQ(ps.spans_known, 21);
	CHECK(ps.span_digests == NULL);
	check_results(&w, &ps, res, ok, NULL);
	rdmig_imgs_parser_free(&ps);
	free_copies(&w, c);
	world_free(&w);
}

/* The digest off, nothing handed before the end: rdmig_verify_send_finish sends
 * every record (one per block with spans), and with records of at most
 * 1024 spans as with digests. */
TEST(digest_off_records_at_the_end)
{
	struct world w;
	struct rdmig_imgs_parser ps;
	struct rdmig_verify_block res[NB];
	uint8_t **c;

	world_init(&w, RDMIG_DIGEST_OFF);
	send_side(&w, 1, 0);
	if (check_failed)
		return;
	CHECK_EQ(w.s.writes, 4 + 1); /* blocks 1..4, then the trailer */
	CHECK_EQ(w.s.n, w.hn + 4 * 16 + 4);
	c = copy_blocks(&w);
	recv_side(&w, w.s.p, w.s.n, c, RDMIG_DIGEST_OFF, 1, 1000, &ps, res);
	if (check_failed)
		return;
	CHECK_EQ(ps.spans_known, 21);
	rdmig_imgs_parser_free(&ps);
	free_copies(&w, c);
	world_free(&w);

	world_init_big(&w, RDMIG_DIGEST_OFF, 1100 * MIB - 5, false); /* never read */
	send_side(&w, 1, 0);
	if (check_failed)
		return;
	CHECK_EQ(w.s.n, w.hn + 2 * 16 + 4); /* 1024 + 76 spans */
	rdmig_imgs_parser_init(&ps, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&ps, w.s.p, w.s.n),
		 RDMIG_IMGS_EV_HEADER | RDMIG_IMGS_EV_SPANS | RDMIG_IMGS_EV_TRAILER);
	CHECK_EQ(ps.spans_known, 1100);
	CHECK_OK(rdmig_imgs_finish(&ps));
	rdmig_imgs_parser_free(&ps);
	world_free(&w);
}

/* The receiver turned checking off (recv --verify off) on a stream with
 * digests: nothing is hashed, nothing is ok. */
TEST(receiver_off_with_digests_in_the_stream)
{
	struct world w;
	struct rdmig_imgs_parser ps;
	struct rdmig_verify_block res[NB];
	bool ok[NB] = {false, false, false, false, false};
	uint8_t **c;

	world_init(&w, RDMIG_DIGEST_XXH3_128);
	send_side(&w, 2, 2);
	if (check_failed)
		return;
	c = copy_blocks(&w);
	recv_side(&w, w.s.p, w.s.n, c, RDMIG_DIGEST_OFF, 2, 1000, &ps, res);
	if (check_failed)
		return;
	CHECK_EQ(ps.spans_known, 21);
	check_results(&w, &ps, res, ok, NULL);
	rdmig_imgs_parser_free(&ps);
	free_copies(&w, c);
	world_free(&w);
}

/* A block of 1100 spans goes out in records of at most 1024. */
TEST(records_of_at_most_1024_spans)
{
	struct world w;
	struct rdmig_imgs_parser ps;
	struct rdmig_verify_block res[1];
	uint8_t *c[1];

	world_init_big(&w, RDMIG_DIGEST_XXH3_128, 1100 * MIB - 5, true);
	send_side(&w, 4, 0);
	if (check_failed)
		return;
	/* header, 2 records (1024 + 76 spans), trailer */
	CHECK_EQ(w.s.n, w.hn + 2 * 16 + 1100 * 16 + 4 + 16);
	c[0] = w.mem[0];
	recv_side(&w, w.s.p, w.s.n, c, RDMIG_DIGEST_XXH3_128, 4, 1 << 16, &ps, res);
	if (check_failed)
		return;
	CHECK_EQ(ps.spans_known, 1100);
	CHECK(res[0].ok);
	CHECK_EQ(res[0].bad_span, -1);
	rdmig_imgs_parser_free(&ps);
	world_free(&w);
}

/* The test's own clock: librdmig-stream links without librdmig. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double elapsed(double t0)
{
	return now() - t0;
}

/* A tick that says stop ends the waits at once (with -1), and
 * rdmig_verify_free does not wait for the rest of the hashing either. */
TEST(tick_stops_the_wait)
{
	struct world w;
	const uint8_t *mems[1];
	struct rdmig_verify v;
	struct sink sk = {{0}, 0};
	char err[256];
	double t0;

	world_init_big(&w, RDMIG_DIGEST_SHA256, 4096 * MIB,
		       false); /* seconds of SHA-256 on 1 thread */
	mems[0] = w.mem[0];
	t0 = now();
	CHECK_OK(rdmig_verify_start(&v, RDMIG_DIGEST_SHA256, 1, w.b, 1, SHIFT, mems, true, NULL,
				    NULL, err, sizeof(err)));
	CHECK_EQ(rdmig_verify_send_finish(&v, w.b, 1, buf_write, tick_stop, &sk, err, sizeof(err)),
		 -1);
	CHECK_EQ(sk.ticks, 1);
	rdmig_verify_free(&v);
	fprintf(stderr, "# send side stopped after %.3f s\n", elapsed(t0));
	CHECK(elapsed(t0) < 1.0);
	CHECK_EQ(sk.b.n, 0); /* no record went out */
	/* the receive side: every span released, then stopped */
	{
		struct rdmig_imgs_parser ps;
		struct rdmig_verify_block res[1];
		uint8_t *r;
		size_t rn;

		/* a stream with every record: digests of nothing in particular */
		rdmig_imgs_parser_init(&ps, UINT64_MAX);
		CHECK_EQ(rdmig_imgs_feed(&ps, w.s.p, w.s.n), RDMIG_IMGS_EV_HEADER);
		for (uint32_t f = 0; f < 4096; f += 1024) {
			static uint8_t zeros[1024 * 32];
			CHECK_OK(rdmig_imgs_encode_record(RDMIG_DIGEST_SHA256, 0, f, 1024, zeros,
							  &r, &rn, err, sizeof(err)));
			CHECK_EQ(rdmig_imgs_feed(&ps, r, rn), RDMIG_IMGS_EV_SPANS);
			free(r);
		}
		CHECK_EQ(ps.spans_known, 4096);
		t0 = now();
		CHECK_OK(rdmig_verify_start(&v, RDMIG_DIGEST_SHA256, 1, ps.blocks, 1, SHIFT, mems,
					    false, NULL, NULL, err, sizeof(err)));
		rdmig_verify_release(&v, ps.spans_known);
		sk.ticks = 0;
		CHECK_EQ(rdmig_verify_recv_finish(&v, &ps, res, tick_stop, &sk), -1);
		CHECK_EQ(sk.ticks, 1);
		rdmig_verify_free(&v);
		fprintf(stderr, "# receive side stopped after %.3f s\n", elapsed(t0));
		CHECK(elapsed(t0) < 1.0);
		rdmig_imgs_parser_free(&ps);
	}
	world_free(&w);
}

/* ---------------------------------------------------------- the pool -- */

#define NJOBS 50

/* Jobs of 0..~200 KiB at odd offsets of one random buffer, hashed with
 * `threads` threads as they are released, checked against rdmig_digest_compute. */
static void pool_in_order(enum rdmig_digest_alg alg, unsigned threads)
{
	static const size_t steps[] = {0, 1, 7, 20, 20, 49, NJOBS, NJOBS + 10};
	struct rdmig_hash_job jobs[NJOBS];
	uint8_t out[NJOBS][RDMIG_DIGEST_MAX], want[RDMIG_DIGEST_MAX];
	uint8_t *data = malloc(256 << 10);
	struct rdmig_hash_pool *p;
	size_t dsize = rdmig_digest_size(alg);

	for (size_t i = 0; i < (256 << 10); i++)
		data[i] = (uint8_t)rnd();
	memset(out, 0, sizeof(out));
	for (size_t i = 0; i < NJOBS; i++)
		jobs[i] = (struct rdmig_hash_job){data + i * 97, (i * 4099) % (200 << 10), out[i]};
	CHECK_OK(rdmig_hash_pool_create(alg, threads, jobs, NJOBS, &p, NULL, 0));
	CHECK_EQ(rdmig_hash_pool_threads(p), threads);
	CHECK_EQ(rdmig_hash_pool_done(p), 0);
	for (size_t s = 0; s < sizeof(steps) / sizeof(*steps); s++) {
		size_t k = steps[s] < NJOBS ? steps[s] : NJOBS;
		rdmig_hash_pool_release(p, steps[s]);
		CHECK(rdmig_hash_pool_wait(p, k, 30.0));
		CHECK_EQ(rdmig_hash_pool_done(p), k); /* and none beyond the released */
	}
	CHECK(rdmig_hash_pool_destroy(p, false) >= 0);
	for (size_t i = 0; i < NJOBS; i++) {
		rdmig_digest_compute(alg, jobs[i].p, jobs[i].len, want);
		if (memcmp(out[i], want, dsize))
			CHECK_FAIL_AT("job %zu: wrong digest", i);
	}
	free(data);
}

TEST(pool_1_thread)
{
	pool_in_order(RDMIG_DIGEST_XXH3_128, 1);
}

TEST(pool_4_threads)
{
	pool_in_order(RDMIG_DIGEST_XXH3_128, 4);
	if (check_failed)
		return;
	pool_in_order(RDMIG_DIGEST_SHA256, 4);
}

TEST(pool_thread_counts)
{
	struct rdmig_hash_job job = {(const uint8_t *)"x", 1, NULL};
	uint8_t out[RDMIG_DIGEST_MAX];
	struct rdmig_hash_pool *p;
	unsigned d = rdmig_hash_pool_default_threads();

	job.out = out;
	CHECK(d >= 1 && d <= 8);
	CHECK_OK(rdmig_hash_pool_create(RDMIG_DIGEST_XXH3_128, 0, &job, 1, &p, NULL, 0));
	CHECK_EQ(rdmig_hash_pool_threads(p), d);
	rdmig_hash_pool_destroy(p, false);
	CHECK_OK(rdmig_hash_pool_create(RDMIG_DIGEST_XXH3_128, 100, &job, 1, &p, NULL, 0));
	CHECK_EQ(rdmig_hash_pool_threads(p), 8);
	rdmig_hash_pool_destroy(p, true);
	/* no jobs at all */
	CHECK_OK(rdmig_hash_pool_create(RDMIG_DIGEST_XXH3_128, 2, NULL, 0, &p, NULL, 0));
	CHECK(rdmig_hash_pool_wait(p, 0, 0.0));
	rdmig_hash_pool_release(p, 5);
	CHECK_EQ(rdmig_hash_pool_done(p), 0);
	CHECK(rdmig_hash_pool_destroy(p, false) == 0.0);
	CHECK(rdmig_hash_pool_threads(NULL) == 0);
	CHECK(rdmig_hash_pool_destroy(NULL, true) == 0.0);
}

/* Jobs not released are not run, a wait for them times out, and
 * finish(stop=false) does not wait for them. */
TEST(pool_runs_only_released_jobs)
{
	struct rdmig_hash_job jobs[10];
	uint8_t out[10][RDMIG_DIGEST_MAX];
	struct rdmig_hash_pool *p;
	double t0;

	memset(out, 0, sizeof(out));
	for (int i = 0; i < 10; i++)
		jobs[i] =
		    (struct rdmig_hash_job){(const uint8_t *)"abcdefghij", (uint64_t)i + 1, out[i]};
	CHECK_OK(rdmig_hash_pool_create(RDMIG_DIGEST_SHA256, 4, jobs, 10, &p, NULL, 0));
	rdmig_hash_pool_release(p, 3);
	rdmig_hash_pool_release(p, 2); /* only grows */
	CHECK(rdmig_hash_pool_wait(p, 3, 30.0));
	t0 = now();
	CHECK(!rdmig_hash_pool_wait(p, 4, 0.05));
	CHECK(elapsed(t0) >= 0.04);
	CHECK_EQ(rdmig_hash_pool_done(p), 3);
	t0 = now();
	rdmig_hash_pool_destroy(p, false);
	CHECK(elapsed(t0) < 1.0);
	for (int i = 0; i < 10; i++) {
		uint8_t zero[RDMIG_DIGEST_MAX] = {0};
		CHECK_EQ(memcmp(out[i], zero, 32) != 0, i < 3);
	}
}

/* finish(stop=false) right after a release: every released job runs, no
 * other. */
TEST(pool_finish_drains_released_jobs)
{
	enum { N = 40, LEN = 1 << 20 };
	struct rdmig_hash_job jobs[N];
	uint8_t out[N][RDMIG_DIGEST_MAX], want[RDMIG_DIGEST_MAX], zero[RDMIG_DIGEST_MAX] = {0};
	uint8_t *data = malloc(LEN);
	struct rdmig_hash_pool *p;

	for (size_t i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	memset(out, 0, sizeof(out));
	for (int i = 0; i < N; i++)
		jobs[i] = (struct rdmig_hash_job){data, LEN - (uint64_t)i, out[i]};
	CHECK_OK(rdmig_hash_pool_create(RDMIG_DIGEST_SHA256, 2, jobs, N, &p, NULL, 0));
	rdmig_hash_pool_release(p, 30);
	rdmig_hash_pool_destroy(p, false);
	for (int i = 0; i < N; i++) {
		rdmig_digest_compute(RDMIG_DIGEST_SHA256, data, LEN - (size_t)i, want);
		if (memcmp(out[i], i < 30 ? want : zero, 32))
			CHECK_FAIL_AT("job %d: %s", i, i < 30 ? "not done" : "done, never released");
	}
	free(data);
}

/* finish(stop=true) with most of the released jobs still to run: the
 * threads end after their current job, not after all of them. */
static void stop_pending(unsigned threads)
{
	enum { N = 4000, LEN = 4 << 20 };   /* 16 GB of SHA-256: many seconds */
	struct rdmig_hash_job *jobs = calloc(N, sizeof(*jobs));
	uint8_t(*out)[RDMIG_DIGEST_MAX] = calloc(N, RDMIG_DIGEST_MAX);
	uint8_t *data = malloc(LEN);
	struct rdmig_hash_pool *p;
	size_t filled = 0;
	double t0;

	for (size_t i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 131 + 7);
	for (size_t i = 0; i < N; i++)
		jobs[i] = (struct rdmig_hash_job){data, LEN, out[i]};
	CHECK_OK(rdmig_hash_pool_create(RDMIG_DIGEST_SHA256, threads, jobs, N, &p, NULL, 0));
	rdmig_hash_pool_release(p, N);
	usleep(20000);
	t0 = now();
	rdmig_hash_pool_destroy(p, true);
	fprintf(stderr, "# %u thread(s): stopped in %.3f s\n", threads, elapsed(t0));
	CHECK(elapsed(t0) < 1.0);
	for (size_t i = 0; i < N; i++)
		filled += out[i][0] || out[i][1] || out[i][31];
	CHECK(filled < N / 2);
	free(jobs);
	free(out);
	free(data);
}

TEST(pool_stop_with_jobs_pending_1_thread)
{
	stop_pending(1);
}

TEST(pool_stop_with_jobs_pending_4_threads)
{
	stop_pending(4);
}

CHECK_MAIN()
