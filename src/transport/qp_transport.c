/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qp_transport.c - the transport settings of a connection's QP that
 * rdma_cm takes from us rather than from the path: the local ACK timeout
 * and the retry count.  They act on RoCE and InfiniBand; on iWARP the
 * transport is TCP and the kernel ignores both.  docs/reliability.md
 * ("QP transport settings") has the measurements that chose them.
 */
#include <errno.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include "log.h"
#include "opts.h"
#include "qp_transport.h"

void rdmig__qp_transport_set(struct rdma_cm_id *id, const struct rdmig_opts *opts)
{
	uint8_t timeout = RDMIG_QP_ACK_TIMEOUT;

	/* Before the QP reaches RTS: rdma_connect and rdma_accept move it
	 * there with the attributes rdma_cm computes, this one overridden.
	 * A kernel older than 5.1 does not know the option; the QP then
	 * keeps rdma_cm's timeout, which is slower on a lossy path but
	 * correct, so a refusal is only logged. */
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout,
			    sizeof(timeout)))
		rdmig__log(opts, RDMIG_LOG_DEBUG,
			   "rdma_set_option(ACK_TIMEOUT %u): %s; keeping rdma_cm's ACK timeout",
			   (unsigned)timeout, strerror(errno));
}
