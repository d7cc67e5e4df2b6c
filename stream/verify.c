/* SPDX-License-Identifier: BSD-2-Clause */
/* verify.c - span digests, sent and checked while data moves (rdmig/imgstream.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdmig/imgstream.h>
#include "stream_clock.h"

static void set_jobs(struct rdmig_verify *v, const struct rdmig_imgs_block *blocks, uint32_t n,
		     uint32_t span_shift, const uint8_t *const *mems)
{
	for (uint32_t b = 0; b < n; b++) {
		for (uint32_t j = 0; j < blocks[b].nspans; j++) {
			uint64_t off = (uint64_t)j << span_shift;
			uint64_t left = blocks[b].length - off;
			uint64_t k = blocks[b].first_span + j;
			v->jobs[k] = (struct rdmig_hash_job){
			    .p = mems[b] + off,
			    .len = left < (1ull << span_shift) ? left : 1ull << span_shift,
			    .out = v->digests + k * RDMIG_DIGEST_MAX,
			    .block = b,
			    .offset = off,
			};
		}
	}
}

int rdmig_verify_start(struct rdmig_verify *v, enum rdmig_digest_alg alg, unsigned threads,
		       const struct rdmig_imgs_block *blocks, uint32_t n, uint32_t span_shift,
		       const uint8_t *const *mems, bool release_all, rdmig_hash_after_fn after,
		       void *ctx, char *err, size_t errlen)
{
	memset(v, 0, sizeof(*v));
	v->alg = alg;
	v->dsize = rdmig_digest_size(alg);
	for (uint32_t b = 0; b < n; b++)
		v->spans += blocks[b].nspans;
	if (alg == RDMIG_DIGEST_OFF && !after)
		return 0; /* nothing to hash or write: records only mark spans */
	v->jobs = calloc(v->spans ? v->spans : 1, sizeof(*v->jobs));
	v->digests = calloc(v->spans ? v->spans : 1, RDMIG_DIGEST_MAX);
	if (!v->jobs || !v->digests) {
		snprintf(err, errlen, "out of memory for %llu span digests",
			 (unsigned long long)v->spans);
		return -1;
	}
	set_jobs(v, blocks, n, span_shift, mems);
	if (rdmig_hash_pool_create(alg, threads, v->jobs, v->spans, &v->pool, err, errlen))
		return -1;
	v->threads = rdmig_hash_pool_threads(v->pool);
	if (after)
		rdmig_hash_pool_set_after(v->pool, after, ctx);
	if (release_all)
		rdmig_verify_release(v, v->spans);
	return 0;
}

void rdmig_verify_release(struct rdmig_verify *v, uint64_t known)
{
	if (v->pool && known > v->released) {
		v->released = known;
		rdmig_hash_pool_release(v->pool, (size_t)known);
	}
}

/* The block that span k (in stream numbering) belongs to. */
static uint32_t block_of(const struct rdmig_imgs_block *blocks, uint32_t n, uint64_t k)
{
	uint32_t b = 0;

	while (b < n && k >= blocks[b].first_span + blocks[b].nspans)
		b++;
	return b;
}

/* One record: spans [first, first + count) of block b. */
static int send_record(struct rdmig_verify *v, const struct rdmig_imgs_block *blk, uint32_t b,
		       uint64_t first, uint32_t count, rdmig_verify_write_fn write, void *ctx,
		       char *err, size_t errlen)
{
	uint8_t packed[RDMIG_IMGS_MAX_RECORD_SPANS * RDMIG_DIGEST_MAX], *buf;
	size_t len;
	int ret;

	for (uint32_t i = 0; v->dsize && i < count; i++)
		memcpy(packed + i * v->dsize, v->digests + (first + i) * RDMIG_DIGEST_MAX,
		       v->dsize);
	if (rdmig_imgs_encode_record(v->alg, b, (uint32_t)(first - blk->first_span), count, packed,
				     &buf, &len, err, errlen))
		return -1;
	ret = write(ctx, buf, len);
	free(buf);
	return ret;
}

/* Records for spans [v->sent, upto): one per block, at most
 * RDMIG_IMGS_MAX_RECORD_SPANS spans each. */
static int send_records(struct rdmig_verify *v, const struct rdmig_imgs_block *blocks, uint32_t n,
			uint64_t upto, rdmig_verify_write_fn write, void *ctx, char *err,
			size_t errlen)
{
	while (v->sent < upto) {
		uint32_t b = block_of(blocks, n, v->sent);
		uint64_t end = blocks[b].first_span + blocks[b].nspans;
		uint64_t count = (upto < end ? upto : end) - v->sent;

		if (count > RDMIG_IMGS_MAX_RECORD_SPANS)
			count = RDMIG_IMGS_MAX_RECORD_SPANS;
		if (send_record(v, &blocks[b], b, v->sent, (uint32_t)count, write, ctx, err, errlen))
			return -1;
		v->sent += count;
	}
	return 0;
}

int rdmig_verify_send_ready(struct rdmig_verify *v, const struct rdmig_imgs_block *blocks,
			    uint32_t n, uint64_t handed, rdmig_verify_write_fn write, void *ctx,
			    char *err, size_t errlen)
{
	uint64_t ready = v->pool ? rdmig_hash_pool_done(v->pool) : handed;

	return send_records(v, blocks, n, ready < handed ? ready : handed, write, ctx, err, errlen);
}

/* Wait for the first v->spans jobs, calling tick every 10 ms. */
static int wait_all(struct rdmig_verify *v, rdmig_verify_tick_fn tick, void *ctx)
{
	double t0 = rdmig__stream_seconds();

	while (!rdmig_hash_pool_wait(v->pool, (size_t)v->spans, 0.01))
		if (tick(ctx))
			return -1;
	v->exposed_seconds = rdmig__stream_seconds() - t0;
	v->hash_seconds = rdmig_hash_pool_destroy(v->pool, false);
	v->pool = NULL;
	return 0;
}

/* The digest of block b from span digests kept one per RDMIG_DIGEST_MAX slot. */
static void block_digest(const struct rdmig_verify *v, const struct rdmig_imgs_block *blk,
			 uint8_t out[RDMIG_DIGEST_MAX])
{
	uint8_t *packed = malloc(blk->nspans ? (size_t)blk->nspans * v->dsize : 1);

	if (!packed) { /* cannot happen for the sizes here; never a false match */
		memset(out, 0xff, RDMIG_DIGEST_MAX);
		return;
	}
	for (uint32_t i = 0; i < blk->nspans; i++)
		memcpy(packed + i * v->dsize, v->digests + (blk->first_span + i) * RDMIG_DIGEST_MAX,
		       v->dsize);
	rdmig_imgs_block_digest(v->alg, packed, blk->nspans, out);
	free(packed);
}

int rdmig_verify_send_finish(struct rdmig_verify *v, struct rdmig_imgs_block *blocks, uint32_t n,
			     rdmig_verify_write_fn write, rdmig_verify_tick_fn tick, void *ctx,
			     char *err, size_t errlen)
{
	if ((v->pool && wait_all(v, tick, ctx)) ||
	    send_records(v, blocks, n, v->spans, write, ctx, err, errlen))
		return -1;
	for (uint32_t b = 0; v->dsize && b < n; b++)
		block_digest(v, &blocks[b], blocks[b].digest);
	return 0;
}

int rdmig_verify_recv_finish(struct rdmig_verify *v, const struct rdmig_imgs_parser *ps,
			     struct rdmig_verify_block *out, rdmig_verify_tick_fn tick, void *ctx)
{
	if (v->pool) {
		rdmig_verify_release(v, v->spans);
		if (wait_all(v, tick, ctx))
			return -1;
	}
	if (v->alg == RDMIG_DIGEST_OFF) {
		for (uint32_t b = 0; b < ps->count; b++)
			out[b] = (struct rdmig_verify_block){.ok = false, .bad_span = -1};
		return 0;
	}
	for (uint32_t b = 0; b < ps->count; b++) {
		const struct rdmig_imgs_block *blk = &ps->blocks[b];
		struct rdmig_verify_block *r = &out[b];

		r->bad_span = -1;
		for (uint32_t i = 0; i < blk->nspans && r->bad_span < 0; i++)
			if (memcmp(v->digests + (blk->first_span + i) * RDMIG_DIGEST_MAX,
				   ps->span_digests + (blk->first_span + i) * v->dsize, v->dsize))
				r->bad_span = i;
		block_digest(v, blk, r->digest);
		r->ok = r->bad_span < 0 && !memcmp(r->digest, blk->digest, v->dsize);
	}
	return 0;
}

void rdmig_verify_stop(struct rdmig_verify *v)
{
	v->hash_seconds += rdmig_hash_pool_destroy(v->pool, true);
	v->pool = NULL;
}

void rdmig_verify_free(struct rdmig_verify *v)
{
	rdmig_hash_pool_destroy(v->pool, true);
	free(v->jobs);
	free(v->digests);
	memset(v, 0, sizeof(*v));
}
