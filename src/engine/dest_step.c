/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dest_step.c - the destination loop as a caller drives it: waiting for the
 * source's next message (rdmig_dest_next), or not (rdmig_dest_try_next, for
 * an event loop that sleeps on rdmig_conn_fd).  Both are one step of
 * dest.c's loop; the READY a message needs goes out once however the calls
 * are mixed (the connection remembers it sent it).
 */
#include "dest_step.h"

int rdmig_dest_next(struct rdmig_dest *d, struct rdmig_event *ev)
{
	if (!d || !ev)
		return RDMIG_EINVAL;
	return rdmig__dest_step(d, ev, true);
}

int rdmig_dest_try_next(struct rdmig_dest *d, struct rdmig_event *ev)
{
	if (!d || !ev)
		return RDMIG_EINVAL;
	return rdmig__dest_step(d, ev, false);
}
