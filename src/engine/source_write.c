/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source_write.c - the source's write queue: what rdmig_source_write()
 * hands over becomes RDMA WRITEs, COMPRESS messages, or nothing.
 *
 * A range is cut at chunk boundaries and tested for zeros here, once, as
 * it is handed over (the one zero test of the source side).  Pieces are
 * merged with their neighbours into as few writes as possible (with
 * dynamic registration a write stays inside one chunk, whose key the
 * destination gives on request; with PIN_ALL it may span chunks).  The
 * merged range is settled (its chunk registered, or the range COMPRESSed
 * when it is all zero and the chunk has no key yet) and posted.
 *
 * The queue calls down only: into source_register.c for control messages
 * and registrations, source_pin.c for the keys of blocks pinned whole, and
 * the engine's seam for the writes themselves.
 */
#include "source_int.h"

/* The zero test's unit: a page that is all zero is the thing a
 * destination's fresh memory already holds. */
#define ZERO_PAGE 4096ull

static bool range_is_zero(const struct src_block *b, uint64_t offset, uint64_t len)
{
	return rdmig_is_zero(b->host + offset, (size_t)len);
}

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

/*
 * With lookahead, while chunk N is about to be written: ask for chunk N+1
 * of the same block now, and take the reply when it is needed.  Only for a
 * chunk that has no key and is not all zero (it will be written, not
 * COMPRESSed or skipped), and only one request at a time: the destination
 * sends its next READY after the reply, so a second control message waits
 * for it.  The chunk is not handed over yet: its zero test is a peek, and
 * the write that hands it over tests its pieces again.
 */
static int ask_ahead(struct rdmig_source *s, uint32_t bi, uint32_t chunk)
{
	struct src_block *b = &s->blocks[bi];
	uint64_t offset = (uint64_t)chunk << s->shift;
	int ret;

	if (!s->lookahead || s->ahead.out || chunk >= b->nchunks || b->remote_ok[chunk] ||
	    (s->ahead.seen && s->ahead.seen_block == bi && s->ahead.seen_chunk == chunk))
		return 0;
	s->ahead.seen = true;
	s->ahead.seen_block = bi;
	s->ahead.seen_chunk = chunk;
	if (range_is_zero(b, offset, engine_chunk_len(b->length, chunk, s->shift)))
		return 0;
	ret = rdmig__src_ask_register(s, bi, offset);
	if (!ret) {
		s->ahead.out = true;
		s->ahead.block = bi;
		s->ahead.offset = offset;
	}
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
		if (w->zero) {
			w->active = false;
			return send_compress(s, w);
		}
		ret = rdmig__src_ask_register(s, w->block, w->offset);
		if (!ret)
			ret = rdmig__src_take_register_result(s, w->block, w->offset, false);
	}
	if (!ret)
		ret = rdmig__src_register_local_chunk(s, b, chunk);
	return ret ? ret : ask_ahead(s, w->block, chunk + 1);
}

/* Post the settled pending range as one RDMA WRITE. */
static int post_pending(struct rdmig_source *s, bool last)
{
	struct pending_write w = s->pending;
	struct src_block *b = &s->blocks[w.block];
	uint32_t chunk = (uint32_t)(w.offset >> s->shift), lkey;
	int ret;

	if (!w.active)
		return 0;
	s->pending.active = false;
	if ((ret = rdmig__src_local_key(s, b, chunk, &lkey)))
		return ret;
	ret = s->io.ops->post_write(s->io.ctx, &(struct engine_write){
		.local = b->host + w.offset,
		.len = (uint32_t)w.len,
		.lkey = lkey,
		.remote = b->remote_host + w.offset,
		.rkey = s->pin_all ? b->remote_block_rkey : b->remote_rkey[chunk],
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

int rdmig__src_flush_pending(struct rdmig_source *s, bool last)
{
	int ret = settle_pending(s);
	return ret ? ret : post_pending(s, last);
}

static bool can_merge(const struct rdmig_source *s, const struct pending_write *w)
{
	const struct pending_write *p = &s->pending;

	if (!p->active || p->block != w->block || p->offset + p->len != w->offset ||
	    p->len + w->len > RDMIG_MAX_MERGE)
		return false;
	/* dynamic registration: one rkey per chunk, so one chunk per write;
	 * PIN_ALL: one lkey per piece of our block, so one piece per write */
	const struct src_block *b = &s->blocks[w->block];
	uint64_t chunk_a = p->offset >> s->shift, chunk_b = w->offset >> s->shift;

	if (s->pin_all)
		return !b->piece_mr || chunk_a / b->piece_chunks == chunk_b / b->piece_chunks;
	return chunk_a == chunk_b;
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
static bool can_register_ahead(const struct rdmig_source *s, const struct pending_write *w)
{
	const struct src_block *b = &s->blocks[w->block];

	if (s->pin_all || !s->pending.active || s->ahead.out || b->remote_ok[w->offset >> s->shift])
		return false;
	return !w->zero;
}

/* Queue one piece (inside one chunk, its zero test done). */
static int queue_piece(struct rdmig_source *s, const struct pending_write *w)
{
	bool ahead;
	int ret;

	if (can_merge(s, w)) {
		s->pending.len += w->len;
		s->pending.zero &= w->zero;
		return 0;
	}
	ret = settle_pending(s);
	if (ret)
		return ret;
	ahead = can_register_ahead(s, w);
	ret = ahead ? rdmig__src_ask_register(s, w->block, w->offset) : 0;
	if (!ret)
		ret = post_pending(s, false);
	if (!ret && ahead)
		ret = rdmig__src_take_register_result(s, w->block, w->offset, true);
	if (!ret)
		s->pending = *w;
	return ret;
}

static uint64_t page_end(uint64_t at, uint64_t end)
{
	uint64_t next = (at / ZERO_PAGE + 1) * ZERO_PAGE;
	return next < end ? next : end;
}

static bool page_is_zero(const struct src_block *b, uint64_t at, uint64_t end)
{
	return range_is_zero(b, at, page_end(at, end) - at);
}

/*
 * The next run of RUN->block from RUN->offset (before END) to queue, and
 * where the one after it starts.  Skipping zero pages, the run is the pages
 * that are not all zero (maybe none), and the zero pages after it are
 * passed over; every page is tested once: the page at which zero pages end
 * is data, which the next call is told (DATA_AT).  Otherwise the run is all
 * that is left, tested only where the answer may matter: its chunk has no
 * key yet (keys are never dropped, so it has none when the run is settled
 * either), and as a whole.
 */
static uint64_t next_run(const struct rdmig_source *s, struct pending_write *run, uint64_t end,
			 bool data_at)
{
	const struct src_block *b = &s->blocks[run->block];
	uint64_t p = run->offset;

	if (!s->skip_zero) {
		run->len = end - p;
		run->zero = !s->pin_all && !b->remote_ok[p >> s->shift] &&
			    range_is_zero(b, p, run->len);
		return end;
	}
	if (data_at)
		p = page_end(p, end);
	while (p < end && !page_is_zero(b, p, end))
		p = page_end(p, end);
	run->len = p - run->offset;
	run->zero = false;
	if (p < end) /* p is a zero page */
		p = page_end(p, end);
	while (p < end && page_is_zero(b, p, end))
		p = page_end(p, end);
	return p;
}

/* Queue [offset, offset + len) of block bi, inside one chunk, a run at a
 * time. */
static int queue_range(struct rdmig_source *s, uint32_t bi, uint64_t offset, uint64_t len)
{
	uint64_t end = offset + len;

	for (uint64_t at = offset, next; at < end; at = next) {
		struct pending_write run = {.active = true, .block = bi, .offset = at};
		int ret;

		next = next_run(s, &run, end, at != offset);
		if (run.len && (ret = queue_piece(s, &run)))
			return ret;
	}
	return 0;
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
	/* split at chunk boundaries; queue_piece merges what may be merged */
	while (len) {
		uint64_t chunk_end = ((offset >> s->shift) + 1) << s->shift;
		uint64_t piece = chunk_end - offset < len ? chunk_end - offset : len;
		int ret = queue_range(s, block, offset, piece);
		if (ret)
			return rdmig__src_answer_violation(s, ret);
		offset += piece;
		len -= piece;
	}
	return rdmig_source_keep_alive(s);
}
