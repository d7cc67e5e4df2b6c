/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * completion.h - reaping completions and waiting for a condition.
 *
 * Every wait of the library goes through rdmig__conn_wait(): it polls both CQs,
 * dispatches each completion by its work-request id (wrid.h), and when the
 * condition is still false arms the CQs and sleeps in poll(2) on the two
 * completion channels and the connection's rdma_cm channel, so that a
 * DISCONNECTED event or the timeout ends the wait instead of a hang.
 */
#ifndef RDMIG_COMPLETION_H
#define RDMIG_COMPLETION_H

#include <stdbool.h>
#include "conn.h"

typedef bool (*conn_cond_fn)(const struct rdmig_conn *c, const void *arg);

/* Wait until cond(c, arg) holds.  what names the wait in error messages. */
int rdmig__conn_wait(struct rdmig_conn *c, conn_cond_fn cond, const void *arg, const char *what);

/* The same without sleeping: 0 when cond holds after one look (rdma_cm
 * events taken, completions reaped), RDMIG_EAGAIN when it does not yet,
 * or what the wait would return for a disconnect or a failure. */
int rdmig__conn_check(struct rdmig_conn *c, conn_cond_fn cond, const void *arg, const char *what);

/* Reap whatever completions are there, without sleeping. */
int rdmig__conn_reap(struct rdmig_conn *c);

#endif
