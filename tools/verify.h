/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * verify.h - span digests of `rdmig send` and their checks in `rdmig recv`
 * (format: imgstream.h), both on a hash_pool.
 *
 * Send: every span of every block is hashed as soon as the migration
 * starts, ahead of the writes; once a span has been handed to the library
 * and hashed, a record with its digest joins the stream (the library posts
 * the span's writes before it).  At the end each block's digest is the
 * digest of its span digests.
 *
 * Receive: a span is hashed as soon as its record has arrived (its data
 * has then landed) and compared at the end, when the last spans are done.
 *
 * With the digest off the records carry no digests and still go out as
 * the spans are handed over: the receiver writes each span to its image
 * as it lands all the same.
 */
#ifndef RDMIG_VERIFY_H
#define RDMIG_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hash_pool.h"
#include "imgstream.h"

/* Writes encoded stream bytes; 0 or non-zero (the caller's error). */
typedef int (*verify_write_fn)(void *ctx, const void *buf, size_t len);
/* Called every 10 ms while the end waits for the threads; non-zero stops. */
typedef int (*verify_tick_fn)(void *ctx);

struct verify {
	enum digest_alg alg;
	size_t dsize;
	uint64_t spans;           /* jobs: every span of every block */
	struct hash_job *jobs;
	uint8_t *digests;         /* spans * DIGEST_MAX (one slot per job) */
	struct hash_pool *pool;
	uint64_t released;        /* recv: jobs handed to the pool */
	uint64_t sent;            /* send: spans whose record went out */
	double hash_seconds;      /* busy time of the threads */
	double exposed_seconds;   /* how long the end waited for them */
	unsigned threads;
};

/* Start hashing the spans of blocks (whose first_span/nspans are set) in
 * mems[i] (NULL for an empty block).  Send: all spans at once; recv: none
 * until verify_release.  With after (may be NULL), a pool runs even for
 * DIGEST_OFF, to call it for every span.  0, or -1 with a message. */
int verify_start(struct verify *v, enum digest_alg alg, unsigned threads,
		 const struct imgs_block *blocks, uint32_t n, uint32_t span_shift,
		 const uint8_t *const *mems, bool release_all, hash_after_fn after, void *ctx,
		 char *err, size_t errlen);

/* send: records for every span that is both hashed and below `handed`
 * (the spans handed to the library so far, in stream numbering). */
int verify_send_ready(struct verify *v, const struct imgs_block *blocks, uint32_t n,
		      uint64_t handed, verify_write_fn write, void *ctx, char *err, size_t errlen);
/* send: wait for every span (calling tick), send the last records and set
 * every block's digest. */
int verify_send_finish(struct verify *v, struct imgs_block *blocks, uint32_t n,
		       verify_write_fn write, verify_tick_fn tick, void *ctx, char *err,
		       size_t errlen);

/* recv: spans [0, known) have their records: hash them. */
void verify_release(struct verify *v, uint64_t known);

/* recv: the result of one block. */
struct verify_block {
	bool ok;
	int64_t bad_span;   /* the first span that differs, or -1 */
	uint8_t digest[DIGEST_MAX]; /* the block's digest as received */
};

/* recv: release every span (all data has landed), wait for them (calling
 * tick), then compare with what the parser received.  0 (out[i] filled),
 * or -1 when tick stopped it.  Under DIGEST_OFF no block is ok. */
int verify_recv_finish(struct verify *v, const struct imgs_parser *ps, struct verify_block *out,
		       verify_tick_fn tick, void *ctx);

/* Stop the threads after their current span (a failed or cancelled run),
 * keeping the figures. */
void verify_stop(struct verify *v);
/* Stop the threads and free everything. */
void verify_free(struct verify *v);

#endif
