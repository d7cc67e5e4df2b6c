/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source.c - the sending side of a migration.
 *
 * Setup asks the destination for its blocks (RAM_BLOCKS_REQUEST) and checks
 * them against ours.  Then every range the caller hands to
 * rdmig_source_write() is merged with its neighbours into as few RDMA
 * WRITEs as possible.  With dynamic registration each write stays inside
 * one chunk (opts.chunk_size, 1 MiB by default), which the destination
 * registers on request (REGISTER_REQUEST -> REGISTER_RESULT, keys cached
 * per chunk) unless the
 * range is all zero and the chunk is not registered yet: then a COMPRESS
 * message zeroes it on the far side and no data moves.  With PIN_ALL the
 * destination registered everything up front and writes may span chunks.
 *
 * Everything goes through the engine's seam (engine_io.h).  Writes are
 * signaled selectively (the transport signals the last of an iteration and
 * enough others to keep its queue moving); the end of an iteration waits
 * until every posted write and send completed (flush_sends).
 */
#include <stdlib.h>
#include <string.h>
#include "source_int.h"

static void free_block(const struct engine_io *io, struct src_block *b)
{
	for (uint32_t i = 0; b->local_mr && i < b->nchunks; i++)
		if (b->local_mr[i])
			io->ops->dereg(io->ctx, b->local_mr[i]);
	rdmig__src_release_pieces(io, b);
	free(b->local_mr);
	free(b->remote_rkey);
	free(b->remote_ok);
	free(b->name);
}

void rdmig_source_destroy(struct rdmig_source *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->blocks && i < s->nblocks; i++)
		free_block(&s->io, &s->blocks[i]);
	free(s->blocks);
	rdmig__latency_log_free(&s->rtt);
	free(s);
}

static int init_block(struct src_block *b, const struct rdmig_block *in, unsigned shift)
{
	b->name = strdup(in->name ? in->name : "");
	b->host = in->host;
	b->length = in->length;
	b->nchunks = engine_chunk_count(in->length, shift);
	b->local_mr = calloc(b->nchunks ? b->nchunks : 1, sizeof(*b->local_mr));
	b->remote_rkey = calloc(b->nchunks ? b->nchunks : 1, sizeof(*b->remote_rkey));
	b->remote_ok = calloc(b->nchunks ? b->nchunks : 1, 1);
	return b->name && b->local_mr && b->remote_rkey && b->remote_ok ? 0 : RDMIG_ENOMEM;
}

/* rdmig_source_create over a connection is in engine_io_conn.c. */
int rdmig__source_create(const struct engine_io *io, const struct rdmig_block *blocks,
			 size_t nblocks, struct rdmig_source **out)
{
	unsigned shift = engine_chunk_shift(io->opts->chunk_size);
	struct rdmig_source *s;
	int ret;

	*out = NULL;
	ret = rdmig__engine_check_blocks(io, blocks, nblocks, shift);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->blocks = calloc(nblocks ? nblocks : 1, sizeof(*s->blocks)))) {
		free(s);
		return engine_fail(io, RDMIG_ENOMEM, "cannot allocate the source");
	}
	s->io = *io;
	s->nblocks = nblocks;
	s->pin_all = io->caps->flags & RDMIG_CAP_PIN_ALL;
	s->shift = shift;
	s->register_threads = 1;
	for (size_t i = 0; i < nblocks; i++) {
		if (init_block(&s->blocks[i], &blocks[i], s->shift)) {
			rdmig_source_destroy(s);
			return engine_fail(io, RDMIG_ENOMEM, "cannot allocate block %zu", i);
		}
	}
	*out = s;
	return 0;
}

const char *rdmig_source_errmsg(const struct rdmig_source *s)
{
	return s ? s->io.errmsg : "no source";
}

/* A message from the destination that breaks the wire rules is answered
 * with ERROR, as the destination answers ours (our own refusals go through
 * rdmig__engine_abort, which already sends it). */
static int answer_violation(struct rdmig_source *s, int ret)
{
	return engine_msg_violation(ret) ? rdmig__engine_abort_keep(&s->io, ret) : ret;
}

static int flush_pending(struct rdmig_source *s, bool last);

int rdmig_source_write_stream(struct rdmig_source *s, const void *buf, size_t len)
{
	if (!s)
		return RDMIG_EINVAL;
	const uint8_t *p = buf;
	int ret;

	/* Stream bytes go after the data handed over before them, as QEMU's
	 * stream does (it flushes its queued writes first): on one queue pair
	 * the receiver then has that data once the bytes arrive, and may take
	 * what the stream says about it (rdmig send's span digests) as final. */
	if (s->set_up && (ret = flush_pending(s, false)))
		return answer_violation(s, ret);
	while (len) {
		uint32_t n = len > RDMIG_MAX_STREAM_CHUNK ? RDMIG_MAX_STREAM_CHUNK : (uint32_t)len;
		ret = rdmig__src_control_send(s, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, n, p});
		if (ret)
			return answer_violation(s, ret);
		s->st.stream_bytes += n;
		p += n;
		len -= n;
	}
	return 0;
}

/* ----------------------------------------------------------------- setup -- */

static int take_dest_blocks(struct rdmig_source *s, const struct rdmig_msg *reply)
{
	size_t count = reply->len / RDMIG_DEST_BLOCK_SIZE; /* QEMU sends repeat 1: count by len */
	const uint8_t *p = reply->payload;

	if (count != s->nblocks)
		return rdmig__engine_abort(&s->io, RDMIG_ERANGE,
				    "the destination has %zu RAM blocks, the source %zu", count,
				    s->nblocks);
	for (size_t i = 0; i < count; i++) {
		struct rdmig_dest_block db;
		struct src_block *b = &s->blocks[i];

		rdmig_decode_dest_block(p + i * RDMIG_DEST_BLOCK_SIZE, &db);
		if (db.length != b->length)
			return rdmig__engine_abort(&s->io, RDMIG_ERANGE,
					    "RAM block %zu (%s): the destination's is %llu bytes, "
					    "the source's %llu", i, b->name,
					    (unsigned long long)db.length,
					    (unsigned long long)b->length);
		/* our writes go to remote_host + offset, our requests name
		 * remote_offset + offset: neither may wrap */
		if (db.remote_host_addr > UINT64_MAX - db.length)
			return rdmig__engine_abort(&s->io, RDMIG_ERANGE,
					    "RAM block %zu (%s): address 0x%llx + %llu bytes wraps "
					    "around", i, b->name,
					    (unsigned long long)db.remote_host_addr,
					    (unsigned long long)db.length);
		if (db.offset > UINT64_MAX - db.length)
			return rdmig__engine_abort(&s->io, RDMIG_ERANGE,
					    "RAM block %zu (%s): offset 0x%llx + %llu bytes wraps "
					    "around", i, b->name, (unsigned long long)db.offset,
					    (unsigned long long)db.length);
		b->remote_host = db.remote_host_addr;
		b->remote_offset = db.offset;
		b->remote_block_rkey = db.remote_rkey;
	}
	return 0;
}

int rdmig_source_setup(struct rdmig_source *s)
{
	if (!s)
		return RDMIG_EINVAL;
	struct rdmig_msg reply;
	int ret;

	if (s->set_up)
		return engine_fail(&s->io, RDMIG_ESTATE, "rdmig_source_setup was already called");
	ret = rdmig__src_control_request(s, &(struct rdmig_msg){RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, 0, NULL});
	/* Pin our own memory while the destination pins its (or, with
	 * dynamic registration, builds its answer). */
	if (!ret && (s->pin_all || s->pin_local))
		ret = rdmig__src_register_blocks_whole(s);
	if (!ret)
		ret = s->io.ops->request_reply(s->io.ctx, RDMIG_MSG_RAM_BLOCKS_RESULT, &reply);
	if (!ret)
		ret = take_dest_blocks(s, &reply);
	s->set_up = !ret;
	return answer_violation(s, ret);
}

/* ---------------------------------------------------------------- writes -- */

static int send_compress(struct rdmig_source *s, const struct pending_write *w)
{
	struct src_block *b = &s->blocks[w->block];
	struct rdmig_compress comp = {
		.value = 0,
		.block_index = w->block,
		.offset = b->remote_offset + w->offset,
		.length = w->len,
	};
	uint8_t rec[RDMIG_COMPRESS_SIZE];
	int ret;

	rdmig_encode_compress(&comp, rec);
	ret = rdmig__src_control_send(s,
			      &(struct rdmig_msg){RDMIG_MSG_COMPRESS, 1, sizeof(rec), rec});
	if (!ret)
		s->st.bytes_compressed += w->len;
	return ret;
}

/* Make the pending merged range ready to write: with dynamic registration
 * a chunk without a key is registered, or COMPRESSed if the range is all
 * zero (then nothing is left to write and the range is no longer pending). */
static int settle_pending(struct rdmig_source *s)
{
	struct pending_write *w = &s->pending;
	struct src_block *b = &s->blocks[w->block];
	uint32_t chunk = (uint32_t)(w->offset >> s->shift);
	int ret = 0;

	if (!w->active || s->pin_all)
		return 0;
	if (!b->remote_ok[chunk] && (ret = rdmig__src_collect_ahead(s))) /* it may be this chunk */
		return ret;
	if (!b->remote_ok[chunk]) {
		if (rdmig_is_zero(b->host + w->offset, w->len)) {
			w->active = false;
			return send_compress(s, w);
		}
		ret = rdmig__src_ask_register(s, w->block, w->offset);
		if (!ret)
			ret = rdmig__src_take_register_result(s, w->block, w->offset, false);
	}
	if (!ret)
		ret = rdmig__src_register_local_chunk(s, b, chunk);
	return ret ? ret : rdmig__src_ask_ahead(s, w->block, chunk + 1);
}

/* Post the settled pending range as one RDMA WRITE. */
static int post_pending(struct rdmig_source *s, bool last)
{
	struct pending_write w = s->pending;
	struct src_block *b = &s->blocks[w.block];
	uint32_t chunk = (uint32_t)(w.offset >> s->shift);
	uint32_t lkey, rkey;
	int ret;

	if (!w.active)
		return 0;
	s->pending.active = false;
	lkey = rdmig__src_lkey(b, chunk);
	rkey = s->pin_all ? b->remote_block_rkey : b->remote_rkey[chunk];
	ret = s->io.ops->post_write(s->io.ctx, &(struct engine_write){
		.local = b->host + w.offset,
		.len = (uint32_t)w.len,
		.lkey = lkey,
		.remote = b->remote_host + w.offset,
		.rkey = rkey,
		.block = w.block,
		.chunk = chunk,
		.signal = last,
	});
	if (!ret) {
		s->st.writes_posted++;
		s->st.bytes_written += w.len;
	}
	return ret;
}

static int flush_pending(struct rdmig_source *s, bool last)
{
	int ret = settle_pending(s);
	return ret ? ret : post_pending(s, last);
}

static bool can_merge(const struct rdmig_source *s, uint32_t bi, uint64_t offset, uint64_t len)
{
	const struct pending_write *p = &s->pending;

	if (!p->active || p->block != bi || p->offset + p->len != offset ||
	    p->len + len > RDMIG_MAX_MERGE)
		return false;
	/* dynamic registration: one rkey per chunk, so one chunk per write;
	 * PIN_ALL: one lkey per piece of our block, so one piece per write */
	if (s->pin_all)
		return rdmig__src_same_piece(&s->blocks[bi], (uint32_t)(p->offset >> s->shift),
					     (uint32_t)(offset >> s->shift));
	return (p->offset >> s->shift) == (offset >> s->shift);
}

/*
 * Whether the chunk of the range about to become pending may be registered
 * ahead, after the write now flushed is settled and before it is posted:
 * the round trip then overlaps that write on the wire instead of following
 * it (on one QP a request waits behind the writes queued before it).  Only
 * when the chunk would be registered anyway: no key yet, and this first
 * piece of it is not all zero, so neither is the range merged from it.
 * What goes on the wire is what QEMU sends, in another order.
 */
static bool can_register_ahead(const struct rdmig_source *s, uint32_t bi, uint64_t offset,
			       uint64_t len)
{
	const struct src_block *b = &s->blocks[bi];

	if (s->pin_all || !s->pending.active || s->ahead.out || b->remote_ok[offset >> s->shift])
		return false;
	return !rdmig_is_zero(b->host + offset, len);
}

static int queue_range(struct rdmig_source *s, uint32_t bi, uint64_t offset, uint64_t len)
{
	bool ahead;
	int ret;

	if (can_merge(s, bi, offset, len)) {
		s->pending.len += len;
		return 0;
	}
	ret = settle_pending(s);
	if (ret)
		return ret;
	ahead = can_register_ahead(s, bi, offset, len);
	ret = ahead ? rdmig__src_ask_register(s, bi, offset) : 0;
	if (!ret)
		ret = post_pending(s, false);
	if (!ret && ahead)
		ret = rdmig__src_take_register_result(s, bi, offset, true);
	if (!ret)
		s->pending = (struct pending_write){true, bi, offset, len};
	return ret;
}

int rdmig_source_set_pin_local(struct rdmig_source *s, int on)
{
	if (!s)
		return RDMIG_EINVAL;
	if (s->set_up)
		return engine_fail(&s->io, RDMIG_ESTATE,
				   "rdmig_source_set_pin_local after rdmig_source_setup");
	s->pin_local = on != 0;
	return 0;
}

int rdmig_source_set_lookahead(struct rdmig_source *s, int on)
{
	if (!s)
		return RDMIG_EINVAL;
	s->lookahead = on != 0;
	return 0;
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
		s->last_control_us = rdmig__engine_now_us();
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
	    rdmig__engine_now_us() - s->last_control_us < s->keep_alive_ms * 1000.0)
		return 0;
	return answer_violation(s, rdmig__src_control_send(s, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, 0,
								      NULL}));
}

int rdmig_source_write(struct rdmig_source *s, uint32_t block, uint64_t offset, uint64_t len)
{
	if (!s)
		return RDMIG_EINVAL;
	struct src_block *b;

	if (!s->set_up)
		return engine_fail(&s->io, RDMIG_ESTATE,
				   "rdmig_source_write before rdmig_source_setup");
	if (block >= s->nblocks)
		return engine_fail(&s->io, RDMIG_EINVAL, "block %u does not exist (%zu blocks)",
				   block, s->nblocks);
	b = &s->blocks[block];
	if (offset > b->length || len > b->length - offset)
		return engine_fail(&s->io, RDMIG_EINVAL,
				   "range %llu+%llu is outside block %s (%llu bytes)",
				   (unsigned long long)offset, (unsigned long long)len, b->name,
				   (unsigned long long)b->length);
	/* split at chunk boundaries; queue_range merges what may be merged */
	while (len) {
		uint64_t chunk_end = ((offset >> s->shift) + 1) << s->shift;
		uint64_t piece = chunk_end - offset < len ? chunk_end - offset : len;
		int ret = queue_range(s, block, offset, piece);
		if (ret)
			return answer_violation(s, ret);
		offset += piece;
		len -= piece;
	}
	return rdmig_source_keep_alive(s);
}

int rdmig_source_end_iteration(struct rdmig_source *s)
{
	if (!s)
		return RDMIG_EINVAL;
	int ret;

	if (!s->set_up)
		return engine_fail(&s->io, RDMIG_ESTATE,
				   "rdmig_source_end_iteration before rdmig_source_setup");
	ret = flush_pending(s, true);
	if (!ret) /* every write (and unsignaled control send) completed */
		ret = s->io.ops->flush_sends(s->io.ctx, 0);
	if (!ret)
		ret = rdmig__src_control_send(s,
				      &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL});
	if (!ret)
		s->st.iterations++;
	return answer_violation(s, ret);
}

void rdmig_source_stats(const struct rdmig_source *s, struct rdmig_engine_stats *out)
{
	struct rdmig_engine_stats st;

	if (!s) {
		rdmig__put_sized(out, NULL, sizeof(st));
		return;
	}
	st = s->st;
	st.size = sizeof(st);
	st.writes_signaled = s->io.ops->writes_signaled(s->io.ctx);
	rdmig__latency_log_percentiles(&s->rtt, &st.register_rtt_p50_us, &st.register_rtt_p99_us);
	rdmig__put_sized(out, &st, sizeof(st));
}
