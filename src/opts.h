/* SPDX-License-Identifier: BSD-2-Clause */
/* opts.h - validated copies of struct rdmig_opts, kept by every handle. */
#ifndef RDMIG_OPTS_H
#define RDMIG_OPTS_H

#include <stdbool.h>
#include "rdmig.h"

/* Whether the caller asked every wait to end (rdmig_opts.cancel); long
 * loops that do not wait (the destination zeroing memory) look too. */
static inline bool wait_cancelled(const struct rdmig_opts *opts)
{
	return opts && opts->cancel && *opts->cancel;
}

/* Copy src (NULL = defaults) into dst after checking it; errmsg on failure.
 * src may be an older (smaller) or newer (larger) struct: src->size says. */
int rdmig__opts_copy(struct rdmig_opts *dst, const struct rdmig_opts *src, char *errmsg);
/* The library's defaults, at its own size. */
void rdmig__opts_default(struct rdmig_opts *dst);

#endif
