/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_memlock.c - is the locked-memory limit high enough for a migration?
 *
 * The library says what a migration pins and under which limit
 * (rdmig_pin_need(3)); the tool decides what to do with it: a migration
 * whose least need is above the limit is refused before it starts, with
 * both numbers; a dynamic one whose most is above it only gets a warning:
 * it works while the data that actually arrives fits, and otherwise fails
 * with the library's error, which names ulimit -l.
 */
#include <inttypes.h>
#include <stdio.h>
#include "cli.h"

int cli_memlock_need(const char *device, bool pin_all, uint64_t chunk_size,
		     const struct rdmig_block *blocks, size_t n, struct rdmig_pin_need *need,
		     char *err, size_t errlen)
{
	int ret;

	need->size = sizeof(*need);
	ret = rdmig_pin_need(device, pin_all, chunk_size, blocks, n, need);
	if (ret)
		snprintf(err, errlen, "cannot tell what the migration pins: %s", rdmig_strerror(ret));
	return ret ? -1 : 0;
}

int cli_memlock_check(const char *cmd, const struct rdmig_pin_need *need, char *err, size_t errlen)
{
	uint64_t limit = need->limit;

	if (limit == UINT64_MAX)
		return 1;
	if (need->least > limit) {
		snprintf(err, errlen, "the locked-memory limit is %" PRIu64 " KiB; this migration "
			 "needs %" PRIu64 " KiB (%s): raise it with ulimit -l (LimitMEMLOCK= for a "
			 "service)", limit / 1024, need->least / 1024,
			 need->least == need->most ? "its blocks and control buffers"
						   : "control buffers and one chunk");
		return -1;
	}
	if (need->most > limit)
		fprintf(stderr, "%s: warning: the locked-memory limit is %" PRIu64 " KiB; this "
			"migration may need up to %" PRIu64 " KiB (every chunk that carries data "
			"stays registered) and fails if its data outgrows the limit\n", cmd,
			limit / 1024, need->most / 1024);
	return 0;
}
