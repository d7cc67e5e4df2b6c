/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_dest_release.h - an image-set destination gives back the memory
 * of each chunk whose spans are all in their images (images_dest_release.c),
 * so that with dynamic registration the receiver holds about the chunks in
 * flight, not the whole image set.  Internal.
 */
#ifndef RDMIG_IMAGES_DEST_RELEASE_H
#define RDMIG_IMAGES_DEST_RELEASE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct rdmig_dest;
struct rdmig_imgs_block;

/* The chunks of an image set's blocks and which were given back.  The
 * hashing threads publish a chunk once all its bytes are in its image;
 * the caller's thread, which alone drives the engine, takes what was
 * published without a lock. */
struct chunk_release {
	bool on;                   /* set up: the counters and the lock exist */
	unsigned shift;            /* chunks of 2^shift bytes (the source's) */
	uint32_t nblocks;
	const struct rdmig_imgs_block *blocks; /* the header's (lengths) */
	uint8_t *const *mem;       /* per block, NULL for an empty one */
	_Atomic uint64_t **done;   /* per block, per chunk: bytes in the image */
	pthread_mutex_t lock;      /* the threads' appends to the queue */
	uint64_t *queue;           /* block << 32 | chunk, each chunk once */
	size_t queued, cap;        /* appended (under the lock), room */
	_Atomic size_t published;  /* entries below it are written */
	size_t chunks_seen;        /* of the queue, released or kept */
	uint64_t chunks, bytes;    /* given back so far */
};
/* After the blocks were allocated: the counters, empty.  blocks[0..n) and
 * mem[0..n) must outlive r. */
int rdmig__release_init(struct chunk_release *r, const struct rdmig_imgs_block *blocks,
			uint32_t n, unsigned shift, uint8_t *const *mem);
/* On a hashing thread: [offset, offset + len) of block is in its image;
 * a chunk all of whose bytes are goes on the queue. */
void rdmig__release_span_done(struct chunk_release *r, uint32_t block, uint64_t offset,
			      uint64_t len);
/* On the caller's thread, between the engine's steps: the queued chunks
 * the engine deregisters lose their pages (MADV_DONTNEED). */
void rdmig__release_queued(struct chunk_release *r, struct rdmig_dest *engine);
void rdmig__release_free(struct chunk_release *r);
#endif
