/* SPDX-License-Identifier: BSD-2-Clause */
/* imgstream.c - the image stream of rdmig send/recv (format: rdmig/imgstream.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdmig/imgstream.h>
#include "stream_field.h"

/* Parser states, in stream order; each names the field being collected. */
enum {
	S_MAGIC, S_VERSION, S_COUNT, S_PARAMS, /* header, once */
	S_NAMELEN, S_NAME, S_LENGTH,           /* header, per block */
	S_RMAGIC,                              /* a record's or the trailer's magic */
	S_RBLOCK, S_RFIRST, S_RCOUNT, S_RDIGEST, /* digest record */
	S_TDIGEST,                             /* trailer */
	S_DONE, S_FAILED,
};

static const char *const field_names[] = {
	"header magic", "version", "block count", "parameters", "name length", "name",
	"block length", "record or trailer magic", "record block", "record first span",
	"record span count", "span digest", "block digest",
};

int rdmig_imgs_check_name(const char *name, size_t len, uint32_t index, char *err, size_t errlen)
{
	if (len < 1 || len > RDMIG_IMGS_MAX_NAME) {
		snprintf(err, errlen, "block %u: name length %zu (must be 1 to %u)", index, len,
			 RDMIG_IMGS_MAX_NAME);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];
		if (ch < 0x20 || ch > 0x7e) {
			snprintf(err, errlen, "block %u: name byte %zu is 0x%02x (names are printable "
				 "ASCII)", index, i, ch);
			return -1;
		}
	}
	return 0;
}

/* The first block before `index` with the same name, or -1. */
static long find_name(const struct rdmig_imgs_block *blocks, uint32_t index, const char *name)
{
	for (uint32_t i = 0; i < index; i++)
		if (!strcmp(blocks[i].name, name))
			return i;
	return -1;
}

uint64_t rdmig_imgs_spans(uint64_t length, uint32_t span_shift)
{
	return (length >> span_shift) + ((length & ((1ull << span_shift) - 1)) != 0);
}

uint64_t rdmig_imgs_landed_bytes(const struct rdmig_imgs_parser *p)
{
	uint64_t bytes = 0;

	for (uint32_t i = 0; p->blocks && i < p->count; i++) {
		const struct rdmig_imgs_block *b = &p->blocks[i];
		uint64_t spans;

		if (p->spans_known <= b->first_span)
			break;
		spans = p->spans_known - b->first_span;
		if (spans >= b->nspans) {
			bytes += b->length;
			continue;
		}
		bytes += spans << p->prm.span_shift; /* a whole span: not the block's last */
		break;
	}
	return bytes;
}

static int check_params(const struct rdmig_imgs_params *prm, char *err, size_t errlen)
{
	if (!rdmig_digest_name(prm->digest)) {
		snprintf(err, errlen, "digest %u is unknown (0 off, 1 xxh3-128, 2 sha256, 3 xxh64)",
			 prm->digest);
		return -1;
	}
	if (prm->span_shift < RDMIG_IMGS_MIN_SHIFT || prm->span_shift > RDMIG_IMGS_MAX_SHIFT ||
	    prm->chunk_shift < RDMIG_IMGS_MIN_SHIFT || prm->chunk_shift > RDMIG_IMGS_MAX_SHIFT) {
		snprintf(err, errlen, "span 2^%u and chunk 2^%u bytes (each must be 2^%u to 2^%u)",
			 prm->span_shift, prm->chunk_shift, RDMIG_IMGS_MIN_SHIFT,
			 RDMIG_IMGS_MAX_SHIFT);
		return -1;
	}
	return 0;
}

/* Check the blocks of a header to be encoded; the bytes it will take. */
static int check_blocks(const struct rdmig_imgs_block *blocks, uint32_t n, size_t *size, char *err,
			size_t errlen)
{
	uint64_t total = 0;

	if (n < 1 || n > RDMIG_IMGS_MAX_BLOCKS) {
		snprintf(err, errlen, "%u blocks (must be 1 to %u)", n, RDMIG_IMGS_MAX_BLOCKS);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strnlen(blocks[i].name, sizeof(blocks[i].name));
		long dup;
		if (rdmig_imgs_check_name(blocks[i].name, len, i, err, errlen))
			return -1;
		if ((dup = find_name(blocks, i, blocks[i].name)) >= 0) {
			snprintf(err, errlen, "blocks %ld and %u are both named '%s' (names must be "
				 "unique)", dup, i, blocks[i].name);
			return -1;
		}
		if (blocks[i].length > UINT64_MAX - total) {
			snprintf(err, errlen, "block '%s': the total length overflows 64 bits",
				 blocks[i].name);
			return -1;
		}
		total += blocks[i].length;
		*size += 2 + len + 8;
	}
	return 0;
}

static int alloc_out(size_t size, const char *what, uint8_t **out, size_t *outlen, char *err,
		     size_t errlen)
{
	if (!(*out = malloc(size ? size : 1))) {
		snprintf(err, errlen, "out of memory for a %zu-byte stream %s", size, what);
		return -1;
	}
	*outlen = size;
	return 0;
}

int rdmig_imgs_encode_header(const struct rdmig_imgs_params *prm, struct rdmig_imgs_block *blocks,
			     uint32_t n, uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	size_t size = 16;
	uint64_t span = 0;
	uint8_t *p;

	if (check_params(prm, err, errlen) || check_blocks(blocks, n, &size, err, errlen) ||
	    alloc_out(size, "header", out, outlen, err, errlen))
		return -1;
	p = sf_put_be(*out, RDMIG_IMGS_HEADER_MAGIC, 4);
	p = sf_put_be(p, RDMIG_IMGS_VERSION, 4);
	p = sf_put_be(p, n, 4);
	*p++ = (uint8_t)prm->digest;
	*p++ = (uint8_t)prm->span_shift;
	*p++ = (uint8_t)prm->chunk_shift;
	*p++ = 0;
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strlen(blocks[i].name);
		p = sf_put_be(p, len, 2);
		memcpy(p, blocks[i].name, len);
		p = sf_put_be(p + len, blocks[i].length, 8);
		blocks[i].first_span = span;
		blocks[i].nspans = (uint32_t)rdmig_imgs_spans(blocks[i].length, prm->span_shift);
		span += blocks[i].nspans;
	}
	return 0;
}

int rdmig_imgs_encode_record(uint32_t alg, uint32_t block, uint32_t first, uint32_t n,
			     const uint8_t *digests, uint8_t **out, size_t *outlen, char *err,
			     size_t errlen)
{
	size_t dsize = rdmig_digest_size(alg);
	uint8_t *p;

	if (!rdmig_digest_name(alg) || n < 1 || n > RDMIG_IMGS_MAX_RECORD_SPANS) {
		snprintf(err, errlen, "a record of %u %s digests (must be 1 to %u)", n,
			 rdmig_digest_name(alg) ? rdmig_digest_name(alg) : "unknown",
			 RDMIG_IMGS_MAX_RECORD_SPANS);
		return -1;
	}
	if (alloc_out(16 + n * dsize, "record", out, outlen, err, errlen))
		return -1;
	p = sf_put_be(*out, RDMIG_IMGS_DIGEST_MAGIC, 4);
	p = sf_put_be(p, block, 4);
	p = sf_put_be(p, first, 4);
	p = sf_put_be(p, n, 4);
	if (dsize) /* the digest off: the record only marks spans as landed */
		memcpy(p, digests, n * dsize);
	return 0;
}

int rdmig_imgs_encode_trailer(uint32_t alg, const struct rdmig_imgs_block *blocks, uint32_t n,
			      uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	size_t dsize = rdmig_digest_size(alg);
	uint8_t *p;

	if (n < 1 || n > RDMIG_IMGS_MAX_BLOCKS) {
		snprintf(err, errlen, "%u blocks (must be 1 to %u)", n, RDMIG_IMGS_MAX_BLOCKS);
		return -1;
	}
	if (alloc_out(4 + (size_t)n * dsize, "trailer", out, outlen, err, errlen))
		return -1;
	p = sf_put_be(*out, RDMIG_IMGS_TRAILER_MAGIC, 4);
	for (uint32_t i = 0; i < n; i++, p += dsize)
		memcpy(p, blocks[i].digest, dsize);
	return 0;
}

void rdmig_imgs_block_digest(uint32_t alg, const uint8_t *span_digests, uint32_t n,
			     uint8_t out[RDMIG_DIGEST_MAX])
{
	static const uint8_t nothing;

	rdmig_digest_compute(alg, n ? span_digests : &nothing, (size_t)n * rdmig_digest_size(alg),
			     out);
}

/* ------------------------------------------------------------- parser -- */

static void expect(struct rdmig_imgs_parser *p, int state, size_t need)
{
	p->state = state;
	p->need = need;
	p->have = 0;
}

__attribute__((format(printf, 2, 3)))
static int fail(struct rdmig_imgs_parser *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int st = p->state;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* offset of the field that failed: where its first byte was */
	snprintf(p->err, sizeof(p->err), "stream offset %llu (%s): %s",
		 (unsigned long long)(p->offset - p->have), field_names[st], msg);
	p->state = S_FAILED;
	return -1;
}

void rdmig_imgs_parser_init(struct rdmig_imgs_parser *p, uint64_t max_total)
{
	memset(p, 0, sizeof(*p));
	p->limit = max_total;
	expect(p, S_MAGIC, 4);
}

void rdmig_imgs_parser_free(struct rdmig_imgs_parser *p)
{
	free(p->blocks);
	free(p->span_digests);
	p->blocks = NULL;
	p->span_digests = NULL;
}

static int magic_fail(struct rdmig_imgs_parser *p, uint64_t v, uint32_t want)
{
	return fail(p, "0x%08llx, expected 0x%08x (\"%c%c%c%c\")", (unsigned long long)v, want,
		    (char)(want >> 24), (char)(want >> 16), (char)(want >> 8), (char)want);
}

/* A block's length is complete: bound the running total. */
static int add_length(struct rdmig_imgs_parser *p, uint64_t len)
{
	struct rdmig_imgs_block *b = &p->blocks[p->index];

	/* total <= limit always holds, so limit - total cannot wrap */
	if (len > p->limit - p->total && (p->over_limit = 1))
		return fail(p, "block %u '%s' has length %llu: the total would exceed the limit "
			    "of %llu bytes (%llu already)", p->index, b->name,
			    (unsigned long long)len, (unsigned long long)p->limit,
			    (unsigned long long)p->total);
	b->length = len;
	p->total += len;
	return 0;
}

static int version_fail(struct rdmig_imgs_parser *p, uint64_t v)
{
	if (v == 1)
		return fail(p,
			    "version 1 comes from an older rdmig, and this rdmig reads version "
			    "%u only (version 1 checked one SHA-256 per block after the transfer, "
			    "version 2 checks span digests as the data lands): run the same rdmig "
			    "release on both ends",
			    RDMIG_IMGS_VERSION);
	return fail(p, "version %llu is not supported (this rdmig reads version %u)",
		    (unsigned long long)v, RDMIG_IMGS_VERSION);
}

static int params_done(struct rdmig_imgs_parser *p)
{
	char why[160];

	p->prm = (struct rdmig_imgs_params){p->acc[0], p->acc[1], p->acc[2]};
	if (check_params(&p->prm, why, sizeof(why)))
		return fail(p, "%s", why);
	if (p->acc[3])
		return fail(p, "reserved byte is 0x%02x (must be 0)", p->acc[3]);
	p->dsize = rdmig_digest_size(p->prm.digest);
	p->chunk_size = 1u << p->prm.chunk_shift;
	expect(p, S_NAMELEN, 2);
	return 0;
}

/* The last block's length is in: number the spans, make room for their
 * digests, and look for the first record (or the trailer). */
static int header_done(struct rdmig_imgs_parser *p)
{
	for (uint32_t i = 0; i < p->count; i++) {
		p->blocks[i].first_span = p->spans_total;
		p->blocks[i].nspans =
		    (uint32_t)rdmig_imgs_spans(p->blocks[i].length, p->prm.span_shift);
		p->spans_total += p->blocks[i].nspans;
	}
	if (p->dsize && !(p->span_digests = calloc(p->spans_total ? p->spans_total : 1, p->dsize)))
		return fail(p, "out of memory for %llu span digests",
			    (unsigned long long)p->spans_total);
	p->index = 0;
	expect(p, S_RMAGIC, 4);
	return RDMIG_IMGS_EV_HEADER;
}

/* The block whose span is due next (the first with spans still unknown). */
static uint32_t due_block(const struct rdmig_imgs_parser *p)
{
	uint32_t b = p->index;

	while (b < p->count && p->spans_known >= p->blocks[b].first_span + p->blocks[b].nspans)
		b++;
	return b;
}

static int rmagic_done(struct rdmig_imgs_parser *p, uint64_t v)
{
	uint32_t b = due_block(p);

	if (v == RDMIG_IMGS_DIGEST_MAGIC) {
		if (b >= p->count)
			return fail(p, "a digest record after the records of every span");
		expect(p, S_RBLOCK, 4);
		return 0;
	}
	if (v != RDMIG_IMGS_TRAILER_MAGIC)
		return fail(p, "0x%08llx, expected 0x%08x (\"RMID\") or 0x%08x (\"RMIT\")",
			    (unsigned long long)v, RDMIG_IMGS_DIGEST_MAGIC,
			    RDMIG_IMGS_TRAILER_MAGIC);
	if (b < p->count)
		return fail(p, "the trailer came before the record of span %llu of block %u '%s'",
			    (unsigned long long)(p->spans_known - p->blocks[b].first_span), b,
			    p->blocks[b].name);
	p->index = 0;
	if (!p->dsize) {
		expect(p, S_DONE, 0);
		return RDMIG_IMGS_EV_TRAILER;
	}
	expect(p, S_TDIGEST, p->dsize);
	return 0;
}

/* A record's block, first span and count must go on exactly where the
 * previous record stopped, within one block. */
static int record_field_done(struct rdmig_imgs_parser *p, uint64_t v)
{
	uint32_t b = due_block(p);
	const struct rdmig_imgs_block *due = &p->blocks[b];
	uint64_t at = p->spans_known - due->first_span;

	switch (p->state) {
	case S_RBLOCK:
		if (v != b)
			return fail(p, "block %llu, but the next span due is in block %u '%s'",
				    (unsigned long long)v, b, due->name);
		expect(p, S_RFIRST, 4);
		return 0;
	case S_RFIRST:
		if (v != at)
			return fail(p, "span %llu of block %u, but span %llu is due",
				    (unsigned long long)v, b, (unsigned long long)at);
		expect(p, S_RCOUNT, 4);
		return 0;
	}
	if (v < 1 || v > RDMIG_IMGS_MAX_RECORD_SPANS || v > due->nspans - at)
		return fail(p, "%llu spans (1 to %u, and block %u has %llu left from span %llu)",
			    (unsigned long long)v, RDMIG_IMGS_MAX_RECORD_SPANS, b,
			    (unsigned long long)(due->nspans - at), (unsigned long long)at);
	p->rec_left = (uint32_t)v;
	if (!p->dsize) { /* the digest is off: the record only says they landed */
		p->spans_known += v;
		p->index = due_block(p);
		expect(p, S_RMAGIC, 4);
		return RDMIG_IMGS_EV_SPANS;
	}
	expect(p, S_RDIGEST, p->dsize);
	return 0;
}

static int span_digest_done(struct rdmig_imgs_parser *p)
{
	memcpy(p->span_digests + p->spans_known * p->dsize, p->acc, p->dsize);
	p->spans_known++;
	p->index = due_block(p);
	if (--p->rec_left)
		expect(p, S_RDIGEST, p->dsize);
	else
		expect(p, S_RMAGIC, 4);
	return RDMIG_IMGS_EV_SPANS;
}

static int block_digest_done(struct rdmig_imgs_parser *p)
{
	memcpy(p->blocks[p->index].digest, p->acc, p->dsize);
	if (++p->index < p->count) {
		expect(p, S_TDIGEST, p->dsize);
		return 0;
	}
	expect(p, S_DONE, 0);
	return RDMIG_IMGS_EV_TRAILER;
}

/* The current field (p->need bytes in p->acc) is complete: check it and
 * move on.  Returns RDMIG_IMGS_EV_* bits, or -1. */
static int field_done(struct rdmig_imgs_parser *p)
{
	uint64_t v = sf_get_be(p->acc, p->need < 8 ? p->need : 8);
	struct rdmig_imgs_block *b = p->blocks ? &p->blocks[p->index] : NULL;

	switch (p->state) {
	case S_MAGIC:
		if (v != RDMIG_IMGS_HEADER_MAGIC)
			return magic_fail(p, v, RDMIG_IMGS_HEADER_MAGIC);
		expect(p, S_VERSION, 4);
		return 0;
	case S_VERSION:
		if (v != RDMIG_IMGS_VERSION)
			return version_fail(p, v);
		expect(p, S_COUNT, 4);
		return 0;
	case S_COUNT:
		if (v < 1 || v > RDMIG_IMGS_MAX_BLOCKS)
			return fail(p, "%llu blocks (must be 1 to %u)", (unsigned long long)v,
				    RDMIG_IMGS_MAX_BLOCKS);
		if (!(p->blocks = calloc(v, sizeof(*p->blocks))))
			return fail(p, "out of memory for %llu block descriptions",
				    (unsigned long long)v);
		p->count = (uint32_t)v;
		expect(p, S_PARAMS, 4);
		return 0;
	case S_PARAMS:
		return params_done(p);
	case S_NAMELEN:
		if (v < 1 || v > RDMIG_IMGS_MAX_NAME)
			return fail(p, "block %u: name length %llu (must be 1 to %u)", p->index,
				    (unsigned long long)v, RDMIG_IMGS_MAX_NAME);
		expect(p, S_NAME, (size_t)v);
		return 0;
	case S_NAME: {
		char why[128];
		long dup;
		if (rdmig_imgs_check_name((const char *)p->acc, p->need, p->index, why,
					  sizeof(why)))
			return fail(p, "%s", why);
		memcpy(b->name, p->acc, p->need);
		b->name[p->need] = '\0';
		if ((dup = find_name(p->blocks, p->index, b->name)) >= 0)
			return fail(p, "blocks %ld and %u are both named '%s'", dup, p->index, b->name);
		expect(p, S_LENGTH, 8);
		return 0;
	}
	case S_LENGTH:
		if (add_length(p, v))
			return -1;
		if (++p->index < p->count) {
			expect(p, S_NAMELEN, 2);
			return 0;
		}
		return header_done(p);
	case S_RMAGIC:
		return rmagic_done(p, v);
	case S_RBLOCK:
	case S_RFIRST:
	case S_RCOUNT:
		return record_field_done(p, v);
	case S_RDIGEST:
		return span_digest_done(p);
	case S_TDIGEST:
		return block_digest_done(p);
	}
	return fail(p, "internal: state %d", p->state);
}

int rdmig_imgs_feed(struct rdmig_imgs_parser *p, const void *data, size_t len)
{
	const uint8_t *in = data;
	int events = 0;

	if (p->state == S_FAILED)
		return -1;
	while (len > 0) {
		int ev;

		if (p->state == S_DONE) {
			snprintf(p->err, sizeof(p->err), "stream offset %llu: %zu byte%s of trailing "
				 "garbage after the trailer", (unsigned long long)p->offset, len,
				 len == 1 ? "" : "s");
			p->state = S_FAILED;
			return -1;
		}
		if (!sf_take(p->acc, p->need, &p->have, &in, &len, &p->offset))
			break;
		if ((ev = field_done(p)) < 0)
			return -1;
		events |= ev;
		p->seen |= ev;
	}
	return events;
}

int rdmig_imgs_finish(struct rdmig_imgs_parser *p)
{
	char where[48] = "";

	if (p->state == S_DONE)
		return 0;
	if (p->state == S_FAILED)
		return -1;
	if ((p->state >= S_NAMELEN && p->state <= S_LENGTH) || p->state == S_TDIGEST)
		snprintf(where, sizeof(where), " of block %u of %u", p->index, p->count);
	snprintf(p->err, sizeof(p->err), "the stream ended after %llu bytes, inside the %s: "
		 "%zu of the %zu bytes of the %s%s", (unsigned long long)p->offset,
		 p->state < S_RMAGIC ? "header" : p->state < S_TDIGEST ? "digest records" : "trailer",
		 p->have, p->need, field_names[p->state], where);
	p->state = S_FAILED;
	return -1;
}

int rdmig_imgs_header_done(const struct rdmig_imgs_parser *p)
{
	return (p->seen & RDMIG_IMGS_EV_HEADER) != 0;
}

int rdmig_imgs_trailer_done(const struct rdmig_imgs_parser *p)
{
	return (p->seen & RDMIG_IMGS_EV_TRAILER) != 0;
}

const char *rdmig_imgs_errmsg(const struct rdmig_imgs_parser *p)
{
	return p->err;
}
