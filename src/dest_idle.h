/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dest_idle.h - the destination's progress deadline
 * (rdmig_opts.idle_timeout_ms): how long a source may go on without
 * moving data before it is ended.  The clock is given the time by its
 * caller, so its arithmetic is tested without waiting (unit_dest_idle).
 */
#ifndef RDMIG_DEST_IDLE_H
#define RDMIG_DEST_IDLE_H

#include <stdbool.h>

struct dest_idle {
	int limit_ms;            /* 0: no deadline */
	double last_progress_us; /* on the engine's clock (rdmig__engine_now_us) */
	double paused_us;        /* when the caller took the last event; 0: not paused */
};

/* Start the clock at now_us with limit_ms (<= 0: no deadline). */
static inline void dest_idle_start(struct dest_idle *c, int limit_ms, double now_us)
{
	c->limit_ms = limit_ms > 0 ? limit_ms : 0;
	c->last_progress_us = now_us;
}

/* The caller's own time between two calls is not the source's: the clock
 * stops when an event goes out (pause) and goes on, the deadline moved by
 * that time, when the caller asks for the next one (resume). */
static inline void dest_idle_pause(struct dest_idle *c, double now_us)
{
	c->paused_us = now_us;
}

static inline void dest_idle_resume(struct dest_idle *c, double now_us)
{
	if (c->paused_us && now_us > c->paused_us)
		c->last_progress_us += now_us - c->paused_us;
	c->paused_us = 0;
}

/* The source moved data at now_us: the deadline moves with it. */
static inline void dest_idle_progress(struct dest_idle *c, double now_us)
{
	c->last_progress_us = now_us;
}

/* Milliseconds left until the deadline at now_us, rounded up (a wait of
 * that long ends at or after it): -1 without a deadline, 0 once passed. */
static inline int dest_idle_left_ms(const struct dest_idle *c, double now_us)
{
	double left_us;

	if (!c->limit_ms)
		return -1;
	left_us = c->last_progress_us + c->limit_ms * 1000.0 - now_us;
	if (left_us <= 0)
		return 0;
	return (int)((left_us + 999.0) / 1000.0);
}

/* Whether the deadline passed at now_us. */
static inline bool dest_idle_expired(const struct dest_idle *c, double now_us)
{
	return dest_idle_left_ms(c, now_us) == 0;
}

#endif
