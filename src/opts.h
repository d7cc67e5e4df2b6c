/* SPDX-License-Identifier: BSD-2-Clause */
/* opts.h - validated copies of struct rdmig_opts, kept by every handle. */
#ifndef RDMIG_OPTS_H
#define RDMIG_OPTS_H

#include "rdmig.h"

/* Copy src (NULL = defaults) into dst after checking it; errmsg on failure. */
int rdmig__opts_copy(struct rdmig_opts *dst, const struct rdmig_opts *src, char *errmsg);

#endif
