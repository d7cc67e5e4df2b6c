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

struct rdmig_images_dest;

struct chunk_release {
	bool on;                   /* set up: the counters and the lock exist */
	unsigned shift;            /* chunks of 2^shift bytes (the source's) */
	_Atomic uint64_t **done;   /* per block, per chunk: bytes in the image */
	pthread_mutex_t lock;      /* the queue: filled by hashing threads */
	uint64_t *queue;           /* block << 32 | chunk, each chunk once */
	size_t queued, cap;
	size_t chunks_seen;        /* of the queue, released or kept */
	uint64_t chunks, bytes;    /* given back so far */
};

/* After the blocks were allocated: the counters, empty. */
int rdmig__idest_release_init(struct rdmig_images_dest *d);
/* On a hashing thread: [offset, offset + len) of block is in its image;
 * a chunk all of whose bytes are goes on the queue. */
void rdmig__idest_span_done(struct rdmig_images_dest *d, uint32_t block, uint64_t offset,
			    uint64_t len);
/* On the caller's thread, between the engine's steps: the queued chunks
 * the engine deregisters lose their pages (MADV_DONTNEED). */
void rdmig__idest_release_queued(struct rdmig_images_dest *d);
void rdmig__idest_release_free(struct rdmig_images_dest *d);

#endif
