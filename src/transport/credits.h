/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * credits.h - a connection's receive side, an object of its own
 * (credits.c is its one owner): the two receive slots (posted, done and
 * not yet taken, the completion's length) and the READY credit flow
 * (whether a READY must come before our next send, whether the peer owes
 * us a message for the READY we gave).  completion.c reports receives
 * into it; channel.c posts, takes and keeps the credits through it.
 */
#ifndef RDMIG_CREDITS_H
#define RDMIG_CREDITS_H

#include <stdbool.h>
#include <stdint.h>
#include "verbs_res.h" /* enum conn_slot */

struct rdmig_rx;

/* Nothing posted, nothing owed; NULL when out of memory. */
struct rdmig_rx *rdmig__rx_create(void);
void rdmig__rx_destroy(struct rdmig_rx *rx);

/* Slots SLOT_READY and SLOT_DATA only. */
void rdmig__rx_posted_now(struct rdmig_rx *rx, enum conn_slot s); /* posted, not done */
bool rdmig__rx_posted(const struct rdmig_rx *rx, enum conn_slot s);
/* completion.c: the receive of s completed with len bytes. */
void rdmig__rx_completed(struct rdmig_rx *rx, enum conn_slot s, uint32_t len);
bool rdmig__rx_done(const struct rdmig_rx *rx, enum conn_slot s);
/* Take the message of s (it is no longer done): its length. */
uint32_t rdmig__rx_take(struct rdmig_rx *rx, enum conn_slot s);
/* A message sits in a slot, not yet taken; one of them is the peer's
 * ERROR (read from the slots' buffers in res). */
bool rdmig__rx_waiting(const struct rdmig_rx *rx);
bool rdmig__rx_error_waiting(const struct rdmig_rx *rx, const struct rdmig_vres *res);

/* A READY must arrive before our next send (a source that has just
 * connected, and after each send). */
bool rdmig__rx_ready_owed(const struct rdmig_rx *rx);
void rdmig__rx_owe_ready(struct rdmig_rx *rx, bool owed);
/* We gave the peer a READY; its message has not arrived. */
bool rdmig__rx_message_owed(const struct rdmig_rx *rx);
void rdmig__rx_owe_message(struct rdmig_rx *rx, bool owed);

#endif
