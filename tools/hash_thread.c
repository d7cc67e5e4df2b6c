/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hash_thread.c - SHA-256 of memory regions on a thread of its own (see
 * hash_thread.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "hash_thread.h"

/* hashed per step: the granularity of a stop request */
#define HASH_STEP (1u << 20)

struct hash_thread {
	pthread_t tid;
	struct hash_region *regions;
	size_t n;
	atomic_bool stop, done;
	double seconds;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *hash_all(void *arg)
{
	struct hash_thread *t = arg;
	double t0 = now_s();

	for (size_t i = 0; i < t->n; i++) {
		struct hash_region *r = &t->regions[i];
		struct sha256 h;

		sha256_init(&h);
		for (uint64_t off = 0; off < r->len; off += HASH_STEP) {
			if (atomic_load_explicit(&t->stop, memory_order_relaxed))
				goto out;
			sha256_update(&h, r->p + off,
				      (size_t)(r->len - off < HASH_STEP ? r->len - off : HASH_STEP));
		}
		sha256_final(&h, r->digest);
	}
out:
	t->seconds = now_s() - t0;
	atomic_store(&t->done, true);
	return NULL;
}

int hash_thread_start(struct hash_region *regions, size_t n, struct hash_thread **out)
{
	struct hash_thread *t = calloc(1, sizeof(*t));
	sigset_t block, old;
	int ret;

	*out = NULL;
	if (!t)
		return -1;
	t->regions = regions;
	t->n = n;
	atomic_init(&t->stop, false);
	atomic_init(&t->done, false);
	/* the new thread inherits the mask: signals stay with the caller */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	ret = pthread_create(&t->tid, NULL, hash_all, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		free(t);
		errno = ret;
		return -1;
	}
	*out = t;
	return 0;
}

bool hash_thread_done(struct hash_thread *t)
{
	return atomic_load(&t->done);
}

double hash_thread_finish(struct hash_thread *t, bool stop)
{
	double seconds;

	if (!t)
		return 0;
	if (stop)
		atomic_store(&t->stop, true);
	pthread_join(t->tid, NULL);
	seconds = t->seconds;
	free(t);
	return seconds;
}
