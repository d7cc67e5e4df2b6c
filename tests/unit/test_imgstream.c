/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_imgstream.c - the image stream of rdmig send/recv (format version
 * 2): encoder and decoder agree, any split of the input parses the same,
 * the span digest records arrive in order and are counted as they do (with
 * the digest off too, where they carry no digests and only say that the
 * spans have landed), and each rule of the format rejects what breaks it,
 * with a message naming the field.
 */
#include <time.h>
#include "check.h"
#include <rdmig/imgstream.h>

#define SHIFT 20                  /* the sample's spans: 1 MiB */
#define MIB (1ull << SHIFT)

/* A hand-built raw stream, for inputs the encoder refuses to produce. */
struct raw {
	uint8_t b[8192];
	size_t n;
};

static void raw_be(struct raw *r, uint64_t v, size_t n)
{
	for (size_t i = n; i-- > 0; v >>= 8)
		r->b[r->n + i] = (uint8_t)v;
	r->n += n;
}

static void raw_bytes(struct raw *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void raw_block(struct raw *r, const char *name, uint64_t len)
{
	raw_be(r, strlen(name), 2);
	raw_bytes(r, name, strlen(name));
	raw_be(r, len, 8);
}

static void raw_params(struct raw *r, uint8_t digest, uint8_t span, uint8_t chunk, uint8_t rsvd)
{
	uint8_t b[4] = {digest, span, chunk, rsvd};

	raw_bytes(r, b, 4);
}

/* Magic, version and count only (the version checks stop there). */
static void raw_start(struct raw *r, uint32_t magic, uint32_t version, uint32_t count)
{
	r->n = 0;
	raw_be(r, magic, 4);
	raw_be(r, version, 4);
	raw_be(r, count, 4);
}

/* A version 2 header up to its blocks: XXH3-128, 1 MiB spans, 2 MiB chunks. */
static void raw_header(struct raw *r, uint32_t count)
{
	raw_start(r, RDMIG_IMGS_HEADER_MAGIC, RDMIG_IMGS_VERSION, count);
	raw_params(r, RDMIG_DIGEST_XXH3_128, SHIFT, 21, 0);
}

/* A record's fields, then n digests of dsize bytes (none: the digest off). */
static void raw_record_of(struct raw *r, size_t dsize, uint32_t block, uint32_t first,
			  uint32_t n)
{
	raw_be(r, RDMIG_IMGS_DIGEST_MAGIC, 4);
	raw_be(r, block, 4);
	raw_be(r, first, 4);
	raw_be(r, n, 4);
	for (uint32_t i = 0; dsize && i < n && r->n + dsize <= sizeof(r->b); i++)
		for (size_t k = 0; k < dsize; k++)
			r->b[r->n++] = (uint8_t)(first + i + k);
}

/* A record with n digests of 16 bytes (XXH3-128, as raw_header says). */
static void raw_record(struct raw *r, uint32_t block, uint32_t first, uint32_t n)
{
	raw_record_of(r, 16, block, first, n);
}

/* A record of the digest off: its fields only. */
static void raw_record_off(struct raw *r, uint32_t block, uint32_t first, uint32_t n)
{
	raw_record_of(r, 0, block, first, n);
}

/* ------------------------------------------------------- the sample -- */

/*
 * Three blocks: 4 spans (the last one short), none (empty), 16 spans: 20
 * spans in all, sent as records of 1 and 3 spans (block 0) and 10 and 6
 * (block 2), then the trailer with each block's digest.  With the digest
 * off the records are the same, only without digests, and the trailer is
 * its magic alone.
 */
struct sample {
	uint32_t alg;
	size_t dsize;
	struct rdmig_imgs_block b[3];
	uint8_t spans[20 * RDMIG_DIGEST_MAX];  /* the span digests, packed */
	uint8_t *s;
	size_t len;
	size_t hn;                      /* the header's bytes */
	size_t tstart;                  /* where the trailer starts */
	size_t ends[20];                /* offsets just past each span digest (the
					 * digest off: past its record's count) */
	uint32_t nends;
};

static const struct {
	uint32_t block, first, n;
} sample_records[] = {{0, 0, 1}, {0, 1, 3}, {2, 0, 10}, {2, 10, 6}};

static void sample_blocks(struct rdmig_imgs_block b[3])
{
	memset(b, 0, 3 * sizeof(*b));
	strcpy(b[0].name, "pc.ram");
	b[0].length = 3 * MIB + 123;
	strcpy(b[1].name, "/rom@etc/acpi/tables");
	b[1].length = 0;
	strcpy(b[2].name, "0000:00:02.0/vga.vram");
	b[2].length = 16 * MIB;
}

static void append(struct sample *sm, uint8_t *p, size_t n)
{
	if (!(sm->s = realloc(sm->s, sm->len + n)))
		abort();
	memcpy(sm->s + sm->len, p, n);
	sm->len += n;
	free(p);
}

static void sample_build(struct sample *sm, uint32_t alg)
{
	struct rdmig_imgs_params prm = {alg, SHIFT, 21};
	uint8_t *p;
	size_t n;
	char err[256];

	memset(sm, 0, sizeof(*sm));
	sm->alg = alg;
	sm->dsize = rdmig_digest_size(alg);
	sample_blocks(sm->b);
	for (size_t i = 0; i < sizeof(sm->spans); i++)
		sm->spans[i] = (uint8_t)(i * 7 + 1);
	if (rdmig_imgs_encode_header(&prm, sm->b, 3, &p, &n, err, sizeof(err)))
		abort();
	append(sm, p, n);
	sm->hn = sm->len;
	for (size_t r = 0; r < sizeof(sample_records) / sizeof(*sample_records); r++) {
		const struct rdmig_imgs_block *blk = &sm->b[sample_records[r].block];
		uint64_t k = blk->first_span + sample_records[r].first;

		if (rdmig_imgs_encode_record(alg, sample_records[r].block, sample_records[r].first,
					     sample_records[r].n, sm->spans + k * sm->dsize, &p, &n,
					     err, sizeof(err)) ||
		    n != 16 + sample_records[r].n * sm->dsize)
			abort();
		for (uint32_t i = 0; i < sample_records[r].n; i++)
			sm->ends[sm->nends++] = sm->len + 16 + (i + 1) * sm->dsize;
		append(sm, p, n);
	}
	for (int i = 0; i < 3; i++)
		rdmig_imgs_block_digest(alg, sm->spans + sm->b[i].first_span * sm->dsize,
					sm->b[i].nspans, sm->b[i].digest);
	sm->tstart = sm->len;
	if (rdmig_imgs_encode_trailer(alg, sm->b, 3, &p, &n, err, sizeof(err)))
		abort();
	append(sm, p, n);
}

/* Span digests whose last byte lies in [from, to). */
static int spans_in(const struct sample *sm, size_t from, size_t to)
{
	int n = 0;

	for (uint32_t i = 0; i < sm->nends; i++)
		n += from < sm->ends[i] && sm->ends[i] <= to;
	return n;
}

/* What feeding sample bytes [from, to) must report. */
static int events_in(const struct sample *sm, size_t from, size_t to)
{
	return (from < sm->hn && sm->hn <= to ? RDMIG_IMGS_EV_HEADER : 0) |
	       (spans_in(sm, from, to) ? RDMIG_IMGS_EV_SPANS : 0) |
	       (from < sm->len && sm->len <= to ? RDMIG_IMGS_EV_TRAILER : 0);
}

/* The parser saw the sample: blocks, spans and (with_digests) the trailer. */
static int same_blocks(const struct rdmig_imgs_parser *p, const struct sample *sm, int with_digests)
{
	if (p->count != 3 || p->total != sm->b[0].length + sm->b[2].length ||
	    p->prm.digest != sm->alg || p->prm.span_shift != SHIFT || p->prm.chunk_shift != 21 ||
	    p->chunk_size != 2 * MIB || p->spans_total != 20 || p->dsize != sm->dsize)
		return 0;
	for (int i = 0; i < 3; i++) {
		const struct rdmig_imgs_block *a = &p->blocks[i], *b = &sm->b[i];
		if (strcmp(a->name, b->name) || a->length != b->length ||
		    a->first_span != b->first_span || a->nspans != b->nspans)
			return 0;
		if (with_digests && memcmp(a->digest, b->digest, sm->dsize))
			return 0;
	}
	if (sm->dsize && memcmp(p->span_digests, sm->spans, p->spans_known * sm->dsize))
		return 0;
	if (!sm->dsize && p->span_digests != NULL)
		return 0;
	return !with_digests || p->spans_known == 20;
}

/* ------------------------------------------------------------ tests -- */

TEST(spans_of_a_length)
{
	CHECK_EQ(rdmig_imgs_spans(0, 20), 0);
	CHECK_EQ(rdmig_imgs_spans(1, 20), 1);
	CHECK_EQ(rdmig_imgs_spans(MIB - 1, 20), 1);
	CHECK_EQ(rdmig_imgs_spans(MIB, 20), 1);
	CHECK_EQ(rdmig_imgs_spans(MIB + 1, 20), 2);
	CHECK_EQ(rdmig_imgs_spans(10 * MIB, 20), 10);
	CHECK_EQ(rdmig_imgs_spans(1ull << 40, 30), 1024);
	CHECK_EQ(rdmig_imgs_spans(UINT64_MAX, 30), 1ull << 34);
}

TEST(header_numbers_the_spans)
{
	struct sample sm;

	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	CHECK_EQ(sm.b[0].first_span, 0);
	CHECK_EQ(sm.b[0].nspans, 4);
	CHECK_EQ(sm.b[1].first_span, 4);
	CHECK_EQ(sm.b[1].nspans, 0);
	CHECK_EQ(sm.b[2].first_span, 4);
	CHECK_EQ(sm.b[2].nspans, 16);
	/* 16 bytes of fixed header, then per block 2 + name + 8 */
	CHECK_EQ(sm.hn, 16 + (2 + 6 + 8) + (2 + 20 + 8) + (2 + 21 + 8));
	CHECK_EQ(sm.tstart, sm.hn + 4 * 16 + 20 * 16);
	CHECK_EQ(sm.len, sm.tstart + 4 + 3 * 16);
	CHECK_EQ(sm.nends, 20);
	free(sm.s);
}

TEST(round_trip)
{
	struct rdmig_imgs_parser p;
	struct sample sm;

	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s, sm.hn), RDMIG_IMGS_EV_HEADER);
	CHECK(rdmig_imgs_header_done(&p) && !rdmig_imgs_trailer_done(&p));
	CHECK_EQ(p.spans_known, 0);
	CHECK(same_blocks(&p, &sm, 0));
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s + sm.hn, sm.tstart - sm.hn), RDMIG_IMGS_EV_SPANS);
	CHECK_EQ(p.spans_known, 20);
	CHECK(!rdmig_imgs_trailer_done(&p));
	CHECK_MEM_EQ(p.span_digests, sm.spans, 20 * 16);
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s + sm.tstart, sm.len - sm.tstart), RDMIG_IMGS_EV_TRAILER);
	CHECK(rdmig_imgs_trailer_done(&p));
	CHECK(same_blocks(&p, &sm, 1));
	CHECK_OK(rdmig_imgs_finish(&p));
	CHECK_EQ(rdmig_imgs_feed(&p, NULL, 0), 0); /* an empty piece is harmless */
	rdmig_imgs_parser_free(&p);
	free(sm.s);
}

TEST(round_trip_sha256)
{
	struct rdmig_imgs_parser p;
	struct sample sm;

	sample_build(&sm, RDMIG_DIGEST_SHA256);
	CHECK_EQ(sm.len, sm.hn + 4 * 16 + 20 * 32 + 4 + 3 * 32);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s, sm.len),
		 RDMIG_IMGS_EV_HEADER | RDMIG_IMGS_EV_SPANS | RDMIG_IMGS_EV_TRAILER);
	CHECK(same_blocks(&p, &sm, 1));
	CHECK_OK(rdmig_imgs_finish(&p));
	rdmig_imgs_parser_free(&p);
	free(sm.s);
}

TEST(whole_stream_in_one_piece)
{
	struct rdmig_imgs_parser p;
	struct sample sm;

	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s, sm.len),
		 RDMIG_IMGS_EV_HEADER | RDMIG_IMGS_EV_SPANS | RDMIG_IMGS_EV_TRAILER);
	CHECK(same_blocks(&p, &sm, 1));
	CHECK_OK(rdmig_imgs_finish(&p));
	rdmig_imgs_parser_free(&p);
	free(sm.s);
}

/* Two pieces split at every position, and every pair of cut points for
 * three pieces: the same result, each event reported by the piece that
 * holds the event's last byte (a span's: the last byte of its digest, or
 * with the digest off, of its record's count). */
static void every_split(uint32_t alg)
{
	struct sample sm;

	sample_build(&sm, alg);
	for (size_t i = 0; i <= sm.len; i++) {
		for (size_t j = i; j <= sm.len; j++) {
			struct rdmig_imgs_parser p;
			size_t cut[4] = {0, i, j, sm.len};
			int seen = 0;

			rdmig_imgs_parser_init(&p, UINT64_MAX);
			for (int k = 0; k < 3; k++) {
				int ev = rdmig_imgs_feed(&p, sm.s + cut[k], cut[k + 1] - cut[k]);
				int want = events_in(&sm, cut[k], cut[k + 1]);
				uint64_t known = (uint64_t)spans_in(&sm, 0, cut[k + 1]);
				if (ev != want || p.spans_known != known)
					CHECK_FAIL_AT(
					    "%s cuts %zu,%zu piece %d: events %d, want %d, "
					    "spans %llu, want %llu (%s)",
					    rdmig_digest_name(alg), i, j, k, ev, want,
					    (unsigned long long)p.spans_known,
					    (unsigned long long)known, rdmig_imgs_errmsg(&p));
				seen |= ev;
			}
			CHECK_EQ(seen, RDMIG_IMGS_EV_HEADER | RDMIG_IMGS_EV_SPANS |
					   RDMIG_IMGS_EV_TRAILER);
			CHECK(same_blocks(&p, &sm, 1));
			CHECK_OK(rdmig_imgs_finish(&p));
			rdmig_imgs_parser_free(&p);
		}
	}
	free(sm.s);
}

TEST(every_split_position)
{
	every_split(RDMIG_DIGEST_XXH3_128);
}

TEST(every_split_position_xxh64)
{
	every_split(RDMIG_DIGEST_XXH64);
}

TEST(every_split_position_digest_off)
{
	struct sample sm;

	/* the records are there, without digests: 4 x 16 bytes */
	sample_build(&sm, RDMIG_DIGEST_OFF);
	CHECK_EQ(sm.len, sm.hn + 4 * 16 + 4);
	CHECK_EQ(sm.nends, 20);
	free(sm.s);
	every_split(RDMIG_DIGEST_OFF);
}

/* spans_known grows by one with the last byte of each span digest, and
 * only then; RDMIG_IMGS_EV_SPANS comes with exactly those bytes. */
TEST(byte_at_a_time)
{
	struct rdmig_imgs_parser p;
	struct sample sm;

	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	for (size_t i = 0; i < sm.len; i++) {
		int ev = rdmig_imgs_feed(&p, sm.s + i, 1);
		CHECK_EQ(ev, events_in(&sm, i, i + 1));
		CHECK_EQ(p.spans_known, spans_in(&sm, 0, i + 1));
	}
	CHECK(same_blocks(&p, &sm, 1));
	CHECK_OK(rdmig_imgs_finish(&p));
	rdmig_imgs_parser_free(&p);
	free(sm.s);
}

TEST(spans_known_per_record)
{
	struct rdmig_imgs_parser p;
	struct sample sm;
	static const uint64_t after[] = {1, 4, 14, 20};
	/* landed bytes: 1 MiB spans; block 0 is 3 MiB + 123, block 1 empty,
	 * block 2 16 MiB */
	static const uint64_t landed[] = {MIB, 3 * MIB + 123, 13 * MIB + 123, 19 * MIB + 123};
	size_t at;

	sample_build(&sm, RDMIG_DIGEST_SHA256);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_landed_bytes(&p), 0);
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s, sm.hn), RDMIG_IMGS_EV_HEADER);
	CHECK_EQ(rdmig_imgs_landed_bytes(&p), 0);
	at = sm.hn;
	for (int r = 0; r < 4; r++) {
		size_t n = 16 + sample_records[r].n * 32;
		CHECK_EQ(rdmig_imgs_feed(&p, sm.s + at, n), RDMIG_IMGS_EV_SPANS);
		CHECK_EQ(p.spans_known, after[r]);
		CHECK_MEM_EQ(p.span_digests, sm.spans, after[r] * 32);
		CHECK_EQ(rdmig_imgs_landed_bytes(&p), landed[r]);
		at += n;
	}
	CHECK_EQ(at, sm.tstart);
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s + at, sm.len - at), RDMIG_IMGS_EV_TRAILER);
	rdmig_imgs_parser_free(&p);
	free(sm.s);
}

/* The digest off: the header, records of 16 bytes (block, first span,
 * count, no digests), the trailer's magic alone.  Each record completes
 * with its count and advances spans_known by that count. */
TEST(digest_off_stream)
{
	struct rdmig_imgs_parser p;
	struct sample sm;
	static const uint64_t after[] = {1, 4, 14, 20};
	size_t at;

	sample_build(&sm, RDMIG_DIGEST_OFF);
	CHECK_EQ(sm.tstart, sm.hn + 4 * 16);
	CHECK_EQ(sm.len, sm.tstart + 4);
	CHECK_EQ(sm.nends, 20);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s, sm.hn), RDMIG_IMGS_EV_HEADER);
	CHECK_EQ(p.dsize, 0);
	CHECK_EQ(p.spans_total, 20);
	CHECK_EQ(p.spans_known, 0);
	CHECK(p.span_digests == NULL);
	at = sm.hn;
	for (int r = 0; r < 4; r++) {
		/* the first 15 bytes: nothing yet; the count's last byte: the spans */
		CHECK_EQ(rdmig_imgs_feed(&p, sm.s + at, 15), 0);
		CHECK_EQ(p.spans_known, r ? after[r - 1] : 0);
		CHECK_EQ(rdmig_imgs_feed(&p, sm.s + at + 15, 1), RDMIG_IMGS_EV_SPANS);
		CHECK_EQ(p.spans_known, after[r]);
		CHECK(!rdmig_imgs_trailer_done(&p));
		at += 16;
	}
	CHECK_EQ(at, sm.tstart);
	CHECK(p.span_digests == NULL);
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s + at, 4), RDMIG_IMGS_EV_TRAILER);
	CHECK(rdmig_imgs_trailer_done(&p));
	CHECK_EQ(p.spans_known, 20);
	CHECK(same_blocks(&p, &sm, 1));
	CHECK_OK(rdmig_imgs_finish(&p));
	rdmig_imgs_parser_free(&p);
	/* all of it at once */
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&p, sm.s, sm.len),
		 RDMIG_IMGS_EV_HEADER | RDMIG_IMGS_EV_SPANS | RDMIG_IMGS_EV_TRAILER);
	CHECK(same_blocks(&p, &sm, 1));
	CHECK_OK(rdmig_imgs_finish(&p));
	rdmig_imgs_parser_free(&p);
	free(sm.s);
}

/* Blocks without a single span: no records, straight to the trailer. */
TEST(all_blocks_empty)
{
	struct rdmig_imgs_params prm = {RDMIG_DIGEST_XXH3_128, 20, 20};
	struct rdmig_imgs_block b[2];
	struct rdmig_imgs_parser p;
	uint8_t *h, *t, want[RDMIG_DIGEST_MAX];
	size_t hn, tn;
	char err[256];

	memset(b, 0, sizeof(b));
	strcpy(b[0].name, "a");
	strcpy(b[1].name, "b");
	CHECK_OK(rdmig_imgs_encode_header(&prm, b, 2, &h, &hn, err, sizeof(err)));
	rdmig_imgs_block_digest(RDMIG_DIGEST_XXH3_128, NULL, 0, b[0].digest);
	rdmig_imgs_block_digest(RDMIG_DIGEST_XXH3_128, NULL, 0, b[1].digest);
	rdmig_digest_compute(RDMIG_DIGEST_XXH3_128, "", 0, want);
	CHECK_MEM_EQ(b[0].digest, want, 16);
	CHECK_OK(rdmig_imgs_encode_trailer(RDMIG_DIGEST_XXH3_128, b, 2, &t, &tn, err, sizeof(err)));
	rdmig_imgs_parser_init(&p, 0);
	CHECK_EQ(rdmig_imgs_feed(&p, h, hn), RDMIG_IMGS_EV_HEADER);
	CHECK_EQ(p.spans_total, 0);
	CHECK_EQ(rdmig_imgs_feed(&p, t, tn), RDMIG_IMGS_EV_TRAILER);
	CHECK_MEM_EQ(p.blocks[1].digest, want, 16);
	CHECK_OK(rdmig_imgs_finish(&p));
	rdmig_imgs_parser_free(&p);
	free(h);
	free(t);
}

/* Feed raw bytes and expect a rejection whose message names `what`. */
static int rejects_n(const uint8_t *b, size_t n, uint64_t limit, const char *what, char *msg,
		     size_t msglen)
{
	struct rdmig_imgs_parser p;
	int ret;

	rdmig_imgs_parser_init(&p, limit);
	ret = rdmig_imgs_feed(&p, b, n);
	if (ret >= 0)
		ret = rdmig_imgs_finish(&p);
	snprintf(msg, msglen, "%s", rdmig_imgs_errmsg(&p));
	/* a failed parser stays failed */
	if (ret == 0 || rdmig_imgs_feed(&p, "x", 1) != -1 || rdmig_imgs_finish(&p) != -1)
		ret = 0;
	rdmig_imgs_parser_free(&p);
	return ret != 0 && strstr(msg, what) != NULL;
}

#define CHECK_REJECTS_N(b, n, limit, what)                                                         \
	do {                                                                                       \
		char msg_[400];                                                                    \
		if (!rejects_n(b, n, limit, what, msg_, sizeof(msg_)))                             \
			CHECK_FAIL_AT("expected a rejection mentioning '%s', got '%s'", what, msg_); \
	} while (0)

#define CHECK_REJECTS(r, limit, what) CHECK_REJECTS_N((r)->b, (r)->n, limit, what)

TEST(rejects_bad_magic)
{
	struct raw r;

	raw_start(&r, 0x51455649, 2, 1); /* "QEVI": not ours */
	raw_params(&r, 1, 20, 20, 0);
	raw_block(&r, "a", 1);
	CHECK_REJECTS(&r, UINT64_MAX, "header magic");
	CHECK_REJECTS(&r, UINT64_MAX, "0x51455649");
	CHECK_REJECTS(&r, UINT64_MAX, "stream offset 0");
	/* the trailer's or a record's magic where the header's is due */
	raw_start(&r, RDMIG_IMGS_TRAILER_MAGIC, 2, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "expected 0x524d4948 (\"RMIH\")");
}

TEST(rejects_bad_version)
{
	struct raw r;

	raw_start(&r, RDMIG_IMGS_HEADER_MAGIC, 3, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "version 3 is not supported (this rdmig reads version 2)");
	raw_start(&r, RDMIG_IMGS_HEADER_MAGIC, 0, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "version 0");
	raw_start(&r, RDMIG_IMGS_HEADER_MAGIC, 0xffffffff, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "version 4294967295");
	CHECK_REJECTS(&r, UINT64_MAX, "stream offset 4 (version)");
}

/* A version 1 stream (an older rdmig: magic, version, count, blocks,
 * SHA-256 trailer) is refused with a message naming both versions. */
TEST(rejects_version_1_naming_both)
{
	struct raw r;

	raw_start(&r, RDMIG_IMGS_HEADER_MAGIC, 1, 1);
	raw_block(&r, "pc.ram", 4096);
	raw_be(&r, RDMIG_IMGS_TRAILER_MAGIC, 4);
	for (int i = 0; i < 32; i++)
		raw_be(&r, (uint64_t)i, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "stream offset 4 (version)");
	CHECK_REJECTS(&r, UINT64_MAX, "version 1");
	CHECK_REJECTS(&r, UINT64_MAX, "reads version 2");
	/* from the version field's last byte on, whatever follows */
	CHECK_REJECTS_N(r.b, 8, UINT64_MAX, "version 1");
}

TEST(rejects_block_count)
{
	struct raw r;

	raw_start(&r, RDMIG_IMGS_HEADER_MAGIC, 2, 4097);
	CHECK_REJECTS(&r, UINT64_MAX, "4097 blocks (must be 1 to 4096)");
	raw_start(&r, RDMIG_IMGS_HEADER_MAGIC, 2, 0xffffffff);
	CHECK_REJECTS(&r, UINT64_MAX, "4294967295 blocks");
	raw_start(&r, RDMIG_IMGS_HEADER_MAGIC, 2, 0);
	CHECK_REJECTS(&r, UINT64_MAX, "0 blocks");
	CHECK_REJECTS(&r, UINT64_MAX, "stream offset 8 (block count)");
}

TEST(rejects_bad_params)
{
	struct raw r;
	struct rdmig_imgs_parser p;
	static const struct {
		uint8_t d, s, c, z;
		const char *what;
	} bad[] = {
		{4, 20, 20, 0, "digest 4 is unknown"},
		{255, 20, 20, 0, "digest 255 is unknown"},
		{1, 19, 20, 0, "span 2^19 and chunk 2^20 bytes (each must be 2^20 to 2^30)"},
		{1, 31, 20, 0, "span 2^31"},
		{1, 0, 20, 0, "span 2^0"},
		{1, 20, 19, 0, "chunk 2^19"},
		{1, 20, 31, 0, "chunk 2^31"},
		{2, 30, 255, 0, "chunk 2^255"},
		{1, 20, 20, 1, "reserved byte is 0x01 (must be 0)"},
		{0, 20, 20, 0x80, "reserved byte is 0x80"},
	};
	static const struct {
		uint8_t d, s, c;
	} good[] = {{0, 20, 20}, {1, 30, 30}, {2, 20, 30}, {1, 30, 20}, {2, 25, 21}, {3, 22, 20}};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		raw_start(&r, RDMIG_IMGS_HEADER_MAGIC, 2, 1);
		raw_params(&r, bad[i].d, bad[i].s, bad[i].c, bad[i].z);
		raw_block(&r, "a", 1);
		CHECK_REJECTS(&r, UINT64_MAX, bad[i].what);
		CHECK_REJECTS(&r, UINT64_MAX, "stream offset 12 (parameters)");
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		raw_start(&r, RDMIG_IMGS_HEADER_MAGIC, 2, 1);
		raw_params(&r, good[i].d, good[i].s, good[i].c, 0);
		raw_block(&r, "a", 3ull << 30);
		rdmig_imgs_parser_init(&p, UINT64_MAX);
		CHECK_EQ(rdmig_imgs_feed(&p, r.b, r.n), RDMIG_IMGS_EV_HEADER);
		CHECK_EQ(p.prm.digest, good[i].d);
		CHECK_EQ(p.prm.span_shift, good[i].s);
		CHECK_EQ(p.prm.chunk_shift, good[i].c);
		CHECK_EQ(p.chunk_size, 1ull << good[i].c);
		CHECK_EQ(p.dsize, rdmig_digest_size(good[i].d));
		CHECK_EQ(p.spans_total, 3ull << (30 - good[i].s));
		CHECK_EQ(p.blocks[0].nspans, p.spans_total);
		rdmig_imgs_parser_free(&p);
	}
}

TEST(rejects_name_length)
{
	struct raw r;

	raw_header(&r, 2);
	raw_block(&r, "a", 1);
	raw_be(&r, 0, 2);
	CHECK_REJECTS(&r, UINT64_MAX, "block 1: name length 0 (must be 1 to 255)");
	raw_header(&r, 1);
	raw_be(&r, 256, 2);
	CHECK_REJECTS(&r, UINT64_MAX, "name length 256");
	raw_header(&r, 1);
	raw_be(&r, 0xffff, 2);
	CHECK_REJECTS(&r, UINT64_MAX, "name length 65535");
	CHECK_REJECTS(&r, UINT64_MAX, "stream offset 16 (name length)");
}

TEST(accepts_name_of_255_bytes)
{
	struct raw r;
	struct rdmig_imgs_parser p;
	char name[256];

	memset(name, 'n', 255);
	name[255] = '\0';
	raw_header(&r, 1);
	raw_block(&r, name, 7);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&p, r.b, r.n), RDMIG_IMGS_EV_HEADER);
	CHECK_EQ(strlen(p.blocks[0].name), 255);
	rdmig_imgs_parser_free(&p);
}

TEST(rejects_bad_names)
{
	struct raw r;

	raw_header(&r, 1);
	raw_block(&r, "ab\ncd", 1);
	CHECK_REJECTS(&r, UINT64_MAX, "name byte 2 is 0x0a");
	raw_header(&r, 1);
	raw_be(&r, 3, 2);
	raw_bytes(&r, "a\0b", 3);
	CHECK_REJECTS(&r, UINT64_MAX, "name byte 1 is 0x00");
	raw_header(&r, 1);
	raw_block(&r, "caf\xc3\xa9", 1);
	CHECK_REJECTS(&r, UINT64_MAX, "0xc3");
	raw_header(&r, 3);
	raw_block(&r, "ram", 1);
	raw_block(&r, "rom", 1);
	raw_block(&r, "ram", 1);
	CHECK_REJECTS(&r, UINT64_MAX, "blocks 0 and 2 are both named 'ram'");
}

TEST(rejects_total_above_limit)
{
	struct raw r;
	struct rdmig_imgs_parser p;

	raw_header(&r, 2);
	raw_block(&r, "a", 600);
	raw_block(&r, "b", 425);
	CHECK_REJECTS(&r, 1024, "block 1 'b' has length 425: the total would exceed the limit "
			  "of 1024 bytes (600 already)");
	rdmig_imgs_parser_init(&p, 1024);
	CHECK_EQ(rdmig_imgs_feed(&p, r.b, r.n), -1);
	CHECK(p.over_limit);
	rdmig_imgs_parser_free(&p);
	/* exactly at the limit is fine */
	rdmig_imgs_parser_init(&p, 1025);
	CHECK_EQ(rdmig_imgs_feed(&p, r.b, r.n), RDMIG_IMGS_EV_HEADER);
	CHECK_EQ(p.total, 1025);
	CHECK(!p.over_limit);
	rdmig_imgs_parser_free(&p);
	/* a sum that would wrap around 64 bits */
	raw_header(&r, 2);
	raw_block(&r, "a", UINT64_MAX - 5);
	raw_block(&r, "b", 10);
	CHECK_REJECTS(&r, UINT64_MAX, "block 1 'b' has length 10");
	/* one block alone above the limit */
	raw_header(&r, 1);
	raw_block(&r, "a", UINT64_MAX);
	CHECK_REJECTS(&r, 1ull << 40, "length 18446744073709551615");
}

TEST(rejects_truncated)
{
	struct sample sm;

	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	/* every proper prefix is incomplete, and says where it stopped */
	for (size_t n = 0; n < sm.len; n++) {
		CHECK_REJECTS_N(sm.s, n, UINT64_MAX, "the stream ended after");
		CHECK_REJECTS_N(sm.s, n, UINT64_MAX,
				n < sm.hn		? "inside the header"
				: n < sm.tstart + 4 ? "inside the digest records"
						    : "inside the trailer");
	}
	CHECK_REJECTS_N(sm.s, 14, UINT64_MAX, "2 of the 4 bytes of the parameters");
	CHECK_REJECTS_N(sm.s, 17, UINT64_MAX, "1 of the 2 bytes of the name length of block 0 of 3");
	CHECK_REJECTS_N(sm.s, sm.hn, UINT64_MAX, "0 of the 4 bytes of the record or trailer magic");
	CHECK_REJECTS_N(sm.s, sm.hn + 16 + 5, UINT64_MAX, "5 of the 16 bytes of the span digest");
	CHECK_REJECTS_N(sm.s, sm.hn + 10, UINT64_MAX, "2 of the 4 bytes of the record first span");
	CHECK_REJECTS_N(sm.s, sm.tstart + 4 + 16 + 1, UINT64_MAX,
			"1 of the 16 bytes of the block digest of block 1 of 3");
	free(sm.s);
}

/* Records are required with the digest off as well: every proper prefix
 * of the stream is incomplete and says where it stopped. */
TEST(digest_off_rejects_truncated)
{
	struct sample sm;

	sample_build(&sm, RDMIG_DIGEST_OFF);
	for (size_t n = 0; n < sm.len; n++) {
		CHECK_REJECTS_N(sm.s, n, UINT64_MAX, "the stream ended after");
		CHECK_REJECTS_N(sm.s, n, UINT64_MAX,
				n < sm.hn ? "inside the header" : "inside the digest records");
	}
	CHECK_REJECTS_N(sm.s, sm.hn + 16 + 14, UINT64_MAX,
			"2 of the 4 bytes of the record span count");
	CHECK_REJECTS_N(sm.s, sm.tstart, UINT64_MAX,
			"0 of the 4 bytes of the record or trailer magic");
	free(sm.s);
}

TEST(rejects_trailing_garbage)
{
	struct sample sm;
	struct raw r;

	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	r.n = 0;
	raw_bytes(&r, sm.s, sm.len);
	raw_bytes(&r, "xyz", 3);
	CHECK_REJECTS(&r, UINT64_MAX, "3 bytes of trailing garbage after the trailer");
	free(sm.s);
	/* also right after the digest-off trailer (its magic, no digests) */
	sample_build(&sm, RDMIG_DIGEST_OFF);
	r.n = 0;
	raw_bytes(&r, sm.s, sm.len);
	raw_bytes(&r, "x", 1);
	CHECK_REJECTS(&r, UINT64_MAX, "1 byte of trailing garbage after the trailer");
	/* and a digest-off record after that trailer */
	r.n = 0;
	raw_bytes(&r, sm.s, sm.len);
	raw_record_off(&r, 2, 16, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "16 bytes of trailing garbage after the trailer");
	free(sm.s);
}

TEST(rejects_bad_trailer_magic)
{
	struct sample sm;
	char where[64];

	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	sm.s[sm.tstart + 3] ^= 1;
	snprintf(where, sizeof(where), "stream offset %zu (record or trailer magic)", sm.tstart);
	CHECK_REJECTS_N(sm.s, sm.len, UINT64_MAX, where);
	CHECK_REJECTS_N(sm.s, sm.len, UINT64_MAX,
			"0x524d4955, expected 0x524d4944 (\"RMID\") or 0x524d4954 (\"RMIT\")");
	free(sm.s);
	/* the same where the first record is due */
	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	sm.s[sm.hn] ^= 0x80;
	CHECK_REJECTS_N(sm.s, sm.len, UINT64_MAX, "record or trailer magic");
	free(sm.s);
}

/* Records must go on exactly where the previous one stopped. */
TEST(rejects_records_out_of_order)
{
	struct raw r, h;
	struct rdmig_imgs_parser p;
	struct sample sm;

	/* the sample's header: 4 spans, an empty block, 16 spans */
	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	h.n = 0;
	raw_bytes(&h, sm.s, sm.hn);
	free(sm.s);

	/* the wrong block first */
	r = h;
	raw_record(&r, 2, 0, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "block 2, but the next span due is in block 0 'pc.ram'");
	/* the empty block, when block 0 is done */
	r = h;
	raw_record(&r, 0, 0, 4);
	raw_record(&r, 1, 0, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "block 1, but the next span due is in block 2");
	/* a block number beyond the blocks */
	r = h;
	raw_record(&r, 3, 0, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "block 3, but");
	/* block 0 again once it is done */
	r = h;
	raw_record(&r, 0, 0, 4);
	raw_record(&r, 0, 3, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "block 0, but the next span due is in block 2");
	CHECK_REJECTS(&r, UINT64_MAX, "(record block)");
	/* the wrong first span: a gap, an overlap */
	r = h;
	raw_record(&r, 0, 1, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "span 1 of block 0, but span 0 is due");
	r = h;
	raw_record(&r, 0, 0, 2);
	raw_record(&r, 0, 1, 2);
	CHECK_REJECTS(&r, UINT64_MAX, "span 1 of block 0, but span 2 is due");
	CHECK_REJECTS(&r, UINT64_MAX, "(record first span)");
	r = h;
	raw_record(&r, 0, 0, 4);
	raw_record(&r, 2, 5, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "span 5 of block 2, but span 0 is due");
	/* counts: 0, beyond the block's spans, beyond the block from the middle */
	r = h;
	raw_record(&r, 0, 0, 0);
	CHECK_REJECTS(&r, UINT64_MAX, "0 spans (1 to 1024, and block 0 has 4 left from span 0)");
	CHECK_REJECTS(&r, UINT64_MAX, "(record span count)");
	r = h;
	raw_record(&r, 0, 0, 5);
	CHECK_REJECTS(&r, UINT64_MAX, "5 spans (1 to 1024, and block 0 has 4 left from span 0)");
	r = h;
	raw_record(&r, 0, 0, 1);
	raw_record(&r, 0, 1, 4);
	CHECK_REJECTS(&r, UINT64_MAX, "4 spans (1 to 1024, and block 0 has 3 left from span 1)");
	/* a record may not run on into the next block */
	r = h;
	raw_record(&r, 0, 0, 20);
	CHECK_REJECTS(&r, UINT64_MAX, "20 spans");
	/* the records that fit are accepted as they come */
	r = h;
	raw_record(&r, 0, 0, 4);
	raw_record(&r, 2, 0, 16);
	raw_be(&r, RDMIG_IMGS_TRAILER_MAGIC, 4);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&p, r.b, r.n), RDMIG_IMGS_EV_HEADER | RDMIG_IMGS_EV_SPANS);
	CHECK_EQ(p.spans_known, 20);
	rdmig_imgs_parser_free(&p);
}

TEST(rejects_record_of_more_than_1024_spans)
{
	struct raw r;
	struct rdmig_imgs_parser p;

	raw_header(&r, 1);
	raw_block(&r, "big", 2048 * MIB); /* 2048 spans */
	{
		struct raw a = r;
		raw_record(&a, 0, 0, 1025);
		CHECK_REJECTS_N(a.b, 16 + 2 + 3 + 8 + 16, UINT64_MAX,
				"1025 spans (1 to 1024, and block 0 has 2048 left from span 0)");
	}
	{
		struct raw a = r;
		raw_record(&a, 0, 0, 0xffffffff);
		CHECK_REJECTS_N(a.b, 16 + 2 + 3 + 8 + 16, UINT64_MAX, "4294967295 spans");
	}
	/* 1024 is allowed */
	raw_record(&r, 0, 0, 1024);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	/* the 16-byte fields and as many digests as fit the raw buffer */
	CHECK_EQ(rdmig_imgs_feed(&p, r.b, r.n), RDMIG_IMGS_EV_HEADER | RDMIG_IMGS_EV_SPANS);
	CHECK_EQ(p.spans_known, (r.n - (16 + 2 + 3 + 8 + 16)) / 16);
	rdmig_imgs_parser_free(&p);
}

/* With the digest off the records are allowed and required: they carry
 * block, first span and count and no digest bytes, and follow the same
 * order rules as with digests; over-coverage is refused. */
TEST(accepts_records_when_digest_is_off)
{
	struct raw r, h;
	struct rdmig_imgs_parser p;

	/* one block of 5 spans */
	raw_start(&h, RDMIG_IMGS_HEADER_MAGIC, 2, 1);
	raw_params(&h, RDMIG_DIGEST_OFF, 20, 20, 0);
	raw_block(&h, "a", 5 * MIB);
	CHECK_EQ(h.n, 27);
	r = h;
	raw_record_off(&r, 0, 0, 1);
	raw_record_off(&r, 0, 1, 4);
	CHECK_EQ(r.n, 27 + 2 * 16);
	raw_be(&r, RDMIG_IMGS_TRAILER_MAGIC, 4);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&p, r.b, 27), RDMIG_IMGS_EV_HEADER);
	CHECK_EQ(rdmig_imgs_feed(&p, r.b + 27, 16), RDMIG_IMGS_EV_SPANS);
	CHECK_EQ(p.spans_known, 1);
	CHECK_EQ(rdmig_imgs_feed(&p, r.b + 27 + 16, 16), RDMIG_IMGS_EV_SPANS);
	CHECK_EQ(p.spans_known, 5);
	CHECK(p.span_digests == NULL);
	CHECK_EQ(rdmig_imgs_feed(&p, r.b + 27 + 32, 4), RDMIG_IMGS_EV_TRAILER);
	CHECK_OK(rdmig_imgs_finish(&p));
	rdmig_imgs_parser_free(&p);
	/* one record of all 5 */
	r = h;
	raw_record_off(&r, 0, 0, 5);
	raw_be(&r, RDMIG_IMGS_TRAILER_MAGIC, 4);
	rdmig_imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(rdmig_imgs_feed(&p, r.b, r.n),
		 RDMIG_IMGS_EV_HEADER | RDMIG_IMGS_EV_SPANS | RDMIG_IMGS_EV_TRAILER);
	CHECK_EQ(p.spans_known, 5);
	CHECK_OK(rdmig_imgs_finish(&p));
	rdmig_imgs_parser_free(&p);

	/* over-coverage: more spans than the block has, from the start and
	 * from the middle */
	r = h;
	raw_record_off(&r, 0, 0, 6);
	CHECK_REJECTS(&r, UINT64_MAX, "6 spans (1 to 1024, and block 0 has 5 left from span 0)");
	CHECK_REJECTS(&r, UINT64_MAX, "stream offset 39 (record span count)");
	r = h;
	raw_record_off(&r, 0, 0, 2);
	raw_record_off(&r, 0, 2, 4);
	CHECK_REJECTS(&r, UINT64_MAX, "4 spans (1 to 1024, and block 0 has 3 left from span 2)");
	/* a record past the last span */
	r = h;
	raw_record_off(&r, 0, 0, 5);
	raw_record_off(&r, 0, 5, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "a digest record after the records of every span");
	CHECK_REJECTS(&r, UINT64_MAX, "stream offset 43 (record or trailer magic)");
	/* a span covered twice, a gap, a count of 0 */
	r = h;
	raw_record_off(&r, 0, 0, 2);
	raw_record_off(&r, 0, 1, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "span 1 of block 0, but span 2 is due");
	r = h;
	raw_record_off(&r, 0, 1, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "span 1 of block 0, but span 0 is due");
	r = h;
	raw_record_off(&r, 0, 0, 0);
	CHECK_REJECTS(&r, UINT64_MAX, "0 spans");
	/* the wrong block */
	r = h;
	raw_record_off(&r, 1, 0, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "block 1, but the next span due is in block 0 'a'");
	/* a record with digest bytes after all: they are read as the next
	 * magic */
	r = h;
	raw_record_of(&r, 16, 0, 0, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "stream offset 43 (record or trailer magic)");
}

TEST(rejects_trailer_before_all_spans)
{
	struct raw r, h;
	struct sample sm;

	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	h.n = 0;
	raw_bytes(&h, sm.s, sm.hn);
	/* straight after the header */
	r = h;
	raw_bytes(&r, sm.s + sm.tstart, sm.len - sm.tstart);
	CHECK_REJECTS(&r, UINT64_MAX,
		      "the trailer came before the record of span 0 of block 0 'pc.ram'");
	/* after block 0's records */
	r = h;
	raw_bytes(&r, sm.s + sm.hn, 2 * 16 + 4 * 16);
	raw_bytes(&r, sm.s + sm.tstart, sm.len - sm.tstart);
	CHECK_REJECTS(&r, UINT64_MAX, "the trailer came before the record of span 0 of block 2");
	/* one span short: all records but the last, which covers 10..15 */
	r = h;
	raw_bytes(&r, sm.s + sm.hn, sm.tstart - sm.hn - (16 + 6 * 16));
	raw_record(&r, 2, 10, 5);
	raw_bytes(&r, sm.s + sm.tstart, sm.len - sm.tstart);
	CHECK_REJECTS(&r, UINT64_MAX, "the trailer came before the record of span 15 of block 2");
	free(sm.s);

	/* the same with the digest off, whose records carry no digests */
	sample_build(&sm, RDMIG_DIGEST_OFF);
	h.n = 0;
	raw_bytes(&h, sm.s, sm.hn);
	/* no records at all: the header, then the trailer (the version 2
	 * digest-off stream before records were required) */
	r = h;
	raw_bytes(&r, sm.s + sm.tstart, sm.len - sm.tstart);
	CHECK_EQ(r.n, sm.hn + 4);
	CHECK_REJECTS(&r, UINT64_MAX,
		      "the trailer came before the record of span 0 of block 0 'pc.ram'");
	CHECK_REJECTS_N(r.b, r.n, UINT64_MAX, "(record or trailer magic)");
	/* after block 0's records */
	r = h;
	raw_bytes(&r, sm.s + sm.hn, 2 * 16);
	raw_bytes(&r, sm.s + sm.tstart, sm.len - sm.tstart);
	CHECK_REJECTS(&r, UINT64_MAX, "the trailer came before the record of span 0 of block 2");
	/* one span short */
	r = h;
	raw_bytes(&r, sm.s + sm.hn, 3 * 16);
	raw_record_off(&r, 2, 10, 5);
	raw_bytes(&r, sm.s + sm.tstart, sm.len - sm.tstart);
	CHECK_REJECTS(&r, UINT64_MAX, "the trailer came before the record of span 15 of block 2");
	free(sm.s);
}

TEST(rejects_record_after_all_spans)
{
	struct raw r;
	struct sample sm;

	sample_build(&sm, RDMIG_DIGEST_XXH3_128);
	r.n = 0;
	raw_bytes(&r, sm.s, sm.tstart);
	raw_record(&r, 2, 16, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "a digest record after the records of every span");
	/* and a record after the trailer is trailing garbage */
	r.n = 0;
	raw_bytes(&r, sm.s, sm.len);
	raw_record(&r, 2, 16, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "trailing garbage after the trailer");
	free(sm.s);
}

TEST(encoder_checks)
{
	struct rdmig_imgs_params prm = {RDMIG_DIGEST_XXH3_128, 20, 20};
	struct rdmig_imgs_block b[2];
	uint8_t *out = NULL, dig[1025 * 16];
	size_t n;
	char err[256];

	memset(b, 0, sizeof(b));
	memset(dig, 0, sizeof(dig));
	strcpy(b[0].name, "x");
	strcpy(b[1].name, "x");
	CHECK_EQ(rdmig_imgs_encode_header(&prm, b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "both named 'x'");
	strcpy(b[1].name, "");
	CHECK_EQ(rdmig_imgs_encode_header(&prm, b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "block 1: name length 0");
	strcpy(b[1].name, "tab\there");
	CHECK_EQ(rdmig_imgs_encode_header(&prm, b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "0x09");
	strcpy(b[1].name, "y");
	b[0].length = UINT64_MAX;
	b[1].length = 1;
	CHECK_EQ(rdmig_imgs_encode_header(&prm, b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "overflows");
	CHECK_EQ(rdmig_imgs_encode_header(&prm, b, 0, &out, &n, err, sizeof(err)), -1);
	CHECK_EQ(rdmig_imgs_encode_header(&prm, b, 4097, &out, &n, err, sizeof(err)), -1);
	b[1].length = 0;
	b[0].length = 5;
	/* the parameters */
	prm.digest = 4;
	CHECK_EQ(rdmig_imgs_encode_header(&prm, b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "digest 4 is unknown");
	prm = (struct rdmig_imgs_params){RDMIG_DIGEST_SHA256, 19, 20};
	CHECK_EQ(rdmig_imgs_encode_header(&prm, b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "span 2^19");
	prm = (struct rdmig_imgs_params){RDMIG_DIGEST_SHA256, 20, 31};
	CHECK_EQ(rdmig_imgs_encode_header(&prm, b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "chunk 2^31");
	CHECK(out == NULL);
	prm = (struct rdmig_imgs_params){RDMIG_DIGEST_SHA256, 20, 30};
	CHECK_OK(rdmig_imgs_encode_header(&prm, b, 2, &out, &n, err, sizeof(err)));
	CHECK_EQ(n, 16 + (2 + 1 + 8) * 2);
	CHECK_EQ(out[12], RDMIG_DIGEST_SHA256);
	CHECK_EQ(out[13], 20);
	CHECK_EQ(out[14], 30);
	CHECK_EQ(out[15], 0);
	CHECK_EQ(b[0].nspans, 1);
	CHECK_EQ(b[1].first_span, 1);
	CHECK_EQ(b[1].nspans, 0);
	free(out);
	out = NULL;
	/* records: 1..1024 digests; with the digest off, 1..1024 spans and no
	 * digest bytes */
	CHECK_EQ(rdmig_imgs_encode_record(RDMIG_DIGEST_XXH3_128, 0, 0, 0, dig, &out, &n, err,
					  sizeof(err)),
		 -1);
	CHECK_STR_CONTAINS(err, "must be 1 to 1024");
	CHECK_EQ(rdmig_imgs_encode_record(RDMIG_DIGEST_XXH3_128, 0, 0, 1025, dig, &out, &n, err,
					  sizeof(err)),
		 -1);
	CHECK_EQ(
	    rdmig_imgs_encode_record(RDMIG_DIGEST_OFF, 0, 0, 0, dig, &out, &n, err, sizeof(err)),
	    -1);
	CHECK_STR_CONTAINS(err, "must be 1 to 1024");
	CHECK_EQ(
	    rdmig_imgs_encode_record(RDMIG_DIGEST_OFF, 0, 0, 1025, dig, &out, &n, err, sizeof(err)),
	    -1);
	CHECK_EQ(rdmig_imgs_encode_record(7, 0, 0, 1, dig, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "unknown");
	CHECK(out == NULL);
	CHECK_OK(rdmig_imgs_encode_record(RDMIG_DIGEST_OFF, 2, 5, 1024, dig, &out, &n, err,
					  sizeof(err)));
	CHECK_EQ(n, 16);
	{
		static const uint8_t want[16] = {0x52, 0x4d, 0x49, 0x44, 0, 0, 0, 2,
						 0,    0,    0,    5,    0, 0, 4, 0};
		CHECK_MEM_EQ(out, want, 16);
	}
	free(out);
	out = NULL;
	CHECK_OK(rdmig_imgs_encode_record(RDMIG_DIGEST_XXH3_128, 3, 7, 1024, dig, &out, &n, err,
					  sizeof(err)));
	CHECK_EQ(n, 16 + 1024 * 16);
	CHECK_EQ(out[7], 3);
	CHECK_EQ(out[11], 7);
	CHECK_EQ(out[14], 4);
	free(out);
	out = NULL;
	/* the trailer */
	CHECK_EQ(rdmig_imgs_encode_trailer(RDMIG_DIGEST_XXH3_128, b, 0, &out, &n, err, sizeof(err)),
		 -1);
	CHECK_EQ(
	    rdmig_imgs_encode_trailer(RDMIG_DIGEST_XXH3_128, b, 4097, &out, &n, err, sizeof(err)),
	    -1);
	CHECK(out == NULL);
	CHECK_OK(rdmig_imgs_encode_trailer(RDMIG_DIGEST_SHA256, b, 2, &out, &n, err, sizeof(err)));
	CHECK_EQ(n, 4 + 2 * 32);
	free(out);
	CHECK_OK(rdmig_imgs_encode_trailer(RDMIG_DIGEST_OFF, b, 2, &out, &n, err, sizeof(err)));
	CHECK_EQ(n, 4);
	free(out);
}

/* With the digest off a record has no digest bytes, so the digests
 * argument is not needed: a NULL one must be fine (not passed on to
 * memcpy, which must not get NULL even for 0 bytes). */
TEST(encode_record_digest_off_without_digests)
{
	uint8_t *out = NULL;
	size_t n = 0;
	char err[256];

	CHECK_OK(
	    rdmig_imgs_encode_record(RDMIG_DIGEST_OFF, 0, 3, 7, NULL, &out, &n, err, sizeof(err)));
	CHECK_EQ(n, 16);
	CHECK_EQ(out[11], 3);
	CHECK_EQ(out[15], 7);
	free(out);
}

/* A block's digest is the digest of its span digests, one after the other. */
TEST(block_digest_of_span_digests)
{
	uint8_t spans[3 * 32], a[RDMIG_DIGEST_MAX], b[RDMIG_DIGEST_MAX];

	for (size_t i = 0; i < sizeof(spans); i++)
		spans[i] = (uint8_t)(i * 31);
	rdmig_imgs_block_digest(RDMIG_DIGEST_XXH3_128, spans, 3, a);
	rdmig_digest_compute(RDMIG_DIGEST_XXH3_128, spans, 3 * 16, b);
	CHECK_MEM_EQ(a, b, 16);
	rdmig_imgs_block_digest(RDMIG_DIGEST_SHA256, spans, 3, a);
	rdmig_digest_compute(RDMIG_DIGEST_SHA256, spans, 3 * 32, b);
	CHECK_MEM_EQ(a, b, 32);
	rdmig_imgs_block_digest(RDMIG_DIGEST_SHA256, spans, 2, a);
	CHECK(memcmp(a, b, 32) != 0);
	rdmig_imgs_block_digest(RDMIG_DIGEST_SHA256, NULL, 0, a);
	rdmig_digest_compute(RDMIG_DIGEST_SHA256, "", 0, b);
	CHECK_MEM_EQ(a, b, 32);
}

static int names_of(const char *const *names, uint32_t n, char (*out)[RDMIG_IMGS_FILE_NAME])
{
	struct rdmig_imgs_block b[8];

	memset(b, 0, sizeof(b));
	for (uint32_t i = 0; i < n; i++)
		strcpy(b[i].name, names[i]);
	return rdmig_imgs_file_names(b, n, ".img", out);
}

TEST(file_names_are_safe)
{
	static const char *const names[] = {"pc.ram", "/rom@etc/acpi/tables", ".", "..", "a b*c",
					    "...", "-x_Y.9"};
	char out[7][RDMIG_IMGS_FILE_NAME];

	CHECK_OK(names_of(names, 7, out));
	CHECK_STR_CONTAINS(out[0], "pc.ram.img");
	CHECK_EQ(strcmp(out[1], "_rom_etc_acpi_tables.img"), 0);
	CHECK_EQ(strcmp(out[2], "_.img"), 0);
	CHECK_EQ(strcmp(out[3], "__.img"), 0);
	CHECK_EQ(strcmp(out[4], "a_b_c.img"), 0);
	CHECK_EQ(strcmp(out[5], "....img"), 0);
	CHECK_EQ(strcmp(out[6], "-x_Y.9.img"), 0);
}

TEST(file_names_are_distinct)
{
	/* "a b" and "a*b" both map to "a_b"; the renamed one must not then
	 * take the name of a block really called "a_b-2" */
	static const char *const names[] = {"a b", "a*b", "a_b-2", "a?b", "_", "."};
	char out[6][RDMIG_IMGS_FILE_NAME];

	CHECK_OK(names_of(names, 6, out));
	CHECK_EQ(strcmp(out[0], "a_b.img"), 0);
	CHECK_EQ(strcmp(out[1], "a_b-2.img"), 0);
	CHECK_EQ(strcmp(out[2], "a_b-2-2.img"), 0);
	CHECK_EQ(strcmp(out[3], "a_b-3.img"), 0);
	CHECK_EQ(strcmp(out[4], "_.img"), 0);
	CHECK_EQ(strcmp(out[5], "_-2.img"), 0);
}

TEST(file_names_of_long_names)
{
	struct rdmig_imgs_block b[2];
	char out[2][RDMIG_IMGS_FILE_NAME];

	memset(b, 0, sizeof(b));
	memset(b[0].name, 'x', 255);
	memset(b[1].name, 'x', 254);
	CHECK_OK(rdmig_imgs_file_names(b, 2, ".img", out));
	CHECK_EQ(strlen(out[0]), RDMIG_IMGS_FILE_STEM + 4);
	CHECK_EQ(strlen(out[1]), RDMIG_IMGS_FILE_STEM + 6); /* same 200-byte stem, then "-2" */
	CHECK(strcmp(out[0], out[1]) != 0);
	CHECK(strlen(out[1]) < 256); /* NAME_MAX */
}

/* 4096 distinct valid names that share their first 200 bytes, the stem
 *: they all map to one stem, so each gets a number.  Comparing
 * every candidate with every chosen name took over a minute. */
TEST(file_names_of_4096_names_sharing_a_stem_take_well_under_a_second)
{
	static struct rdmig_imgs_block b[RDMIG_IMGS_MAX_BLOCKS];
	static char out[RDMIG_IMGS_MAX_BLOCKS][RDMIG_IMGS_FILE_NAME];
	struct timespec t0, t1;
	double secs;

	for (uint32_t i = 0; i < RDMIG_IMGS_MAX_BLOCKS; i++) {
		memset(b[i].name, 'x', RDMIG_IMGS_FILE_STEM);
		snprintf(b[i].name + RDMIG_IMGS_FILE_STEM, sizeof(b[i].name) - RDMIG_IMGS_FILE_STEM,
			 "%u", i);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_OK(rdmig_imgs_file_names(b, RDMIG_IMGS_MAX_BLOCKS, ".img", out));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "# 4096 names sharing a 200-byte stem: %.3f s\n", secs);
	CHECK(secs < 1.0);
	CHECK_EQ(strlen(out[0]), RDMIG_IMGS_FILE_STEM + 4);
	CHECK(!strcmp(out[1] + RDMIG_IMGS_FILE_STEM, "-2.img"));
	CHECK(!strcmp(out[RDMIG_IMGS_MAX_BLOCKS - 1] + RDMIG_IMGS_FILE_STEM, "-4096.img"));
}

CHECK_MAIN()
