/* SPDX-License-Identifier: BSD-2-Clause */
/* fake_io.c - the fake engine_io described in fake_io.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_io.h"

struct fake_io fake;

void fake_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz_dest: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static struct fake_conn *check_conn(void *ctx, const char *what)
{
	struct fake_conn *c = ctx;

	if (c != fake.conn)
		fake_fail("%s on connection %p, not the destination's %p", what, (const void *)c,
			  (const void *)fake.conn);
	return c;
}

void fake_begin(struct fake_conn *conn, const struct fake_hooks *hooks, unsigned fail_reg_at)
{
	fake.conn = conn;
	fake.io = fake_io_of(conn);
	fake.hooks = *hooks;
	fake.fail_reg_at = fail_reg_at;
	fake.recvs = fake.errors_sent = fake.regs = fake.live_regions = 0;
	fake.try_recvs = fake.eagains = 0;
	fake.disconnected = fake.reg_failed = fake.ready_out = false;
	fake.nreplies = 0;
	fake.nregions = 0;
}

void fake_clear_replies(void)
{
	for (unsigned i = 0; i < fake.nreplies; i++)
		free(fake.replies[i].wire);
	fake.nreplies = 0;
}

void fake_end(void)
{
	if (fake.live_regions)
		fake_fail("%u memory regions still registered after rdmig_dest_destroy",
			  fake.live_regions);
	fake_clear_replies();
	free(fake.rx);
	fake.rx = NULL;
	fake.conn = NULL;
}

const struct fake_region *fake_region_of(uint32_t rkey)
{
	if (rkey < FAKE_RKEY_BASE || rkey - FAKE_RKEY_BASE >= fake.nregions)
		return NULL;
	return &fake.regions[rkey - FAKE_RKEY_BASE];
}

/* ----------------------------------------------------------- channel -- */

/* As channel.c: one READY per message, however often it is asked for;
 * the previous message's buffer goes back with it. */
static void give_ready(void)
{
	if (fake.disconnected)
		fake_fail("recv again after it reported the disconnect");
	if (fake.ready_out)
		return;
	if (fake.hooks.before_recv)
		fake.hooks.before_recv(fake.hooks.ctx);
	fake.recvs++;
	fake.ready_out = true;
	free(fake.rx);
	fake.rx = NULL;
}

/* Take the message the READY asked for, parsed; errors named in errmsg. */
static int take(struct fake_conn *c, uint32_t expect, struct rdmig_msg *out)
{
	const uint8_t *frame;
	struct rdmig_msg m;
	char why[256];
	size_t len;
	int ret;

	fake.ready_out = false;
	if (!fake.hooks.next_frame(fake.hooks.ctx, &frame, &len)) {
		fake.disconnected = true;
		fake.hooks.delivered(fake.hooks.ctx, RDMIG_EDISCONNECTED, NULL);
		return rdmig__fail(&c->opts, c->errmsg, RDMIG_EDISCONNECTED,
				   "the peer disconnected while we waited for the next message");
	}
	/* A buffer of exactly the received size: reading past it is an ASan report. */
	fake.rx = malloc(len ? len : 1);
	if (!fake.rx)
		fake_fail("out of memory");
	memcpy(fake.rx, frame, len);
	ret = rdmig_msg_parse(fake.rx, len, expect, &m, why, sizeof(why));
	fake.hooks.delivered(fake.hooks.ctx, ret, ret ? NULL : &m);
	if (ret == RDMIG_EPEER)
		return rdmig__fail(&c->opts, c->errmsg, ret, "the peer sent ERROR");
	if (ret)
		return rdmig__fail(&c->opts, c->errmsg, ret, "bad message: %s", why);
	*out = m;
	return 0;
}

static int fake_recv(void *ctx, uint32_t expect, int timeout_ms, struct rdmig_msg *out)
{
	(void)timeout_ms; /* the frames are there, or the peer is gone: no wait */
	struct fake_conn *c = check_conn(ctx, "recv");

	give_ready();
	return take(c, expect, out);
}

static int fake_try_recv(void *ctx, uint32_t expect, struct rdmig_msg *out)
{
	struct fake_conn *c = check_conn(ctx, "try_recv");

	fake.try_recvs++;
	give_ready();
	if (fake.hooks.arrived && !fake.hooks.arrived(fake.hooks.ctx)) {
		fake.eagains++;
		return RDMIG_EAGAIN;
	}
	return take(c, expect, out);
}

/* Record a reply after checking it as channel.c and the source would:
 * a known type, a bounded length, and bytes the source can parse. */
static int fake_reply(void *ctx, const struct rdmig_msg *msg)
{
	struct rdmig_header h = {.len = msg->len, .type = msg->type, .repeat = msg->repeat};
	struct fake_reply *r;
	struct rdmig_msg parsed;
	uint8_t *wire;
	char why[256];
	int ret;

	check_conn(ctx, "reply");
	if (msg->len > RDMIG_MAX_LEN || (msg->len && !msg->payload))
		fake_fail("%s reply with len %u, payload %p", rdmig_msg_type_name(msg->type),
			  msg->len, msg->payload);
	if (fake.nreplies == FAKE_MAX_REPLIES)
		fake_fail("more than %d replies to one message", FAKE_MAX_REPLIES);
	wire = malloc(RDMIG_HEADER_SIZE + msg->len);
	if (!wire)
		fake_fail("out of memory");
	rdmig_encode_header(&h, wire);
	if (msg->len)
		memcpy(wire + RDMIG_HEADER_SIZE, msg->payload, msg->len);
	ret = rdmig_msg_parse(wire, RDMIG_HEADER_SIZE + msg->len, msg->type, &parsed, why,
			      sizeof(why));
	if (ret)
		fake_fail("the source would reject our %s reply: %s", rdmig_msg_type_name(msg->type),
			  why);
	r = &fake.replies[fake.nreplies++];
	*r = (struct fake_reply){msg->type, msg->repeat, msg->len, wire, wire + RDMIG_HEADER_SIZE};
	return 0;
}

static int fake_send_error(void *ctx)
{
	const struct fake_conn *c = check_conn(ctx, "send_error");

	if (!c->errmsg[0])
		fake_fail("ERROR sent with no reason in errmsg");
	fake.errors_sent++;
	return 0;
}

/* ------------------------------------------------ memory registration -- */

static struct engine_mr *fake_reg(void *ctx, void *addr, uint64_t length,
				  enum engine_access access)
{
	struct engine_mr *mr;
	size_t idx = fake.nregions;

	check_conn(ctx, "reg");
	if (++fake.regs == fake.fail_reg_at) {
		fake.reg_failed = true;
		errno = ENOMEM;
		return NULL;
	}
	fake.hooks.check_reg(fake.hooks.ctx, addr, length, access);
	if (fake.nregions == fake.regions_cap) {
		size_t cap = fake.regions_cap ? fake.regions_cap * 2 : 64;
		struct fake_region *n = realloc(fake.regions, cap * sizeof(*n));
		if (!n)
			fake_fail("out of memory");
		fake.regions = n;
		fake.regions_cap = cap;
	}
	mr = malloc(sizeof(*mr));
	if (!mr)
		fake_fail("out of memory");
	*mr = (struct engine_mr){.addr = addr, .length = length,
				 .lkey = FAKE_RKEY_BASE + (uint32_t)idx,
				 .rkey = FAKE_RKEY_BASE + (uint32_t)idx};
	fake.regions[idx] = (struct fake_region){addr, length, true};
	fake.nregions++;
	fake.live_regions++;
	return mr;
}

/* Frees the struct: a later use of the region by the destination is an
 * ASan report, and deregistering twice is caught here. */
static void fake_dereg(void *ctx, struct engine_mr *mr)
{
	uint32_t idx = mr ? mr->rkey - FAKE_RKEY_BASE : 0;
	struct fake_region *r;

	check_conn(ctx, "dereg");
	if (!mr || mr->rkey < FAKE_RKEY_BASE || idx >= fake.nregions || !fake.regions[idx].live)
		fake_fail("dereg of a region that is not registered");
	r = &fake.regions[idx];
	if (fake.hooks.check_dereg)
		fake.hooks.check_dereg(fake.hooks.ctx, r->addr, r->len);
	r->live = false;
	fake.live_regions--;
	free(mr);
}

/* ------------------------------------------------------- the rest -- */

static bool fake_established(void *ctx)
{
	const struct fake_conn *c = ctx;
	return c->established;
}

/* What the destination never does: writes, flushes, sends and requests
 * are the source's. */
static int fake_post_write(void *ctx, const struct engine_write *w)
{
	fake_fail("post_write of %u bytes by the destination", w->len);
}

static int fake_flush_sends(void *ctx, int timeout_ms)
{
	fake_fail("flush_sends by the destination");
}

static int fake_send(void *ctx, const struct rdmig_msg *msg)
{
	fake_fail("send of %s by the destination", rdmig_msg_type_name(msg->type));
}

static int fake_request_reply(void *ctx, uint32_t reply_type, struct rdmig_msg *reply)
{
	fake_fail("request_reply for %s by the destination", rdmig_msg_type_name(reply_type));
}

static uint64_t fake_writes_signaled(void *ctx)
{
	fake_fail("writes_signaled asked by the destination");
}

static const struct engine_io_ops fake_ops = {
	.reg = fake_reg,
	.dereg = fake_dereg,
	.post_write = fake_post_write,
	.flush_sends = fake_flush_sends,
	.send = fake_send,
	.request_send = fake_send,
	.request_reply = fake_request_reply,
	.recv = fake_recv,
	.try_recv = fake_try_recv,
	.reply = fake_reply,
	.send_error = fake_send_error,
	.established = fake_established,
	.writes_signaled = fake_writes_signaled,
};

struct engine_io fake_io_of(struct fake_conn *conn)
{
	return (struct engine_io){&fake_ops, conn, &conn->opts, conn->errmsg, &conn->caps,
				  &conn->cancelled};
}

void fake_frames_add(struct fake_frames *q, uint32_t type, uint32_t repeat, const void *payload,
		     uint32_t len)
{
	struct rdmig_header h = {.len = len, .type = type, .repeat = repeat};
	uint8_t *p;

	if (q->n == FAKE_MAX_FRAMES)
		fake_fail("more than %d frames", FAKE_MAX_FRAMES);
	p = malloc(RDMIG_HEADER_SIZE + len + 1);
	if (!p)
		fake_fail("out of memory for a frame of %u bytes", len);
	rdmig_encode_header(&h, p);
	if (len)
		memcpy(p + RDMIG_HEADER_SIZE, payload, len);
	q->frame[q->n] = p;
	q->len[q->n++] = RDMIG_HEADER_SIZE + len;
}

bool fake_frames_next(struct fake_frames *q, const uint8_t **buf, size_t *len)
{
	if (q->next == q->n)
		return false;
	*buf = q->frame[q->next];
	*len = q->len[q->next++];
	return true;
}

void fake_frames_free(struct fake_frames *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->frame[i]);
	q->n = q->next = 0;
}
