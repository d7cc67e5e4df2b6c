/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * engine_io_conn.c - the engines' seam (engine_io.h) filled in from a
 * connection: registrations on its protection domain, writes and control
 * messages through channel.c.  It sees the connection through
 * conn_engine.h, as the sessions do through conn_session.h (conn.h is the
 * transport's alone); rdmig_source_create and rdmig_dest_create live here
 * because they are where a connection becomes an engine_io.
 */
#include <errno.h>
#include <stdlib.h>
#include "conn_engine.h"
#include "engine_io.h"
#include "wrid.h"

/* The ibv_mr behind an engine_mr; the engine sees only `pub`. */
struct conn_mr {
	struct engine_mr pub;
	struct ibv_mr *mr;
};

/* ibv_reg_mr with constant flags, as the engines called it before the
 * seam: verbs.h sends non-constant flags through ibv_reg_mr_iova2. */
static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, uint64_t len,
			     enum engine_access access)
{
	if (access == ENGINE_ACCESS_REMOTE_WRITE)
		return ibv_reg_mr(pd, addr, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	return ibv_reg_mr(pd, addr, len, 0);
}

static struct engine_mr *conn_io_reg(void *ctx, void *addr, uint64_t len,
				     enum engine_access access)
{
	struct rdmig_conn *c = ctx;
	struct conn_mr *w = malloc(sizeof(*w));
	int err;

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->mr = reg_mr(rdmig__conn_pd(c), addr, len, access);
	if (!w->mr) {
		err = errno; /* what the engine will report */
		free(w);
		errno = err;
		return NULL;
	}
	w->pub = (struct engine_mr){.addr = w->mr->addr, .length = w->mr->length,
				    .lkey = w->mr->lkey, .rkey = w->mr->rkey};
	return &w->pub;
}

static void conn_io_dereg(void *ctx, struct engine_mr *mr)
{
	/* pub is the first member: the engine_mr is the conn_mr */
	struct conn_mr *w = (struct conn_mr *)mr;

	ibv_dereg_mr(w->mr);
	free(w);
}

static int conn_io_post_write(void *ctx, const struct engine_write *w)
{
	return rdmig__conn_post_write(ctx, w->local, w->len, w->lkey, w->remote, w->rkey, w->signal,
				      wrid_make(WRID_WRITE, w->block, w->chunk));
}

static int conn_io_flush_sends(void *ctx, int timeout_ms)
{
	return rdmig__conn_flush_sends(ctx, timeout_ms);
}

static int conn_io_send(void *ctx, const struct rdmig_msg *msg)
{
	return rdmig_send(ctx, msg);
}

static int conn_io_request_send(void *ctx, const struct rdmig_msg *msg)
{
	return rdmig__conn_request_send(ctx, msg);
}

static int conn_io_request_reply(void *ctx, uint32_t reply_type, struct rdmig_msg *reply)
{
	return rdmig__conn_request_reply(ctx, reply_type, reply);
}

static int conn_io_recv(void *ctx, uint32_t expect, int timeout_ms, struct rdmig_msg *msg)
{
	return rdmig__conn_recv_within(ctx, expect, timeout_ms, msg);
}

static int conn_io_try_recv(void *ctx, uint32_t expect, struct rdmig_msg *msg)
{
	return rdmig__conn_try_recv(ctx, expect, msg);
}

static int conn_io_reply(void *ctx, const struct rdmig_msg *msg)
{
	return rdmig_reply(ctx, msg);
}

static int conn_io_send_error(void *ctx)
{
	return rdmig_send_error(ctx);
}

static bool conn_io_established(void *ctx)
{
	return rdmig__conn_established(ctx);
}

static uint64_t conn_io_writes_signaled(void *ctx)
{
	return rdmig__conn_writes_signaled(ctx);
}

static const struct engine_io_ops conn_io_ops = {
	.reg = conn_io_reg,
	.dereg = conn_io_dereg,
	.post_write = conn_io_post_write,
	.flush_sends = conn_io_flush_sends,
	.send = conn_io_send,
	.request_send = conn_io_request_send,
	.request_reply = conn_io_request_reply,
	.recv = conn_io_recv,
	.try_recv = conn_io_try_recv,
	.reply = conn_io_reply,
	.send_error = conn_io_send_error,
	.established = conn_io_established,
	.writes_signaled = conn_io_writes_signaled,
};

static struct engine_io conn_io(struct rdmig_conn *c)
{
	return (struct engine_io){&conn_io_ops, c, rdmig__conn_opts(c), rdmig__conn_errbuf(c),
				  rdmig__conn_caps(c), rdmig__conn_cancel_flag(c)};
}

int rdmig_source_create(struct rdmig_conn *c, const struct rdmig_block *blocks, size_t nblocks,
			struct rdmig_source **out)
{
	if (out)
		*out = NULL;
	if (!c || !out)
		return RDMIG_EINVAL;
	struct engine_io io = conn_io(c);
	return rdmig__source_create(&io, blocks, nblocks, out);
}

int rdmig_dest_create(struct rdmig_conn *c, struct rdmig_dest **out)
{
	if (out)
		*out = NULL;
	if (!c || !out)
		return RDMIG_EINVAL;
	struct engine_io io = conn_io(c);
	return rdmig__dest_create(&io, out);
}
