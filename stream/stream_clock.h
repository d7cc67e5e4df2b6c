/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stream_clock.h - librdmig-stream's clock, for the hash pool's and the
 * verifier's timings.  Its own, so that the library needs nothing of
 * librdmig (nor verbs, nor rdma_cm) underneath it.  CLOCK_MONOTONIC, as
 * librdmig's engine timings, so the tool may compare the two.
 */
#ifndef RDMIG_STREAM_CLOCK_H
#define RDMIG_STREAM_CLOCK_H

#include <time.h>

/* Seconds since an arbitrary origin; for durations only. */
static inline double rdmig__stream_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
