/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_nofile.c - descriptors for up to 4096 blocks.
 *
 * recv and recv --qemu keep each image open from its creation until it is
 * named (verified, or written after the end), so a migration of the
 * formats' 4096 blocks needs over 4096 descriptors at once, where the usual
 * soft limit (ulimit -n) is 1024.  The soft limit is the process's to
 * raise up to the hard one (ulimit -Hn; usually 524288 or more), which
 * the tool does when it starts; a migration that still does not fit is
 * refused with both numbers before any image is created.  (send
 * --qemu-replay reads its images one at a time and needs one.)
 */
#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>
#include "cli.h"

/* Besides the images: stdio, the RDMA device and rdma_cm, the cancel
 * pipe, stream.bin, the output directory, a hash pool, a margin. */
#define CLI_NOFILE_RESERVE 64u

void cli_nofile_raise(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl); /* on failure the check below speaks */
	}
}

int cli_nofile_check(uint32_t files, char *err, size_t errlen)
{
	struct rlimit rl;
	uint64_t need = (uint64_t)files + CLI_NOFILE_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY || need <= rl.rlim_cur)
		return 0;
	snprintf(err, errlen, "%" PRIu32 " images need %" PRIu64 " open files, and the limit is %"
		 PRIu64 " (ulimit -n; the hard limit, ulimit -Hn, is %" PRIu64 ")", files, need,
		 (uint64_t)rl.rlim_cur, (uint64_t)rl.rlim_max);
	return -1;
}
