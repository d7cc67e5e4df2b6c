/* SPDX-License-Identifier: BSD-2-Clause */
/* fake_channel.c - the fakes described in fake_channel.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_channel.h"

struct fake_channel fake;

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

static void check_conn(const struct rdmig_conn *c, const char *what)
{
	if (c != fake.conn)
		fake_fail("%s on connection %p, not the destination's %p", what, (const void *)c,
			  (const void *)fake.conn);
}

void fake_begin(struct rdmig_conn *conn, const struct fake_hooks *hooks, unsigned fail_reg_at)
{
	fake.conn = conn;
	fake.hooks = *hooks;
	fake.fail_reg_at = fail_reg_at;
	fake.recvs = fake.errors_sent = fake.regs = fake.live_regions = 0;
	fake.disconnected = fake.reg_failed = false;
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

/* As channel.c: one READY, one message, parsed; errors named in errmsg. */
int rdmig_recv(struct rdmig_conn *c, uint32_t expect, struct rdmig_msg *out)
{
	const uint8_t *frame;
	struct rdmig_msg m;
	char why[256];
	size_t len;
	int ret;

	check_conn(c, "rdmig_recv");
	if (fake.disconnected)
		fake_fail("rdmig_recv again after it reported the disconnect");
	if (fake.hooks.before_recv)
		fake.hooks.before_recv(fake.hooks.ctx);
	fake.recvs++;
	free(fake.rx);
	fake.rx = NULL;
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

/* Record a reply after checking it as channel.c and the source would:
 * a known type, a bounded length, and bytes the source can parse. */
int rdmig_reply(struct rdmig_conn *c, const struct rdmig_msg *msg)
{
	struct rdmig_header h = {.len = msg->len, .type = msg->type, .repeat = msg->repeat};
	struct fake_reply *r;
	struct rdmig_msg parsed;
	uint8_t *wire;
	char why[256];
	int ret;

	check_conn(c, "rdmig_reply");
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

int rdmig_send_error(struct rdmig_conn *c)
{
	check_conn(c, "rdmig_send_error");
	if (!c->errmsg[0])
		fake_fail("ERROR sent with no reason in errmsg");
	fake.errors_sent++;
	return 0;
}

/* ------------------------------------------------ memory registration -- */

/* verbs.h makes ibv_reg_mr a macro that calls this function for constant
 * access flags without optional bits, which is how dest.c calls it. */
#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct ibv_mr *mr;
	size_t idx = fake.nregions;

	if (pd != fake.conn->pd)
		fake_fail("ibv_reg_mr on protection domain %p, not the connection's", (void *)pd);
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
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		fake_fail("out of memory");
	*mr = (struct ibv_mr){
		.pd = pd,
		.addr = addr,
		.length = length,
		.handle = (uint32_t)idx,
		.lkey = FAKE_RKEY_BASE + (uint32_t)idx,
		.rkey = FAKE_RKEY_BASE + (uint32_t)idx,
	};
	fake.regions[idx] = (struct fake_region){addr, length, true};
	fake.nregions++;
	fake.live_regions++;
	return mr;
}

/* The inline wrapper's other branch, for optional access flags: dest.c
 * never takes it, but an unoptimised build still links it. */
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	fake_fail("ibv_reg_mr_iova2 of %zu bytes with access 0x%x", length, access);
}

/* Frees the struct: a later use of the MR by the destination is an ASan
 * report, and deregistering twice is caught here. */
int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct fake_region *r;

	if (!mr || mr->handle >= fake.nregions || !fake.regions[mr->handle].live)
		fake_fail("ibv_dereg_mr of a region that is not registered");
	r = &fake.regions[mr->handle];
	if (fake.hooks.check_dereg)
		fake.hooks.check_dereg(fake.hooks.ctx, r->addr, r->len);
	r->live = false;
	fake.live_regions--;
	free(mr);
	return 0;
}
