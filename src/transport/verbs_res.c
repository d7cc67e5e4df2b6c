/* SPDX-License-Identifier: BSD-2-Clause */
/* verbs_res.c - per-connection verbs resources, built and torn down in order. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "conn.h"
#include "verbs_res.h"
#include "inline_ladder.h"
#include "opts.h"

/* Receives in flight at most: one per receive slot (plus one spare, as QEMU). */
#define CONN_MAX_RECV_WR 3
/* Send CQ: every send WR may be signaled; recv CQ: the receive slots. */
#define CONN_RECV_CQE 16

struct rdmig_vres {
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc[2]; /* enum vres_side */
	struct ibv_cq *cq[2];
	uint8_t *bufs; /* SLOT_COUNT * RDMIG_CONTROL_BUFFER */
	struct ibv_mr *buf_mr;
	bool qp_created;
	struct rdmig_inline_info inl;
};

int rdmig__conn_alloc(const struct rdmig_opts *opts, enum conn_role role, struct rdmig_conn **out,
	       char *errmsg)
{
	struct rdmig_conn *c;
	int ret;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		if (errmsg)
			snprintf(errmsg, RDMIG_ERRMSG_SIZE, "cannot allocate a connection");
		return RDMIG_ENOMEM;
	}
	c->role = role;
	c->cap_version = RDMIG_CAP_VERSION;
	ret = rdmig__opts_copy(&c->opts, opts, c->errmsg);
	if (!ret && (!(c->cm = rdmig__cml_create()) || !(c->ch = rdmig__channel_create())))
		ret = rdmig__fail(&c->opts, c->errmsg, RDMIG_ENOMEM, "cannot allocate a connection");
	if (ret) {
		/* No handle on failure; the reason went to the log callback. */
		if (errmsg)
			memcpy(errmsg, c->errmsg, RDMIG_ERRMSG_SIZE);
		rdmig__cml_destroy(c->cm);
		free(c);
		return ret;
	}
	rdmig__conn_fd_init(c);
	atomic_init(&c->cancelled, false);
	/* made with the handle: rdmig_conn_cancel may come from another
	 * thread at any time, and must not race to make it */
	c->cancel_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	*out = c;
	return 0;
}

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

static int cm_create_qp(void *ctx, struct ibv_qp_init_attr *attr)
{
	struct rdmig_conn *c = ctx;
	return rdma_create_qp(rdmig__cml_id(c->cm), c->res->pd, attr) ? errno : 0;
}

static void cm_destroy_qp(void *ctx)
{
	struct rdmig_conn *c = ctx;
	rdma_destroy_qp(rdmig__cml_id(c->cm));
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
static bool device_makes_the_qp(struct rdmig_conn *c, const struct ibv_qp_init_attr *base)
{
	struct ibv_qp_init_attr attr = *base;
	struct ibv_qp *qp;

	attr.cap.max_inline_data = 0;
	qp = ibv_create_qp(c->res->pd, &attr);
	if (!qp)
		return false;
	ibv_destroy_qp(qp);
	return true;
}

static int create_qp(struct rdmig_conn *c)
{
	struct ibv_qp_init_attr base;
	struct ladder_ops ops = {cm_create_qp, cm_destroy_qp, c};
	struct ladder_result res;
	int failed;

	rdmig__conn_qp_base_attr(&base, c->opts.max_send_wr, c->res->cq[VRES_SEND], c->res->cq[VRES_RECV]);
	failed = rdmig__inline_ladder_run(c->opts.inline_request, &base, &ops, &c->opts, &res);
	if (failed && res.last_errno == EINVAL && device_makes_the_qp(c, &base))
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EDISCONNECTED,
				   "the peer went away before its connection was set up: "
				   "rdma_create_qp on %s refuses its connection (%s), while the "
				   "device creates the same QP without it (not an inline limit)",
				   rdmig__cml_device(c->cm),
				   strerror(res.last_errno));
	if (failed)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(res.last_errno),
				   "rdma_create_qp on %s failed at every inline request (last: "
				   "max_inline_data=%u max_send_wr=%u max_send_sge=%u max_recv_wr=%u): %s",
				   rdmig__cml_device(c->cm), res.asked.max_inline_data,
				   res.asked.max_send_wr, res.asked.max_send_sge, res.asked.max_recv_wr,
				   strerror(res.last_errno));
	c->res->qp_created = true;
	c->res->inl = res.info;
	rdmig__log(&c->opts, RDMIG_LOG_DEBUG,
		   "%s: inline asked %u, granted %u after %u tries (written back %u)",
		   rdmig__cml_device(c->cm), res.info.asked, res.info.granted,
		   res.info.tries, res.info.written_back);
	return 0;
}

static int create_cq(struct rdmig_conn *c, enum vres_side side, int cqe, const char *what)
{
	struct ibv_comp_channel **cc = &c->res->cc[side];
	struct ibv_cq **cq = &c->res->cq[side];
	struct ibv_context *verbs = rdmig__cml_id(c->cm)->verbs;
	int ret;

	*cc = ibv_create_comp_channel(verbs);
	if (!*cc)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno),
				   "ibv_create_comp_channel (%s): %s", what, strerror(errno));
	if (set_nonblock((*cc)->fd))
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno), "fcntl O_NONBLOCK (%s): %s",
				   what, strerror(errno));
	ret = rdmig__conn_fd_watch(c, (*cc)->fd, what);
	if (ret)
		return ret;
	*cq = ibv_create_cq(verbs, cqe, NULL, *cc, 0);
	if (!*cq)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno),
				   "ibv_create_cq (%s, %d entries): %s", what, cqe, strerror(errno));
	return 0;
}

static int register_buffers(struct rdmig_conn *c)
{
	size_t len = (size_t)SLOT_COUNT * RDMIG_CONTROL_BUFFER;
	int err = posix_memalign((void **)&c->res->bufs, (size_t)sysconf(_SC_PAGESIZE), len);

	if (err) {
		c->res->bufs = NULL;
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_ENOMEM,
				   "cannot allocate %zu bytes of control buffers", len);
	}
	memset(c->res->bufs, 0, len);
	/* Control buffers take sends and receives only: no remote access. */
	c->res->buf_mr = ibv_reg_mr(c->res->pd, c->res->bufs, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->res->buf_mr)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno),
				   "ibv_reg_mr of %zu bytes of control buffers: %s%s", len,
				   strerror(errno),
				   errno == ENOMEM || errno == EPERM ? " (check ulimit -l)" : "");
	return 0;
}

int rdmig__conn_res_create(struct rdmig_conn *c)
{
	int cqe = (int)c->opts.max_send_wr * 2;
	int ret;

	c->sq = rdmig__sq_create(c->opts.max_send_wr);
	if (!c->sq)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_ENOMEM,
				   "cannot allocate the send queue's ledger");

	c->res = calloc(1, sizeof(*c->res));
	if (!c->res)
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_ENOMEM,
				   "cannot allocate the verbs resources");
	c->res->pd = ibv_alloc_pd(rdmig__cml_id(c->cm)->verbs);
	if (!c->res->pd)
		return rdmig__fail(&c->opts, c->errmsg, rdmig__syserr(errno), "ibv_alloc_pd: %s",
				   strerror(errno));
	ret = create_cq(c, VRES_SEND, cqe, "send");
	if (!ret)
		ret = create_cq(c, VRES_RECV, CONN_RECV_CQE, "recv");
	if (!ret)
		ret = register_buffers(c);
	if (!ret)
		ret = create_qp(c);
	return ret; /* on failure the caller's destroy frees what exists */
}

void rdmig__conn_res_destroy(struct rdmig_conn *c)
{
	struct rdmig_vres *r = c->res;

	rdmig__sq_destroy(c->sq);
	c->sq = NULL;
	if (!r)
		return;
	if (r->qp_created)
		rdma_destroy_qp(rdmig__cml_id(c->cm));
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
	c->res = NULL;
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
