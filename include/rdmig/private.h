/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmig/private.h - helpers of librdmig that rdmig's own programs (the
 * rdmig tool, rdmig-bench, the tests) share with the library.  They are
 * not its API: this header is not installed, and librdmig.so exports them
 * in the version node RDMIG_PRIVATE_0.2 (src/librdmig.map), which is
 * renamed whenever they change and which scripts/abi-check ignores, as
 * libibverbs does with its IBVERBS_PRIVATE_* node.  A program outside
 * rdmig must not use them.
 */
#ifndef RDMIG_PRIVATE_H
#define RDMIG_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether n bytes at p are all zero: the test by which a source sends a
 * chunk as COMPRESS, so that the tool's sparse writes agree with it.
 * Word-wise, and it stops at the first non-zero byte. */
bool rdmig_is_zero(const void *p, size_t n);

/* Monotonic seconds (CLOCK_MONOTONIC): for durations only, the origin is
 * arbitrary, and a change of the wall clock does not move it.  The clock
 * of the library's own timings, so that the tool's agree with them. */
double rdmig_monotonic_seconds(void);

#ifdef __cplusplus
}
#endif

#endif
