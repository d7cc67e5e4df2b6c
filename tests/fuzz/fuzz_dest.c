/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_dest.c - libFuzzer target for the destination engine (src/engine/dest.c).
 *
 * The destination serves registration, COMPRESS and unregistration for a
 * peer it cannot trust, on memory it exposes to the network.  Here
 * rdmig_dest_next runs over a sequence of received messages taken from the
 * input, with the control channel and memory registration faked behind the
 * engine's seam (fake_io.h: no device), and after every message what the destination
 * did is checked against a model of what it must do:
 *
 *   - outcome: serve it and ask for the next message, return an event, or
 *     fail with the expected code: a negative return, a reason in errmsg,
 *     and one ERROR to the peer (none when the peer sent ERROR itself);
 *   - reply: exactly one where one is due, of the right type, describing
 *     the blocks as they are; every rkey it hands out is registered and
 *     covers what was asked;
 *   - memory: COMPRESS zeroes what it accepted and nothing around it
 *     (marker bytes at both ends of every range, inside and out);
 *     registrations stay inside one block, chunk-aligned, never overlap
 *     (a block never has more bytes registered than it has), never with remote
 *     read, and are all released by rdmig_dest_destroy; each block ends
 *     against a PROT_NONE guard page and starts after a canary, so a stray
 *     byte either side faults or is found;
 *   - progress: one rdmig_dest_next call per message at most (plus the
 *     block hand-over), no receive after the disconnect, and statistics that
 *     add up.
 * Any violation aborts, which libFuzzer reports as a crash.
 *
 * Input: byte 0 = setup flags (below), byte 1 = which registration fails
 * (bits 0-6) and the chunk size (bit 7: 2 MiB instead of 1 MiB), then the received messages, each a 16-byte header and `len` payload bytes
 * (fewer when the input ends first, which makes a short receive).  The seeds
 * come from dest_corpus.py.  To replay one input and see each message's
 * outcome: FUZZ_DEST_TRACE=1 build-fuzz/tests/fuzz_dest FILE
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fake_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAIL(...) fake_fail(__VA_ARGS__)
#define MIB (1024ull * 1024)

enum setup_flag {
	FLAG_PIN_ALL = 0x01,      /* PIN_ALL negotiated: blocks registered whole */
	FLAG_BLOCKS_FIRST = 0x02, /* rdmig_dest_set_blocks before the first message */
	FLAG_WITHHOLD = 0x04,     /* never give the blocks (with BLOCKS_FIRST: give twice) */
	FLAG_LAYOUT = 0x18,       /* which of the four layouts */
	FLAG_OFFSETS = 0x20,      /* the layout's own offsets instead of the library's */
	FLAG_FAIL_REG = 0x40,     /* registration number (byte 1) + 1 fails */
	FLAG_NULL_EMPTY = 0x80,   /* an empty block has no memory (host NULL) */
};
#define LAYOUT_SHIFT 3

/* Marker bytes around and at the ends of a COMPRESS range, and the canary
 * in front of each block. */
#define MARK_OUT 0x5a
#define MARK_IN 0xa5
#define CANARY 0xcc
/* Messages with more records than this skip the (quadratic) outside check. */
#define MAX_OUTSIDE_CHECK 64

/* The destination's chunk (rdmig_opts.chunk_size) in this input: 2^20 or,
 * with bit 7 of byte 1, 2^21. */
static unsigned chunk_shift = RDMIG_CHUNK_SHIFT;
#define CHUNK_SIZE (1ull << chunk_shift)

#define MAX_BLOCKS 4
#define MAX_CHUNKS 4 /* of any block of the layouts */
struct layout {
	size_t n;
	struct {
		const char *name;
		uint64_t length, offset;
	} b[MAX_BLOCKS];
};

/* Short last chunks, an empty block, a 1-byte block, offsets that are not
 * chunk-aligned, shared, or near the top of the 64-bit space; no blocks. */
static const struct layout layouts[4] = {
	{4, {{"pc.ram", 3 * MIB + 8192 + 100, 0x100000000},
	     {"vga.vram", 16384, 0x200000123},
	     {"empty", 0, 0x300000000},
	     {"rom", 1, 0xffffffffff000000}}},
	{2, {{"a", 1 * MIB, 0x40000000}, {"b", 2 * MIB + 1, 0x40000000}}},
	{1, {{"small", 12288, 4096}}},
	{0, {{NULL, 0, 0}}},
};

/*
 * A destination block in its own mapping:
 *
 *   | guard (PROT_NONE) | canary | block ............ | guard (PROT_NONE) |
 *   map                          host                 host + length
 */
struct block {
	const char *name;
	uint8_t *host;
	uint64_t length, offset; /* offset: where the destination must say it is */
	uint32_t nchunks;
	uint8_t *map;  /* the first guard page */
	size_t canary; /* bytes between it and the block */
};

enum outcome { GO_ON, EVENT, ABORT };

/* The model of a chunk's registration: the region it is in, if any. */
struct chunk_reg {
	bool live;
	uint32_t first, last; /* the region's chunks */
};

/* What handling one message must lead to. */
struct expect {
	enum outcome outcome;
	int event;        /* EVENT: its type */
	int code;         /* ABORT: the return code */
	bool error_sent;  /* ABORT: an ERROR goes to the peer */
	uint32_t reply;   /* the reply sent on the way (0: none) */
	bool may_register, may_deregister;
	uint32_t applied; /* records handled before the first bad one */
};

struct run {
	const uint8_t *next; /* messages not received yet */
	size_t left;
	unsigned frames;
	uint8_t flags;
	struct block blocks[MAX_BLOCKS];
	size_t nblocks;
	struct fake_conn conn;
	struct rdmig_dest *d;
	bool have_blocks, blocks_sent, destroying;

	/* the message being handled (busy), its parse result and what it must do */
	bool busy, handing_over;
	int rc;
	struct rdmig_msg m;
	struct expect want;
	uint64_t max_regs; /* registrations the messages so far can justify */
	struct chunk_reg reg[MAX_BLOCKS][MAX_CHUNKS]; /* dynamic registration */
	struct {
		uint32_t block;
		uint64_t lo, hi;
	} zr[RDMIG_MAX_REPEAT]; /* the non-empty ranges of the COMPRESS at hand */
	uint32_t nzr;

	struct rdmig_engine_stats st; /* what the destination must report */
};

static size_t page_size;

/* ------------------------------------------------------------ blocks -- */

/* Each layout's blocks are mapped once and reused: mapping and unmapping
 * for every input would cost more than the input itself.  No check depends
 * on what an earlier input left in a block. */
static uint8_t *block_maps[4][MAX_BLOCKS];

static void map_block(struct block *b, unsigned layout, size_t i, bool null_empty)
{
	size_t body = (b->length + page_size - 1) / page_size * page_size;
	uint8_t **map = &block_maps[layout][i];

	b->canary = body - b->length;
	if (!*map) {
		*map = mmap(NULL, body + 2 * page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (*map == MAP_FAILED)
			FAIL("mmap of %zu bytes failed", body + 2 * page_size);
		if (body && mprotect(*map + page_size, body, PROT_READ | PROT_WRITE))
			FAIL("mprotect failed");
		memset(*map + page_size, CANARY, b->canary);
	}
	b->map = *map;
	b->host = b->length || !null_empty ? b->map + page_size + b->canary : NULL;
}

static void check_canary(const struct block *b)
{
	for (size_t i = 0; i < b->canary; i++)
		if (b->map[page_size + i] != CANARY)
			FAIL("block %s: byte %zu before its start was written", b->name,
			     b->canary - i);
}

/* The layout's blocks, at its offsets or where the library lays them:
 * one after another, each starting on a chunk boundary. */
static void setup_blocks(struct run *r)
{
	unsigned layout = (r->flags & FLAG_LAYOUT) >> LAYOUT_SHIFT;
	const struct layout *l = &layouts[layout];
	uint64_t next_offset = 0;

	r->nblocks = l->n;
	for (size_t i = 0; i < l->n; i++) {
		struct block *b = &r->blocks[i];

		b->name = l->b[i].name;
		b->length = l->b[i].length;
		b->nchunks = (uint32_t)((b->length + CHUNK_SIZE - 1) >> chunk_shift);
		b->offset = r->flags & FLAG_OFFSETS ? l->b[i].offset : next_offset;
		next_offset = (b->offset + b->length + CHUNK_SIZE - 1) &
			      ~(CHUNK_SIZE - 1);
		map_block(b, layout, i, r->flags & FLAG_NULL_EMPTY);
	}
}

static void give_blocks(struct run *r)
{
	struct rdmig_block api[MAX_BLOCKS];
	int ret;

	for (size_t i = 0; i < r->nblocks; i++)
		api[i] = (struct rdmig_block){
			.name = r->blocks[i].name,
			.host = r->blocks[i].host,
			.length = r->blocks[i].length,
			.offset = r->flags & FLAG_OFFSETS ? r->blocks[i].offset : 0,
		};
	ret = rdmig_dest_set_blocks(r->d, api, r->nblocks);
	if (ret)
		FAIL("rdmig_dest_set_blocks: %s (%s)", rdmig_err_name(ret), r->conn.errmsg);
	r->have_blocks = true;
}

/* ------------------------------------------------------------- model -- */

static struct block *record_block(struct run *r, uint32_t index)
{
	return r->blocks_sent && index < r->nblocks ? &r->blocks[index] : NULL;
}

/* Dynamic registration of chunks first..last: a range inside one region
 * reuses it; a range of free chunks becomes a region; anything else (part
 * registered, or straddling regions) is refused, so that no byte is ever
 * registered twice. */
static int register_model(struct chunk_reg *reg, uint32_t first, uint32_t last)
{
	if (reg[first].live && reg[first].first <= first && reg[first].last >= last)
		return 0;
	for (uint32_t i = first; i <= last; i++)
		if (reg[i].live)
			return RDMIG_EPROTO;
	for (uint32_t i = first; i <= last; i++)
		reg[i] = (struct chunk_reg){true, first, last};
	return 0;
}

/* Register: an address of the block, and chunks chunk .. chunk + chunks in
 * it, that do not overlap another registration (PIN_ALL: the block's). */
static int register_code(struct run *r, const uint8_t *rec)
{
	struct rdmig_register g;
	struct block *b;
	uint64_t chunk;

	rdmig_decode_register(rec, &g);
	b = record_block(r, g.block_index);
	if (!b || g.key < b->offset || g.key - b->offset >= b->length)
		return RDMIG_ERANGE;
	chunk = (g.key - b->offset) >> chunk_shift;
	if (g.chunks >= b->nchunks - chunk)
		return RDMIG_ERANGE;
	if (r->conn.caps.flags & RDMIG_CAP_PIN_ALL)
		return 0;
	if (b->nchunks > MAX_CHUNKS)
		FAIL("block %s has %u chunks; the model holds %d", b->name, b->nchunks, MAX_CHUNKS);
	return register_model(r->reg[g.block_index], (uint32_t)chunk,
			      (uint32_t)(chunk + g.chunks));
}

/* Unregister: key is a chunk number of the block; a region of that one
 * chunk is released (a longer one stays until the end). */
static int unregister_code(struct run *r, const uint8_t *rec)
{
	struct rdmig_register g;
	struct block *b;
	struct chunk_reg *c;

	rdmig_decode_register(rec, &g);
	b = record_block(r, g.block_index);
	if (!b || g.key >= b->nchunks)
		return RDMIG_ERANGE;
	c = &r->reg[g.block_index][g.key];
	if (c->live && c->first == g.key && c->last == g.key)
		c->live = false;
	return 0;
}

/* Compress: value 0, [offset, offset + length) inside the block, and not
 * overlapping an earlier range of the same message (so that one message
 * costs at most a pass over the blocks). */
static int compress_code(struct run *r, const uint8_t *rec)
{
	struct rdmig_compress cp;
	struct block *b;
	uint64_t lo;

	rdmig_decode_compress(rec, &cp);
	b = record_block(r, cp.block_index);
	if (!b)
		return RDMIG_ERANGE;
	if (cp.value)
		return RDMIG_EPROTO;
	if (cp.offset < b->offset || cp.offset - b->offset > b->length ||
	    cp.length > b->length - (cp.offset - b->offset))
		return RDMIG_ERANGE;
	if (!cp.length)
		return 0;
	lo = cp.offset - b->offset;
	for (uint32_t i = 0; i < r->nzr; i++)
		if (r->zr[i].block == cp.block_index && r->zr[i].lo < lo + cp.length &&
		    lo < r->zr[i].hi)
			return RDMIG_EPROTO;
	r->zr[r->nzr].block = cp.block_index;
	r->zr[r->nzr].lo = lo;
	r->zr[r->nzr++].hi = lo + cp.length;
	return 0;
}

static struct expect go_on(uint32_t reply)
{
	return (struct expect){.outcome = GO_ON, .reply = reply};
}

static struct expect event(int type)
{
	return (struct expect){.outcome = EVENT, .event = type};
}

static struct expect aborts(int code, bool error_sent)
{
	return (struct expect){.outcome = ABORT, .code = code, .error_sent = error_sent};
}

/* Records served in order up to the first bad one, whose code ends it. */
static struct expect records(struct run *r, const struct rdmig_msg *m, size_t rec_size,
			     int (*code_of)(struct run *, const uint8_t *), uint32_t reply)
{
	struct expect e = go_on(reply);
	uint32_t i;

	for (i = 0; i < m->repeat; i++) {
		int code = code_of(r, (const uint8_t *)m->payload + i * rec_size);
		if (code) {
			e = aborts(code, true);
			break;
		}
	}
	e.applied = i;
	return e;
}

static struct expect expect_for(struct run *r, int rc, const struct rdmig_msg *m)
{
	struct expect e;

	if (rc == RDMIG_EDISCONNECTED)
		return event(RDMIG_EV_END);
	if (rc) /* the peer's own ERROR gets none back */
		return aborts(rc, rc != RDMIG_EPEER);
	switch (m->type) {
	case RDMIG_MSG_QEMU_FILE:
		return event(RDMIG_EV_STREAM);
	case RDMIG_MSG_REGISTER_FINISHED:
		return event(RDMIG_EV_ITERATION_DONE);
	case RDMIG_MSG_RAM_BLOCKS_REQUEST:
		if (r->blocks_sent)
			return aborts(RDMIG_EPROTO, true);
		if (!r->have_blocks)
			return event(RDMIG_EV_BLOCKS_NEEDED);
		e = go_on(RDMIG_MSG_RAM_BLOCKS_RESULT);
		e.may_register = r->conn.caps.flags & RDMIG_CAP_PIN_ALL;
		r->max_regs += r->nblocks;
		return e;
	case RDMIG_MSG_REGISTER_REQUEST:
		e = records(r, m, RDMIG_REGISTER_SIZE, register_code, RDMIG_MSG_REGISTER_RESULT);
		e.may_register = true;
		r->max_regs += e.applied;
		return e;
	case RDMIG_MSG_UNREGISTER_REQUEST:
		e = records(r, m, RDMIG_REGISTER_SIZE, unregister_code,
			    RDMIG_MSG_UNREGISTER_FINISHED);
		e.may_deregister = true;
		return e;
	case RDMIG_MSG_COMPRESS:
		r->nzr = 0;
		return records(r, m, RDMIG_COMPRESS_SIZE, compress_code, 0);
	default: /* READY and the replies are never sent to a destination */
		return aborts(RDMIG_EPROTO, true);
	}
}

static const char *what(const struct run *r)
{
	if (r->handing_over)
		return "the block hand-over";
	if (r->rc)
		return rdmig_err_name(r->rc);
	return rdmig_msg_type_name(r->m.type);
}

/* ------------------------------------------------------------ memory -- */

static void compress_range(const struct run *r, uint32_t i, const struct block **b, uint64_t *rel,
			   uint64_t *len)
{
	struct rdmig_compress cp;

	rdmig_decode_compress((const uint8_t *)r->m.payload + i * RDMIG_COMPRESS_SIZE, &cp);
	*b = &r->blocks[cp.block_index];
	*rel = cp.offset - (*b)->offset;
	*len = cp.length;
}

/* Before a COMPRESS is handled: MARK_OUT just outside every range it may
 * apply, then MARK_IN at both ends of each (an end may be another's outside). */
static void place_markers(const struct run *r, uint32_t applied)
{
	const struct block *b;
	uint64_t rel, len;

	for (uint32_t i = 0; i < applied; i++) {
		compress_range(r, i, &b, &rel, &len);
		if (rel > 0)
			b->host[rel - 1] = MARK_OUT;
		if (rel + len < b->length)
			b->host[rel + len] = MARK_OUT;
	}
	for (uint32_t i = 0; i < applied; i++) {
		compress_range(r, i, &b, &rel, &len);
		if (len)
			b->host[rel] = b->host[rel + len - 1] = MARK_IN;
	}
}

static bool compressed_by(const struct run *r, uint32_t applied, const struct block *in,
			  uint64_t at)
{
	const struct block *b;
	uint64_t rel, len;

	for (uint32_t i = 0; i < applied; i++) {
		compress_range(r, i, &b, &rel, &len);
		if (b == in && at >= rel && at - rel < len)
			return true;
	}
	return false;
}

static void check_outside(const struct run *r, uint32_t applied, const struct block *b, uint64_t at)
{
	if (!compressed_by(r, applied, b, at) && b->host[at] != MARK_OUT)
		FAIL("COMPRESS changed byte 0x%llx of block %s, outside every range it accepted",
		     (unsigned long long)at, b->name);
}

/* After a COMPRESS: the ranges it accepted are zero at both ends, and the
 * bytes just outside them kept their marker. */
static void check_compressed(const struct run *r, uint32_t applied)
{
	const struct block *b;
	uint64_t rel, len;

	for (uint32_t i = 0; i < applied; i++) {
		compress_range(r, i, &b, &rel, &len);
		if (len && (b->host[rel] || b->host[rel + len - 1]))
			FAIL("COMPRESS record %u: block %s 0x%llx+%llu was not zeroed", i, b->name,
			     (unsigned long long)rel, (unsigned long long)len);
		if (applied > MAX_OUTSIDE_CHECK)
			continue;
		if (rel > 0)
			check_outside(r, applied, b, rel - 1);
		if (rel + len < b->length)
			check_outside(r, applied, b, rel + len);
	}
}

/* Bytes of registered regions that lie in block b now. */
static uint64_t live_bytes_in(const struct block *b)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < fake.nregions; i++) {
		const struct fake_region *g = &fake.regions[i];
		if (g->live && b->length && (uintptr_t)g->addr >= (uintptr_t)b->host &&
		    (uintptr_t)g->addr - (uintptr_t)b->host < b->length)
			sum += g->len;
	}
	return sum;
}

/* Registration: inside one block, whole chunks (the last may be short),
 * local and remote write only, no more than the messages asked for, and
 * never more bytes in a block than the block has (a source asking for the
 * same memory again must not make the destination pin it again). */
static void check_reg(void *ctx, const uint8_t *addr, size_t len, enum engine_access access)
{
	struct run *r = ctx;

	if (!r->busy || !r->want.may_register)
		FAIL("a registration while handling %s", r->busy ? what(r) : "nothing");
	if (access != ENGINE_ACCESS_REMOTE_WRITE)
		FAIL("registration with access %d, not remote write", (int)access);
	if (fake.regs > r->max_regs)
		FAIL("%u registrations, while the messages asked for at most %llu", fake.regs,
		     (unsigned long long)r->max_regs);
	for (size_t i = 0; i < r->nblocks; i++) {
		const struct block *b = &r->blocks[i];
		uint64_t start = (uintptr_t)addr - (uintptr_t)b->host, end = start + len;

		if (!b->length || (uintptr_t)addr < (uintptr_t)b->host || start >= b->length)
			continue;
		if (!len || end > b->length)
			FAIL("registration of %zu bytes at 0x%llx of block %s (%llu bytes)", len,
			     (unsigned long long)start, b->name, (unsigned long long)b->length);
		if (start % CHUNK_SIZE || (end != b->length && end % CHUNK_SIZE))
			FAIL("registration of 0x%llx..0x%llx of block %s: not whole chunks",
			     (unsigned long long)start, (unsigned long long)end, b->name);
		if (live_bytes_in(b) + len > b->length)
			FAIL("registration of %zu more bytes of block %s (%llu bytes), which has "
			     "%llu registered already", len, b->name, (unsigned long long)b->length,
			     (unsigned long long)live_bytes_in(b));
		return;
	}
	FAIL("registration of %zu bytes at %p, outside every block", len, (const void *)addr);
}

/* Deregistration before the end: only a single chunk an UNREGISTER named. */
static void check_dereg(void *ctx, const uint8_t *addr, size_t len)
{
	struct run *r = ctx;

	if (r->destroying)
		return;
	if (!r->busy || !r->want.may_deregister)
		FAIL("a deregistration while handling %s", r->busy ? what(r) : "nothing");
	for (uint32_t i = 0; i < r->want.applied; i++) {
		struct rdmig_register g;
		const struct block *b;
		uint64_t start;

		rdmig_decode_register((const uint8_t *)r->m.payload + i * RDMIG_REGISTER_SIZE, &g);
		b = &r->blocks[g.block_index];
		start = g.key << chunk_shift;
		if (addr == b->host + start &&
		    len == (b->length - start < CHUNK_SIZE ? b->length - start
								  : CHUNK_SIZE))
			return;
	}
	FAIL("UNREGISTER released %zu bytes at %p, not a chunk it named", len, (const void *)addr);
}

/* ----------------------------------------------------------- replies -- */

/* rkey is registered now and covers [p, p + len). */
static bool covers(uint32_t rkey, const uint8_t *p, uint64_t len)
{
	const struct fake_region *g = fake_region_of(rkey);

	return g && g->live && (uintptr_t)g->addr <= (uintptr_t)p &&
	       (uintptr_t)p - (uintptr_t)g->addr + len <= g->len;
}

static void check_blocks_result(const struct run *r, const struct fake_reply *rep)
{
	bool pin_all = r->conn.caps.flags & RDMIG_CAP_PIN_ALL;

	if (rep->repeat != 1 || rep->len != r->nblocks * RDMIG_DEST_BLOCK_SIZE)
		FAIL("RAM_BLOCKS_RESULT with repeat %u, len %u for %zu blocks", rep->repeat,
		     rep->len, r->nblocks);
	for (size_t i = 0; i < r->nblocks; i++) {
		const struct block *b = &r->blocks[i];
		struct rdmig_dest_block db;

		rdmig_decode_dest_block(rep->payload + i * RDMIG_DEST_BLOCK_SIZE, &db);
		/* an empty block is told without an address: none of ours leaks */
		if (db.remote_host_addr != (b->length ? (uintptr_t)b->host : 0) ||
		    db.offset != b->offset ||
		    db.length != b->length)
			FAIL("RAM_BLOCKS_RESULT block %zu: 0x%llx, offset 0x%llx, %llu bytes; it is "
			     "%p, offset 0x%llx, %llu bytes", i,
			     (unsigned long long)db.remote_host_addr, (unsigned long long)db.offset,
			     (unsigned long long)db.length, (void *)b->host,
			     (unsigned long long)b->offset, (unsigned long long)b->length);
		if (pin_all && b->length ? !covers(db.remote_rkey, b->host, b->length)
					 : db.remote_rkey != 0)
			FAIL("RAM_BLOCKS_RESULT block %zu: rkey 0x%x (PIN_ALL %d)", i,
			     db.remote_rkey, pin_all);
	}
}

static void check_register_result(const struct run *r, const struct fake_reply *rep)
{
	if (rep->repeat != r->m.repeat || rep->len != rep->repeat * RDMIG_REGISTER_RESULT_SIZE)
		FAIL("REGISTER_RESULT with repeat %u, len %u for %u records", rep->repeat, rep->len,
		     r->m.repeat);
	for (uint32_t i = 0; i < rep->repeat; i++) {
		struct rdmig_register g;
		struct rdmig_register_result res;
		const struct block *b;
		uint64_t chunk, start, end;

		rdmig_decode_register((const uint8_t *)r->m.payload + i * RDMIG_REGISTER_SIZE, &g);
		rdmig_decode_register_result(rep->payload + i * RDMIG_REGISTER_RESULT_SIZE, &res);
		b = &r->blocks[g.block_index];
		chunk = (g.key - b->offset) >> chunk_shift;
		start = chunk << chunk_shift;
		end = (chunk + g.chunks + 1) << chunk_shift;
		if (end > b->length)
			end = b->length;
		if (res.host_addr != (uintptr_t)b->host)
			FAIL("REGISTER_RESULT record %u: host_addr 0x%llx, block %s is at %p", i,
			     (unsigned long long)res.host_addr, b->name, (void *)b->host);
		if (!covers(res.rkey, b->host + start, end - start))
			FAIL("REGISTER_RESULT record %u: rkey 0x%x does not cover 0x%llx..0x%llx "
			     "of block %s", i, res.rkey, (unsigned long long)start,
			     (unsigned long long)end, b->name);
	}
}

static void check_replies(const struct run *r, const struct expect *w)
{
	const struct fake_reply *rep = &fake.replies[0];

	if (!w->reply || w->outcome == ABORT) {
		if (fake.nreplies)
			FAIL("%s: replied %s", what(r), rdmig_msg_type_name(rep->type));
		return;
	}
	if (fake.nreplies != 1 || rep->type != w->reply)
		FAIL("%s: %u replies (the first %s), want one %s", what(r), fake.nreplies,
		     fake.nreplies ? rdmig_msg_type_name(rep->type) : "-",
		     rdmig_msg_type_name(w->reply));
	switch (rep->type) {
	case RDMIG_MSG_RAM_BLOCKS_RESULT:
		check_blocks_result(r, rep);
		break;
	case RDMIG_MSG_REGISTER_RESULT:
		check_register_result(r, rep);
		break;
	default: /* UNREGISTER_FINISHED: the parse in rdmig_reply checked len 0 */
		break;
	}
}

/* -------------------------------------------------- settling a message -- */

static void check_outcome(const struct run *r, const struct expect *w, bool went_on, int ret,
			  const struct rdmig_event *ev)
{
	if (went_on) {
		if (w->outcome != GO_ON)
			FAIL("%s: the destination asked for the next message; it must %s %d",
			     what(r), w->outcome == EVENT ? "return event" : "fail with",
			     w->outcome == EVENT ? w->event : w->code);
		return;
	}
	switch (w->outcome) {
	case GO_ON:
		FAIL("%s: rdmig_dest_next returned %s (event %d) instead of going on", what(r),
		     rdmig_err_name(ret), ev->type);
	case EVENT:
		if (ret || ev->type != w->event)
			FAIL("%s: %s, event %d; want event %d", what(r), rdmig_err_name(ret),
			     ev->type, w->event);
		if (ev->type == RDMIG_EV_STREAM && (ev->data != r->m.payload || ev->len != r->m.len))
			FAIL("QEMU_FILE of %u bytes became a stream event of %zu bytes at %p",
			     r->m.len, ev->len, ev->data);
		break;
	case ABORT:
		if (ret != w->code)
			FAIL("%s: %s (event %d); want %s", what(r), rdmig_err_name(ret), ev->type,
			     rdmig_err_name(w->code));
		break;
	}
}

static void account(struct run *r, const struct expect *w, const struct rdmig_event *ev)
{
	const struct block *b;
	uint64_t rel, len;

	if (!r->rc && r->m.type == RDMIG_MSG_COMPRESS && !r->handing_over)
		for (uint32_t i = 0; i < w->applied; i++) {
			compress_range(r, i, &b, &rel, &len);
			r->st.bytes_compressed += len;
		}
	if (w->outcome == ABORT)
		return;
	if (w->reply == RDMIG_MSG_RAM_BLOCKS_RESULT)
		r->blocks_sent = true;
	if (w->reply == RDMIG_MSG_REGISTER_RESULT)
		r->st.register_requests++;
	if (w->outcome == EVENT && ev->type == RDMIG_EV_STREAM)
		r->st.stream_bytes += ev->len;
	if (w->outcome == EVENT && ev->type == RDMIG_EV_ITERATION_DONE)
		r->st.iterations++;
}

/* FUZZ_DEST_TRACE=1: one line per message, to see where a seed goes. */
static void trace(const struct run *r, bool went_on, int ret)
{
	static int on = -1;

	if (on < 0)
		on = getenv("FUZZ_DEST_TRACE") != NULL;
	if (on)
		fprintf(stderr, "fuzz_dest: %-20s repeat %-4u -> %-18s replies %u %s, ERRORs %u\n",
			what(r), r->m.repeat, went_on ? "next message" : rdmig_err_name(ret),
			fake.nreplies, fake.nreplies ? rdmig_msg_type_name(fake.replies[0].type) : "",
			fake.errors_sent);
}

/* The message in hand is done (went_on: the destination asked for the
 * next one; otherwise rdmig_dest_next returned ret, *ev): check it all. */
static void settle(struct run *r, bool went_on, int ret, const struct rdmig_event *ev)
{
	struct expect w = r->want;

	trace(r, went_on, ret);

	if (fake.reg_failed) {
		if (!w.may_register)
			FAIL("%s: a registration failed where none was due", what(r));
		w = aborts(-ENOMEM, true); /* the fake fails the registration with ENOMEM */
		fake.reg_failed = false;
	}
	check_outcome(r, &w, went_on, ret, ev);
	check_replies(r, &w);
	if (fake.errors_sent != (w.outcome == ABORT && w.error_sent))
		FAIL("%s: %u ERROR messages sent", what(r), fake.errors_sent);
	if (!r->rc && r->m.type == RDMIG_MSG_COMPRESS && !r->handing_over)
		check_compressed(r, r->want.applied);
	account(r, &w, ev);
	fake_clear_replies();
	fake.errors_sent = 0;
	r->busy = r->handing_over = false;
}

/* ------------------------------------------------------------- hooks -- */

static size_t frame_len(const uint8_t *p, size_t left)
{
	struct rdmig_header h;

	if (left < RDMIG_HEADER_SIZE)
		return left;
	rdmig_decode_header(p, &h);
	return RDMIG_HEADER_SIZE + (h.len < left - RDMIG_HEADER_SIZE ? h.len
								       : left - RDMIG_HEADER_SIZE);
}

static bool next_frame(void *ctx, const uint8_t **buf, size_t *len)
{
	struct run *r = ctx;

	if (!r->left)
		return false;
	*buf = r->next;
	*len = frame_len(r->next, r->left);
	r->next += *len;
	r->left -= *len;
	return true;
}

static void before_recv(void *ctx)
{
	struct run *r = ctx;

	/* (a registration outside a message is caught by check_reg) */
	if (r->busy)
		settle(r, true, 0, NULL);
	else if (fake.nreplies || fake.errors_sent)
		FAIL("the destination sent a message between two calls");
}

static void delivered(void *ctx, int rc, const struct rdmig_msg *m)
{
	struct run *r = ctx;

	r->rc = rc;
	r->m = m ? *m : (struct rdmig_msg){0};
	r->want = expect_for(r, rc, &r->m);
	r->busy = true;
	if (!rc && m->type == RDMIG_MSG_COMPRESS)
		place_markers(r, r->want.applied);
}

/* ------------------------------------------------------------ driver -- */

static void check_stats(const struct run *r)
{
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	rdmig_dest_stats(r->d, &st);
	if (st.stream_bytes != r->st.stream_bytes || st.iterations != r->st.iterations ||
	    st.register_requests != r->st.register_requests ||
	    st.bytes_compressed != r->st.bytes_compressed)
		FAIL("statistics: stream %llu, iterations %llu, register %llu, compressed %llu; "
		     "want %llu, %llu, %llu, %llu", (unsigned long long)st.stream_bytes,
		     (unsigned long long)st.iterations, (unsigned long long)st.register_requests,
		     (unsigned long long)st.bytes_compressed,
		     (unsigned long long)r->st.stream_bytes, (unsigned long long)r->st.iterations,
		     (unsigned long long)r->st.register_requests,
		     (unsigned long long)r->st.bytes_compressed);
}

/* RDMIG_EV_BLOCKS_NEEDED: give the blocks (the next call replies, then goes
 * on) or withhold them (the next call must fail). */
static void hand_over_blocks(struct run *r)
{
	r->busy = r->handing_over = true;
	if (r->flags & FLAG_WITHHOLD) {
		r->want = aborts(RDMIG_ESTATE, true);
		return;
	}
	give_blocks(r);
	r->want = go_on(RDMIG_MSG_RAM_BLOCKS_RESULT);
	r->want.may_register = r->conn.caps.flags & RDMIG_CAP_PIN_ALL;
	r->max_regs += r->nblocks;
}

/* Call rdmig_dest_next until the end or an error, at most once per message
 * plus the END and the block hand-over. */
static void drive(struct run *r)
{
	for (unsigned calls = 0;; calls++) {
		struct rdmig_event ev = {0};
		int ret;

		if (calls > r->frames + 2)
			FAIL("rdmig_dest_next called %u times for %u messages", calls, r->frames);
		r->conn.errmsg[0] = '\0'; /* so that a stale reason does not count */
		ret = rdmig_dest_next(r->d, &ev);
		if (!memchr(r->conn.errmsg, '\0', sizeof(r->conn.errmsg)))
			FAIL("errmsg is not terminated");
		if (ret > 0 || (ret && !rdmig_dest_errmsg(r->d)[0]))
			FAIL("rdmig_dest_next returned %d (%s) with errmsg \"%s\"", ret,
			     rdmig_err_name(ret), rdmig_dest_errmsg(r->d));
		if (!r->busy)
			FAIL("rdmig_dest_next returned %s without receiving anything",
			     rdmig_err_name(ret));
		settle(r, false, ret, &ev);
		check_stats(r);
		if (ret || ev.type == RDMIG_EV_END)
			return;
		if (ev.type == RDMIG_EV_BLOCKS_NEEDED)
			hand_over_blocks(r);
	}
}

static void count_frames(struct run *r)
{
	const uint8_t *p = r->next;
	size_t left = r->left;

	for (r->frames = 0; left; r->frames++) {
		size_t n = frame_len(p, left);
		p += n;
		left -= n;
	}
}

/* A destination on a connection that looks established, PIN_ALL as the
 * flags say, and the blocks given up front when they say so. */
static void start(struct run *r, const uint8_t *data, size_t size)
{
	static const struct fake_hooks hooks_template = {next_frame, before_recv, delivered,
							 check_reg, check_dereg, NULL};
	struct fake_hooks hooks = hooks_template;
	unsigned fail_reg_at = 0;
	int ret;

	memset(r, 0, sizeof(*r));
	r->flags = size > 0 ? data[0] : 0;
	if (r->flags & FLAG_FAIL_REG)
		fail_reg_at = (size > 1 ? data[1] & 0x7fu : 0) + 1u;
	chunk_shift = size > 1 && (data[1] & 0x80) ? 21 : RDMIG_CHUNK_SHIFT;
	r->next = data + (size < 2 ? size : 2);
	r->left = size - (size_t)(r->next - data);
	count_frames(r);
	setup_blocks(r);

	rdmig_opts_init(&r->conn.opts);
	r->conn.opts.chunk_size = CHUNK_SIZE;
	r->conn.established = true;
	r->conn.caps = (struct rdmig_caps){RDMIG_CAP_VERSION,
					   r->flags & FLAG_PIN_ALL ? RDMIG_CAP_PIN_ALL : 0};
	hooks.ctx = r;
	fake_begin(&r->conn, &hooks, fail_reg_at);
	ret = rdmig__dest_create(&fake.io, &r->d);
	if (ret)
		FAIL("rdmig_dest_create: %s", rdmig_err_name(ret));
	if (!(r->flags & FLAG_BLOCKS_FIRST))
		return;
	give_blocks(r);
	if (r->flags & FLAG_WITHHOLD) {
		r->conn.errmsg[0] = '\0';
		ret = rdmig_dest_set_blocks(r->d, NULL, 0);
		if (ret != RDMIG_ESTATE || !rdmig_dest_errmsg(r->d)[0])
			FAIL("blocks given twice: %s", rdmig_err_name(ret));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run run;

	if (!page_size)
		page_size = (size_t)sysconf(_SC_PAGESIZE);
	start(&run, data, size);
	drive(&run);
	run.destroying = true;
	rdmig_dest_destroy(run.d);
	fake_end();
	for (size_t i = 0; i < run.nblocks; i++)
		check_canary(&run.blocks[i]);
	return 0;
}
