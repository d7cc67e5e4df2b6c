/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qp_attr.h - the QP every rdmig connection asks for (verbs_res.c), which
 * rdmig_probe creates too, with no connection, to see what the provider
 * grants.
 */
#ifndef RDMIG_QP_ATTR_H
#define RDMIG_QP_ATTR_H
#include <stdint.h>
#include <infiniband/verbs.h>

/* Its caps and CQs; the inline ladder (inline_ladder.c) varies
 * max_inline_data. */
void rdmig__conn_qp_base_attr(struct ibv_qp_init_attr *attr, uint32_t max_send_wr, struct ibv_cq *send_cq,
			      struct ibv_cq *recv_cq);

#endif
