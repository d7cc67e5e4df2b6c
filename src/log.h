/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * log.h - the library's two ways of talking: the optional log callback of
 * struct rdmig_opts, and the per-handle "last error" message.
 */
#ifndef RDMIG_LOG_H
#define RDMIG_LOG_H

#include <stddef.h>
#include "rdmig.h"

#define RDMIG_ERRMSG_SIZE 512

/* Pass a message to opts->log when level <= opts->log_level. */
void rdmig__log(const struct rdmig_opts *opts, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Record what failed in errmsg (RDMIG_ERRMSG_SIZE bytes), log it at ERROR
 * level and return code, so that failure paths read:
 *     return rdmig__fail(&c->opts, c->errmsg, RDMIG_ESYS, "ibv_alloc_pd: %s", ...);
 */
int rdmig__fail(const struct rdmig_opts *opts, char *errmsg, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
