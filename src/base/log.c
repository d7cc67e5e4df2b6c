/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - optional log callback and per-handle error messages. */
#include <stdarg.h>
#include <stdio.h>
#include "log.h"

void rdmig__log(const struct rdmig_opts *opts, int level, const char *fmt, ...)
{
	char line[RDMIG_ERRMSG_SIZE];
	va_list ap;

	if (!opts->log || level > opts->log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	opts->log(opts->log_ctx, level, line);
}

int rdmig__fail(const struct rdmig_opts *opts, char *errmsg, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, RDMIG_ERRMSG_SIZE, fmt, ap);
	va_end(ap);
	rdmig__log(opts, RDMIG_LOG_ERROR, "%s", errmsg);
	return code;
}
