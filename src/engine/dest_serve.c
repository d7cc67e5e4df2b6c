/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dest_serve.c - what the destination serves for the source: REGISTER,
 * UNREGISTER and COMPRESS (dest.c's loop hands these messages here).
 *
 * Every block index, offset, length and chunk count comes from the network,
 * so each is checked against the blocks before it is used; a violation
 * ends the migration with ERROR.  A chunk is registered once: regions never
 * overlap, so the bytes pinned per block never exceed the block, and
 * registering a chunk again after UNREGISTER is charged to the re-pin
 * budget.  What was served is queued as events when the caller asked.
 */
#include <stdlib.h>
#include <string.h>
#include "dest_int.h"
#include "dest_release.h"
#include "dest_zranges.h"

/* Queue [offset, offset + len) of block as an event, if asked for. */
static void report(struct rdmig_dest *d, unsigned kind, int type, uint32_t block,
		   uint64_t offset, uint64_t len)
{
	struct rdmig_dest_range r = {block, (uint32_t)(offset >> d->shift), offset, len};

	rdmig__dest_events_add(&d->events, kind, type, &r);
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
	mr = rdmig__dest_register_remote(d, b->host + start, end - start);
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

int rdmig__dest_serve_register(struct rdmig_dest *d, const struct rdmig_msg *m)
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

/* A chunk registered on its own gives its region back (a later REGISTER
 * of it re-pins, charged to the re-pin budget); a region shared with other
 * chunks stays until the end.  True when it went. */
static bool release_chunk(struct rdmig_dest *d, struct dst_block *b, uint32_t chunk)
{
	struct engine_mr *mr = b->chunk_mr[chunk];

	if (!mr || mr->length != engine_chunk_len(b->length, chunk, d->shift))
		return false;
	drop_mr(d, mr);
	d->io.ops->dereg(d->io.ctx, mr);
	b->chunk_mr[chunk] = NULL;
	b->released[chunk] = 1;
	return true;
}

int rdmig__dest_release_chunk(struct rdmig_dest *d, uint32_t block, uint32_t chunk)
{
	if (!d || block >= d->nblocks || chunk >= d->blocks[block].nchunks)
		return RDMIG_EINVAL;
	return release_chunk(d, &d->blocks[block], chunk);
}

/* UNREGISTER: key is a chunk number.  Only a chunk registered on its own
 * is released; a region shared with other chunks stays until the end. */
int rdmig__dest_serve_unregister(struct rdmig_dest *d, const struct rdmig_msg *m)
{
	for (uint32_t i = 0; i < m->repeat; i++) {
		struct rdmig_register r;
		struct dst_block *b;

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
		release_chunk(d, b, (uint32_t)r.key);
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
	uint64_t rel, written = 0;
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
	if (!rdmig__engine_zero_range(b->host + rel, cp->length, &d->io, &written))
		return engine_fail(&d->io, RDMIG_ECANCELED,
				   "cancelled while zeroing COMPRESS record %u (%llu bytes of %s)",
				   i, (unsigned long long)cp->length, b->name);
	d->st.bytes_compressed += cp->length;
	/* Only zeroing what was not zero moves data: a source that sends
	 * COMPRESS of a zero range again and again must not hold its slot past
	 * the idle deadline. */
	if (written)
		d->progress = true;
	report(d, RDMIG_DEST_REPORT_COMPRESS, RDMIG_EV_COMPRESSED, cp->block_index, rel,
	       cp->length);
	return 0;
}

/* COMPRESS: zero ranges, each checked to lie inside its block and not to
 * overlap another of the message. */
int rdmig__dest_serve_compress(struct rdmig_dest *d, const struct rdmig_msg *m)
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
