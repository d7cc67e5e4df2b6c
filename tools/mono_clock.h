/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mono_clock.h - the one monotonic clock of the tool, its tests and the
 * benchmarks: seconds as a double, for durations only (the origin is
 * arbitrary).  Header-only so that a unit test or the bench can time
 * things without linking a source of the tool that would pull in the CLI.
 */
#ifndef RDMIG_MONO_CLOCK_H
#define RDMIG_MONO_CLOCK_H

#include <time.h>

/* Monotonic seconds: not affected by changes of the wall clock, so the
 * difference of two readings is a real duration. */
static inline double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
