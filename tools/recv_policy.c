/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_policy.c - what `rdmig recv` and `rdmig recv --qemu` accept from a
 * source, decided here and not by the source: whether its images go
 * unverified, and what its stream may add to the bytes --max-total bounds.
 */
#include <stdio.h>
#include "cli.h"

int recv_verify_policy(bool here_off, bool source_off, char *err, size_t errlen)
{
	if (!source_off || here_off)
		return 0;
	snprintf(err, errlen, "the source sends no checksums (--verify off there) and this recv "
		 "verifies (--verify on here): refused; give recv --verify off to accept "
		 "unverified images");
	return -1;
}

bool recv_stream_fits(uint64_t max_total, uint64_t ram_total, uint64_t stream_bytes,
		      uint64_t more)
{
	return ram_total <= max_total && stream_bytes <= max_total - ram_total &&
	       more <= max_total - ram_total - stream_bytes;
}
