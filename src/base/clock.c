/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clock.c - the one monotonic clock of librdmig (clock.h), public to
 * rdmig's own programs through rdmig/private.h.
 */
#include <time.h>
#include "clock.h"

double rdmig_monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
