/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_res.c - a connection's verbs resources (verbs_res.h), their one owner:
 * built on the cm_id's device and torn down in order. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include "verbs_res.h"
#include "log.h"
#include "qp_attr.h"
#include "inline_ladder.h"
#include "opts.h"

/* Receives in flight at most: one per receive slot (plus one spare, as QEMU). */
#define CONN_MAX_RECV_WR 3
/* Send CQ: every send WR may be signaled; recv CQ: the receive slots. */
#define CONN_RECV_CQE 16

struct rdmig_vres {
	struct rdma_cm_id *id; /* the link's, which the QP is made on */
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc[2]; /* enum vres_side */
	struct ibv_cq *cq[2];
	uint8_t *bufs; /* SLOT_COUNT * RDMIG_CONTROL_BUFFER */
	struct ibv_mr *buf_mr;
	bool qp_created;
	struct rdmig_inline_info inl;
};

void rdmig__conn_qp_base_attr(struct ibv_qp_init_attr *attr, uint32_t max_send_wr, struct ibv_cq *send_cq,
		       struct ibv_cq *recv_cq)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_type = IBV_QPT_RC;
	attr->send_cq = send_cq;
	attr->recv_cq = recv_cq;
	attr->cap.max_send_wr = max_send_wr;
	attr->cap.max_recv_wr = CONN_MAX_RECV_WR;
	/* One SGE is all any send needs: an inline send is assembled on the
	 * stack (channel.c), a copied one in the send slot, and an RDMA WRITE
	 * has one block.  Asking for more would only refuse inline on a device
	 * with one send SGE, and make every WQE bigger on some (mlx5). */
	attr->cap.max_send_sge = 1;
	attr->cap.max_recv_sge = 1;
	/* We choose per send which WRs are signaled. */
	attr->sq_sig_all = 0;
}

static int set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* What a build needs beside the object: the options it follows and the
 * buffer its failure is told in. */
struct vres_make {
	struct rdmig_vres *r;
	const struct rdmig_opts *opts;
	char *errmsg;
};

static int cm_create_qp(void *ctx, struct ibv_qp_init_attr *attr)
{
	struct rdmig_vres *r = ctx;
	return rdma_create_qp(r->id, r->pd, attr) ? errno : 0;
}

static void cm_destroy_qp(void *ctx)
{
	struct rdmig_vres *r = ctx;
	rdma_destroy_qp(r->id);
}

static const char *device_name(const struct rdmig_vres *r)
{
	return ibv_get_device_name(r->id->verbs->device);
}

/*
 * Whether the device makes the QP the ladder could not, without the
 * connection's cm_id.  rdma_create_qp also moves the QP through the
 * states the cm_id's connection allows, and once the requester of a
 * connection went away (its request, then nothing: its cm_id is
 * rejected or reset) that fails with EINVAL at every rung, as an inline
 * size the provider refuses would.  A plain QP with the last rung's
 * attributes tells the two apart.
 */
static bool device_makes_the_qp(struct rdmig_vres *r, const struct ibv_qp_init_attr *base)
{
	struct ibv_qp_init_attr attr = *base;
	struct ibv_qp *qp;

	attr.cap.max_inline_data = 0;
	qp = ibv_create_qp(r->pd, &attr);
	if (!qp)
		return false;
	ibv_destroy_qp(qp);
	return true;
}

static int create_qp(struct vres_make *m)
{
	struct rdmig_vres *r = m->r;
	struct ibv_qp_init_attr base;
	struct ladder_ops ops = {cm_create_qp, cm_destroy_qp, r};
	struct ladder_result res;
	int failed;

	rdmig__conn_qp_base_attr(&base, m->opts->max_send_wr, r->cq[VRES_SEND], r->cq[VRES_RECV]);
	failed = rdmig__inline_ladder_run(m->opts->inline_request, &base, &ops, m->opts, &res);
	if (failed && res.last_errno == EINVAL && device_makes_the_qp(r, &base))
		return rdmig__fail(m->opts, m->errmsg, RDMIG_EDISCONNECTED,
				   "the peer went away before its connection was set up: "
				   "rdma_create_qp on %s refuses its connection (%s), while the "
				   "device creates the same QP without it (not an inline limit)",
				   device_name(r), strerror(res.last_errno));
	if (failed)
		return rdmig__fail(m->opts, m->errmsg, rdmig__syserr(res.last_errno),
				   "rdma_create_qp on %s failed at every inline request (last: "
				   "max_inline_data=%u max_send_wr=%u max_send_sge=%u max_recv_wr=%u): %s",
				   device_name(r), res.asked.max_inline_data,
				   res.asked.max_send_wr, res.asked.max_send_sge, res.asked.max_recv_wr,
				   strerror(res.last_errno));
	r->qp_created = true;
	r->inl = res.info;
	rdmig__log(m->opts, RDMIG_LOG_DEBUG,
		   "%s: inline asked %u, granted %u after %u tries (written back %u)",
		   device_name(r), res.info.asked, res.info.granted, res.info.tries,
		   res.info.written_back);
	return 0;
}

static int create_cq(struct vres_make *m, enum vres_side side, int cqe, const char *what)
{
	struct rdmig_vres *r = m->r;

	r->cc[side] = ibv_create_comp_channel(r->id->verbs);
	if (!r->cc[side])
		return rdmig__fail(m->opts, m->errmsg, rdmig__syserr(errno),
				   "ibv_create_comp_channel (%s): %s", what, strerror(errno));
	if (set_nonblock(r->cc[side]->fd))
		return rdmig__fail(m->opts, m->errmsg, rdmig__syserr(errno),
				   "fcntl O_NONBLOCK (%s): %s", what, strerror(errno));
	r->cq[side] = ibv_create_cq(r->id->verbs, cqe, NULL, r->cc[side], 0);
	if (!r->cq[side])
		return rdmig__fail(m->opts, m->errmsg, rdmig__syserr(errno),
				   "ibv_create_cq (%s, %d entries): %s", what, cqe, strerror(errno));
	return 0;
}

static int register_buffers(struct vres_make *m)
{
	struct rdmig_vres *r = m->r;
	size_t len = (size_t)SLOT_COUNT * RDMIG_CONTROL_BUFFER;
	int err = posix_memalign((void **)&r->bufs, (size_t)sysconf(_SC_PAGESIZE), len);

	if (err) {
		r->bufs = NULL;
		return rdmig__fail(m->opts, m->errmsg, RDMIG_ENOMEM,
				   "cannot allocate %zu bytes of control buffers", len);
	}
	memset(r->bufs, 0, len);
	/* Control buffers take sends and receives only: no remote access. */
	r->buf_mr = ibv_reg_mr(r->pd, r->bufs, len, IBV_ACCESS_LOCAL_WRITE);
	if (!r->buf_mr)
		return rdmig__fail(m->opts, m->errmsg, rdmig__syserr(errno),
				   "ibv_reg_mr of %zu bytes of control buffers: %s%s", len,
				   strerror(errno),
				   errno == ENOMEM || errno == EPERM ? " (check ulimit -l)" : "");
	return 0;
}

int rdmig__vres_create(struct rdma_cm_id *id, const struct rdmig_opts *opts, char *errmsg,
		       struct rdmig_vres **out)
{
	struct vres_make m = {calloc(1, sizeof(struct rdmig_vres)), opts, errmsg};
	int ret;

	*out = m.r;
	if (!m.r)
		return rdmig__fail(opts, errmsg, RDMIG_ENOMEM, "cannot allocate the verbs resources");
	m.r->id = id;
	m.r->pd = ibv_alloc_pd(id->verbs);
	if (!m.r->pd)
		return rdmig__fail(opts, errmsg, rdmig__syserr(errno), "ibv_alloc_pd: %s",
				   strerror(errno));
	ret = create_cq(&m, VRES_SEND, (int)opts->max_send_wr * 2, "send");
	if (!ret)
		ret = create_cq(&m, VRES_RECV, CONN_RECV_CQE, "recv");
	if (!ret)
		ret = register_buffers(&m);
	if (!ret)
		ret = create_qp(&m);
	return ret; /* on failure the caller's destroy frees what exists */
}

void rdmig__vres_destroy(struct rdmig_vres *r)
{
	if (!r)
		return;
	if (r->qp_created)
		rdma_destroy_qp(r->id);
	if (r->buf_mr)
		ibv_dereg_mr(r->buf_mr);
	free(r->bufs);
	for (int side = VRES_SEND; side <= VRES_RECV; side++) {
		if (r->cq[side])
			ibv_destroy_cq(r->cq[side]);
		if (r->cc[side])
			ibv_destroy_comp_channel(r->cc[side]);
	}
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	free(r);
}

struct ibv_pd *rdmig__vres_pd(const struct rdmig_vres *r)
{
	return r ? r->pd : NULL;
}

struct ibv_cq *rdmig__vres_cq(const struct rdmig_vres *r, enum vres_side side)
{
	return r ? r->cq[side] : NULL;
}

struct ibv_comp_channel *rdmig__vres_cc(const struct rdmig_vres *r, enum vres_side side)
{
	return r ? r->cc[side] : NULL;
}

uint8_t *rdmig__vres_slot(const struct rdmig_vres *r, enum conn_slot s)
{
	return r && r->bufs ? r->bufs + (size_t)s * RDMIG_CONTROL_BUFFER : NULL;
}

int rdmig__vres_arm(const struct rdmig_vres *r)
{
	int ret = ibv_req_notify_cq(r->cq[VRES_SEND], 0);

	return ret ? ret : ibv_req_notify_cq(r->cq[VRES_RECV], 0);
}

void rdmig__vres_drain(const struct rdmig_vres *r, enum vres_side side)
{
	struct ibv_cq *cq;
	void *ctx;

	while (ibv_get_cq_event(r->cc[side], &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
}

const struct ibv_mr *rdmig__vres_buf_mr(const struct rdmig_vres *r)
{
	return r ? r->buf_mr : NULL;
}

const struct rdmig_inline_info *rdmig__vres_inline(const struct rdmig_vres *r)
{
	static const struct rdmig_inline_info none;

	return r ? &r->inl : &none;
}

struct rdmig_vres *rdmig__vres_fake(uint8_t *bufs, struct ibv_mr *mr, uint32_t granted)
{
	struct rdmig_vres *r = calloc(1, sizeof(*r));

	if (r) {
		r->bufs = bufs;
		r->buf_mr = mr;
		r->inl.granted = granted;
	}
	return r;
}

void rdmig__vres_free_fake(struct rdmig_vres *r)
{
	free(r);
}
