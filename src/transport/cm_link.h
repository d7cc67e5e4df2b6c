/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cm_link.h - a connection's rdma_cm side, an object of its own
 * (cm_link.c is its one owner): the connection's own event channel, its
 * cm_id (and through it the QP and the device), whether it is
 * established, and whether and why it ended.  connect.c and listen.c make
 * it; completion.c and the posts mark its end when a DISCONNECTED event
 * or a flushed completion says so.
 */
#ifndef RDMIG_CM_LINK_H
#define RDMIG_CM_LINK_H

#include <stdbool.h>

struct ibv_qp;
struct rdma_cm_id;
struct rdma_event_channel;
struct rdmig_cm_link;

/* A link with no channel and no id yet; NULL when out of memory. */
struct rdmig_cm_link *rdmig__cml_create(void);
/* Destroy the id and the channel (the QP must be gone: verbs_res.c). */
void rdmig__cml_destroy(struct rdmig_cm_link *l);

/* Make the link's own non-blocking event channel: 0, or a positive errno.
 * Once made, rdmig__cml_channel_fd is >= 0. */
int rdmig__cml_open_channel(struct rdmig_cm_link *l);
struct rdma_event_channel *rdmig__cml_channel(const struct rdmig_cm_link *l);
int rdmig__cml_channel_fd(const struct rdmig_cm_link *l); /* -1: none yet */

/* The cm_id: set once resolved (connect.c) or requested (listen.c);
 * NULL before, and again when a candidate address failed. */
void rdmig__cml_set_id(struct rdmig_cm_link *l, struct rdma_cm_id *id);
struct rdma_cm_id *rdmig__cml_id(const struct rdmig_cm_link *l);
/* Its QP (NULL before the QP is made) and its device's name ("" before). */
struct ibv_qp *rdmig__cml_qp(const struct rdmig_cm_link *l);
const char *rdmig__cml_device(const struct rdmig_cm_link *l);

/* ESTABLISHED came. */
void rdmig__cml_establish(struct rdmig_cm_link *l);
bool rdmig__cml_established(const struct rdmig_cm_link *l);

/* The link ended: a DISCONNECTED (or worse) event, or a completion that
 * says the QP is flushed.  The first reason stays. */
void rdmig__cml_end(struct rdmig_cm_link *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool rdmig__cml_ended(const struct rdmig_cm_link *l);
const char *rdmig__cml_end_reason(const struct rdmig_cm_link *l); /* "" before */

/* After a post failed with err (a positive errno): " (the connection is
 * in error ...)" when the connection is gone before its completions said
 * so (a peer killed mid-transfer), to follow the errno the provider chose
 * for it; else "".  Gone: the QP is in the error state, or the provider
 * said ENOTCONN (siw does, from a QP whose connection closed before the
 * QP reached the error state). */
const char *rdmig__cml_qp_error_hint(const struct rdmig_cm_link *l, int err);

/* An id, ESTABLISHED, and no end yet: a link a disconnect would close. */
bool rdmig__cml_live(const struct rdmig_cm_link *l);

#endif
