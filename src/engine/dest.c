/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dest.c - the receiving side of a migration.
 *
 * One loop, as QEMU's destination: send READY, wait for any message,
 * handle it.  Stream bytes, the end of an iteration and the end of the
 * migration go back to the caller; registration, COMPRESS and
 * unregistration are served by dest_serve.c.  The destination exposes its memory to
 * the network, so every index, offset, length and chunk count from the
 * source is checked against the blocks before it is used (QEMU's own
 * destination does not check COMPRESS ranges nor UNREGISTER chunks).  A
 * violation sends ERROR and ends the migration.
 *
 * Memory is registered for local and remote write only, never remote read,
 * and only what the source asks for (or everything, with PIN_ALL, when the
 * block list is requested).  What it served it reports too, when asked
 * (rdmig_dest_set_events; the queue is in dest_events.c).
 *
 * Two limits keep a source from holding the destination at no cost to
 * itself: a progress deadline (rdmig_opts.idle_timeout_ms, dest_idle.h)
 * ends a source that only keeps the connection busy, and a budget of
 * re-registrations (rdmig_opts.repin_budget) ends one that unregisters
 * and registers the same chunks again and again, which pins memory each
 * time.
 */
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "dest_events.h"
#include "dest_idle.h"
#include "dest_int.h"
#include "dest_zranges.h"

/* rdmig_dest_create over a connection is in engine_io_conn.c. */
int rdmig__dest_create(const struct engine_io *io, struct rdmig_dest **out)
{
	struct rdmig_dest *d;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (d) {
		d->scratch = malloc((size_t)RDMIG_MAX_REPEAT * RDMIG_DEST_BLOCK_SIZE);
		d->zr = malloc((size_t)RDMIG_MAX_REPEAT * sizeof(*d->zr));
	}
	if (!d || !d->scratch || !d->zr) {
		if (d)
			free(d->scratch);
		free(d);
		return engine_fail(io, RDMIG_ENOMEM, "cannot allocate the destination");
	}
	d->io = *io;
	d->shift = engine_chunk_shift(io->opts->chunk_size);
	dest_idle_start(&d->idle, io->opts->idle_timeout_ms, rdmig__now_us());
	if (io->opts->deadline_ms > 0)
		d->deadline_us = rdmig__now_us() + io->opts->deadline_ms * 1000.0;
	*out = d;
	return 0;
}

int rdmig_dest_set_chunk_size(struct rdmig_dest *d, uint64_t chunk_size)
{
	if (!d)
		return RDMIG_EINVAL;
	if (!chunk_size)
		chunk_size = RDMIG_CHUNK_SIZE;
	if (!RDMIG_CHUNK_SIZE_VALID(chunk_size))
		return engine_fail(&d->io, RDMIG_EINVAL,
				   "chunk size %llu bytes: a power of two from 1 MiB to 1 GiB",
				   (unsigned long long)chunk_size);
	/* the blocks' chunk bookkeeping is laid out in set_blocks */
	if (d->have_blocks)
		return engine_fail(&d->io, RDMIG_ESTATE, "the chunk size is set before the blocks");
	d->shift = engine_chunk_shift(chunk_size);
	return 0;
}

int rdmig_dest_set_events(struct rdmig_dest *d, unsigned mask)
{
	if (!d)
		return RDMIG_EINVAL;
	if (mask & ~DEST_REPORT_KNOWN)
		return engine_fail(&d->io, RDMIG_EINVAL, "destination events: unknown bits 0x%x",
				   mask & ~DEST_REPORT_KNOWN);
	if (rdmig__dest_events_set(&d->events, mask))
		return engine_fail(&d->io, RDMIG_ENOMEM, "out of memory for destination events");
	return 0;
}

static void free_blocks(struct rdmig_dest *d)
{
	for (size_t i = 0; i < d->nblocks; i++) {
		if (d->blocks[i].block_mr)
			d->io.ops->dereg(d->io.ctx, d->blocks[i].block_mr);
		free(d->blocks[i].chunk_mr);
		free(d->blocks[i].released);
		free(d->blocks[i].name);
	}
	free(d->blocks);
	d->blocks = NULL;
	d->nblocks = 0;
}

void rdmig_dest_destroy(struct rdmig_dest *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nmrs; i++)
		d->io.ops->dereg(d->io.ctx, d->mrs[i]);
	free(d->mrs);
	free_blocks(d);
	free(d->scratch);
	free(d->zr);
	rdmig__dest_events_free(&d->events);
	free(d);
}

const char *rdmig_dest_errmsg(const struct rdmig_dest *d)
{
	return d ? d->io.errmsg : "no destination";
}

int rdmig_dest_set_blocks(struct rdmig_dest *d, const struct rdmig_block *blocks, size_t nblocks)
{
	if (!d)
		return RDMIG_EINVAL;
	uint64_t next_offset = 0;
	int ret;

	if (d->have_blocks)
		return engine_fail(&d->io, RDMIG_ESTATE,
				   "the destination's blocks are already set");
	ret = rdmig__engine_check_blocks(&d->io, blocks, nblocks, d->shift);
	if (ret)
		return ret;
	d->blocks = calloc(nblocks ? nblocks : 1, sizeof(*d->blocks));
	if (!d->blocks)
		return engine_fail(&d->io, RDMIG_ENOMEM, "out of memory");
	d->nblocks = nblocks;
	for (size_t i = 0; i < nblocks; i++) {
		struct dst_block *b = &d->blocks[i];
		b->name = strdup(blocks[i].name ? blocks[i].name : "");
		b->host = blocks[i].host;
		b->length = blocks[i].length;
		b->nchunks = engine_chunk_count(b->length, d->shift);
		b->chunk_mr = calloc(b->nchunks ? b->nchunks : 1, sizeof(*b->chunk_mr));
		b->released = calloc(b->nchunks ? b->nchunks : 1, 1);
		/* Lay blocks out one after another, chunk-aligned, unless given. */
		b->offset = blocks[i].offset ? blocks[i].offset : next_offset;
		next_offset = engine_align_chunk(b->offset + b->length, d->shift);
		if (!b->name || !b->chunk_mr || !b->released) {
			free_blocks(d);
			return engine_fail(&d->io, RDMIG_ENOMEM, "out of memory");
		}
	}
	d->have_blocks = true;
	return 0;
}

/* --------------------------------------------------------- RAM blocks -- */

static int pin_all_blocks(struct rdmig_dest *d)
{
	for (size_t i = 0; i < d->nblocks; i++) {
		struct dst_block *b = &d->blocks[i];
		if (!b->length || b->block_mr)
			continue;
		b->block_mr = rdmig__dest_register_remote(d, b->host, b->length);
		if (!b->block_mr)
			return rdmig__engine_reg_failed(&d->io, "destination block", b->name,
							b->length);
		d->st.chunks_registered += b->nchunks;
	}
	return 0;
}

/* RAM_BLOCKS_RESULT: one DestBlock per block, in the source's order.  Like
 * QEMU: repeat 1, the count is len / 32. */
static int reply_blocks(struct rdmig_dest *d)
{
	bool pin_all = d->io.caps->flags & RDMIG_CAP_PIN_ALL;
	int ret = pin_all ? pin_all_blocks(d) : 0;

	if (ret)
		return rdmig__engine_abort_keep(&d->io, ret);
	for (size_t i = 0; i < d->nblocks; i++) {
		struct dst_block *b = &d->blocks[i];
		struct rdmig_dest_block db = {
			/* A block of no bytes is never written: telling its
			 * pointer (a caller's placeholder, maybe a static of
			 * the library's) would only tell where we are loaded.
			 * QEMU's source uses the address only to aim writes. */
			.remote_host_addr = b->length ? (uintptr_t)b->host : 0,
			.offset = b->offset,
			.length = b->length,
			.remote_rkey = b->block_mr ? b->block_mr->rkey : 0,
		};
		rdmig_encode_dest_block(&db, d->scratch + i * RDMIG_DEST_BLOCK_SIZE);
	}
	d->blocks_sent = true;
	d->blocks_pending = false;
	/* pinning every block is this side's time, however long it took */
	dest_idle_progress(&d->idle, rdmig__now_us());
	return d->io.ops->reply(d->io.ctx, &(struct rdmig_msg){RDMIG_MSG_RAM_BLOCKS_RESULT, 1,
			  (uint32_t)(d->nblocks * RDMIG_DEST_BLOCK_SIZE), d->scratch});
}

/* --------------------------------------------------------- the loop -- */

static int blocks_request(struct rdmig_dest *d, struct rdmig_event *ev, bool *ret_now)
{
	if (d->blocks_sent)
		return rdmig__engine_abort(&d->io, RDMIG_EPROTO, "a second RAM_BLOCKS_REQUEST");
	if (d->have_blocks)
		return reply_blocks(d);
	d->blocks_pending = true;
	*ev = (struct rdmig_event){.type = RDMIG_EV_BLOCKS_NEEDED};
	*ret_now = true;
	return 0;
}

/* Handle one message; *ret_now when it produced an event for the caller. */
static int dispatch(struct rdmig_dest *d, const struct rdmig_msg *m, struct rdmig_event *ev,
		    bool *ret_now)
{
	switch (m->type) {
	case RDMIG_MSG_QEMU_FILE:
		d->st.stream_bytes += m->len;
		d->progress = m->len > 0; /* an empty one is a keep-alive */
		*ev = (struct rdmig_event){RDMIG_EV_STREAM, m->payload, m->len};
		*ret_now = true;
		return 0;
	case RDMIG_MSG_RAM_BLOCKS_REQUEST:
		return blocks_request(d, ev, ret_now);
	case RDMIG_MSG_REGISTER_REQUEST:
		return rdmig__dest_serve_register(d, m);
	case RDMIG_MSG_UNREGISTER_REQUEST:
		return rdmig__dest_serve_unregister(d, m);
	case RDMIG_MSG_COMPRESS:
		return rdmig__dest_serve_compress(d, m);
	case RDMIG_MSG_REGISTER_FINISHED:
		d->st.iterations++;
		*ev = (struct rdmig_event){.type = RDMIG_EV_ITERATION_DONE};
		*ret_now = true;
		return 0;
	default:
		return rdmig__engine_abort(&d->io, RDMIG_EPROTO, "the destination does not accept %s",
				    rdmig_msg_type_name(m->type));
	}
}

/* The source kept the connection busy without moving data until the
 * deadline: end it (ERROR to it). */
static int idle_expired(struct rdmig_dest *d)
{
	double idle_s = (rdmig__now_us() - d->idle.last_progress_us) / 1e6;

	return rdmig__engine_abort(&d->io, RDMIG_ETIMEDOUT,
			    "the source moved no data for %.1f s, beyond the idle timeout of "
			    "%.1f s: %u message%s since its last stream bytes, registration or "
			    "COMPRESS of data not zero, none of them one", idle_s, d->idle.limit_ms / 1000.0,
			    d->idle_msgs, d->idle_msgs == 1 ? "" : "s");
}

/* The source's overall deadline (rdmig_opts.deadline_ms): ms left, -1
 * without one, 0 once passed. */
static int deadline_left_ms(const struct rdmig_dest *d)
{
	double left_us = d->deadline_us - rdmig__now_us();

	if (!d->deadline_us)
		return -1;
	return left_us <= 0 ? 0 : (int)((left_us + 999.0) / 1000.0);
}

static int deadline_expired(struct rdmig_dest *d)
{
	return rdmig__engine_abort(&d->io, RDMIG_ETIMEDOUT,
				   "the source was served for the whole deadline of %.1f s, whatever "
				   "it moved", d->io.opts->deadline_ms / 1000.0);
}

/* Take the next message, waiting no later than the progress deadline or
 * the overall one. */
static int take_message(struct rdmig_dest *d, struct rdmig_msg *m, bool wait)
{
	int left = dest_idle_left_ms(&d->idle, rdmig__now_us());
	int whole = deadline_left_ms(d);
	int ret;

	if (!whole)
		return deadline_expired(d);
	if (!left)
		return idle_expired(d);
	if (whole > 0 && (left < 0 || whole < left))
		left = whole;
	ret = wait ? d->io.ops->recv(d->io.ctx, RDMIG_MSG_NONE, left, m)
		   : d->io.ops->try_recv(d->io.ctx, RDMIG_MSG_NONE, m);
	if (ret == RDMIG_ETIMEDOUT && !deadline_left_ms(d))
		return deadline_expired(d);
	if (ret == RDMIG_ETIMEDOUT && dest_idle_expired(&d->idle, rdmig__now_us()))
		return idle_expired(d);
	return ret;
}

/* After a message was served: progress moves the deadline; anything
 * else past it ends the source. */
static int account_progress(struct rdmig_dest *d)
{
	double now = rdmig__now_us();

	if (d->progress) {
		dest_idle_progress(&d->idle, now);
		d->idle_msgs = 0;
		return 0;
	}
	d->idle_msgs++;
	return dest_idle_expired(&d->idle, now) ? idle_expired(d) : 0;
}

/* The next event; without wait, RDMIG_EAGAIN when it needs a message
 * that has not come yet. */
static int next_event(struct rdmig_dest *d, struct rdmig_event *ev, bool wait)
{
	/* the records of a message served before go out first, one a call */
	if (rdmig__dest_events_pop(&d->events, ev))
		return 0;
	if (d->blocks_pending) {
		int ret;
		if (!d->have_blocks)
			return rdmig__engine_abort(&d->io, RDMIG_ESTATE, "the source asked for RAM blocks, "
					    "and none were given (rdmig_dest_set_blocks)");
		ret = reply_blocks(d);
		if (ret)
			return ret;
	}
	for (;;) {
		struct rdmig_msg m;
		bool ret_now = false;
		int ret;

		/* a source that keeps us busy with messages that raise no event
		 * (REGISTER, COMPRESS, UNREGISTER) must not outlast a cancel: the
		 * waits see it only when they sleep */
		if (engine_cancelled(&d->io))
			return engine_fail(&d->io, RDMIG_ECANCELED, "cancelled while serving the source");
		ret = take_message(d, &m, wait);

		if (ret == RDMIG_EDISCONNECTED) {
			*ev = (struct rdmig_event){.type = RDMIG_EV_END};
			return 0;
		}
		if (engine_msg_violation(ret))
			d->io.ops->send_error(d->io.ctx);
		if (ret)
			return ret;
		dest_events_reset(&d->events);
		d->progress = false;
		ret = dispatch(d, &m, ev, &ret_now);
		if (!ret)
			ret = account_progress(d);
		if (ret || ret_now)
			return ret;
		/* served, reply sent: now its records may be reported */
		if (rdmig__dest_events_pop(&d->events, ev))
			return 0;
	}
}

/* One step of the loop, waiting for the source's next message
 * (rdmig_dest_next) or not (rdmig_dest_try_next, for an event loop that
 * sleeps on rdmig_conn_fd); the READY a message needs goes out once however
 * the calls are mixed (the connection remembers it sent it).  After a
 * failure nothing more is received or served: a hostile source may go on
 * sending after our ERROR, and a message waiting in a slot must stay
 * unread.  Every later call returns the same code.  RDMIG_EAGAIN is no
 * failure. */
static int step(struct rdmig_dest *d, struct rdmig_event *ev, bool wait)
{
	int ret;

	if (d->failed)
		return d->failed;
	dest_idle_resume(&d->idle, rdmig__now_us());
	ret = next_event(d, ev, wait);
	if (ret != RDMIG_EAGAIN)
		d->failed = ret;
	if (!ret) /* the caller's time now; RDMIG_EAGAIN: the source's */
		dest_idle_pause(&d->idle, rdmig__now_us());
	return ret;
}

int rdmig_dest_next(struct rdmig_dest *d, struct rdmig_event *ev)
{
	if (!d || !ev)
		return RDMIG_EINVAL;
	return step(d, ev, true);
}

int rdmig_dest_try_next(struct rdmig_dest *d, struct rdmig_event *ev)
{
	if (!d || !ev)
		return RDMIG_EINVAL;
	return step(d, ev, false);
}

void rdmig_dest_stats(const struct rdmig_dest *d, struct rdmig_engine_stats *out)
{
	rdmig__put_sized(out, d ? &d->st : NULL, sizeof(d->st));
}
