/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clock.h - librdmig's one clock, CLOCK_MONOTONIC (clock.c): deadlines in
 * milliseconds, timings in microseconds or seconds, all read from
 * rdmig_monotonic_seconds so that every layer's times (and the tool's,
 * which calls it too) compare.  The bottom of the library: it calls
 * nothing of it.  Internal.
 */
#ifndef RDMIG_CLOCK_H
#define RDMIG_CLOCK_H

#include <rdmig/private.h>

/* Milliseconds, for deadlines. */
static inline long long rdmig__now_ms(void)
{
	return (long long)(rdmig_monotonic_seconds() * 1e3);
}

/* Microseconds, for timings and spin limits. */
static inline double rdmig__now_us(void)
{
	return rdmig_monotonic_seconds() * 1e6;
}

#endif
