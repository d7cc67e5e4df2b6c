/* SPDX-License-Identifier: BSD-2-Clause */
/* opts.h - validated copies of struct rdmig_opts, kept by every handle. */
#ifndef RDMIG_OPTS_H
#define RDMIG_OPTS_H

#include <stdbool.h>
#include "rdmig.h"

/* The largest inline request we pass to a provider (mlx4's ceiling): so
 * also the most an inline send carries (channel.c assembles it on the
 * stack). */
#define RDMIG_INLINE_REQUEST_MAX 1024

/* Whether fd (rdmig_opts.cancel_fd; -1: none) says cancel: readable,
 * hung up or invalid.  One poll(2) that does not sleep. */
bool rdmig__cancel_fd_ready(int fd);

/* Whether the caller asked every wait to end (rdmig_opts.cancel or
 * cancel_fd); long loops that do not wait (the destination zeroing memory)
 * look too. */
static inline bool wait_cancelled(const struct rdmig_opts *opts)
{
	return opts && ((opts->cancel && *opts->cancel) || rdmig__cancel_fd_ready(opts->cancel_fd));
}

/* Copy src (NULL = defaults) into dst after checking it; errmsg on failure.
 * src may be an older (smaller) or newer (larger) struct: src->size says. */
int rdmig__opts_copy(struct rdmig_opts *dst, const struct rdmig_opts *src, char *errmsg);
/* The library's defaults, at its own size. */
void rdmig__opts_default(struct rdmig_opts *dst);

#endif
