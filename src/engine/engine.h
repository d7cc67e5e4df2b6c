/* SPDX-License-Identifier: BSD-2-Clause */
/* engine.h - what the source and the destination of a migration share. */
#ifndef RDMIG_ENGINE_H
#define RDMIG_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include "engine_io.h"
#include "log.h"
#include "opts.h"
#include <rdmig/private.h>

/* The layer rule (docs/design.md): an engine reaches its connection only
 * through engine_io.h.  conn.h has the same guard the other way round, so
 * the order of the includes does not matter. */
#ifdef RDMIG_CONN_H
#error "engine code must not include conn.h: go through engine_io.h"
#endif

/*
 * Chunks are 2^shift bytes (rdmig_opts.chunk_size: shift 20 to 30, as
 * QEMU's x-rdma-chunk-size); each engine keeps its shift.
 */
static inline unsigned engine_chunk_shift(uint64_t chunk_size)
{
	return (unsigned)__builtin_ctzll(chunk_size);
}

/* Chunks of a block of len bytes (the last may be short): the public
 * geometry (rdmig.h) with the engine's shift.  Block lengths are checked
 * to have at most 2^32 chunks (rdmig__engine_check_blocks). */
static inline uint32_t engine_chunk_count(uint64_t len, unsigned shift)
{
	return (uint32_t)rdmig_chunk_count(len, 1ull << shift);
}

/* Bytes of chunk `chunk` of a block of len bytes. */
static inline uint64_t engine_chunk_len(uint64_t len, uint32_t chunk, unsigned shift)
{
	return rdmig_chunk_len(len, chunk, 1ull << shift);
}

static inline uint64_t engine_align_chunk(uint64_t v, unsigned shift)
{
	uint64_t size = 1ull << shift;
	return (v + size - 1) & ~(size - 1);
}

/* Validate a caller's block list (count, names, memory, lengths). */
int rdmig__engine_check_blocks(const struct engine_io *io, const struct rdmig_block *blocks,
				size_t n, unsigned shift);

/* rdmig_msg_parse's codes: a received message broke the wire rules, and
 * the side that received it answers with ERROR. */
static inline bool engine_msg_violation(int code)
{
	return code == RDMIG_EMSG_SHORT || code == RDMIG_EMSG_LEN || code == RDMIG_EMSG_SIZE ||
	       code == RDMIG_EMSG_REPEAT || code == RDMIG_EMSG_REPEAT_LEN ||
	       code == RDMIG_EMSG_TYPE || code == RDMIG_EMSG_UNEXPECTED;
}

/* Record the error, tell the peer (ERROR, best effort), return code. */
int rdmig__engine_abort(const struct engine_io *io, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, keeping the message already in io->errmsg. */
int rdmig__engine_abort_keep(const struct engine_io *io, int code);

/* io->ops->reg, its time added to *seconds (the engines' register_seconds);
 * a failure's errno survives the clock, for rdmig__engine_reg_failed. */
struct engine_mr *rdmig__engine_reg_timed(const struct engine_io *io, void *addr, uint64_t len,
					  enum engine_access access, double *seconds);

/* A registration failed (errno says why): say how much and hint at
 * ulimit -l. */
int rdmig__engine_reg_failed(const struct engine_io *io, const char *what, const char *name,
			     uint64_t len);

/* Record a failure in io->errmsg, log it, return code (rdmig__fail). */
#define engine_fail(io, ...) rdmig__fail((io)->opts, (io)->errmsg, __VA_ARGS__)

/* Whether the engine must stop: the caller's opts (cancel, cancel_fd) or
 * the connection's cancel. */
static inline bool engine_cancelled(const struct engine_io *io)
{
	return wait_cancelled(io->opts) || (io->cancel && atomic_load(io->cancel));
}

/* Zero [p, p + len) without touching pages already zero (the destination's
 * COMPRESS), looking at engine_cancelled as it goes; false when cancelled. */
bool rdmig__engine_zero_range(uint8_t *p, uint64_t len, const struct engine_io *io,
			      uint64_t *written);

/* A growing list of latencies (microseconds) and their percentiles. */
struct latency_log {
	double *v;
	size_t n, cap;
};
int rdmig__latency_log_add(struct latency_log *l, double us);
void rdmig__latency_log_percentiles(const struct latency_log *l, double *p50, double *p99);
void rdmig__latency_log_free(struct latency_log *l);

#endif
