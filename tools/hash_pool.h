/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hash_pool.h - digests of memory spans on a pool of threads, so that
 * `rdmig send` hashes while it migrates and `rdmig recv` checks data while
 * the rest is still arriving.
 *
 *   struct hash_job jobs[n] = {{p0, len0, out0}, ...};   (outlive the pool)
 *   hash_pool_start(DIGEST_XXH3_128, 0, jobs, n, &pool);
 *   hash_pool_release(pool, k);     jobs [0, k) may run now (k only grows)
 *   hash_pool_done(pool);           how many jobs, from the first, are done
 *   hash_pool_wait(pool, k, 0.01);  wait up to 10 ms for the first k
 *   hash_pool_finish(pool, false);  join; the seconds the threads hashed
 *
 * Jobs run in order of their index, each on one thread.  The threads
 * block SIGINT and SIGTERM: the caller's thread takes them.
 */
#ifndef RDMIG_HASH_POOL_H
#define RDMIG_HASH_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "digest.h"

struct hash_job {
	const uint8_t *p;
	uint64_t len;
	uint8_t *out;     /* DIGEST_MAX bytes of room */
	uint32_t block;   /* where p is, for hash_after_fn: block and offset */
	uint64_t offset;
};

/* Called on the pool's thread after a job was hashed, with the data still
 * in its caches (rdmig recv writes the span to its image file there). */
typedef void (*hash_after_fn)(void *ctx, const struct hash_job *job);

struct hash_pool;

/* The threads to use when the caller says 0: RDMIG_HASH_THREADS from the
 * environment if set (a tuning knob for benchmarks), else one per online
 * CPU; 1 to 8. */
unsigned hash_pool_default_threads(void);

/* 0, or -1 with errno (no thread could be started; none runs then). */
int hash_pool_start(enum digest_alg alg, unsigned threads, struct hash_job *jobs, size_t njobs,
		    struct hash_pool **out);
unsigned hash_pool_threads(const struct hash_pool *p);
/* Run after() for every job from now on: call before the first release. */
void hash_pool_set_after(struct hash_pool *p, hash_after_fn after, void *ctx);
void hash_pool_release(struct hash_pool *p, size_t upto);
size_t hash_pool_done(struct hash_pool *p);
/* Whether the first `upto` jobs are done, waiting at most timeout_s. */
bool hash_pool_wait(struct hash_pool *p, size_t upto, double timeout_s);
/* Join the threads (after their current job when STOP, else after all the
 * released ones) and free the pool; the seconds spent hashing, summed over
 * the threads.  NULL: 0. */
double hash_pool_finish(struct hash_pool *p, bool stop);

#endif
