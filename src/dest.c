/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dest.c - the receiving side of a migration.
 *
 * One loop, as QEMU's destination: send READY, wait for any message,
 * handle it.  Stream bytes, the end of an iteration and the end of the
 * migration go back to the caller; registration, COMPRESS and
 * unregistration are served here.  The destination exposes its memory to
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
#include "dest_events.h"
#include "dest_idle.h"
#include "dest_step.h"
#include "dest_zranges.h"
#include "engine.h"

struct dst_block {
	char *name;
	uint8_t *host;
	uint64_t length;
	uint64_t offset; /* in this side's RAM offset space */
	uint32_t nchunks;
	struct engine_mr **chunk_mr; /* per chunk; may share one MR (multi-chunk requests) */
	struct engine_mr *block_mr;  /* PIN_ALL */
	uint8_t *released;           /* per chunk: unregistered, so registering it re-pins */
};

struct rdmig_dest {
	struct engine_io io;
	struct dst_block *blocks;
	size_t nblocks;
	bool have_blocks;
	bool blocks_sent;     /* RAM_BLOCKS_RESULT went out */
	bool blocks_pending;  /* RAM_BLOCKS_REQUEST waits for set_blocks */
	unsigned shift;       /* chunks of 2^shift bytes (opts.chunk_size) */
	struct engine_mr **mrs; /* every chunk MR we own */
	size_t nmrs, mrs_cap;
	uint8_t *scratch;     /* replies: up to 4096 records */
	struct zrange *zr;    /* the COMPRESS ranges of the message at hand, sorted */
	struct rdmig_engine_stats st;
	struct dest_events events; /* what the caller asked to hear of, queued */
	int failed;           /* the code rdmig_dest_next failed with (sticky) */
	struct dest_idle idle; /* the progress deadline */
	bool progress;        /* the message at hand moved data */
	unsigned idle_msgs;   /* messages since the last progress */
	uint64_t repins;      /* chunks registered again after UNREGISTER */
};

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
	dest_idle_start(&d->idle, io->opts->idle_timeout_ms, rdmig__engine_now_us());
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

/* Queue [offset, offset + len) of block as an event, if asked for. */
static void report(struct rdmig_dest *d, unsigned kind, int type, uint32_t block,
		   uint64_t offset, uint64_t len)
{
	struct rdmig_dest_range r = {block, (uint32_t)(offset >> d->shift), offset, len};

	rdmig__dest_events_add(&d->events, kind, type, &r);
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

/* Destination memory is written by the peer and never read by it. */
static struct engine_mr *register_remote(struct rdmig_dest *d, void *addr, uint64_t len)
{
	return rdmig__engine_reg_timed(&d->io, addr, len, ENGINE_ACCESS_REMOTE_WRITE,
				       &d->st.register_seconds);
}

static int pin_all_blocks(struct rdmig_dest *d)
{
	for (size_t i = 0; i < d->nblocks; i++) {
		struct dst_block *b = &d->blocks[i];
		if (!b->length || b->block_mr)
			continue;
		b->block_mr = register_remote(d, b->host, b->length);
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
			.remote_host_addr = (uintptr_t)b->host,
			.offset = b->offset,
			.length = b->length,
			.remote_rkey = b->block_mr ? b->block_mr->rkey : 0,
		};
		rdmig_encode_dest_block(&db, d->scratch + i * RDMIG_DEST_BLOCK_SIZE);
	}
	d->blocks_sent = true;
	d->blocks_pending = false;
	/* pinning every block is this side's time, however long it took */
	dest_idle_progress(&d->idle, rdmig__engine_now_us());
	return d->io.ops->reply(d->io.ctx, &(struct rdmig_msg){RDMIG_MSG_RAM_BLOCKS_RESULT, 1,
			  (uint32_t)(d->nblocks * RDMIG_DEST_BLOCK_SIZE), d->scratch});
}

/* ----------------------------------------------------- registration -- */

static struct dst_block *checked_block(struct rdmig_dest *d, const char *what, uint32_t rec,
				       uint32_t index)
{
	if (!d->blocks_sent || index >= d->nblocks) {
		rdmig__engine_abort(&d->io, RDMIG_ERANGE, "%s record %u: block index %u, but %s", what, rec,
			     index, d->blocks_sent ? "that block does not exist" :
						     "no RAM blocks were exchanged yet");
		return NULL;
	}
	return &d->blocks[index];
}

static int keep_mr(struct rdmig_dest *d, struct engine_mr *mr)
{
	if (d->nmrs == d->mrs_cap) {
		size_t cap = d->mrs_cap ? d->mrs_cap * 2 : 64;
		struct engine_mr **n = realloc(d->mrs, cap * sizeof(*n));
		if (!n)
			return RDMIG_ENOMEM;
		d->mrs = n;
		d->mrs_cap = cap;
	}
	mr->slot = d->nmrs;
	d->mrs[d->nmrs++] = mr;
	return 0;
}

/* Forget a region of the list: the last one takes its place, so an
 * UNREGISTER costs the same at 64 regions as at 65,536. */
static void drop_mr(struct rdmig_dest *d, struct engine_mr *mr)
{
	struct engine_mr *last = d->mrs[--d->nmrs];

	d->mrs[mr->slot] = last;
	last->slot = mr->slot;
}

/* The region already registered over chunk `first` when it covers the
 * byte range [start, end) of b whole; else NULL. */
static struct engine_mr *covering_mr(const struct dst_block *b, uint32_t first, uint64_t start,
				     uint64_t end)
{
	struct engine_mr *mr = b->chunk_mr[first];
	uintptr_t lo = (uintptr_t)(b->host + start), hi = (uintptr_t)b->host + end;

	if (mr && (uintptr_t)mr->addr <= lo && (uintptr_t)mr->addr + mr->length >= hi)
		return mr;
	return NULL;
}

/* The first chunk of [first, first + count) that is registered, or count. */
static uint32_t first_registered(const struct dst_block *b, uint32_t first, uint32_t count)
{
	uint32_t i = 0;

	while (i < count && !b->chunk_mr[first + i])
		i++;
	return i;
}

/* Charge the chunks of [first, first + count) that were unregistered
 * before to the re-registration budget; refuse the request that goes
 * past it. */
static int charge_repins(struct dst_block *b, struct rdmig_dest *d, uint32_t rec,
			 uint32_t first, uint32_t count)
{
	int budget = d->io.opts->repin_budget;
	uint32_t again = 0;

	for (uint32_t i = first; i < first + count; i++)
		again += b->released[i];
	if (!again)
		return 0;
	if (budget >= 0 && d->repins + again > (uint64_t)budget)
		return rdmig__engine_abort(&d->io, RDMIG_EPROTO,
				    "REGISTER_REQUEST record %u: chunks %u..%u of block %u (%s) "
				    "would be registered again after UNREGISTER; the source did "
				    "that for %llu chunks already, and the budget is %d per "
				    "connection (each pins memory again)", rec, first,
				    first + count - 1, (unsigned)(b - d->blocks), b->name,
				    (unsigned long long)d->repins, budget);
	d->repins += again;
	memset(b->released + first, 0, count);
	return 0;
}

/*
 * Register chunks [first, first + count) of b as one region (one rkey).
 *
 * Regions never overlap, so the bytes registered per block never exceed
 * the block, however often a source asks: a range inside one region is
 * answered with that region's key, a range of unregistered chunks gets a
 * new region, and a range that straddles a region (or part registered,
 * part not) is refused.  Re-registering it would pin its bytes twice, and
 * the old key cannot be dropped (the source may still write with it).
 * QEMU's source asks one chunk at a time (its writes never cross a chunk),
 * and so does rdmig's.
 */
static int register_chunks(struct dst_block *b, struct rdmig_dest *d, uint32_t rec,
			   uint32_t first, uint32_t count, uint32_t *rkey)
{
	uint64_t start = (uint64_t)first << d->shift;
	uint64_t end = (uint64_t)(first + count) << d->shift;
	struct engine_mr *mr;
	uint32_t taken;

	if (b->block_mr) {
		*rkey = b->block_mr->rkey;
		return 0;
	}
	if (end > b->length)
		end = b->length;
	mr = covering_mr(b, first, start, end);
	if (mr) {
		*rkey = mr->rkey;
		return 0;
	}
	taken = first_registered(b, first, count);
	if (taken < count)
		return rdmig__engine_abort(&d->io, RDMIG_EPROTO,
				    "REGISTER_REQUEST record %u: chunks %u..%u of block %u (%s), but "
				    "chunk %u is already registered in another range: a chunk is "
				    "registered once", rec, first, first + count - 1,
				    (unsigned)(b - d->blocks), b->name, first + taken);
	if (charge_repins(b, d, rec, first, count))
		return RDMIG_EPROTO;
	mr = register_remote(d, b->host + start, end - start);
	if (!mr)
		return rdmig__engine_abort_keep(&d->io, rdmig__engine_reg_failed(&d->io,
						"destination chunk", b->name, end - start));
	if (keep_mr(d, mr)) {
		d->io.ops->dereg(d->io.ctx, mr);
		return rdmig__engine_abort_keep(&d->io, engine_fail(&d->io, RDMIG_ENOMEM,
									"out of memory"));
	}
	for (uint32_t i = first; i < first + count; i++)
		b->chunk_mr[i] = mr;
	d->st.chunks_registered += count;
	d->progress = true;
	*rkey = mr->rkey;
	return 0;
}

/* One Register record: key is an address in our RAM offset space. */
static int serve_register(struct rdmig_dest *d, uint32_t rec, const uint8_t *in, uint8_t *out)
{
	struct rdmig_register r;
	struct rdmig_register_result res;
	struct dst_block *b;
	uint64_t rel, end;
	uint32_t chunk;
	int ret;

	rdmig_decode_register(in, &r);
	b = checked_block(d, "REGISTER_REQUEST", rec, r.block_index);
	if (!b)
		return RDMIG_ERANGE;
	if (r.key < b->offset || r.key - b->offset >= b->length)
		return rdmig__engine_abort(&d->io, RDMIG_ERANGE,
				    "REGISTER_REQUEST record %u: address 0x%llx is outside block %u "
				    "(%s: offset 0x%llx, %llu bytes)", rec, (unsigned long long)r.key,
				    r.block_index, b->name, (unsigned long long)b->offset,
				    (unsigned long long)b->length);
	rel = r.key - b->offset;
	chunk = (uint32_t)(rel >> d->shift);
	/* chunks counts the chunks AFTER the first (QEMU: 0 = one chunk) */
	if (r.chunks >= b->nchunks - chunk)
		return rdmig__engine_abort(&d->io, RDMIG_ERANGE,
				    "REGISTER_REQUEST record %u: chunk %u plus %llu more of block "
				    "%u, which has %u of %llu bytes (a chunk-size mismatch?)", rec,
				    chunk, (unsigned long long)r.chunks, r.block_index, b->nchunks,
				    1ull << d->shift);
	ret = register_chunks(b, d, rec, chunk, (uint32_t)r.chunks + 1, &res.rkey);
	if (ret)
		return ret;
	rel = (uint64_t)chunk << d->shift;
	end = rel + ((r.chunks + 1) << d->shift); /* checked: within the block's chunks */
	report(d, RDMIG_DEST_REPORT_REGISTER, RDMIG_EV_REGISTERED, r.block_index, rel,
	       (end < b->length ? end : b->length) - rel);
	res.host_addr = (uintptr_t)b->host; /* the block start, as QEMU answers */
	rdmig_encode_register_result(&res, out);
	return 0;
}

static int handle_register(struct rdmig_dest *d, const struct rdmig_msg *m)
{
	const uint8_t *in = m->payload;

	for (uint32_t i = 0; i < m->repeat; i++) {
		int ret = serve_register(d, i, in + (size_t)i * RDMIG_REGISTER_SIZE,
					 d->scratch + (size_t)i * RDMIG_REGISTER_RESULT_SIZE);
		if (ret)
			return ret;
	}
	d->st.register_requests++;
	return d->io.ops->reply(d->io.ctx, &(struct rdmig_msg){RDMIG_MSG_REGISTER_RESULT, m->repeat,
			  m->repeat * RDMIG_REGISTER_RESULT_SIZE, d->scratch});
}

/* UNREGISTER: key is a chunk number.  Only a chunk registered on its own
 * is released; a region shared with other chunks stays until the end. */
static int handle_unregister(struct rdmig_dest *d, const struct rdmig_msg *m)
{
	for (uint32_t i = 0; i < m->repeat; i++) {
		struct rdmig_register r;
		struct dst_block *b;
		struct engine_mr *mr;

		rdmig_decode_register((const uint8_t *)m->payload + (size_t)i * RDMIG_REGISTER_SIZE, &r);
		b = checked_block(d, "UNREGISTER_REQUEST", i, r.block_index);
		if (!b)
			return RDMIG_ERANGE;
		if (r.key >= b->nchunks)
			return rdmig__engine_abort(&d->io, RDMIG_ERANGE,
					    "UNREGISTER_REQUEST record %u: chunk %llu of block %u, "
					    "which has %u of %llu bytes (a chunk-size mismatch?)", i,
					    (unsigned long long)r.key, r.block_index, b->nchunks,
					    1ull << d->shift);
		mr = b->chunk_mr[r.key];
		if (mr && mr->length == engine_chunk_len(b->length, (uint32_t)r.key, d->shift)) {
			drop_mr(d, mr);
			d->io.ops->dereg(d->io.ctx, mr);
			b->chunk_mr[r.key] = NULL;
			b->released[r.key] = 1;
		}
		report(d, RDMIG_DEST_REPORT_UNREGISTER, RDMIG_EV_UNREGISTERED, r.block_index,
		       r.key << d->shift, engine_chunk_len(b->length, (uint32_t)r.key, d->shift));
	}
	return d->io.ops->reply(d->io.ctx,
				&(struct rdmig_msg){RDMIG_MSG_UNREGISTER_FINISHED, 1, 0, NULL});
}

/* One COMPRESS record: value 0, a range inside its block that no earlier
 * record of the message overlaps; then zero it. */
static int serve_compress(struct rdmig_dest *d, uint32_t i, const struct rdmig_compress *cp,
			  uint32_t *nranges)
{
	struct dst_block *b = checked_block(d, "COMPRESS", i, cp->block_index);
	uint64_t rel;
	long other;

	if (!b)
		return RDMIG_ERANGE;
	if (cp->value != 0)
		return rdmig__engine_abort(&d->io, RDMIG_EPROTO,
				    "COMPRESS record %u: value %u (only 0, zero the range, "
				    "is defined)", i, cp->value);
	rel = cp->offset - b->offset;
	if (cp->offset < b->offset || rel > b->length || cp->length > b->length - rel)
		return rdmig__engine_abort(&d->io, RDMIG_ERANGE,
				    "COMPRESS record %u: range 0x%llx+%llu is outside block "
				    "%u (%s: offset 0x%llx, %llu bytes)", i,
				    (unsigned long long)cp->offset, (unsigned long long)cp->length,
				    cp->block_index, b->name, (unsigned long long)b->offset,
				    (unsigned long long)b->length);
	/* An empty range zeroes nothing (and an empty block may have no
	 * memory: NULL + 0 is undefined in C). */
	if (!cp->length)
		return 0;
	other = rdmig__zr_add(d->zr, nranges, cp->block_index, i, rel, rel + cp->length);
	if (other >= 0)
		return rdmig__engine_abort(&d->io, RDMIG_EPROTO,
				    "COMPRESS record %u: range 0x%llx+%llu of block %u overlaps "
				    "record %ld's; the ranges of one message must not overlap", i,
				    (unsigned long long)cp->offset, (unsigned long long)cp->length,
				    cp->block_index, other);
	if (!rdmig__engine_zero_range(b->host + rel, cp->length, d->io.opts))
		return engine_fail(&d->io, RDMIG_ECANCELED,
				   "cancelled while zeroing COMPRESS record %u (%llu bytes of %s)",
				   i, (unsigned long long)cp->length, b->name);
	d->st.bytes_compressed += cp->length;
	d->progress = true;
	report(d, RDMIG_DEST_REPORT_COMPRESS, RDMIG_EV_COMPRESSED, cp->block_index, rel,
	       cp->length);
	return 0;
}

/* COMPRESS: zero ranges, each checked to lie inside its block and not to
 * overlap another of the message. */
static int handle_compress(struct rdmig_dest *d, const struct rdmig_msg *m)
{
	uint32_t nranges = 0;

	for (uint32_t i = 0; i < m->repeat; i++) {
		struct rdmig_compress cp;
		int ret;

		rdmig_decode_compress((const uint8_t *)m->payload + (size_t)i * RDMIG_COMPRESS_SIZE, &cp);
		ret = serve_compress(d, i, &cp, &nranges);
		if (ret)
			return ret;
	}
	return 0;
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
		return handle_register(d, m);
	case RDMIG_MSG_UNREGISTER_REQUEST:
		return handle_unregister(d, m);
	case RDMIG_MSG_COMPRESS:
		return handle_compress(d, m);
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
	double idle_s = (rdmig__engine_now_us() - d->idle.last_progress_us) / 1e6;

	return rdmig__engine_abort(&d->io, RDMIG_ETIMEDOUT,
			    "the source moved no data for %.1f s, beyond the idle timeout of "
			    "%.1f s: %u message%s since its last stream bytes, registration or "
			    "COMPRESS, none of them one", idle_s, d->idle.limit_ms / 1000.0,
			    d->idle_msgs, d->idle_msgs == 1 ? "" : "s");
}

/* Take the next message, waiting no later than the progress deadline. */
static int take_message(struct rdmig_dest *d, struct rdmig_msg *m, bool wait)
{
	int left = dest_idle_left_ms(&d->idle, rdmig__engine_now_us());
	int ret;

	if (!left)
		return idle_expired(d);
	ret = wait ? d->io.ops->recv(d->io.ctx, RDMIG_MSG_NONE, left, m)
		   : d->io.ops->try_recv(d->io.ctx, RDMIG_MSG_NONE, m);
	if (ret == RDMIG_ETIMEDOUT && dest_idle_expired(&d->idle, rdmig__engine_now_us()))
		return idle_expired(d);
	return ret;
}

/* After a message was served: progress moves the deadline; anything
 * else past it ends the source. */
static int account_progress(struct rdmig_dest *d)
{
	double now = rdmig__engine_now_us();

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
		int ret = take_message(d, &m, wait);

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

/* After a failure nothing more is received or served: a hostile source may
 * go on sending after our ERROR, and a message waiting in a slot must stay
 * unread.  Every later call returns the same code.  RDMIG_EAGAIN is no
 * failure.  (rdmig_dest_next and rdmig_dest_try_next: dest_step.c.) */
int rdmig__dest_step(struct rdmig_dest *d, struct rdmig_event *ev, bool wait)
{
	int ret;

	if (d->failed)
		return d->failed;
	dest_idle_resume(&d->idle, rdmig__engine_now_us());
	ret = next_event(d, ev, wait);
	if (ret != RDMIG_EAGAIN)
		d->failed = ret;
	if (!ret) /* the caller's time now; RDMIG_EAGAIN: the source's */
		dest_idle_pause(&d->idle, rdmig__engine_now_us());
	return ret;
}

void rdmig_dest_stats(const struct rdmig_dest *d, struct rdmig_engine_stats *out)
{
	rdmig__put_sized(out, d ? &d->st : NULL, sizeof(d->st));
}
