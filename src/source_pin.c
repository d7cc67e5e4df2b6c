/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source_pin.c - the source's blocks registered whole (PIN_ALL, or
 * rdmig_source_set_pin_local), in pieces of whole chunks pinned side by
 * side on threads (rdmig_source_set_register_threads).
 *
 * Pinning costs per page, and one ibv_reg_mr pins its pages one after the
 * other: n MRs on n threads pin n pieces at once.  The source's keys are
 * its own business (its writes carry them; the destination never sees
 * them), so a block may have several; a write only must not cross two,
 * which the pieces' chunk borders ensure (dynamic writes never cross a
 * chunk, merged PIN_ALL writes stop at a piece's border).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "source_int.h"

struct piece_job {
	const struct engine_io *io;
	uint8_t *addr;
	uint64_t len;
	struct engine_mr *mr;
	int err;          /* errno of a failed registration */
	pthread_t thread;
	bool on_thread;
};

static void *register_piece(void *arg)
{
	struct piece_job *j = arg;

	j->mr = j->io->ops->reg(j->io->ctx, j->addr, j->len, ENGINE_ACCESS_LOCAL_READ);
	j->err = j->mr ? 0 : errno;
	return NULL;
}

/* Jobs 1.. on threads of their own (signals blocked: they stay with the
 * caller's threads), job 0 here; a thread that cannot start runs here too.
 * Returns how many threads ran them, the caller's included. */
static uint32_t run_jobs(struct piece_job *jobs, uint32_t n)
{
	uint32_t threads = 1;
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (uint32_t i = 1; i < n; i++)
		jobs[i].on_thread = !pthread_create(&jobs[i].thread, NULL, register_piece, &jobs[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (uint32_t i = 0; i < n; i++)
		if (!jobs[i].on_thread)
			register_piece(&jobs[i]);
	for (uint32_t i = 1; i < n; i++)
		if (jobs[i].on_thread) {
			pthread_join(jobs[i].thread, NULL);
			threads++;
		}
	return threads;
}

/* Register block b in pieces; -1 with errno (the first failure's) when a
 * piece failed, after releasing the others. */
static int register_block(struct rdmig_source *s, struct src_block *b)
{
	uint32_t n = s->register_threads < b->nchunks ? s->register_threads : b->nchunks;
	uint32_t per = (b->nchunks + n - 1) / n; /* chunks per piece */
	struct piece_job *jobs;
	uint32_t threads;
	int err = 0;

	n = (b->nchunks + per - 1) / per;
	jobs = calloc(n, sizeof(*jobs));
	b->piece_mr = calloc(n, sizeof(*b->piece_mr));
	if (!jobs || !b->piece_mr) {
		free(jobs);
		free(b->piece_mr);
		b->piece_mr = NULL;
		errno = ENOMEM;
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t start = ((uint64_t)i * per) << s->shift;
		uint64_t end = ((uint64_t)(i + 1) * per) << s->shift;
		jobs[i] = (struct piece_job){&s->io, b->host + start,
					     (end < b->length ? end : b->length) - start};
	}
	threads = run_jobs(jobs, n);
	for (uint32_t i = 0; i < n; i++) {
		b->piece_mr[i] = jobs[i].mr;
		if (!jobs[i].mr && !err)
			err = jobs[i].err ? jobs[i].err : EIO;
	}
	free(jobs);
	b->npieces = n;
	b->piece_chunks = per;
	if (err) {
		rdmig__src_release_pieces(&s->io, b);
		errno = err;
		return -1;
	}
	if (threads > s->st.register_threads)
		s->st.register_threads = threads;
	return 0;
}

int rdmig__src_register_blocks_whole(struct rdmig_source *s)
{
	for (size_t i = 0; i < s->nblocks; i++) {
		struct src_block *b = &s->blocks[i];
		double t0 = rdmig_monotonic_seconds();
		int ret, err;

		if (!b->length)
			continue;
		ret = register_block(s, b);
		err = errno; /* a failure's, for the messages below */
		s->st.register_seconds += rdmig_monotonic_seconds() - t0;
		errno = err;
		if (ret && s->pin_all)
			return rdmig__engine_reg_failed(&s->io, "source block", b->name, b->length);
		if (ret) {
			rdmig__log(s->io.opts, RDMIG_LOG_INFO,
				   "cannot register source block %s whole (%llu bytes): %s; "
				   "registering it chunk by chunk", b->name,
				   (unsigned long long)b->length, strerror(errno));
			continue;
		}
		s->st.chunks_registered += b->nchunks;
	}
	return 0;
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

uint32_t rdmig__src_lkey(const struct src_block *b, uint32_t chunk)
{
	return b->piece_mr ? b->piece_mr[chunk / b->piece_chunks]->lkey : b->local_mr[chunk]->lkey;
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
