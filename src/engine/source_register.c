/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source_register.c - the source's control messages and registrations:
 * every control message goes through rdmig__src_control_send/_request
 * (which first take a reply asked for ahead), keep-alives, REGISTER_REQUEST
 * and its reply, and our own registration of a chunk.  When to register
 * (ahead or not) is the write queue's choice (source_write.c); this layer
 * calls only down, into the engine and its seam.
 */
#include <string.h>
#include "clock.h"
#include "source_int.h"

/* Every control message of the source goes through these two, so that
 * keep-alives know how long the connection has been silent; without
 * keep-alives nobody asks, and the clock is not read. */
static void stamp_control(struct rdmig_source *s)
{
	if (s->keep_alive_ms)
		s->last_control_us = rdmig__now_us();
}

/* A reply the destination sent before its next READY is taken first: no
 * control message may overtake it.  POST is the seam's send (no reply) or
 * request_send (a reply follows). */
static int control_post(struct rdmig_source *s, const struct rdmig_msg *msg,
			int (*post)(void *ctx, const struct rdmig_msg *msg))
{
	int ret = rdmig__src_collect_ahead(s);

	if (!ret)
		ret = post(s->io.ctx, msg);

	stamp_control(s);
	return ret;
}

int rdmig__src_control_send(struct rdmig_source *s, const struct rdmig_msg *msg)
{
	return control_post(s, msg, s->io.ops->send);
}

int rdmig__src_control_request(struct rdmig_source *s, const struct rdmig_msg *msg)
{
	return control_post(s, msg, s->io.ops->request_send);
}

/* REGISTER_REQUEST for the chunk at OFFSET of block BI; our own chunk is
 * registered while the destination works on it.  The reply is taken by
 * rdmig__src_take_register_result, and no other control message may go in between. */
int rdmig__src_ask_register(struct rdmig_source *s, uint32_t bi, uint64_t offset)
{
	struct src_block *b = &s->blocks[bi];
	/* chunks = how many chunks AFTER the first (as QEMU sends and reads it) */
	struct rdmig_register reg = {.key = b->remote_offset + offset, .block_index = bi, .chunks = 0};
	uint8_t rec[RDMIG_REGISTER_SIZE];
	int ret;

	s->register_t0 = rdmig__now_us();
	rdmig_encode_register(&reg, rec);
	ret = rdmig__src_control_request(s, &(struct rdmig_msg){RDMIG_MSG_REGISTER_REQUEST, 1, sizeof(rec),
						     rec});
	return ret ? ret : rdmig__src_register_local_chunk(s, b, (uint32_t)(offset >> s->shift));
}

/* AHEAD: the request went before the writes now queued, so its round
 * trip says more about them than about the network: only the wait counts. */
int rdmig__src_take_register_result(struct rdmig_source *s, uint32_t bi, uint64_t offset,
				    bool ahead)
{
	struct src_block *b = &s->blocks[bi];
	uint32_t chunk = (uint32_t)(offset >> s->shift);
	struct rdmig_register_result res;
	struct rdmig_msg reply;
	double t0 = rdmig__now_us();
	int ret = s->io.ops->request_reply(s->io.ctx, RDMIG_MSG_REGISTER_RESULT, &reply);
	double t1 = rdmig__now_us();

	s->st.register_wait_seconds += (t1 - t0) / 1e6;
	if (ret)
		return ret;
	if (reply.repeat != 1)
		return rdmig__engine_abort(&s->io, RDMIG_EPROTO,
				    "REGISTER_RESULT with repeat %u for a request of 1", reply.repeat);
	rdmig_decode_register_result(reply.payload, &res);
	/* The block start, as QEMU answers (and as RAM_BLOCKS_RESULT said):
	 * any other address would aim our writes elsewhere. */
	if (res.host_addr != b->remote_host)
		return rdmig__engine_abort(&s->io, RDMIG_ERANGE,
				    "REGISTER_RESULT for block %u (%s): host address 0x%llx, but "
				    "RAM_BLOCKS_RESULT put the block at 0x%llx", bi, b->name,
				    (unsigned long long)res.host_addr,
				    (unsigned long long)b->remote_host);
	b->remote_rkey[chunk] = res.rkey;
	b->remote_ok[chunk] = 1;
	s->st.register_requests++;
	s->st.register_ahead += ahead;
	return ahead ? 0 : rdmig__latency_log_add(&s->rtt, t1 - s->register_t0);
}

/* Take the reply to the request sent ahead, if one is out. */
int rdmig__src_collect_ahead(struct rdmig_source *s)
{
	struct request_ahead a = s->ahead;

	if (!a.out)
		return 0;
	s->ahead.out = false;
	return rdmig__src_take_register_result(s, a.block, a.offset, true);
}

int rdmig_source_set_keep_alive(struct rdmig_source *s, int interval_ms)
{
	if (!s)
		return RDMIG_EINVAL;
	if (interval_ms < 0)
		return engine_fail(&s->io, RDMIG_EINVAL, "keep-alive interval %d ms is negative",
				   interval_ms);
	/* off until now, the silence was not timed: count from here */
	if (!s->keep_alive_ms)
		s->last_control_us = rdmig__now_us();
	s->keep_alive_ms = interval_ms;
	return 0;
}

/* An empty stream message, the one control message that means nothing to
 * the destination but still waits for its READY: a dead peer shows. */
int rdmig_source_keep_alive(struct rdmig_source *s)
{
	if (!s)
		return RDMIG_EINVAL;
	if (!s->keep_alive_ms || !s->set_up ||
	    rdmig__now_us() - s->last_control_us < s->keep_alive_ms * 1000.0)
		return 0;
	return rdmig__src_answer_violation(
		s, rdmig__src_control_send(s, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 0, NULL}));
}
