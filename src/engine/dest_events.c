/* SPDX-License-Identifier: BSD-2-Clause */
/* dest_events.c - the destination's report queue (dest_events.h). */
#include <stdlib.h>
#include "dest_events.h"

int rdmig__dest_events_set(struct dest_events *e, unsigned mask)
{
	if (mask && !e->q) {
		e->q = malloc((size_t)RDMIG_MAX_REPEAT * sizeof(*e->q));
		if (!e->q)
			return RDMIG_ENOMEM;
	}
	e->mask = mask;
	return 0;
}

void rdmig__dest_events_add(struct dest_events *e, unsigned report, int type,
			    const struct rdmig_dest_range *r)
{
	/* one entry per record, and a message has at most RDMIG_MAX_REPEAT */
	if (!(e->mask & report) || e->n >= RDMIG_MAX_REPEAT)
		return;
	e->type = type;
	e->q[e->n++] = *r;
}

bool rdmig__dest_events_pop(struct dest_events *e, struct rdmig_event *ev)
{
	if (e->next == e->n)
		return false;
	*ev = (struct rdmig_event){e->type, &e->q[e->next++], sizeof(struct rdmig_dest_range)};
	return true;
}

void rdmig__dest_events_free(struct dest_events *e)
{
	free(e->q);
	e->q = NULL;
	e->n = e->next = 0;
}
