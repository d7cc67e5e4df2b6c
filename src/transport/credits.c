/* SPDX-License-Identifier: BSD-2-Clause */
/* credits.c - a connection's receive slots and READY credits (credits.h). */
#include <stdlib.h>
#include "credits.h"
#include "wire.h"

struct recv_slot {
	bool posted;
	bool done;         /* completed, not yet taken */
	uint32_t byte_len; /* of the completion */
};

struct rdmig_rx {
	struct recv_slot slot[2]; /* SLOT_READY, SLOT_DATA */
	bool ready_owed;   /* a READY must arrive before the next send */
	bool message_owed; /* we sent READY; the peer's message has not arrived */
};

struct rdmig_rx *rdmig__rx_create(void)
{
	return calloc(1, sizeof(struct rdmig_rx));
}

void rdmig__rx_destroy(struct rdmig_rx *rx)
{
	free(rx);
}

void rdmig__rx_posted_now(struct rdmig_rx *rx, enum conn_slot s)
{
	rx->slot[s].posted = true;
	rx->slot[s].done = false;
}

bool rdmig__rx_posted(const struct rdmig_rx *rx, enum conn_slot s)
{
	return rx->slot[s].posted;
}

void rdmig__rx_completed(struct rdmig_rx *rx, enum conn_slot s, uint32_t len)
{
	rx->slot[s].posted = false;
	rx->slot[s].done = true;
	rx->slot[s].byte_len = len;
}

bool rdmig__rx_done(const struct rdmig_rx *rx, enum conn_slot s)
{
	return rx->slot[s].done;
}

uint32_t rdmig__rx_take(struct rdmig_rx *rx, enum conn_slot s)
{
	rx->slot[s].done = false;
	return rx->slot[s].byte_len;
}

bool rdmig__rx_waiting(const struct rdmig_rx *rx)
{
	return rx->slot[SLOT_READY].done || rx->slot[SLOT_DATA].done;
}

bool rdmig__rx_error_waiting(const struct rdmig_rx *rx, const struct rdmig_vres *res)
{
	for (int s = SLOT_READY; s <= SLOT_DATA; s++) {
		struct rdmig_header h;

		if (!rx->slot[s].done || rx->slot[s].byte_len < RDMIG_HEADER_SIZE)
			continue;
		rdmig_decode_header(rdmig__vres_slot(res, (enum conn_slot)s), &h);
		if (h.type == RDMIG_MSG_ERROR)
			return true;
	}
	return false;
}

bool rdmig__rx_ready_owed(const struct rdmig_rx *rx)
{
	return rx->ready_owed;
}

void rdmig__rx_owe_ready(struct rdmig_rx *rx, bool owed)
{
	rx->ready_owed = owed;
}

bool rdmig__rx_message_owed(const struct rdmig_rx *rx)
{
	return rx->message_owed;
}

void rdmig__rx_owe_message(struct rdmig_rx *rx, bool owed)
{
	rx->message_owed = owed;
}
