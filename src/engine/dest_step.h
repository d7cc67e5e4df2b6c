/* SPDX-License-Identifier: BSD-2-Clause */
/* dest_step.h - one step of the destination loop (dest.c), waiting for
 * the source's next message or not (dest_step.c: the public calls). */
#ifndef RDMIG_DEST_STEP_H
#define RDMIG_DEST_STEP_H

#include <stdbool.h>
#include "rdmig.h"

/* Hand out the next event.  wait: block for the message it needs, as
 * rdmig_dest_next; else return RDMIG_EAGAIN when that message has not
 * come yet (its READY went out).  A failure is sticky, RDMIG_EAGAIN not. */
int rdmig__dest_step(struct rdmig_dest *d, struct rdmig_event *ev, bool wait);

#endif
