/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * log.h - the library's two ways of talking: the optional log callback of
 * struct rdmig_opts, and the per-handle "last error" message.
 */
#ifndef RDMIG_LOG_H
#define RDMIG_LOG_H

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "rdmig.h"

#define RDMIG_ERRMSG_SIZE 512

/* Pass a message to opts->log when level <= opts->log_level. */
void rdmig__log(const struct rdmig_opts *opts, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The code of a failed system, verbs or rdma_cm call: -err, the errno it
 * left (an errno of 0, which a broken provider may leave, reads as EIO). */
static inline int rdmig__syserr(int err)
{
	return err > 0 && err < RDMIG_ELIB_BASE ? -err : -EIO;
}

/*
 * Hand the library's output struct `own` (own_size bytes, starting with
 * size_t size) to a caller's struct of out->size bytes: min(both sizes)
 * bytes are written, a larger caller's unknown tail is zeroed, and the
 * caller's size field is kept.  own NULL: zeroes.  A size below
 * sizeof(size_t) (not set) gets nothing.
 */
static inline void rdmig__put_sized(void *out, const void *own, size_t own_size)
{
	size_t size, n;

	if (!out)
		return;
	memcpy(&size, out, sizeof(size));
	if (size < sizeof(size))
		return;
	n = size < own_size ? size : own_size;
	if (own)
		memcpy((char *)out + sizeof(size), (const char *)own + sizeof(size),
		       n - sizeof(size));
	else
		memset((char *)out + sizeof(size), 0, n - sizeof(size));
	if (size > own_size)
		memset((char *)out + own_size, 0, size - own_size);
}

/*
 * Record what failed in errmsg (RDMIG_ERRMSG_SIZE bytes), log it at ERROR
 * level and return code, so that failure paths read:
 *     return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno), "ibv_alloc_pd: %s", ...);
 */
int rdmig__fail(const struct rdmig_opts *opts, char *errmsg, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
