/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source_pin.c - the source's own memory registered: chunk by chunk
 * (dynamic registration), or its blocks whole (PIN_ALL, or
 * rdmig_source_set_pin_local) in pieces of whole chunks pinned on threads
 * (rdmig_source_set_register_threads) ahead of the writes.  The bottom of
 * the source: it calls only the engine and its seam.
 *
 * Pinning costs per page, and one ibv_reg_mr pins its pages one after the
 * other: n threads pin n pieces at once.  They start at setup, while the
 * destination answers RAM_BLOCKS_REQUEST, take the pieces in the order the
 * writes need them and go on while the first pieces are written, so that
 * the writes wait only for the piece they need, not for the whole
 * registration.  The source's keys are its own business (its writes carry
 * them; the destination never sees them), so a block may have several; a
 * write only must not cross two, which the pieces' chunk borders ensure
 * (dynamic writes never cross a chunk, merged PIN_ALL writes stop at a
 * piece's border).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "source_int.h"

/* A piece is this many bytes (whole chunks, at least one): small enough
 * that the first write waits for little, large enough that a GiB is a
 * few dozen MRs; a merged write (RDMIG_MAX_MERGE) fits in one. */
#define PIECE_BYTES (16ull << 20)

enum { PIECE_PENDING, PIECE_READY, PIECE_FAILED };

struct pin_job {
	uint32_t block, piece;
	/* PIECE_*, changed under the pinner's lock; read without it once
	 * READY (its MR was stored before), the writes' common case */
	atomic_int state;
	int err;   /* errno of a failed registration */
};

struct pinner {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a piece is done, or the work is */
	pthread_t thread[RDMIG_MAX_REGISTER_THREADS];
	unsigned nthreads;
	struct pin_job *jobs;
	size_t njobs, next;     /* the next job to take */
	bool stop;              /* the source goes: take no more */
	double seconds;         /* the threads' registration time, summed */
	uint64_t chunks;        /* in the pieces registered */
	const struct engine_io *io;
	struct rdmig_source *s;
};

static void piece_range(const struct rdmig_source *s, const struct src_block *b, uint32_t piece,
			uint64_t *start, uint64_t *len)
{
	uint64_t end = ((uint64_t)(piece + 1) * b->piece_chunks) << s->shift;

	*start = ((uint64_t)piece * b->piece_chunks) << s->shift;
	*len = (end < b->length ? end : b->length) - *start;
}

static void *pin_worker(void *arg)
{
	struct pinner *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop && p->next < p->njobs) {
		struct pin_job *j = &p->jobs[p->next++];
		struct src_block *b = &p->s->blocks[j->block];
		uint64_t start, len;
		struct engine_mr *mr;
		double t0;
		int err;

		pthread_mutex_unlock(&p->lock);
		piece_range(p->s, b, j->piece, &start, &len);
		t0 = rdmig_monotonic_seconds();
		mr = p->io->ops->reg(p->io->ctx, b->host + start, len, ENGINE_ACCESS_LOCAL_READ);
		err = mr ? 0 : errno ? errno : EIO;
		pthread_mutex_lock(&p->lock);
		p->seconds += rdmig_monotonic_seconds() - t0;
		if (mr)
			p->chunks += (len + (1ull << p->s->shift) - 1) >> p->s->shift;
		b->piece_mr[j->piece] = mr;
		j->err = err;
		atomic_store_explicit(&j->state, mr ? PIECE_READY : PIECE_FAILED,
				      memory_order_release);
		pthread_cond_broadcast(&p->changed);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Every block cut into pieces, their jobs in the order of the writes. */
static int plan_pieces(struct rdmig_source *s, struct pinner *p)
{
	uint32_t per = (uint32_t)(PIECE_BYTES >> s->shift);

	if (!per)
		per = 1;
	for (size_t i = 0; i < s->nblocks; i++) {
		struct src_block *b = &s->blocks[i];

		if (!b->length)
			continue;
		b->piece_chunks = per;
		b->npieces = (b->nchunks + per - 1) / per;
		b->first_job = p->njobs;
		b->piece_mr = calloc(b->npieces, sizeof(*b->piece_mr));
		if (!b->piece_mr)
			return engine_fail(&s->io, RDMIG_ENOMEM, "cannot allocate the pieces");
		p->njobs += b->npieces;
	}
	p->jobs = calloc(p->njobs ? p->njobs : 1, sizeof(*p->jobs));
	if (!p->jobs)
		return engine_fail(&s->io, RDMIG_ENOMEM, "cannot allocate the pieces");
	for (size_t i = 0, n = 0; i < s->nblocks; i++)
		for (uint32_t k = 0; s->blocks[i].length && k < s->blocks[i].npieces; k++)
			p->jobs[n++] = (struct pin_job){(uint32_t)i, k, PIECE_PENDING, 0};
	return 0;
}

/* The threads, every signal blocked (they stay with the caller's); when
 * none can start, the caller's thread pins everything now. */
static void start_threads(struct rdmig_source *s, struct pinner *p)
{
	unsigned want = s->register_threads ? s->register_threads : 1;
	sigset_t all, old;

	if (want > p->njobs)
		want = (unsigned)p->njobs;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (unsigned i = 0; i < want; i++)
		if (!pthread_create(&p->thread[p->nthreads], NULL, pin_worker, p))
			p->nthreads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!p->nthreads && p->njobs)
		pin_worker(p);
}

int rdmig__src_start_pinning(struct rdmig_source *s)
{
	struct pinner *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return engine_fail(&s->io, RDMIG_ENOMEM, "cannot allocate the pinner");
	p->io = &s->io;
	p->s = s;
	if (pthread_mutex_init(&p->lock, NULL)) {
		free(p);
		return engine_fail(&s->io, RDMIG_ENOMEM, "cannot create the pinner's lock");
	}
	pthread_cond_init(&p->changed, NULL);
	s->pinner = p;
	if ((ret = plan_pieces(s, p)))
		return ret;
	start_threads(s, p);
	return 0;
}

/* The piece of chunk `chunk` of b, once its registration ended: its MR, or
 * NULL with errno when it failed. */
static struct engine_mr *await_piece(struct rdmig_source *s, const struct src_block *b,
				     uint32_t chunk)
{
	struct pinner *p = s->pinner;
	struct pin_job *j = &p->jobs[b->first_job + chunk / b->piece_chunks];
	struct engine_mr *mr;
	int state, err;

	/* pinned already: no lock on the path of every write */
	if (atomic_load_explicit(&j->state, memory_order_acquire) == PIECE_READY)
		return b->piece_mr[chunk / b->piece_chunks];
	pthread_mutex_lock(&p->lock);
	while (j->state == PIECE_PENDING)
		pthread_cond_wait(&p->changed, &p->lock);
	state = j->state;
	err = j->err;
	mr = b->piece_mr[chunk / b->piece_chunks];
	pthread_mutex_unlock(&p->lock);
	if (state == PIECE_FAILED)
		errno = err;
	return state == PIECE_READY ? mr : NULL;
}

/* Whether chunk's piece failed to pin (without waiting for it). */
static bool piece_failed(const struct rdmig_source *s, const struct src_block *b, uint32_t chunk)
{
	struct pinner *p = s->pinner;
	bool failed;

	if (!b->piece_mr || !p)
		return false;
	pthread_mutex_lock(&p->lock);
	failed = p->jobs[b->first_job + chunk / b->piece_chunks].state == PIECE_FAILED;
	pthread_mutex_unlock(&p->lock);
	return failed;
}

/* Source memory is only read by the HCA: no access flags beyond local read,
 * which also lets read-only file mappings be registered. */
static struct engine_mr *register_local(struct rdmig_source *s, void *addr, uint64_t len)
{
	return rdmig__engine_reg_timed(&s->io, addr, len, ENGINE_ACCESS_LOCAL_READ,
				       &s->st.register_seconds);
}

int rdmig__src_register_local_chunk(struct rdmig_source *s, struct src_block *b, uint32_t chunk)
{
	uint64_t start = (uint64_t)chunk << s->shift;
	uint64_t len = engine_chunk_len(b->length, chunk, s->shift);

	/* a piece covers it, or will: no MR of its own (a failed one's do) */
	if (b->local_mr[chunk] || (b->piece_mr && !piece_failed(s, b, chunk)))
		return 0;
	b->local_mr[chunk] = register_local(s, b->host + start, len);
	if (!b->local_mr[chunk])
		return rdmig__engine_reg_failed(&s->io, "source chunk", b->name, len);
	s->st.chunks_registered++;
	return 0;
}

int rdmig__src_local_key(struct rdmig_source *s, struct src_block *b, uint32_t chunk,
			 uint32_t *lkey)
{
	struct engine_mr *mr;
	int ret;

	if (b->local_mr[chunk]) {
		*lkey = b->local_mr[chunk]->lkey;
		return 0;
	}
	if (b->piece_mr && (mr = await_piece(s, b, chunk))) {
		*lkey = mr->lkey;
		return 0;
	}
	if (s->pin_all || !b->piece_mr)
		return rdmig__engine_reg_failed(&s->io, "source block", b->name, b->length);
	/* pin-local is a speed-up: a piece that could not be pinned is
	 * registered chunk by chunk, as without it */
	if (!b->piece_failed_told) {
		b->piece_failed_told = true;
		rdmig__log(s->io.opts, RDMIG_LOG_INFO,
			   "cannot register a piece of source block %s ahead: %s; registering it "
			   "chunk by chunk", b->name, strerror(errno));
	}
	if ((ret = rdmig__src_register_local_chunk(s, b, chunk)))
		return ret;
	*lkey = b->local_mr[chunk]->lkey;
	return 0;
}

void rdmig__src_pin_stats(const struct rdmig_source *s, struct rdmig_engine_stats *st)
{
	struct pinner *p = s->pinner;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	st->register_seconds += p->seconds;
	st->chunks_registered += p->chunks;
	if (p->chunks) /* 0 when nothing went whole */
		st->register_threads = p->nthreads ? p->nthreads : 1;
	pthread_mutex_unlock(&p->lock);
}

void rdmig__src_stop_pinning(struct rdmig_source *s)
{
	struct pinner *p = s->pinner;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->thread[i], NULL);
	rdmig__src_pin_stats(s, &s->st);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	free(p->jobs);
	free(p);
	s->pinner = NULL;
}

void rdmig__src_release_pieces(const struct engine_io *io, struct src_block *b)
{
	for (uint32_t i = 0; b->piece_mr && i < b->npieces; i++)
		if (b->piece_mr[i])
			io->ops->dereg(io->ctx, b->piece_mr[i]);
	free(b->piece_mr);
	b->piece_mr = NULL;
	b->npieces = 0;
}

/* 0 asks for one thread per online CPU, at most 8: beyond that the pieces
 * wait on the same page-table locks more than they pin side by side. */
static unsigned auto_register_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
}

int rdmig_source_set_register_threads(struct rdmig_source *s, unsigned n)
{
	if (!s || n > RDMIG_MAX_REGISTER_THREADS)
		return s ? engine_fail(&s->io, RDMIG_EINVAL, "register threads %u: 0 to %u", n,
				       RDMIG_MAX_REGISTER_THREADS)
			 : RDMIG_EINVAL;
	if (!n)
		n = auto_register_threads();
	if (s->set_up)
		return engine_fail(&s->io, RDMIG_ESTATE,
				   "rdmig_source_set_register_threads after rdmig_source_setup");
	s->register_threads = n;
	return 0;
}
