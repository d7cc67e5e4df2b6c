#include "clock.h"
/* SPDX-License-Identifier: BSD-2-Clause */
#include "clock.h"
/*
#include "clock.h"
 * dest_idle.h - the destination's progress deadline
#include "clock.h"
 * (rdmig_opts.idle_timeout_ms): how long a source may go on without
#include "clock.h"
 * moving data before it is ended.  The clock is given the time by its
#include "clock.h"
 * caller, so its arithmetic is tested without waiting (unit_dest_idle).
#include "clock.h"
 */
#include "clock.h"
#ifndef RDMIG_DEST_IDLE_H
#include "clock.h"
#define RDMIG_DEST_IDLE_H
#include "clock.h"

#include "clock.h"
#include <stdbool.h>
#include "clock.h"

#include "clock.h"
struct dest_idle {
#include "clock.h"
	int limit_ms;            /* 0: no deadline */
#include "clock.h"
	double last_progress_us; /* on the engine's clock (rdmig__now_us) */
#include "clock.h"
	double paused_us;        /* when the caller took the last event; 0: not paused */
#include "clock.h"
};
#include "clock.h"

#include "clock.h"
/* Start the clock at now_us with limit_ms (<= 0: no deadline). */
#include "clock.h"
static inline void dest_idle_start(struct dest_idle *c, int limit_ms, double now_us)
#include "clock.h"
{
#include "clock.h"
	c->limit_ms = limit_ms > 0 ? limit_ms : 0;
#include "clock.h"
	c->last_progress_us = now_us;
#include "clock.h"
}
#include "clock.h"

#include "clock.h"
/* The caller's own time between two calls is not the source's: the clock
#include "clock.h"
 * stops when an event goes out (pause) and goes on, the deadline moved by
#include "clock.h"
 * that time, when the caller asks for the next one (resume). */
#include "clock.h"
static inline void dest_idle_pause(struct dest_idle *c, double now_us)
#include "clock.h"
{
#include "clock.h"
	c->paused_us = now_us;
#include "clock.h"
}
#include "clock.h"

#include "clock.h"
static inline void dest_idle_resume(struct dest_idle *c, double now_us)
#include "clock.h"
{
#include "clock.h"
	if (c->paused_us && now_us > c->paused_us)
#include "clock.h"
		c->last_progress_us += now_us - c->paused_us;
#include "clock.h"
	c->paused_us = 0;
#include "clock.h"
}
#include "clock.h"

#include "clock.h"
/* The source moved data at now_us: the deadline moves with it. */
#include "clock.h"
static inline void dest_idle_progress(struct dest_idle *c, double now_us)
#include "clock.h"
{
#include "clock.h"
	c->last_progress_us = now_us;
#include "clock.h"
}
#include "clock.h"

#include "clock.h"
/* Milliseconds left until the deadline at now_us, rounded up (a wait of
#include "clock.h"
 * that long ends at or after it): -1 without a deadline, 0 once passed. */
#include "clock.h"
static inline int dest_idle_left_ms(const struct dest_idle *c, double now_us)
#include "clock.h"
{
#include "clock.h"
	double left_us;
#include "clock.h"

#include "clock.h"
	if (!c->limit_ms)
#include "clock.h"
		return -1;
#include "clock.h"
	left_us = c->last_progress_us + c->limit_ms * 1000.0 - now_us;
#include "clock.h"
	if (left_us <= 0)
#include "clock.h"
		return 0;
#include "clock.h"
	return (int)((left_us + 999.0) / 1000.0);
#include "clock.h"
}
#include "clock.h"

#include "clock.h"
/* Whether the deadline passed at now_us. */
#include "clock.h"
static inline bool dest_idle_expired(const struct dest_idle *c, double now_us)
#include "clock.h"
{
#include "clock.h"
	return dest_idle_left_ms(c, now_us) == 0;
#include "clock.h"
}
#include "clock.h"

#include "clock.h"
#endif
