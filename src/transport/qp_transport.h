/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qp_transport.h - the QP's transport settings on RoCE/IB, set by both
 * sides before connect and accept (qp_transport.c).
 */
#ifndef RDMIG_QP_TRANSPORT_H
#define RDMIG_QP_TRANSPORT_H

struct rdma_cm_id;
struct rdmig_opts;

/*
 * The local ACK timeout: 4.096 us x 2^11 = 8.4 ms per try.  rdma_cm's
 * own on RoCE is 19 (2.1 s), and Soft-RoCE resends go-back-N: after a
 * retry has begun, a second loss before the next positive ACK waits for
 * this timeout.  At 1% loss that made a path of 10 MB/s move under
 * 0.3 MB/s; at 11 it keeps 0.67-0.74 x its fault-free throughput, and
 * reordering completes, where 14 and 16 did not; 12 sat at the edge of
 * 0.5 x, 10 gained nothing (docs/reliability.md, "QP transport
 * settings").  A QP without any ACK gives up after
 * (RDMIG_QP_RETRY_COUNT + 1) timeouts on hardware RoCE (8 x 8.4 ms);
 * rdmig's own --timeout bounds every wait either way.
 */
#define RDMIG_QP_ACK_TIMEOUT 11

/* Transport retries before the QP fails with IBV_WC_RETRY_EXC_ERR: the
 * most there are (Soft-RoCE reads 7 as "no limit"), so that a short ACK
 * timeout does not end a migration on a burst of losses. */
#define RDMIG_QP_RETRY_COUNT 7

/* Give c->id our ACK timeout; a kernel without the option keeps rdma_cm's. */
void rdmig__qp_transport_set(struct rdma_cm_id *id, const struct rdmig_opts *opts);

#endif
