/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dest_events.h - the destination's optional reports of what it served
 * (rdmig_dest_set_events): a queue of the ranges of one message, filled
 * while the message is served and handed out one per rdmig_dest_next.
 */
#ifndef RDMIG_DEST_EVENTS_H
#define RDMIG_DEST_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include "rdmig.h"

/* Every report a caller may ask for. */
#define DEST_REPORT_KNOWN \
	(RDMIG_DEST_REPORT_REGISTER | RDMIG_DEST_REPORT_COMPRESS | RDMIG_DEST_REPORT_UNREGISTER)

/* The ranges of one served message: all of one event type, since a
 * message is of one type.  q holds RDMIG_MAX_REPEAT entries (one per
 * record), allocated when a report is first asked for, so that a caller
 * that asks for none pays nothing. */
struct dest_events {
	unsigned mask;
	int type;
	struct rdmig_dest_range *q;
	uint32_t n, next;
};

/* Ask for the reports of mask: 0, or RDMIG_ENOMEM (the mask unchanged). */
int rdmig__dest_events_set(struct dest_events *e, unsigned mask);
/* A new message is served: forget what the last one queued. */
static inline void dest_events_reset(struct dest_events *e)
{
	e->n = e->next = 0;
}
/* Queue one served record as an event of `type` when the mask asks for
 * its kind (report, one RDMIG_DEST_REPORT_* bit). */
void rdmig__dest_events_add(struct dest_events *e, unsigned report, int type,
			    const struct rdmig_dest_range *r);
/* Hand out the next queued event; false when none is left.  ev->data
 * points into the queue, which is refilled only by a later message. */
bool rdmig__dest_events_pop(struct dest_events *e, struct rdmig_event *ev);
void rdmig__dest_events_free(struct dest_events *e);

#endif
