/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_dest_blocks.c - the blocks of an image-set destination, from
 * the stream header to the commit: the memory the header asks for, the
 * images the sink creates, the hashing of each span from a private copy
 * as its record arrives (images_dest.c says why a copy), the comparison
 * of the digests and the sink's commit, and the teardown.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "engine_io.h"
#include "images_dest_int.h"
#include "log.h"

/* ---------------------------------------------------------- the header -- */

/* The source's chunk size; one the caller gave must agree with it. */
static int take_chunk_size(struct rdmig_images_dest *d)
{
	int ret;

	if (d->o.chunk_size && d->o.chunk_size != d->ps.chunk_size) {
		snprintf(d->err, sizeof(d->err), "chunk-size mismatch: a chunk size of %llu bytes "
			 "given here, but the source registers in chunks of %u bytes",
			 (unsigned long long)d->o.chunk_size, d->ps.chunk_size);
		return RDMIG_EINVAL;
	}
	if ((ret = rdmig_dest_set_chunk_size(d->engine, d->ps.chunk_size)))
		snprintf(d->err, sizeof(d->err), "%s", rdmig_dest_errmsg(d->engine));
	return ret;
}

/* What the header asks for, before anything is allocated. */
static int accept_header(struct rdmig_images_dest *d)
{
	int ret;

	d->st.blocks = d->ps.count;
	d->st.bytes_total = d->ps.total;
	if (d->sink.header && (ret = d->sink.header(d->sink.ctx, d->ps.blocks, d->ps.count,
						     &d->ps.prm, d->err, sizeof(d->err)))) {
		if (!d->err[0])
			snprintf(d->err, sizeof(d->err), "the sink refused the header");
		return sink_code(ret);
	}
	if (d->o.verify && d->ps.prm.digest == RDMIG_DIGEST_OFF) {
		snprintf(d->err, sizeof(d->err), "the source sends no digests, and this destination "
			 "verifies: refused");
		return RDMIG_EPROTO;
	}
	return take_chunk_size(d);
}

static int alloc_memory(struct rdmig_images_dest *d)
{
	static uint8_t empty_block; /* a valid address for length-0 blocks */
	uint32_t n = d->ps.count;

	d->mem = calloc(n, sizeof(*d->mem));
	d->blocks = calloc(n, sizeof(*d->blocks));
	d->res = calloc(n, sizeof(*d->res));
	if (!d->mem || !d->blocks || !d->res) {
		snprintf(d->err, sizeof(d->err), "out of memory for %u blocks", n);
		return RDMIG_ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct rdmig_imgs_block *b = &d->ps.blocks[i];

		if (b->length) {
			void *p = mmap(NULL, (size_t)b->length, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED) {
				int e = errno;

				snprintf(d->err, sizeof(d->err), "cannot allocate %llu bytes for block "
					 "'%s': %s", (unsigned long long)b->length, b->name, strerror(e));
				return -e;
			}
			d->mem[i] = p;
		}
		d->blocks[i] = (struct rdmig_block){
			.name = b->name,
			.host = d->mem[i] ? (void *)d->mem[i] : (void *)&empty_block,
			.length = b->length,
		};
	}
	return 0;
}

/* On a hashing thread, once a span is hashed: the private copy that was
 * hashed goes to the sink.  The first failure is kept for the steps. */
static void span_checked(void *ctx, const struct rdmig_hash_job *j)
{
	struct rdmig_images_dest *d = ctx;
	int none = 0, ret;

	if (atomic_load(&d->write_err))
		return;
	ret = d->sink.write(d->sink.ctx, j->block, j->offset, j->p, (size_t)j->len);
	if (ret)
		atomic_compare_exchange_strong(&d->write_err, &none, sink_code(ret));
	else
		rdmig__release_span_done(&d->rel, j->block, j->offset, j->len);
}

/* One hashing thread's copy: a span, but no more than the largest block
 * (a span never crosses a block's end). */
static uint64_t copy_len(uint32_t span_shift, const struct rdmig_imgs_block *blocks, uint32_t n)
{
	uint64_t span = 1ull << span_shift, largest = 0;

	for (uint32_t i = 0; i < n; i++)
		if (blocks[i].length > largest)
			largest = blocks[i].length;
	return span < largest ? span : largest;
}

uint64_t rdmig_images_dest_copy_bytes(const struct rdmig_images_dest_opts *o,
				      const struct rdmig_imgs_params *prm,
				      const struct rdmig_imgs_block *blocks, uint32_t n)
{
	unsigned threads;

	if (!o || !prm || !o->verify || prm->digest == RDMIG_DIGEST_OFF || (n && !blocks))
		return 0;
	threads = o->hash_threads ? o->hash_threads : rdmig_hash_pool_default_threads();
	if (threads > RDMIG_HASH_POOL_MAX_THREADS)
		threads = RDMIG_HASH_POOL_MAX_THREADS;
	return (uint64_t)threads * copy_len(prm->span_shift, blocks, n);
}

/* Hash the spans as their records arrive, each from a private copy. */
static int start_verify(struct rdmig_images_dest *d)
{
	uint32_t alg = d->o.verify ? d->ps.prm.digest : RDMIG_DIGEST_OFF;

	if (rdmig_verify_start(&d->vf, alg, d->o.hash_threads, d->ps.blocks, d->ps.count,
			       d->ps.prm.span_shift, (const uint8_t *const *)d->mem, false,
			       span_checked, d, d->err, sizeof(d->err)))
		return RDMIG_ENOMEM;
	d->st.digest = alg;
	d->st.hash_threads = d->vf.threads;
	if (d->vf.pool && rdmig_hash_pool_set_copy(d->vf.pool,
						   (size_t)copy_len(d->ps.prm.span_shift, d->ps.blocks,
								    d->ps.count),
						   d->err, sizeof(d->err)))
		return RDMIG_ENOMEM;
	return 0;
}

static int create_images(struct rdmig_images_dest *d)
{
	for (uint32_t i = 0; i < d->ps.count; i++) {
		int ret = d->sink.create(d->sink.ctx, i, &d->ps.blocks[i], d->err, sizeof(d->err));

		if (ret) {
			if (!d->err[0])
				snprintf(d->err, sizeof(d->err), "the sink cannot create image %u ('%s')",
					 i, d->ps.blocks[i].name);
			return sink_code(ret);
		}
	}
	return 0;
}

/* The header is complete: check it, allocate, create the images, give the
 * engine the blocks, start the hashing. */
int rdmig__idest_on_header(struct rdmig_images_dest *d)
{
	int ret;

	d->header_done = true;
	if ((ret = accept_header(d)) || (ret = alloc_memory(d)) || (ret = create_images(d)))
		return ret;
	if ((ret = rdmig__release_init(&d->rel, d->ps.blocks, d->ps.count, d->ps.prm.chunk_shift,
				       d->mem))) {
		snprintf(d->err, sizeof(d->err), "out of memory for the chunks' counters");
		return ret;
	}
	if ((ret = rdmig_dest_set_blocks(d->engine, d->blocks, d->ps.count))) {
		snprintf(d->err, sizeof(d->err), "%s", rdmig_dest_errmsg(d->engine));
		return ret;
	}
	if ((ret = start_verify(d)))
		return ret;
	d->st.header_seconds = phase_end(d);
	return 0;
}

/* ----------------------------------------------------------- the end -- */

int rdmig__idest_sink_write_failed(struct rdmig_images_dest *d)
{
	int e = atomic_load(&d->write_err);

	snprintf(d->err, sizeof(d->err), "the sink cannot write the images: %s",
		 rdmig_strerror(e));
	return e;
}

static int verify_tick(void *ctx)
{
	return is_cancelled(ctx);
}

/* Wait for the last digests and compare: 0, a mismatch (RDMIG_EPROTO) or a
 * cancel. */
int rdmig__idest_compare(struct rdmig_images_dest *d)
{
	if (rdmig_verify_recv_finish(&d->vf, &d->ps, d->res, verify_tick, d))
		return cancelled(d);
	d->compared = true;
	d->st.hash_seconds = d->vf.hash_seconds;
	d->st.hash_wait_seconds = phase_end(d);
	if (d->vf.alg == RDMIG_DIGEST_OFF)
		return 0; /* not verified, and not a failure: the caller allowed it */
	for (uint32_t i = 0; i < d->ps.count; i++)
		d->st.blocks_mismatched += !d->res[i].ok;
	d->st.verified = !d->st.blocks_mismatched;
	if (!d->st.verified) {
		snprintf(d->err, sizeof(d->err), "%u of %u block%s differ from what the source sent",
			 d->st.blocks_mismatched, d->ps.count, d->ps.count == 1 ? "" : "s");
		return RDMIG_EPROTO;
	}
	return 0;
}

/* Every span is in its image: the sizes, then the sink's commit. */
int rdmig__idest_commit(struct rdmig_images_dest *d)
{
	int ret;

	if (atomic_load(&d->write_err))
		return rdmig__idest_sink_write_failed(d);
	for (uint32_t i = 0; i < d->ps.count; i++)
		if ((ret = d->sink.set_size(d->sink.ctx, i, d->ps.blocks[i].length, d->err,
					    sizeof(d->err))))
			return sink_code(ret);
	if ((ret = d->sink.commit(d->sink.ctx, d->err, sizeof(d->err))))
		return sink_code(ret);
	d->committed = true;
	d->st.commit_seconds = phase_end(d);
	return 0;
}

/* The threads joined, the engine's figures kept, the memory deregistered
 * (the engine goes first) and freed. */
void rdmig__idest_teardown(struct rdmig_images_dest *d)
{
	rdmig_verify_stop(&d->vf);
	if (d->engine)
		rdmig_dest_stats(d->engine, &d->est);
	rdmig_verify_free(&d->vf);
	rdmig_dest_destroy(d->engine);
	d->engine = NULL;
	rdmig__release_free(&d->rel);
	for (uint32_t i = 0; d->mem && i < d->ps.count; i++)
		if (d->mem[i])
			munmap(d->mem[i], (size_t)d->ps.blocks[i].length);
	free(d->mem);
	d->mem = NULL;
}
