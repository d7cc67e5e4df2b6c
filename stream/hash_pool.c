/* SPDX-License-Identifier: BSD-2-Clause */
/* hash_pool.c - span digests on a pool of threads (rdmig/imgstream.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdmig/imgstream.h>
#include "stream_clock.h"

#define MAX_THREADS RDMIG_HASH_POOL_MAX_THREADS

struct rdmig_hash_pool {
	enum rdmig_digest_alg alg;
	struct rdmig_hash_job *jobs;
	size_t njobs;
	pthread_mutex_t lock;
	pthread_cond_t work;   /* released grew, or stop */
	pthread_cond_t done;   /* a job finished */
	size_t released;       /* jobs [0, released) may run */
	size_t next;           /* the next job to hand out */
	size_t done_prefix;    /* jobs [0, done_prefix) are done */
	bool *finished;        /* per job */
	bool stop, draining;
	double busy;           /* seconds hashed, all threads */
	rdmig_hash_after_fn after;
	void *after_ctx;
	unsigned nthreads;
	pthread_t tids[MAX_THREADS];
	struct pool_thread {
		struct rdmig_hash_pool *pool;
		uint8_t *copy;  /* private copy of the span (rdmig_hash_pool_set_copy) */
	} thr[MAX_THREADS];
	size_t copy_len;       /* bytes of each copy buffer; 0: hash in place */
};

unsigned rdmig_hash_pool_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

/* The next job to run, or SIZE_MAX when the thread should exit. */
static size_t take_job(struct rdmig_hash_pool *p)
{
	size_t i = SIZE_MAX;

	pthread_mutex_lock(&p->lock);
	while (!p->stop && !p->draining && p->next >= p->released)
		pthread_cond_wait(&p->work, &p->lock);
	if (!p->stop && p->next < p->released)
		i = p->next++;
	pthread_mutex_unlock(&p->lock);
	return i;
}

static void job_done(struct rdmig_hash_pool *p, size_t i, double seconds)
{
	pthread_mutex_lock(&p->lock);
	p->finished[i] = true;
	while (p->done_prefix < p->njobs && p->finished[p->done_prefix])
		p->done_prefix++;
	p->busy += seconds;
	pthread_cond_broadcast(&p->done);
	pthread_mutex_unlock(&p->lock);
}

/* With a private copy, the digest and after() see the same bytes, taken
 * once from j->p: whatever writes j->p meanwhile (a peer's RDMA WRITE)
 * changes neither. */
static void run_job(struct pool_thread *t, struct rdmig_hash_job *j)
{
	struct rdmig_hash_pool *p = t->pool;
	struct rdmig_hash_job seen = *j;

	if (t->copy && j->len <= p->copy_len) {
		memcpy(t->copy, j->p, (size_t)j->len);
		seen.p = t->copy;
	}
	rdmig_digest_compute(p->alg, seen.p, (size_t)seen.len, j->out);
	if (p->after)
		p->after(p->after_ctx, &seen);
}

static void *worker(void *arg)
{
	struct pool_thread *t = arg;
	struct rdmig_hash_pool *p = t->pool;
	size_t i;

	while ((i = take_job(p)) != SIZE_MAX) {
		double t0 = rdmig__stream_seconds();

		run_job(t, &p->jobs[i]);
		job_done(p, i, rdmig__stream_seconds() - t0);
	}
	return NULL;
}

static void pool_free(struct rdmig_hash_pool *p)
{
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	for (unsigned i = 0; i < MAX_THREADS; i++)
		free(p->thr[i].copy);
	free(p->finished);
	free(p);
}

/* Start the threads with SIGINT and SIGTERM blocked (they inherit the
 * mask); 0 when at least one runs, else pthread_create's error. */
static int start_threads(struct rdmig_hash_pool *p, unsigned want)
{
	sigset_t block, old;
	int ret = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (unsigned i = 0; i < MAX_THREADS; i++)
		p->thr[i].pool = p;
	while (p->nthreads < want &&
	       !(ret = pthread_create(&p->tids[p->nthreads], NULL, worker, &p->thr[p->nthreads])))
		p->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return p->nthreads ? 0 : ret;
}

int rdmig_hash_pool_create(enum rdmig_digest_alg alg, unsigned threads, struct rdmig_hash_job *jobs,
			  size_t njobs, struct rdmig_hash_pool **out, char *err, size_t errlen)
{
	struct rdmig_hash_pool *p = calloc(1, sizeof(*p));
	int ret;

	*out = NULL;
	if (!p || !(p->finished = calloc(njobs ? njobs : 1, sizeof(bool)))) {
		free(p);
		snprintf(err, errlen, "out of memory for a pool of %zu jobs", njobs);
		return -1;
	}
	p->alg = alg;
	p->jobs = jobs;
	p->njobs = njobs;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	if (!threads)
		threads = rdmig_hash_pool_default_threads();
	ret = start_threads(p, threads > MAX_THREADS ? MAX_THREADS : threads);
	if (ret) {
		snprintf(err, errlen, "cannot start the hashing threads: %s", strerror(ret));
		pool_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

unsigned rdmig_hash_pool_threads(const struct rdmig_hash_pool *p)
{
	return p ? p->nthreads : 0;
}

void rdmig_hash_pool_set_after(struct rdmig_hash_pool *p, rdmig_hash_after_fn after, void *ctx)
{
	pthread_mutex_lock(&p->lock);
	p->after = after;
	p->after_ctx = ctx;
	pthread_mutex_unlock(&p->lock);
}

int rdmig_hash_pool_set_copy(struct rdmig_hash_pool *p, size_t max_len, char *err, size_t errlen)
{
	int ret = 0;

	pthread_mutex_lock(&p->lock);
	if (p->released) {
		snprintf(err, errlen, "the hash pool's private copies must be set before its first job");
		ret = -1;
	}
	for (unsigned i = 0; !ret && max_len && i < p->nthreads; i++)
		if (!p->thr[i].copy && !(p->thr[i].copy = malloc(max_len))) {
			snprintf(err, errlen, "out of memory for %u copies of %zu bytes", p->nthreads,
				 max_len);
			ret = -1;
		}
	if (!ret)
		p->copy_len = max_len;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

void rdmig_hash_pool_release(struct rdmig_hash_pool *p, size_t upto)
{
	pthread_mutex_lock(&p->lock);
	if (upto > p->njobs)
		upto = p->njobs;
	if (upto > p->released) {
		p->released = upto;
		pthread_cond_broadcast(&p->work);
	}
	pthread_mutex_unlock(&p->lock);
}

size_t rdmig_hash_pool_done(struct rdmig_hash_pool *p)
{
	size_t n;

	pthread_mutex_lock(&p->lock);
	n = p->done_prefix;
	pthread_mutex_unlock(&p->lock);
	return n;
}

bool rdmig_hash_pool_wait(struct rdmig_hash_pool *p, size_t upto, double timeout_s)
{
	struct timespec until;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)timeout_s;
	until.tv_nsec += (long)((timeout_s - (double)(time_t)timeout_s) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->lock);
	while (p->done_prefix < upto &&
	       pthread_cond_timedwait(&p->done, &p->lock, &until) != ETIMEDOUT)
		;
	ok = p->done_prefix >= upto;
	pthread_mutex_unlock(&p->lock);
	return ok;
}

double rdmig_hash_pool_destroy(struct rdmig_hash_pool *p, bool stop)
{
	double busy;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	if (stop)
		p->stop = true;
	else
		p->draining = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->tids[i], NULL);
	busy = p->busy;
	pool_free(p);
	return busy;
}
