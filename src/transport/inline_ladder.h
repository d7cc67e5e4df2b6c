/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inline_ladder.h - settle a QP's inline size by creating it for real.
 *
 * No verbs call tells the inline limit ahead, providers fail creation when
 * asked too much (mlx5, rxe, siw, irdma...), some clamp silently (hns, mana)
 * and some over-report.  So the ladder creates the real QP with the real
 * caps, and on an inline-related failure retries with a smaller request:
 *
 *   auto:  40 -> 32 -> 16 -> 0      (40 = header + Register/Compress;
 *                                    32 = READY and REGISTER_RESULT;
 *                                    16 = header-only messages)
 *   N:     N -> N/2 -> ... until a request succeeds (the auto rungs are the
 *          floor), then bisect between the largest success and the smallest
 *          failure, so that "512" on siw (limit 80) ends at 80.
 *   0:     0 only (inline off).
 *
 * The granted size is min(request that succeeded, value written back).
 * This file is pure: QP creation is a callback, so unit tests can fake it.
 */
#ifndef RDMIG_INLINE_LADDER_H
#define RDMIG_INLINE_LADDER_H

#include <infiniband/verbs.h>
#include "rdmig.h"

/*
 * Create the QP with *attr (already filled in, may be modified by the
 * provider).  Returns 0 and keeps the QP, or a positive errno.
 */
typedef int (*ladder_create_fn)(void *ctx, struct ibv_qp_init_attr *attr);
/* Destroy the QP the last successful create made. */
typedef void (*ladder_destroy_fn)(void *ctx);

struct ladder_ops {
	ladder_create_fn create;
	ladder_destroy_fn destroy;
	void *ctx;
};

struct ladder_result {
	struct rdmig_inline_info info;
	int last_errno;          /* errno of the last failed create, 0 if none */
	struct ibv_qp_cap asked; /* caps of the last attempt (for messages) */
};

/*
 * Run the ladder for request (RDMIG_INLINE_AUTO, 0, or N) over the base
 * attributes (cap.max_inline_data is set per rung).  Returns 0 with a live QP,
 * or -errno when even the last rung failed (result->last_errno says which).
 */
int rdmig__inline_ladder_run(int request, const struct ibv_qp_init_attr *base,
		      const struct ladder_ops *ops, const struct rdmig_opts *log_opts,
		      struct ladder_result *result);

/* True when a create failure can be caused by the inline request. */
int rdmig__inline_ladder_errno_is_inline(int err);

/* True when a refused inline post (err: a positive errno, normalised with
 * verbs_errno) means "not as inline": the message can go copied. */
int rdmig__inline_post_refused(int err);

#endif
