/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * imgstream.h - what `rdmig send` puts into the protocol's opaque byte
 * stream (QEMU_FILE messages), and an incremental parser for `rdmig recv`.
 *
 * The RAM blocks themselves travel as RDMA WRITEs; the stream only
 * describes them (header, before the writes) and carries their checksums
 * (trailer, after the last iteration).  All integers are big-endian.
 *
 *   header:   u32 magic    0x524d4948 "RMIH"
 *             u32 version  2
 *             u32 count    number of blocks, 1..4096
 *             u8  digest   the checksum: 0 off, 1 XXH3-128, 2 SHA-256 (digest.h)
 *             u8  span     log2 of the bytes one span digest covers, 20..30
 *             u8  chunk    log2 of the source's registration chunk, 20..30
 *             u8  0        reserved
 *             count times:
 *               u16 name_len   1..255
 *               name_len bytes  the block name: printable ASCII 0x20..0x7e,
 *                               unique within the stream
 *               u64 length     bytes in the block (0 allowed)
 *   then any number of digest records:
 *             u32 magic    0x524d4944 "RMID"
 *             u32 block    the block the spans belong to
 *             u32 first    the first span of the record
 *             u32 n        spans in the record, 1..IMGS_MAX_RECORD_SPANS
 *             n times:     the digest of the span (16 or 32 bytes; none when
 *                          the digest is off: the record then only says
 *                          that the spans have landed)
 *   trailer:  u32 magic    0x524d4954 "RMIT"
 *             count times:
 *               the block's digest: the digest of its span digests, one
 *               after the other (0 bytes when the digest is off)
 *
 * Span i of a block covers bytes [i << span, (i + 1) << span), the last one
 * what is left.  The records cover every span of every block exactly once,
 * in order: block by block, span by span, each record going on where the
 * previous one stopped; the trailer comes after the last span.  A record
 * is sent after the RDMA WRITEs of its spans were posted, on the same queue
 * pair, so the spans it names are in the receiver's memory when it
 * arrives: the receiver checks them while the rest is still on its way.
 *
 * Nothing may follow the trailer.  The sum of the lengths must stay at or
 * below a limit the receiver chooses (it has to allocate that much).
 *
 * Version 2 replaced version 1 (one SHA-256 per block in the trailer,
 * computed and checked only after the whole transfer); each version
 * refuses the other with a message naming both.
 *
 * A u16 name length with a 1..255 rule (rather than a u8) keeps "zero"
 * and "too long" two separate, checkable rules.  Names are restricted to
 * printable ASCII so that they can be printed and put into JSON without
 * surprises; the receiver still maps them to safe file names itself.
 *
 * The parser is fed the stream in arbitrary pieces; it never reads past
 * what it is given, checks every field as soon as it is complete, and
 * reports the first violation with the field, its value and its offset.
 */
#ifndef RDMIG_IMGSTREAM_H
#define RDMIG_IMGSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include "digest.h"

#define IMGS_HEADER_MAGIC 0x524d4948u  /* "RMIH" */
#define IMGS_TRAILER_MAGIC 0x524d4954u /* "RMIT" */
#define IMGS_DIGEST_MAGIC 0x524d4944u  /* "RMID" */
#define IMGS_VERSION 2u
#define IMGS_MIN_SHIFT 20u             /* span and chunk: 1 MiB .. */
#define IMGS_MAX_SHIFT 30u             /* .. 1 GiB */
#define IMGS_MAX_RECORD_SPANS 1024u
#define IMGS_MAX_BLOCKS 4096u
#define IMGS_MAX_NAME 255u

struct imgs_block {
	char name[IMGS_MAX_NAME + 1]; /* NUL-terminated */
	uint64_t length;
	uint8_t digest[DIGEST_MAX];   /* the block's digest (trailer) */
	uint64_t first_span;          /* its first span in the stream's numbering */
	uint32_t nspans;              /* spans of the block */
};

/* What the header says besides the blocks. */
struct imgs_params {
	uint32_t digest;       /* enum digest_alg */
	uint32_t span_shift;   /* IMGS_MIN_SHIFT..IMGS_MAX_SHIFT */
	uint32_t chunk_shift;  /* IMGS_MIN_SHIFT..IMGS_MAX_SHIFT */
};

/* Spans of a block of `length` bytes. */
uint64_t imgs_spans(uint64_t length, uint32_t span_shift);

/* Check a block name against the format's rules; 0, or -1 with a message
 * (naming the block by position `index`). */
int imgs_check_name(const char *name, size_t len, uint32_t index, char *err, size_t errlen);

/*
 * Encode the header, a digest record or the trailer into a malloc'd
 * buffer (*out, *outlen; free() it).  The header checks the parameters,
 * the names (rules above), the count and that the total length does not
 * overflow; it also sets every block's first_span and nspans.  A record
 * carries n digests of digest_size(alg) bytes each, packed.  Returns 0,
 * or -1 with a message in err.
 */
int imgs_encode_header(const struct imgs_params *prm, struct imgs_block *blocks, uint32_t n,
		       uint8_t **out, size_t *outlen, char *err, size_t errlen);
int imgs_encode_record(uint32_t alg, uint32_t block, uint32_t first, uint32_t n,
		       const uint8_t *digests, uint8_t **out, size_t *outlen, char *err,
		       size_t errlen);
int imgs_encode_trailer(uint32_t alg, const struct imgs_block *blocks, uint32_t n,
			uint8_t **out, size_t *outlen, char *err, size_t errlen);

/* The digest of a block from its span digests (n of them, packed). */
void imgs_block_digest(uint32_t alg, const uint8_t *span_digests, uint32_t n,
		       uint8_t out[DIGEST_MAX]);

/* What a call to imgs_feed completed (a bit set; both can happen at once). */
#define IMGS_EV_HEADER 0x1  /* the header is complete: blocks/count are valid */
#define IMGS_EV_TRAILER 0x2 /* the trailer is complete: digest fields are valid */
#define IMGS_EV_SPANS 0x4   /* more span digests arrived: spans_known grew */

struct imgs_parser {
	/* results, valid once the matching event was reported */
	struct imgs_block *blocks; /* count entries */
	uint32_t count;
	uint64_t total;            /* sum of the lengths */
	struct imgs_params prm;
	uint32_t chunk_size;       /* 1 << prm.chunk_shift, for the engine */
	uint64_t spans_total;      /* spans of all blocks */
	uint64_t spans_known;      /* spans whose digests arrived, in order */
	uint8_t *span_digests;     /* spans_total digests of digest_size() bytes */
	int over_limit;            /* it failed because the total passed the limit */
	/* internal */
	uint64_t limit;
	uint64_t offset;           /* stream bytes consumed */
	int state;
	int seen;                  /* IMGS_EV_* reported so far */
	uint32_t index;            /* block being parsed */
	uint32_t rec_left;         /* digests still due in the current record */
	size_t dsize;              /* digest_size(prm.digest) */
	size_t need, have;         /* bytes of the current field */
	uint8_t acc[IMGS_MAX_NAME + 1];
	char err[320];
};

/* Bytes of the spans whose records arrived (spans_known): the source
 * sends a span's record after its RDMA writes, so this much has landed. */
uint64_t imgs_landed_bytes(const struct imgs_parser *p);

/* Start a parser; the total length of all blocks must be <= max_total. */
void imgs_parser_init(struct imgs_parser *p, uint64_t max_total);
/*
 * Consume len bytes.  Returns a set of IMGS_EV_* completed by these bytes
 * (0 when more are needed), or -1 on a violation (message in p->err; the
 * parser then stays failed).
 */
int imgs_feed(struct imgs_parser *p, const void *data, size_t len);
/* The stream has ended: 0 if the trailer was complete, else -1 with a
 * message saying where the stream stopped. */
int imgs_finish(struct imgs_parser *p);
/* True once the header / the trailer has been parsed. */
int imgs_header_done(const struct imgs_parser *p);
int imgs_trailer_done(const struct imgs_parser *p);
const char *imgs_errmsg(const struct imgs_parser *p);
void imgs_parser_free(struct imgs_parser *p);

#endif
