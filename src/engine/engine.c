/* SPDX-License-Identifier: BSD-2-Clause */
/* engine.c - helpers shared by source.c and dest.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "engine.h"

/* Blocks per side: the most a RAM_BLOCKS_RESULT can describe in one message. */
#define ENGINE_MAX_BLOCKS RDMIG_MAX_REPEAT

int rdmig__engine_check_blocks(const struct engine_io *io, const struct rdmig_block *blocks,
				size_t n, unsigned shift)
{
	if (!io->ops->established(io->ctx))
		return engine_fail(io, RDMIG_ESTATE, "the connection is not established");
	if (n > ENGINE_MAX_BLOCKS || (n && !blocks))
		return engine_fail(io, RDMIG_EINVAL,
				   "%zu RAM blocks (at most %u)", n, ENGINE_MAX_BLOCKS);
	for (size_t i = 0; i < n; i++) {
		const struct rdmig_block *b = &blocks[i];
		if (b->length && !b->host)
			return engine_fail(io, RDMIG_EINVAL,
					   "block %zu (%s) has %llu bytes and no memory", i,
					   b->name ? b->name : "?", (unsigned long long)b->length);
		/* a chunk number must fit the 32 bits of our bookkeeping */
		if (b->length > ((uint64_t)UINT32_MAX << shift))
			return engine_fail(io, RDMIG_EINVAL,
					   "block %zu is too large (%llu bytes)", i,
					   (unsigned long long)b->length);
	}
	return 0;
}

int rdmig__engine_abort_keep(const struct engine_io *io, int code)
{
	io->ops->send_error(io->ctx); /* keeps io->errmsg */
	return code;
}

int rdmig__engine_abort(const struct engine_io *io, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(io->errmsg, RDMIG_ERRMSG_SIZE, fmt, ap);
	va_end(ap);
	rdmig__log(io->opts, RDMIG_LOG_ERROR, "%s", io->errmsg);
	return rdmig__engine_abort_keep(io, code);
}

struct engine_mr *rdmig__engine_reg_timed(const struct engine_io *io, void *addr, uint64_t len,
					  enum engine_access access, double *seconds)
{
	double t0 = rdmig_monotonic_seconds();
	struct engine_mr *mr = io->ops->reg(io->ctx, addr, len, access);
	int err = errno;

	*seconds += rdmig_monotonic_seconds() - t0;
	errno = err;
	return mr;
}

int rdmig__engine_reg_failed(const struct engine_io *io, const char *what, const char *name,
			     uint64_t len)
{
	int err = errno;
	return engine_fail(io, rdmig__syserr(err),
			   "cannot register %s %s (%llu bytes): %s%s", what, name,
			   (unsigned long long)len, strerror(err),
			   err == ENOMEM || err == EPERM || err == EFAULT
				   ? " (is the locked-memory limit, ulimit -l, high enough?)"
				   : "");
}

bool rdmig_is_zero(const void *mem, size_t len)
{
	const uint8_t *p = mem;
	size_t i = 0;
	uint64_t acc = 0;

	for (; i < len && ((uintptr_t)(p + i) & 7); i++)
		if (p[i])
			return false;
	/* eight words at a time, stopping at the first non-zero block */
	for (; i + 64 <= len; i += 64) {
		const uint64_t *w = (const uint64_t *)(const void *)(p + i);
		acc = w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7];
		if (acc)
			return false;
	}
	for (; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* How much rdmig__engine_zero_range scans between two looks at the cancel flag: 256
 * pages, a millisecond or two even where each first touch of a page
 * faults slowly (a loaded virtual machine). */
#define ZERO_SLICE (1ull << 20)

/* Zero a range page by page, skipping pages already zero: reading an
 * untouched anonymous page does not allocate it, writing would.  A range
 * may be gigabytes: the caller's cancel flag (SIGINT, SIGTERM) is looked at
 * every ZERO_SLICE bytes.  *written counts the bytes that were not zero
 * (the only ones that moved data: the progress deadline charges the rest).
 * Returns false when cancelled. */
bool rdmig__engine_zero_range(uint8_t *p, uint64_t len, const struct engine_io *io,
			      uint64_t *written)
{
	const uint64_t page = 4096;
	uint64_t since_look = 0;

	while (len) {
		uint64_t n = page - ((uintptr_t)p & (page - 1));
		if (n > len)
			n = len;
		if (!rdmig_is_zero(p, n)) {
			memset(p, 0, n);
			*written += n;
		}
		p += n;
		len -= n;
		since_look += n;
		if (since_look >= ZERO_SLICE) {
			since_look = 0;
			if (engine_cancelled(io))
				return false;
		}
	}
	return true;
}

int rdmig__latency_log_add(struct latency_log *l, double us)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		double *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return 0; /* statistics are not worth failing a migration */
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = us;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void rdmig__latency_log_percentiles(const struct latency_log *l, double *p50, double *p99)
{
	double *v;

	*p50 = *p99 = 0;
	if (!l->n || !(v = malloc(l->n * sizeof(*v))))
		return;
	memcpy(v, l->v, l->n * sizeof(*v));
	qsort(v, l->n, sizeof(*v), cmp_double);
	*p50 = v[l->n / 2];
	*p99 = v[(l->n * 99) / 100 < l->n ? (l->n * 99) / 100 : l->n - 1];
	free(v);
}

void rdmig__latency_log_free(struct latency_log *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
