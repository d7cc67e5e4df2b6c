/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_imgstream.c - the image stream of rdmig send/recv: encoder and
 * decoder agree, any split of the input parses the same, and each rule
 * of the format rejects what breaks it, with a message naming the field.
 */
#include <time.h>
#include "check.h"
#include "imgstream.h"

/* A hand-built raw stream, for inputs the encoder refuses to produce. */
struct raw {
	uint8_t b[2048];
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

static void raw_header(struct raw *r, uint32_t magic, uint32_t version, uint32_t count)
{
	r->n = 0;
	raw_be(r, magic, 4);
	raw_be(r, version, 4);
	raw_be(r, count, 4);
}

/* Three blocks, one empty, with distinct digests. */
static void sample_blocks(struct imgs_block b[3])
{
	memset(b, 0, 3 * sizeof(*b));
	strcpy(b[0].name, "pc.ram");
	b[0].length = 3 * 1048576 + 123;
	strcpy(b[1].name, "/rom@etc/acpi/tables");
	b[1].length = 0;
	strcpy(b[2].name, "0000:00:02.0/vga.vram");
	b[2].length = 16 << 20;
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < SHA256_DIGEST_SIZE; k++)
			b[i].sha256[k] = (uint8_t)(i * 40 + k);
}

/* header + trailer of the sample, concatenated; returns the header size. */
static size_t sample_stream(uint8_t **out, size_t *len)
{
	struct imgs_block b[3];
	uint8_t *h, *t;
	size_t hn, tn;
	char err[256];

	sample_blocks(b);
	if (imgs_encode_header(b, 3, &h, &hn, err, sizeof(err)) ||
	    imgs_encode_trailer(b, 3, &t, &tn, err, sizeof(err)))
		abort();
	*out = malloc(hn + tn);
	memcpy(*out, h, hn);
	memcpy(*out + hn, t, tn);
	*len = hn + tn;
	free(h);
	free(t);
	return hn;
}

static int same_blocks(const struct imgs_parser *p, int with_digests)
{
	struct imgs_block b[3];

	sample_blocks(b);
	if (p->count != 3 || p->total != b[0].length + b[2].length)
		return 0;
	for (int i = 0; i < 3; i++) {
		if (strcmp(p->blocks[i].name, b[i].name) || p->blocks[i].length != b[i].length)
			return 0;
		if (with_digests && memcmp(p->blocks[i].sha256, b[i].sha256, SHA256_DIGEST_SIZE))
			return 0;
	}
	return 1;
}

TEST(round_trip)
{
	struct imgs_parser p;
	uint8_t *s;
	size_t len, hn = sample_stream(&s, &len);

	imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(imgs_feed(&p, s, hn), IMGS_EV_HEADER);
	CHECK(imgs_header_done(&p) && !imgs_trailer_done(&p));
	CHECK(same_blocks(&p, 0));
	CHECK_EQ(imgs_feed(&p, s + hn, len - hn), IMGS_EV_TRAILER);
	CHECK(imgs_trailer_done(&p));
	CHECK(same_blocks(&p, 1));
	CHECK_OK(imgs_finish(&p));
	CHECK_EQ(imgs_feed(&p, NULL, 0), 0); /* an empty piece is harmless */
	imgs_parser_free(&p);
	free(s);
}

TEST(whole_stream_in_one_piece)
{
	struct imgs_parser p;
	uint8_t *s;
	size_t len;

	sample_stream(&s, &len);
	imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(imgs_feed(&p, s, len), IMGS_EV_HEADER | IMGS_EV_TRAILER);
	CHECK(same_blocks(&p, 1));
	CHECK_OK(imgs_finish(&p));
	imgs_parser_free(&p);
	free(s);
}

/* Two pieces split at every position, and every pair of cut points for
 * three pieces: the same result, each event reported exactly once, by the
 * piece that holds the event's last byte. */
TEST(every_split_position)
{
	uint8_t *s;
	size_t len, hn = sample_stream(&s, &len);

	for (size_t i = 0; i <= len; i++) {
		for (size_t j = i; j <= len; j++) {
			struct imgs_parser p;
			size_t cut[4] = {0, i, j, len};
			int seen = 0;

			imgs_parser_init(&p, UINT64_MAX);
			for (int k = 0; k < 3; k++) {
				int ev = imgs_feed(&p, s + cut[k], cut[k + 1] - cut[k]);
				int want = (cut[k] < hn && hn <= cut[k + 1] ? IMGS_EV_HEADER : 0) |
					   (cut[k] < len && len <= cut[k + 1] ? IMGS_EV_TRAILER : 0);
				if (ev != want)
					CHECK_FAIL_AT("cuts %zu,%zu piece %d: events %d, want %d (%s)", i,
						      j, k, ev, want, imgs_errmsg(&p));
				seen |= ev;
			}
			CHECK_EQ(seen, IMGS_EV_HEADER | IMGS_EV_TRAILER);
			CHECK(same_blocks(&p, 1));
			CHECK_OK(imgs_finish(&p));
			imgs_parser_free(&p);
		}
	}
	free(s);
}

TEST(byte_at_a_time)
{
	struct imgs_parser p;
	uint8_t *s;
	size_t len, hn = sample_stream(&s, &len);

	imgs_parser_init(&p, UINT64_MAX);
	for (size_t i = 0; i < len; i++) {
		int ev = imgs_feed(&p, s + i, 1);
		CHECK_EQ(ev, i == hn - 1 ? IMGS_EV_HEADER : i == len - 1 ? IMGS_EV_TRAILER : 0);
	}
	CHECK(same_blocks(&p, 1));
	imgs_parser_free(&p);
	free(s);
}

/* Feed raw bytes and expect a rejection whose message names `what`. */
static int rejects(const struct raw *r, uint64_t limit, const char *what, char *msg, size_t n)
{
	struct imgs_parser p;
	int ret;

	imgs_parser_init(&p, limit);
	ret = imgs_feed(&p, r->b, r->n);
	if (ret >= 0)
		ret = imgs_finish(&p);
	snprintf(msg, n, "%s", imgs_errmsg(&p));
	/* a failed parser stays failed */
	if (ret == 0 || imgs_feed(&p, "x", 1) != -1 || imgs_finish(&p) != -1)
		ret = 0;
	imgs_parser_free(&p);
	return ret != 0 && strstr(msg, what) != NULL;
}

#define CHECK_REJECTS(r, limit, what)                                                              \
	do {                                                                                       \
		char msg_[400];                                                                    \
		if (!rejects(r, limit, what, msg_, sizeof(msg_)))                                  \
			CHECK_FAIL_AT("expected a rejection mentioning '%s', got '%s'", what, msg_); \
	} while (0)

TEST(rejects_bad_magic)
{
	struct raw r;

	raw_header(&r, 0x51455649, 1, 1); /* "QEVI": not ours */
	raw_block(&r, "a", 1);
	CHECK_REJECTS(&r, UINT64_MAX, "header magic");
	CHECK_REJECTS(&r, UINT64_MAX, "0x51455649");
	CHECK_REJECTS(&r, UINT64_MAX, "stream offset 0");
}

TEST(rejects_bad_version)
{
	struct raw r;

	raw_header(&r, IMGS_HEADER_MAGIC, 2, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "version 2 is not supported");
	raw_header(&r, IMGS_HEADER_MAGIC, 0, 1);
	CHECK_REJECTS(&r, UINT64_MAX, "version 0");
}

TEST(rejects_block_count)
{
	struct raw r;

	raw_header(&r, IMGS_HEADER_MAGIC, 1, 4097);
	CHECK_REJECTS(&r, UINT64_MAX, "4097 blocks (must be 1 to 4096)");
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 0xffffffff);
	CHECK_REJECTS(&r, UINT64_MAX, "4294967295 blocks");
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 0);
	CHECK_REJECTS(&r, UINT64_MAX, "0 blocks");
}

TEST(rejects_name_length)
{
	struct raw r;

	raw_header(&r, IMGS_HEADER_MAGIC, 1, 2);
	raw_block(&r, "a", 1);
	raw_be(&r, 0, 2);
	CHECK_REJECTS(&r, UINT64_MAX, "block 1: name length 0 (must be 1 to 255)");
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 1);
	raw_be(&r, 256, 2);
	CHECK_REJECTS(&r, UINT64_MAX, "name length 256");
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 1);
	raw_be(&r, 0xffff, 2);
	CHECK_REJECTS(&r, UINT64_MAX, "name length 65535");
}

TEST(accepts_name_of_255_bytes)
{
	struct raw r;
	struct imgs_parser p;
	char name[256];

	memset(name, 'n', 255);
	name[255] = '\0';
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 1);
	raw_block(&r, name, 7);
	imgs_parser_init(&p, UINT64_MAX);
	CHECK_EQ(imgs_feed(&p, r.b, r.n), IMGS_EV_HEADER);
	CHECK_EQ(strlen(p.blocks[0].name), 255);
	imgs_parser_free(&p);
}

TEST(rejects_bad_names)
{
	struct raw r;

	raw_header(&r, IMGS_HEADER_MAGIC, 1, 1);
	raw_block(&r, "ab\ncd", 1);
	CHECK_REJECTS(&r, UINT64_MAX, "name byte 2 is 0x0a");
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 1);
	raw_be(&r, 3, 2);
	raw_bytes(&r, "a\0b", 3);
	CHECK_REJECTS(&r, UINT64_MAX, "name byte 1 is 0x00");
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 1);
	raw_block(&r, "caf\xc3\xa9", 1);
	CHECK_REJECTS(&r, UINT64_MAX, "0xc3");
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 3);
	raw_block(&r, "ram", 1);
	raw_block(&r, "rom", 1);
	raw_block(&r, "ram", 1);
	CHECK_REJECTS(&r, UINT64_MAX, "blocks 0 and 2 are both named 'ram'");
}

TEST(rejects_total_above_limit)
{
	struct raw r;
	struct imgs_parser p;

	raw_header(&r, IMGS_HEADER_MAGIC, 1, 2);
	raw_block(&r, "a", 600);
	raw_block(&r, "b", 425);
	CHECK_REJECTS(&r, 1024, "block 1 'b' has length 425: the total would exceed the limit "
			  "of 1024 bytes (600 already)");
	/* exactly at the limit is fine */
	imgs_parser_init(&p, 1025);
	CHECK_EQ(imgs_feed(&p, r.b, r.n), IMGS_EV_HEADER);
	CHECK_EQ(p.total, 1025);
	imgs_parser_free(&p);
	/* a sum that would wrap around 64 bits */
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 2);
	raw_block(&r, "a", UINT64_MAX - 5);
	raw_block(&r, "b", 10);
	CHECK_REJECTS(&r, UINT64_MAX, "block 1 'b' has length 10");
	/* one block alone above the limit */
	raw_header(&r, IMGS_HEADER_MAGIC, 1, 1);
	raw_block(&r, "a", UINT64_MAX);
	CHECK_REJECTS(&r, 1ull << 40, "length 18446744073709551615");
}

TEST(rejects_truncated)
{
	uint8_t *s;
	size_t len, hn = sample_stream(&s, &len);
	struct raw r;

	/* every proper prefix is incomplete, and says where it stopped */
	for (size_t n = 0; n < len; n++) {
		r.n = 0;
		raw_bytes(&r, s, n);
		CHECK_REJECTS(&r, UINT64_MAX, "the stream ended after");
		CHECK_REJECTS(&r, UINT64_MAX, n < hn ? "inside the header" : "inside the trailer");
	}
	r.n = 0;
	raw_bytes(&r, s, 13);
	CHECK_REJECTS(&r, UINT64_MAX, "1 of the 2 bytes of the name length of block 0 of 3");
	r.n = 0;
	raw_bytes(&r, s, hn);
	CHECK_REJECTS(&r, UINT64_MAX, "0 of the 4 bytes of the trailer magic");
	free(s);
}

TEST(rejects_trailing_garbage)
{
	uint8_t *s;
	size_t len;
	struct raw r;

	sample_stream(&s, &len);
	r.n = 0;
	raw_bytes(&r, s, len);
	raw_bytes(&r, "xyz", 3);
	CHECK_REJECTS(&r, UINT64_MAX, "3 bytes of trailing garbage after the trailer");
	free(s);
}

TEST(rejects_bad_trailer_magic)
{
	uint8_t *s;
	size_t len, hn = sample_stream(&s, &len);
	struct raw r;

	s[hn + 3] ^= 1;
	r.n = 0;
	raw_bytes(&r, s, len);
	CHECK_REJECTS(&r, UINT64_MAX, "trailer magic");
	free(s);
}

TEST(encoder_checks)
{
	struct imgs_block b[2];
	uint8_t *out = NULL;
	size_t n;
	char err[256];

	memset(b, 0, sizeof(b));
	strcpy(b[0].name, "x");
	strcpy(b[1].name, "x");
	CHECK_EQ(imgs_encode_header(b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "both named 'x'");
	strcpy(b[1].name, "");
	CHECK_EQ(imgs_encode_header(b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "block 1: name length 0");
	strcpy(b[1].name, "tab\there");
	CHECK_EQ(imgs_encode_header(b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "0x09");
	strcpy(b[1].name, "y");
	b[0].length = UINT64_MAX;
	b[1].length = 1;
	CHECK_EQ(imgs_encode_header(b, 2, &out, &n, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "overflows");
	CHECK_EQ(imgs_encode_header(b, 0, &out, &n, err, sizeof(err)), -1);
	CHECK_EQ(imgs_encode_header(b, 4097, &out, &n, err, sizeof(err)), -1);
	CHECK(out == NULL);
	b[1].length = 0;
	b[0].length = 5;
	CHECK_OK(imgs_encode_header(b, 2, &out, &n, err, sizeof(err)));
	CHECK_EQ(n, 12 + (2 + 1 + 8) * 2);
	free(out);
}

static int names_of(const char *const *names, uint32_t n, char (*out)[IMGS_FILE_NAME])
{
	struct imgs_block b[8];

	memset(b, 0, sizeof(b));
	for (uint32_t i = 0; i < n; i++)
		strcpy(b[i].name, names[i]);
	return imgs_file_names(b, n, ".img", out);
}

TEST(file_names_are_safe)
{
	static const char *const names[] = {"pc.ram", "/rom@etc/acpi/tables", ".", "..", "a b*c",
					    "...", "-x_Y.9"};
	char out[7][IMGS_FILE_NAME];

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
	char out[6][IMGS_FILE_NAME];

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
	struct imgs_block b[2];
	char out[2][IMGS_FILE_NAME];

	memset(b, 0, sizeof(b));
	memset(b[0].name, 'x', 255);
	memset(b[1].name, 'x', 254);
	CHECK_OK(imgs_file_names(b, 2, ".img", out));
	CHECK_EQ(strlen(out[0]), IMGS_FILE_STEM + 4);
	CHECK_EQ(strlen(out[1]), IMGS_FILE_STEM + 6); /* same 200-byte stem, then "-2" */
	CHECK(strcmp(out[0], out[1]) != 0);
	CHECK(strlen(out[1]) < 256); /* NAME_MAX */
}

/* 4096 distinct valid names that share their first 200 bytes, the stem
 * (issue 15): they all map to one stem, so each gets a number.  Comparing
 * every candidate with every chosen name took over a minute. */
TEST(file_names_of_4096_names_sharing_a_stem_take_well_under_a_second)
{
	static struct imgs_block b[IMGS_MAX_BLOCKS];
	static char out[IMGS_MAX_BLOCKS][IMGS_FILE_NAME];
	struct timespec t0, t1;
	double secs;

	for (uint32_t i = 0; i < IMGS_MAX_BLOCKS; i++) {
		memset(b[i].name, 'x', IMGS_FILE_STEM);
		snprintf(b[i].name + IMGS_FILE_STEM, sizeof(b[i].name) - IMGS_FILE_STEM, "%u", i);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_OK(imgs_file_names(b, IMGS_MAX_BLOCKS, ".img", out));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "# 4096 names sharing a 200-byte stem: %.3f s\n", secs);
	CHECK(secs < 1.0);
	CHECK_EQ(strlen(out[0]), IMGS_FILE_STEM + 4);
	CHECK(!strcmp(out[1] + IMGS_FILE_STEM, "-2.img"));
	CHECK(!strcmp(out[IMGS_MAX_BLOCKS - 1] + IMGS_FILE_STEM, "-4096.img"));
}

CHECK_MAIN()
