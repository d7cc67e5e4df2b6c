/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * verbs_res.h - a connection's verbs resources, an object of their own
 * (verbs_res.c is their one owner): the protection domain, the send and
 * receive completion channels and CQs, the registered control buffers and
 * the QP, made on the cm_id's device in that order (the QP through the
 * inline ladder) and torn down in reverse.  The others ask for what they
 * post or poll with; nobody else allocates or frees any of it.
 */
#ifndef RDMIG_VERBS_RES_H
#define RDMIG_VERBS_RES_H

#include <stdint.h>
#include "rdmig.h"

struct ibv_comp_channel;
struct ibv_cq;
struct ibv_mr;
struct ibv_pd;
struct rdma_cm_id;
struct rdmig_opts;
struct rdmig_vres;

/*
 * Control buffers: one registered region of three 512 KiB slots, as QEMU
 * has, because a peer may send any message up to the 512 KiB bound.
 *
 *   +-------------------+-------------------+-------------------+
 *   | SLOT_READY (recv) | SLOT_DATA (recv)  | SLOT_SEND (copy)  |
 *   +-------------------+-------------------+-------------------+
 *
 * SLOT_READY receives READY credits (source) or every message (destination);
 * SLOT_DATA receives replies; SLOT_SEND is only used by messages that do not
 * fit the granted inline size.
 */
enum conn_slot { SLOT_READY = 0, SLOT_DATA = 1, SLOT_SEND = 2, SLOT_COUNT = 3 };

/* The two completion paths: sends (and writes), receives. */
enum vres_side { VRES_SEND, VRES_RECV };

/* Make the resources on id's device, following opts (max_send_wr,
 * inline_request).  *out is set even on failure (NULL only when out of
 * memory): errmsg says why, and destroy frees what was made.  The QP is
 * made on id (rdma_create_qp), which must outlive the object. */
int rdmig__vres_create(struct rdma_cm_id *id, const struct rdmig_opts *opts, char *errmsg,
		       struct rdmig_vres **out);
void rdmig__vres_destroy(struct rdmig_vres *r);

/* Every answer is NULL (0, an empty inline report) before they are made. */
struct ibv_pd *rdmig__vres_pd(const struct rdmig_vres *r);
struct ibv_cq *rdmig__vres_cq(const struct rdmig_vres *r, enum vres_side side);
struct ibv_comp_channel *rdmig__vres_cc(const struct rdmig_vres *r, enum vres_side side);
/* Ask both CQs for their next completion's event: 0, or the first
 * failure as ibv_req_notify_cq returned it (normalise with verbs_errno). */
int rdmig__vres_arm(const struct rdmig_vres *r);
/* Consume (and acknowledge) the events waiting on a side's channel. */
void rdmig__vres_drain(const struct rdmig_vres *r, enum vres_side side);
/* A control slot's RDMIG_CONTROL_BUFFER bytes, and the region's keys. */
uint8_t *rdmig__vres_slot(const struct rdmig_vres *r, enum conn_slot s);
const struct ibv_mr *rdmig__vres_buf_mr(const struct rdmig_vres *r);
/* What the inline ladder asked and the QP was granted. */
const struct rdmig_inline_info *rdmig__vres_inline(const struct rdmig_vres *r);

/* Tests (unit/test_post_inline.c): resources around a fake region, with
 * granted as the inline size and no QP; rdmig__vres_free_fake frees the
 * object alone. */
struct rdmig_vres *rdmig__vres_fake(uint8_t *bufs, struct ibv_mr *mr, uint32_t granted);
void rdmig__vres_free_fake(struct rdmig_vres *r);

#endif
