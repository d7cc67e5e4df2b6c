/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_dest_release.c - the chunks an image-set destination is done
 * with.  A span's bytes are copied out of the block before they are
 * hashed and written (images_dest.c says why), so once every span over a
 * chunk went to its image the chunk's pages hold nothing anyone reads: the
 * engine deregisters the chunk (only one registered on its own: dynamic
 * registration; PIN_ALL keeps the block whole) and its pages are dropped.
 * The source never writes a chunk twice in an image set; should it try,
 * its key is dead and the write fails on its side, never here.
 *
 * The hashing threads count bytes per chunk and queue a chunk once, the
 * caller's thread (which alone drives the engine) drains the queue.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include "dest_release.h"
#include "images_dest_release.h"
#include "rdmig/imgstream.h"

int rdmig__release_init(struct chunk_release *r, const struct rdmig_imgs_block *blocks,
			uint32_t n, unsigned shift, uint8_t *const *mem)
{
	r->shift = shift;
	r->nblocks = n;
	r->blocks = blocks;
	r->mem = mem;
	r->done = calloc(n ? n : 1, sizeof(*r->done));
	if (!r->done)
		return RDMIG_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t chunks = rdmig_chunk_count(blocks[i].length, 1ull << shift);

		r->cap += chunks;
		if (chunks && !(r->done[i] = calloc(chunks, sizeof(**r->done))))
			return RDMIG_ENOMEM;
	}
	r->queue = malloc((r->cap ? r->cap : 1) * sizeof(*r->queue));
	if (!r->queue || pthread_mutex_init(&r->lock, NULL))
		return RDMIG_ENOMEM;
	atomic_init(&r->published, 0);
	r->on = true;
	return 0;
}

/* The lock orders the threads' appends; the release store publishes the
 * entry to the caller's thread, which reads it without the lock. */
static void enqueue(struct chunk_release *r, uint32_t block, uint64_t chunk)
{
	pthread_mutex_lock(&r->lock);
	if (r->queued < r->cap) {
		r->queue[r->queued++] = (uint64_t)block << 32 | chunk;
		atomic_store_explicit(&r->published, r->queued, memory_order_release);
	}
	pthread_mutex_unlock(&r->lock);
}

void rdmig__release_span_done(struct chunk_release *r, uint32_t block, uint64_t offset,
			      uint64_t len)
{
	uint64_t length, end = offset + len;

	if (!r->on || !r->mem[block])
		return;
	length = r->blocks[block].length;
	for (uint64_t c = offset >> r->shift; c << r->shift < end; c++) {
		uint64_t cstart = c << r->shift, cend = cstart + (1ull << r->shift);
		uint64_t from = offset > cstart ? offset : cstart;
		uint64_t to = end < cend ? end : cend;
		uint64_t clen = rdmig_chunk_len(length, c, 1ull << r->shift);
		uint64_t before = atomic_fetch_add(&r->done[block][c], to - from);

		/* exactly once, however many times a span might come */
		if (before < clen && before + (to - from) >= clen)
			enqueue(r, block, c);
	}
}

void rdmig__release_queued(struct chunk_release *r, struct rdmig_dest *engine)
{
	size_t n;

	if (!r->on || !engine)
		return;
	n = atomic_load_explicit(&r->published, memory_order_acquire);
	/* entries below n are written and stay: the threads only append */
	for (size_t i = r->chunks_seen; i < n; i++) {
		uint32_t block = (uint32_t)(r->queue[i] >> 32);
		uint64_t c = r->queue[i] & 0xffffffffu, start = c << r->shift;
		uint64_t len = rdmig_chunk_len(r->blocks[block].length, c, 1ull << r->shift);

		if (rdmig__dest_release_chunk(engine, block, (uint32_t)c) == 1 &&
		    !madvise(r->mem[block] + start, (size_t)len, MADV_DONTNEED)) {
			r->chunks++;
			r->bytes += len;
		}
	}
	r->chunks_seen = n;
}

void rdmig__release_free(struct chunk_release *r)
{
	for (uint32_t i = 0; r->done && i < r->nblocks; i++)
		free(r->done[i]);
	free(r->done);
	r->done = NULL;
	free(r->queue);
	r->queue = NULL;
	if (r->on)
		pthread_mutex_destroy(&r->lock);
	r->on = false;
}
