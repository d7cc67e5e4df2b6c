/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_source.c - the source engine (src/engine/source.c) without a device.
 *
 * The engine talks through a fake engine_io (src/engine/engine_io.h) that plays
 * the destination: it answers RAM_BLOCKS_REQUEST and REGISTER_REQUEST as
 * QEMU's destination would, hands out registrations with made-up keys,
 * and logs every call in order.  The cases then read the log: how ranges
 * merge into RDMA WRITEs and split at chunk boundaries, that a chunk's
 * registration is asked for before the previous write is posted, that an
 * all-zero range becomes COMPRESS, and what failures cost (code, message,
 * and whether ERROR goes to the peer).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "engine_io.h"
#include "log.h"

#define MIB (1ull << 20)
#define MAX_EVENTS 64
#define MAX_BLOCKS 2
#define MAX_REGS 16

/* Where the fake destination says its blocks are, and its keys. */
#define DEST_HOST(i) (0x7f0000000000ull + (uint64_t)(i) * 0x100000000ull)
#define DEST_OFFSET(i) ((uint64_t)(i) * 0x40000000ull)
#define DEST_BLOCK_RKEY(i) (0xb000u + (uint32_t)(i))
#define CHUNK_RKEY(n) (0xc000u + (uint32_t)(n)) /* of the nth REGISTER_RESULT */
#define LOCAL_KEY(n) (0xd000u + (uint32_t)(n))  /* of the nth registration */

enum ev_kind { EV_REG, EV_DEREG, EV_WRITE, EV_FLUSH, EV_SEND, EV_REQUEST, EV_REPLY, EV_ERROR };

/* One call of the engine into the seam. */
struct event {
	enum ev_kind kind;
	uint32_t type;                /* SEND, REQUEST, REPLY: the message type */
	struct rdmig_register reg;    /* REQUEST of REGISTER_REQUEST */
	struct rdmig_compress comp;   /* SEND of COMPRESS */
	struct engine_write w;        /* WRITE */
	const uint8_t *addr;          /* REG */
	uint64_t len;                 /* REG, SEND */
	enum engine_access access;    /* REG */
};

struct fake_dest {
	struct rdmig_opts opts;
	char errmsg[RDMIG_ERRMSG_SIZE];
	struct rdmig_caps caps;

	struct event ev[MAX_EVENTS];
	size_t nev;

	/* what the destination has: the source's lengths unless a case lies */
	uint64_t dest_len[MAX_BLOCKS];
	size_t ndest;
	uint64_t bad_host; /* non-zero: REGISTER_RESULT names this address */

	uint32_t awaited;      /* the reply type of the request in flight */
	struct rdmig_register asked;
	unsigned replies;      /* REGISTER_RESULTs sent */
	uint8_t reply_buf[MAX_BLOCKS * RDMIG_DEST_BLOCK_SIZE];
	int fail_reply_with;   /* request_reply fails with this code (0: never) */

	unsigned regs, fail_reg_at; /* fail the nth registration (0: never) */
	/* a slow destination or HCA: sleeps in the seam, for the timings */
	unsigned reg_sleep_ms, later_reply_sleep_ms; /* the second reply on */
	struct engine_mr mr[MAX_REGS];
	bool live[MAX_REGS];
	uint64_t writes_signaled;
};

static struct fake_dest fd;

/* The source's pinning threads register while its own thread sends and
 * writes: one entry at a time (its slot is the caller's to fill). */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static struct event *log_event(enum ev_kind kind)
{
	struct event *e;

	pthread_mutex_lock(&log_lock);
	if (fd.nev == MAX_EVENTS) {
		fprintf(stderr, "more than %d calls into the seam\n", MAX_EVENTS);
		abort();
	}
	e = &fd.ev[fd.nev++];
	*e = (struct event){.kind = kind};
	pthread_mutex_unlock(&log_lock);
	return e;
}

/* Registrations may come from the source's register threads: one at a
 * time here, as the log is one list. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

static struct engine_mr *fake_reg(void *ctx, void *addr, uint64_t len, enum engine_access access)
{
	struct engine_mr *mr = NULL;
	unsigned n;
	struct event *e;

	pthread_mutex_lock(&reg_lock);
	n = fd.regs++;
	e = log_event(EV_REG);
	e->addr = addr;
	e->len = len;
	e->access = access;
	if (fd.reg_sleep_ms)
		nanosleep(&(struct timespec){0, fd.reg_sleep_ms * 1000000L}, NULL);
	if (fd.regs != fd.fail_reg_at && n < MAX_REGS) {
		fd.mr[n] = (struct engine_mr){addr, len, LOCAL_KEY(n), LOCAL_KEY(n)};
		fd.live[n] = true;
		mr = &fd.mr[n];
	}
	pthread_mutex_unlock(&reg_lock);
	if (!mr)
		errno = ENOMEM;
	return mr;
}

/* The key of the live registration that starts at addr (0: none). */
static uint32_t key_at(const void *addr)
{
	for (unsigned i = 0; i < MAX_REGS; i++)
		if (fd.live[i] && fd.mr[i].addr == addr)
			return fd.mr[i].lkey;
	return 0;
}

static void fake_dereg(void *ctx, struct engine_mr *mr)
{
	size_t n = (size_t)(mr - fd.mr);

	log_event(EV_DEREG);
	if (n >= MAX_REGS || !fd.live[n]) {
		fprintf(stderr, "dereg of a region that is not registered\n");
		abort();
	}
	fd.live[n] = false;
}

static int fake_post_write(void *ctx, const struct engine_write *w)
{
	log_event(EV_WRITE)->w = *w;
	fd.writes_signaled += w->signal;
	return 0;
}

static int fake_flush_sends(void *ctx, int timeout_ms)
{
	log_event(EV_FLUSH);
	return 0;
}

/* The destination answers a request before its next READY: a control
 * message sent while a reply is awaited would overtake it. */
static void no_reply_awaited(const struct rdmig_msg *msg)
{
	if (fd.awaited != RDMIG_MSG_NONE) {
		fprintf(stderr, "%s sent while %s is awaited\n", rdmig_msg_type_name(msg->type),
			rdmig_msg_type_name(fd.awaited));
		abort();
	}
}

static int fake_send(void *ctx, const struct rdmig_msg *msg)
{
	struct event *e;

	no_reply_awaited(msg);
	e = log_event(EV_SEND);

	e->type = msg->type;
	e->len = msg->len;
	if (msg->type == RDMIG_MSG_COMPRESS)
		rdmig_decode_compress(msg->payload, &e->comp);
	return 0;
}

static int fake_request_send(void *ctx, const struct rdmig_msg *msg)
{
	struct event *e;

	no_reply_awaited(msg);
	e = log_event(EV_REQUEST);

	e->type = msg->type;
	if (msg->type == RDMIG_MSG_REGISTER_REQUEST) {
		rdmig_decode_register(msg->payload, &e->reg);
		fd.asked = e->reg;
		fd.awaited = RDMIG_MSG_REGISTER_RESULT;
	} else {
		fd.awaited = RDMIG_MSG_RAM_BLOCKS_RESULT;
	}
	return 0;
}

static uint32_t blocks_result(void)
{
	for (size_t i = 0; i < fd.ndest; i++) {
		struct rdmig_dest_block db = {
			.remote_host_addr = DEST_HOST(i),
			.offset = DEST_OFFSET(i),
			.length = fd.dest_len[i],
			.remote_rkey = fd.caps.flags & RDMIG_CAP_PIN_ALL ? DEST_BLOCK_RKEY(i) : 0,
		};
		rdmig_encode_dest_block(&db, fd.reply_buf + i * RDMIG_DEST_BLOCK_SIZE);
	}
	return (uint32_t)(fd.ndest * RDMIG_DEST_BLOCK_SIZE);
}

/* As QEMU's destination: the block start and a key per request. */
static uint32_t register_result(void)
{
	struct rdmig_register_result res = {
		.rkey = CHUNK_RKEY(fd.replies++),
		.host_addr = fd.bad_host ? fd.bad_host : DEST_HOST(fd.asked.block_index),
	};
	rdmig_encode_register_result(&res, fd.reply_buf);
	return RDMIG_REGISTER_RESULT_SIZE;
}

static int fake_request_reply(void *ctx, uint32_t reply_type, struct rdmig_msg *reply)
{
	log_event(EV_REPLY)->type = reply_type;
	if (reply_type != fd.awaited) {
		fprintf(stderr, "a reply %s awaited, %s asked for\n",
			rdmig_msg_type_name(reply_type), rdmig_msg_type_name(fd.awaited));
		abort();
	}
	fd.awaited = RDMIG_MSG_NONE;
	if (reply_type == RDMIG_MSG_REGISTER_RESULT && fd.replies && fd.later_reply_sleep_ms)
		nanosleep(&(struct timespec){0, fd.later_reply_sleep_ms * 1000000L}, NULL);
	if (fd.fail_reply_with)
		return rdmig__fail(&fd.opts, fd.errmsg, fd.fail_reply_with,
				   "the peer sent ERROR while we waited for %s",
				   rdmig_msg_type_name(reply_type));
	*reply = (struct rdmig_msg){reply_type, 1, 0, fd.reply_buf};
	if (reply_type == RDMIG_MSG_RAM_BLOCKS_RESULT)
		reply->len = blocks_result();
	else
		reply->len = register_result();
	return 0;
}

/* What only a destination does. */
static int fake_recv(void *ctx, uint32_t expect, int timeout_ms, struct rdmig_msg *msg)
{
	fprintf(stderr, "the source received a message\n");
	abort();
}

static int fake_reply(void *ctx, const struct rdmig_msg *msg)
{
	fprintf(stderr, "the source replied %s\n", rdmig_msg_type_name(msg->type));
	abort();
}

static int fake_send_error(void *ctx)
{
	log_event(EV_ERROR);
	return 0;
}

static bool fake_established(void *ctx)
{
	return true;
}

static uint64_t fake_writes_signaled(void *ctx)
{
	return fd.writes_signaled;
}

static const struct engine_io_ops fake_ops = {
	.reg = fake_reg,
	.dereg = fake_dereg,
	.post_write = fake_post_write,
	.flush_sends = fake_flush_sends,
	.send = fake_send,
	.request_send = fake_request_send,
	.request_reply = fake_request_reply,
	.recv = fake_recv,
	.reply = fake_reply,
	.send_error = fake_send_error,
	.established = fake_established,
	.writes_signaled = fake_writes_signaled,
};

/* ------------------------------------------------------------ helpers -- */

/* Memory of a block: `len` bytes of 0xa5 (zero where a case clears it). */
struct run {
	struct rdmig_source *s;
	uint8_t *mem[MAX_BLOCKS];
	struct rdmig_block blocks[MAX_BLOCKS];
	size_t nblocks;
};

/* A source over the fake with blocks of these lengths, chunk size `chunk`
 * (0: the default), PIN_ALL when asked; not set up yet. */
static int start(struct run *r, const uint64_t *lens, size_t n, uint64_t chunk, bool pin_all)
{
	struct engine_io io = {&fake_ops, &fd, &fd.opts, fd.errmsg, &fd.caps};

	memset(&fd, 0, sizeof(fd));
	memset(r, 0, sizeof(*r));
	rdmig_opts_init(&fd.opts);
	if (chunk)
		fd.opts.chunk_size = chunk;
	fd.caps = (struct rdmig_caps){RDMIG_CAP_VERSION, pin_all ? RDMIG_CAP_PIN_ALL : 0};
	fd.ndest = n;
	r->nblocks = n;
	for (size_t i = 0; i < n; i++) {
		r->mem[i] = malloc(lens[i]);
		if (!r->mem[i])
			abort();
		memset(r->mem[i], 0xa5, lens[i]);
		r->blocks[i] = (struct rdmig_block){i ? "rom" : "ram", r->mem[i], lens[i], 0};
		fd.dest_len[i] = lens[i];
	}
	return rdmig__source_create(&io, r->blocks, n, &r->s);
}

/* Destroy the source: every registration must be released. */
static void finish(struct run *r)
{
	rdmig_source_destroy(r->s);
	for (unsigned i = 0; i < MAX_REGS; i++)
		if (fd.live[i]) {
			fprintf(stderr, "registration %u still live after destroy\n", i);
			abort();
		}
	for (size_t i = 0; i < r->nblocks; i++)
		free(r->mem[i]);
}

/* The index of the first event of kind (and, for messages, type) at or
 * after `from`, or -1. */
static long find(size_t from, enum ev_kind kind, uint32_t type)
{
	for (size_t i = from; i < fd.nev; i++)
		if (fd.ev[i].kind == kind &&
		    (type == RDMIG_MSG_NONE || fd.ev[i].type == type))
			return (long)i;
	return -1;
}

static unsigned count(enum ev_kind kind, uint32_t type)
{
	unsigned n = 0;

	for (long i = find(0, kind, type); i >= 0; i = find((size_t)i + 1, kind, type))
		n++;
	return n;
}

/* The nth WRITE (from 0); aborts when there is none. */
static const struct engine_write *nth_write(unsigned n)
{
	long i = -1;

	do
		i = find((size_t)(i + 1), EV_WRITE, RDMIG_MSG_NONE);
	while (i >= 0 && n--);
	if (i < 0) {
		fprintf(stderr, "fewer writes than expected\n");
		abort();
	}
	return &fd.ev[i].w;
}

/* Block 0's first len bytes, one MiB per call, as a first pass writes
 * them, and the end of the iteration. */
static int write_block_by_mib(struct run *r, uint64_t len)
{
	int ret = 0;

	for (uint64_t off = 0; off < len && !ret; off += MIB)
		ret = rdmig_source_write(r->s, 0, off, MIB);
	return ret ? ret : rdmig_source_end_iteration(r->s);
}

/* The source's statistics now. */
static struct rdmig_engine_stats stats_of(const struct run *r)
{
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	rdmig_source_stats(r->s, &st);
	return st;
}

/* -------------------------------------------------------------- cases -- */

/* Adjacent ranges of one chunk go out as one RDMA WRITE, signaled because
 * it ends the iteration, after one registration round trip. */
TEST(merges_adjacent_writes)
{
	static const uint64_t len = MIB;
	struct run r;
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_OK(rdmig_source_setup(r.s));
	for (uint64_t off = 4096; off < 4 * 4096; off += 4096)
		CHECK_OK(rdmig_source_write(r.s, 0, off, 4096));
	CHECK_OK(rdmig_source_end_iteration(r.s));

	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 1);
	CHECK_EQ(count(EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), 1);
	const struct engine_write *w = nth_write(0);
	CHECK(w->local == r.mem[0] + 4096);
	CHECK_EQ(w->len, 3 * 4096);
	CHECK_EQ(w->remote, DEST_HOST(0) + 4096);
	CHECK_EQ(w->rkey, CHUNK_RKEY(0));
	CHECK_EQ(w->lkey, LOCAL_KEY(0));
	CHECK_EQ(w->block, 0);
	CHECK_EQ(w->chunk, 0);
	CHECK(w->signal);
	/* the request names the range's start in the destination's offsets */
	long req = find(0, EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST);
	CHECK_EQ(fd.ev[req].reg.key, DEST_OFFSET(0) + 4096);
	CHECK_EQ(fd.ev[req].reg.chunks, 0);
	/* our chunk is registered whole, read-only, while the request travels */
	long reg = find((size_t)req, EV_REG, RDMIG_MSG_NONE);
	CHECK(reg > req && reg < find(0, EV_REPLY, RDMIG_MSG_REGISTER_RESULT));
	CHECK(fd.ev[reg].addr == r.mem[0]);
	CHECK_EQ(fd.ev[reg].len, MIB);
	CHECK_EQ(fd.ev[reg].access, ENGINE_ACCESS_LOCAL_READ);
	/* the iteration ends: everything completed, then REGISTER_FINISHED */
	long flush = find(0, EV_FLUSH, RDMIG_MSG_NONE);
	CHECK(flush > find(0, EV_WRITE, RDMIG_MSG_NONE));
	CHECK_EQ(find((size_t)flush, EV_SEND, RDMIG_MSG_REGISTER_FINISHED), flush + 1);
	rdmig_source_stats(r.s, &st);
	CHECK_EQ(st.writes_posted, 1);
	CHECK_EQ(st.bytes_written, 3 * 4096);
	CHECK_EQ(st.writes_signaled, 1);
	CHECK_EQ(st.register_requests, 1);
	CHECK_EQ(st.iterations, 1);
	finish(&r);
}

/* The next chunk's REGISTER_REQUEST (and our own registration of it) goes
 * out before the previous chunk's write is posted, and its reply is taken
 * after: the round trip overlaps the write. */
TEST(registers_ahead_of_previous_write)
{
	static const uint64_t len = 2 * MIB;
	struct run r;
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_OK(rdmig_source_setup(r.s));
	fd.nev = 0; /* the setup's calls are not this case's */
	CHECK_OK(rdmig_source_write(r.s, 0, 0, 4096));
	CHECK_OK(rdmig_source_write(r.s, 0, MIB, 4096));

	/* chunk 0: request, register, reply; chunk 1: request, register,
	 * then chunk 0's write, then chunk 1's reply */
	static const enum ev_kind want[] = {EV_REQUEST, EV_REG, EV_REPLY, EV_REQUEST,
					    EV_REG,     EV_WRITE, EV_REPLY};
	CHECK_EQ(fd.nev, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < fd.nev; i++)
		CHECK_EQ(fd.ev[i].kind, want[i]);
	CHECK_EQ(fd.ev[3].reg.key, DEST_OFFSET(0) + MIB);
	CHECK(fd.ev[4].addr == r.mem[0] + MIB);
	CHECK_EQ(fd.ev[5].w.chunk, 0);
	CHECK_EQ(fd.ev[5].w.rkey, CHUNK_RKEY(0));
	CHECK(!fd.ev[5].w.signal);

	CHECK_OK(rdmig_source_end_iteration(r.s));
	const struct engine_write *w = nth_write(1);
	CHECK_EQ(w->chunk, 1);
	CHECK_EQ(w->rkey, CHUNK_RKEY(1));
	CHECK_EQ(w->lkey, LOCAL_KEY(1));
	CHECK_EQ(w->remote, DEST_HOST(0) + MIB);
	CHECK(w->signal);
	rdmig_source_stats(r.s, &st);
	CHECK_EQ(st.register_ahead, 1);
	CHECK_EQ(st.register_requests, 2);
	finish(&r);
}

/* An all-zero range in a chunk the destination has not registered goes as
 * COMPRESS: no registration, no write.  Once the chunk is registered, zero
 * data is written like any other. */
TEST(compresses_zero_chunks)
{
	static const uint64_t len = 2 * MIB;
	struct run r;
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	CHECK_OK(start(&r, &len, 1, 0, false));
	memset(r.mem[0] + MIB, 0, 8192);
	memset(r.mem[0], 0, 4096);
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, MIB, 8192));
	CHECK_OK(rdmig_source_end_iteration(r.s));

	CHECK_EQ(count(EV_REG, RDMIG_MSG_NONE), 0);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 0);
	CHECK_EQ(count(EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), 0);
	long c = find(0, EV_SEND, RDMIG_MSG_COMPRESS);
	CHECK(c >= 0 && c < find(0, EV_SEND, RDMIG_MSG_REGISTER_FINISHED));
	CHECK_EQ(fd.ev[c].len, RDMIG_COMPRESS_SIZE);
	CHECK_EQ(fd.ev[c].comp.value, 0);
	CHECK_EQ(fd.ev[c].comp.block_index, 0);
	CHECK_EQ(fd.ev[c].comp.offset, DEST_OFFSET(0) + MIB);
	CHECK_EQ(fd.ev[c].comp.length, 8192);

	/* chunk 0 gets a key for its non-zero data; its zero page then goes
	 * as a write */
	CHECK_OK(rdmig_source_write(r.s, 0, 8192, 4096));
	CHECK_OK(rdmig_source_end_iteration(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, 0, 4096));
	CHECK_OK(rdmig_source_end_iteration(r.s));
	CHECK_EQ(count(EV_SEND, RDMIG_MSG_COMPRESS), 1);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 2);
	CHECK_EQ(nth_write(1)->remote, DEST_HOST(0));
	rdmig_source_stats(r.s, &st);
	CHECK_EQ(st.bytes_compressed, 8192);
	CHECK_EQ(st.iterations, 3);
	CHECK_EQ(count(EV_SEND, RDMIG_MSG_REGISTER_FINISHED), 3);
	finish(&r);
}

/* One range over a block of 2 MiB chunks (not the default) whose last
 * chunk is short is split at every chunk boundary: one write and one
 * registration per chunk, the last as long as what is left. */
TEST(splits_at_chunk_boundaries)
{
	static const uint64_t chunk = 2 * MIB, len = 2 * 2 * MIB + 12288;
	struct run r;

	CHECK_OK(start(&r, &len, 1, chunk, false));
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, 0, len));
	CHECK_OK(rdmig_source_end_iteration(r.s));

	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 3);
	CHECK_EQ(count(EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), 3);
	CHECK_EQ(count(EV_REG, RDMIG_MSG_NONE), 3);
	for (unsigned i = 0; i < 3; i++) {
		const struct engine_write *w = nth_write(i);
		uint64_t want_len = i < 2 ? chunk : 12288;
		CHECK_EQ(w->chunk, i);
		CHECK_EQ(w->len, want_len);
		CHECK(w->local == r.mem[0] + i * chunk);
		CHECK_EQ(w->remote, DEST_HOST(0) + i * chunk);
		CHECK_EQ(w->rkey, CHUNK_RKEY(i));
		CHECK_EQ(w->signal, i == 2);
	}
	for (long i = find(0, EV_REG, RDMIG_MSG_NONE), n = 0; i >= 0;
	     i = find((size_t)i + 1, EV_REG, RDMIG_MSG_NONE), n++) {
		CHECK(fd.ev[i].addr == r.mem[0] + (uint64_t)n * chunk);
		CHECK_EQ(fd.ev[i].len, n < 2 ? chunk : 12288);
	}
	for (long i = find(0, EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), n = 0; i >= 0;
	     i = find((size_t)i + 1, EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), n++)
		CHECK_EQ(fd.ev[i].reg.key, DEST_OFFSET(0) + (uint64_t)n * chunk);
	finish(&r);
}

/* A second iteration over registered chunks asks nothing again; each
 * iteration ends with the sends flushed and one REGISTER_FINISHED. */
TEST(iterations_reuse_keys)
{
	static const uint64_t len = MIB;
	struct run r;
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_OK(rdmig_source_setup(r.s));
	for (int it = 0; it < 2; it++) {
		CHECK_OK(rdmig_source_write(r.s, 0, 0, 4096));
		CHECK_OK(rdmig_source_write(r.s, 0, 65536, 4096));
		CHECK_OK(rdmig_source_end_iteration(r.s));
	}
	CHECK_EQ(count(EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), 1);
	CHECK_EQ(count(EV_REG, RDMIG_MSG_NONE), 1);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 4);
	CHECK_EQ(count(EV_FLUSH, RDMIG_MSG_NONE), 2);
	CHECK_EQ(count(EV_SEND, RDMIG_MSG_REGISTER_FINISHED), 2);
	/* only the last write of an iteration asks for a signal */
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ(nth_write(i)->signal, i % 2 == 1);
	CHECK_EQ(nth_write(3)->rkey, CHUNK_RKEY(0));
	rdmig_source_stats(r.s, &st);
	CHECK_EQ(st.iterations, 2);
	CHECK_EQ(st.writes_posted, 4);
	finish(&r);
}

/* PIN_ALL: our blocks are pinned whole from setup on, on a thread, while
 * the destination pins its own; writes use the blocks' keys and may cross
 * chunks, and no chunk is ever requested. */
TEST(pin_all_writes_across_chunks)
{
	static const uint64_t lens[2] = {3 * MIB, 4096};
	struct run r;
	long reg;

	CHECK_OK(start(&r, lens, 2, 0, true));
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_EQ(find(0, EV_REQUEST, RDMIG_MSG_RAM_BLOCKS_REQUEST), 0);
	CHECK_OK(rdmig_source_write(r.s, 0, MIB - 4096, 8192));
	CHECK_OK(rdmig_source_write(r.s, 1, 0, 4096));
	CHECK_OK(rdmig_source_end_iteration(r.s));
	/* the pieces in the order of the writes: block 0, then block 1 */
	reg = find(0, EV_REG, RDMIG_MSG_NONE);
	CHECK(reg > 0 && fd.ev[reg].addr == r.mem[0] && fd.ev[reg].len == 3 * MIB);
	reg = find((size_t)reg + 1, EV_REG, RDMIG_MSG_NONE);
	CHECK(reg > 0 && fd.ev[reg].addr == r.mem[1] && fd.ev[reg].len == 4096);
	CHECK_EQ(count(EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), 0);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 2);
	CHECK_EQ(nth_write(0)->len, 8192);
	CHECK_EQ(nth_write(0)->rkey, DEST_BLOCK_RKEY(0));
	CHECK_EQ(nth_write(0)->lkey, LOCAL_KEY(0));
	CHECK_EQ(nth_write(1)->rkey, DEST_BLOCK_RKEY(1));
	CHECK_EQ(nth_write(1)->remote, DEST_HOST(1));
	finish(&r);
}

/* Keep-alives: none unless asked for; then an empty stream message once
 * the interval passed without a control message, and not again at once. */
TEST(keep_alive_after_silence_only)
{
	static const uint64_t len = 4 * MIB;
	struct run r;
	long beat;

	CHECK_OK(start(&r, &len, 1, 0, true));
	CHECK_OK(rdmig_source_setup(r.s));
	usleep(3000);
	CHECK_OK(rdmig_source_write(r.s, 0, 0, 4096));
	CHECK_OK(rdmig_source_keep_alive(r.s));
	CHECK_EQ(count(EV_SEND, RDMIG_MSG_QEMU_FILE), 0); /* off by default */

	CHECK_EQ(rdmig_source_set_keep_alive(r.s, -1), RDMIG_EINVAL);
	CHECK_OK(rdmig_source_set_keep_alive(r.s, 1));
	usleep(3000);
	CHECK_OK(rdmig_source_write(r.s, 0, 4096, 4096));
	CHECK_EQ(count(EV_SEND, RDMIG_MSG_QEMU_FILE), 1);
	beat = find(0, EV_SEND, RDMIG_MSG_QEMU_FILE);
	CHECK_EQ(fd.ev[beat].len, 0);
	CHECK_OK(rdmig_source_keep_alive(r.s)); /* just sent: not due */
	CHECK_EQ(count(EV_SEND, RDMIG_MSG_QEMU_FILE), 1);
	usleep(3000);
	CHECK_OK(rdmig_source_keep_alive(r.s));
	CHECK_EQ(count(EV_SEND, RDMIG_MSG_QEMU_FILE), 2);
	CHECK_OK(rdmig_source_end_iteration(r.s));
	finish(&r);
}

/* Stream bytes go after the data handed over before them. */
TEST(stream_follows_pending_write)
{
	static const uint64_t len = MIB;
	static const char bytes[] = "QEVM";
	struct run r;

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, 0, 4096));
	CHECK_OK(rdmig_source_write_stream(r.s, bytes, sizeof(bytes)));
	long w = find(0, EV_WRITE, RDMIG_MSG_NONE);
	long s = find(0, EV_SEND, RDMIG_MSG_QEMU_FILE);
	CHECK(w >= 0 && s > w);
	CHECK_EQ(fd.ev[s].len, sizeof(bytes));
	finish(&r);
}

/* Our own registration fails: the errno's code and a message that says
 * what and how much; nothing goes to the peer (its request was fine). */
TEST(registration_failure)
{
	static const uint64_t len = MIB;
	struct run r;

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_OK(rdmig_source_setup(r.s));
	fd.fail_reg_at = 1;
	CHECK_OK(rdmig_source_write(r.s, 0, 0, 4096));
	CHECK_EQ(rdmig_source_end_iteration(r.s), -ENOMEM);
	CHECK_STR_CONTAINS(rdmig_source_errmsg(r.s),
			   "cannot register source chunk ram (1048576 bytes): ");
	CHECK_STR_CONTAINS(rdmig_source_errmsg(r.s), "ulimit -l");
	CHECK_EQ(count(EV_ERROR, RDMIG_MSG_NONE), 0);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 0);
	finish(&r);

	/* PIN_ALL: pinned ahead, so the first write that needs it fails,
	 * naming the block, and nothing is written */
	CHECK_OK(start(&r, &len, 1, 0, true));
	fd.fail_reg_at = 1;
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, 0, 4096));
	CHECK_EQ(rdmig_source_end_iteration(r.s), -ENOMEM);
	CHECK_STR_CONTAINS(rdmig_source_errmsg(r.s), "cannot register source block ram");
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 0);
	finish(&r);
}

/* The peer aborts instead of replying: its code and the channel's message
 * come back as they are, and no ERROR is sent back. */
TEST(peer_error_instead_of_reply)
{
	static const uint64_t len = MIB;
	struct run r;

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_OK(rdmig_source_setup(r.s));
	fd.fail_reply_with = RDMIG_EPEER;
	CHECK_OK(rdmig_source_write(r.s, 0, 0, 4096));
	CHECK_EQ(rdmig_source_end_iteration(r.s), RDMIG_EPEER);
	CHECK_STR_CONTAINS(rdmig_source_errmsg(r.s), "the peer sent ERROR while we waited for");
	CHECK_EQ(count(EV_ERROR, RDMIG_MSG_NONE), 0);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 0);
	CHECK_EQ(count(EV_SEND, RDMIG_MSG_REGISTER_FINISHED), 0);
	finish(&r);

	/* a reply that breaks the wire rules is answered with ERROR */
	CHECK_OK(start(&r, &len, 1, 0, false));
	fd.fail_reply_with = RDMIG_EMSG_UNEXPECTED;
	CHECK_EQ(rdmig_source_setup(r.s), RDMIG_EMSG_UNEXPECTED);
	CHECK_EQ(count(EV_ERROR, RDMIG_MSG_NONE), 1);
	finish(&r);
}

/* Replies that would aim our writes elsewhere: refused with ERROR. */
TEST(refuses_misplaced_replies)
{
	static const uint64_t lens[2] = {MIB, MIB};
	struct run r;

	CHECK_OK(start(&r, lens, 2, 0, false));
	fd.ndest = 1;
	CHECK_EQ(rdmig_source_setup(r.s), RDMIG_ERANGE);
	CHECK_STR_CONTAINS(rdmig_source_errmsg(r.s),
			   "the destination has 1 RAM blocks, the source 2");
	CHECK_EQ(count(EV_ERROR, RDMIG_MSG_NONE), 1);
	finish(&r);

	CHECK_OK(start(&r, lens, 1, 0, false));
	fd.dest_len[0] = 2 * MIB;
	CHECK_EQ(rdmig_source_setup(r.s), RDMIG_ERANGE);
	CHECK_STR_CONTAINS(rdmig_source_errmsg(r.s),
			   "RAM block 0 (ram): the destination's is 2097152 bytes, the source's "
			   "1048576");
	finish(&r);

	CHECK_OK(start(&r, lens, 1, 0, false));
	CHECK_OK(rdmig_source_setup(r.s));
	fd.bad_host = DEST_HOST(0) + 4096;
	CHECK_OK(rdmig_source_write(r.s, 0, 0, 4096));
	CHECK_EQ(rdmig_source_end_iteration(r.s), RDMIG_ERANGE);
	CHECK_STR_CONTAINS(rdmig_source_errmsg(r.s),
			   "REGISTER_RESULT for block 0 (ram): host address 0x7f0000001000, but "
			   "RAM_BLOCKS_RESULT put the block at 0x7f0000000000");
	CHECK_EQ(count(EV_ERROR, RDMIG_MSG_NONE), 1);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 0);
	finish(&r);
}

/* The kinds of the events logged, in order. */
static bool events_are(const enum ev_kind *want, size_t n)
{
	if (fd.nev != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (fd.ev[i].kind != want[i])
			return false;
	return true;
}

/* Lookahead: chunk N+1's request (and our registration of it) goes out
 * before chunk N's write is posted, and its reply is taken when chunk N+1
 * is settled, so a whole chunk's write overlaps the round trip. */
TEST(lookahead_asks_for_the_next_chunk)
{
	static const uint64_t len = 3 * MIB;
	static const enum ev_kind want[] = {
		EV_REQUEST, EV_REG, EV_REPLY,                     /* chunk 0 */
		EV_REQUEST, EV_REG, EV_WRITE,                     /* 1 ahead, 0's write */
		EV_REPLY,   EV_REQUEST, EV_REG, EV_WRITE,          /* 1's reply, 2 ahead */
		EV_REPLY,   EV_WRITE,   EV_FLUSH, EV_SEND};        /* 2's reply, the end */
	struct run r;
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_EQ(rdmig_source_set_lookahead(NULL, 1), RDMIG_EINVAL);
	CHECK_OK(rdmig_source_set_lookahead(r.s, 1));
	CHECK_OK(rdmig_source_setup(r.s));
	fd.nev = 0;
	CHECK_OK(write_block_by_mib(&r, len));
	CHECK(events_are(want, sizeof(want) / sizeof(*want)));
	CHECK_EQ(fd.ev[3].reg.key, DEST_OFFSET(0) + MIB);
	CHECK(fd.ev[4].addr == r.mem[0] + MIB);
	CHECK_EQ(fd.ev[5].w.chunk, 0);
	CHECK_EQ(fd.ev[7].reg.key, DEST_OFFSET(0) + 2 * MIB);
	CHECK_EQ(fd.ev[9].w.chunk, 1);
	CHECK_EQ(fd.ev[9].w.rkey, CHUNK_RKEY(1));
	CHECK_EQ(fd.ev[11].w.chunk, 2);
	CHECK_EQ(fd.ev[11].w.rkey, CHUNK_RKEY(2));
	CHECK(fd.ev[11].w.signal);
	rdmig_source_stats(r.s, &st);
	CHECK_EQ(st.register_requests, 3);
	CHECK_EQ(st.register_ahead, 2);
	finish(&r);
}

/* Time waiting for replies ahead counts as waiting, not as round trips:
 * a reply taken late says how long the writes queued before it took.
 * Here the first reply (waited for at once) is immediate and the two
 * taken ahead are slow, so the round trips stay short and the waits long;
 * and the three local registrations are timed. */
TEST(lookahead_waits_are_not_round_trips)
{
	static const uint64_t len = 3 * MIB;
	struct run r;
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_OK(rdmig_source_set_lookahead(r.s, 1));
	CHECK_OK(rdmig_source_setup(r.s));
	fd.reg_sleep_ms = 5;
	fd.later_reply_sleep_ms = 200;
	CHECK_OK(write_block_by_mib(&r, len));
	rdmig_source_stats(r.s, &st);
	CHECK_EQ(st.register_requests, 3);
	CHECK_EQ(st.register_ahead, 2);
	CHECK(st.register_rtt_p99_us < 150000); /* the slow ones are not in it */
	CHECK(st.register_wait_seconds >= 0.4);
	CHECK(st.register_seconds >= 0.015);
	finish(&r);
}

/* With pin-local the source pins its block whole, from setup on (while
 * RAM_BLOCKS_REQUEST travels) on a thread of its own, and writes with that
 * key; the destination still gets a REGISTER_REQUEST per chunk. */
TEST(pin_local_registers_blocks_whole_ahead)
{
	static const uint64_t len = 3 * MIB;
	struct run r;
	long reg;

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_EQ(rdmig_source_set_pin_local(NULL, 1), RDMIG_EINVAL);
	CHECK_OK(rdmig_source_set_pin_local(r.s, 1));
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_EQ(rdmig_source_set_pin_local(r.s, 0), RDMIG_ESTATE); /* too late */
	CHECK_OK(write_block_by_mib(&r, len));
	CHECK_EQ(count(EV_REG, RDMIG_MSG_NONE), 1);
	reg = find(0, EV_REG, RDMIG_MSG_NONE);
	CHECK(fd.ev[reg].addr == r.mem[0]);
	CHECK_EQ(fd.ev[reg].len, len);
	CHECK_EQ(stats_of(&r).register_threads, 1); /* the default */
	CHECK_EQ(count(EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), 3);
	for (unsigned i = 0; i < 3; i++) {
		CHECK_EQ(nth_write(i)->lkey, LOCAL_KEY(0));
		CHECK_EQ(nth_write(i)->rkey, CHUNK_RKEY(i));
	}
	finish(&r);
}

/* A block that cannot be pinned whole (the locked-memory limit) is
 * registered chunk by chunk, as without the option: not an error, and
 * the writes carry the chunks' own keys. */
TEST(pin_local_falls_back_to_chunks)
{
	static const uint64_t len = 2 * MIB;
	struct run r;

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_OK(rdmig_source_set_pin_local(r.s, 1));
	fd.fail_reg_at = 1;
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(write_block_by_mib(&r, len));
	CHECK_EQ(count(EV_REG, RDMIG_MSG_NONE), 3);
	CHECK_EQ(nth_write(0)->lkey, LOCAL_KEY(1));
	CHECK_EQ(nth_write(1)->lkey, LOCAL_KEY(2));
	CHECK_EQ(stats_of(&r).register_threads, 0); /* none went whole */
	finish(&r);
}

/* Pieces are 16 MiB of whole chunks, each its own registration, taken in
 * order by the threads: 48 MiB in 16 MiB chunks on 2 threads are 3
 * pieces, and each write carries its piece's key. */
TEST(register_threads_pin_pieces)
{
	static const uint64_t len = 48 * MIB;
	struct run r;

	CHECK_OK(start(&r, &len, 1, 16 * MIB, false));
	CHECK_EQ(rdmig_source_set_register_threads(NULL, 2), RDMIG_EINVAL);
	CHECK_EQ(rdmig_source_set_register_threads(r.s, RDMIG_MAX_REGISTER_THREADS + 1), RDMIG_EINVAL);
	CHECK_OK(rdmig_source_set_register_threads(r.s, 2));
	CHECK_OK(rdmig_source_set_pin_local(r.s, 1));
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_EQ(rdmig_source_set_register_threads(r.s, 1), RDMIG_ESTATE);
	CHECK_OK(rdmig_source_write(r.s, 0, 0, len));
	CHECK_OK(rdmig_source_end_iteration(r.s));
	CHECK_EQ(count(EV_REG, RDMIG_MSG_NONE), 3);
	for (unsigned k = 0; k < 3; k++)
		CHECK(key_at(r.mem[0] + k * 16 * MIB) != 0);
	for (unsigned i = 0; i < count(EV_WRITE, RDMIG_MSG_NONE); i++) {
		const struct engine_write *w = nth_write(i);
		uint64_t piece = ((const uint8_t *)w->local - r.mem[0]) / (16 * MIB);

		CHECK_EQ(w->lkey, key_at(r.mem[0] + piece * 16 * MIB));
	}
	CHECK_EQ(stats_of(&r).register_threads, 2);
	finish(&r);
}

/* 0 register threads: one per online CPU, at most 8 (with pieces enough:
 * 8 chunks of 16 MiB are 8 pieces). */
TEST(register_threads_zero_is_one_per_cpu)
{
	static const uint64_t len = 128 * MIB;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want = cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
	struct run r;

	CHECK_OK(start(&r, &len, 1, 16 * MIB, true));
	CHECK_OK(rdmig_source_set_register_threads(r.s, 0));
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, len - MIB, MIB)); /* waits for the last piece */
	CHECK_OK(rdmig_source_end_iteration(r.s));
	CHECK_EQ(stats_of(&r).register_threads, want);
	finish(&r);
}

/* PIN_ALL merges writes across chunks, but not across pieces: the MiB
 * before a piece's border and the MiB after it are two writes, two keys. */
TEST(register_threads_pin_all_merge_stops_at_pieces)
{
	static const uint64_t len = 32 * MIB;
	struct run r;

	CHECK_OK(start(&r, &len, 1, 0, true));
	CHECK_OK(rdmig_source_set_register_threads(r.s, 4)); /* 2 pieces of 16 MiB */
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, 15 * MIB, MIB));
	CHECK_OK(rdmig_source_write(r.s, 0, 16 * MIB, MIB));
	CHECK_OK(rdmig_source_end_iteration(r.s));
	CHECK_EQ(count(EV_REG, RDMIG_MSG_NONE), 2);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 2);
	CHECK_EQ(nth_write(0)->lkey, key_at(r.mem[0]));
	CHECK_EQ(nth_write(1)->lkey, key_at(r.mem[0] + 16 * MIB));
	CHECK(nth_write(0)->lkey != nth_write(1)->lkey);
	finish(&r);
}

/* Under PIN_ALL a piece that cannot be registered fails the write that
 * needs it, and the pieces that were registered are released (finish
 * checks).  Which piece fails is the threads' order: the whole block is
 * written, so some write needs it. */
TEST(register_threads_pin_all_failure_releases_pieces)
{
	static const uint64_t len = 64 * MIB;
	struct run r;

	CHECK_OK(start(&r, &len, 1, 16 * MIB, true));
	CHECK_OK(rdmig_source_set_register_threads(r.s, 4));
	fd.fail_reg_at = 3;
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK(write_block_by_mib(&r, len) < 0);
	CHECK(count(EV_REG, RDMIG_MSG_NONE) >= 3);
	CHECK(strstr(rdmig_source_errmsg(r.s), "cannot register source block") != NULL);
	finish(&r);
}

/* A chunk that is all zero here is not asked for ahead: it goes as
 * COMPRESS, and the destination registers nothing for it. */
TEST(lookahead_skips_zero_chunks)
{
	static const uint64_t len = 3 * MIB;
	struct run r;
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	CHECK_OK(start(&r, &len, 1, 0, false));
	memset(r.mem[0] + MIB, 0, MIB);
	CHECK_OK(rdmig_source_set_lookahead(r.s, 1));
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(write_block_by_mib(&r, len));
	CHECK_EQ(count(EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), 2);
	CHECK_EQ(count(EV_SEND, RDMIG_MSG_COMPRESS), 1);
	CHECK_EQ(fd.ev[find(0, EV_SEND, RDMIG_MSG_COMPRESS)].comp.offset, DEST_OFFSET(0) + MIB);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 2);
	CHECK_EQ(nth_write(1)->chunk, 2);
	rdmig_source_stats(r.s, &st);
	CHECK_EQ(st.register_ahead, 0);
	finish(&r);
}

/* Stream bytes while a request is out: its reply is taken first (the fake
 * aborts on a control message that overtakes an awaited reply), and the
 * chunk is not asked for again when it is written. */
TEST(lookahead_reply_before_stream)
{
	static const uint64_t len = 2 * MIB;
	static const char bytes[] = "span record";
	struct run r;
	struct rdmig_engine_stats st = {.size = sizeof(st)};

	CHECK_OK(start(&r, &len, 1, 0, false));
	CHECK_OK(rdmig_source_set_lookahead(r.s, 1));
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, 0, MIB));
	CHECK_OK(rdmig_source_write_stream(r.s, bytes, sizeof(bytes)));
	long ahead = find(find(0, EV_REPLY, RDMIG_MSG_REGISTER_RESULT) + 1, EV_REQUEST,
			  RDMIG_MSG_REGISTER_REQUEST);
	long w = find(0, EV_WRITE, RDMIG_MSG_NONE);
	long reply = find((size_t)ahead, EV_REPLY, RDMIG_MSG_REGISTER_RESULT);
	long s = find(0, EV_SEND, RDMIG_MSG_QEMU_FILE);
	CHECK(ahead >= 0 && w > ahead && reply > w && s > reply);
	CHECK_OK(rdmig_source_write(r.s, 0, MIB, 4096));
	CHECK_OK(rdmig_source_end_iteration(r.s));
	CHECK_EQ(count(EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), 2);
	CHECK_EQ(nth_write(1)->rkey, CHUNK_RKEY(1));
	rdmig_source_stats(r.s, &st);
	CHECK_EQ(st.register_ahead, 1);
	finish(&r);
}

CHECK_MAIN()

/* Skipping zero pages: the caller hands over the whole block in one call;
 * the source writes the runs of non-zero pages, and neither writes,
 * registers nor COMPRESSes the zero pages and the all-zero chunk. */
TEST(skip_zero_writes_only_nonzero_pages)
{
	static const uint64_t len = 3 * MIB;
	struct run r;
	struct rdmig_engine_stats st;

	CHECK_OK(start(&r, &len, 1, 0, false));
	memset(r.mem[0], 0, 4096);                /* chunk 0: page 0 zero, */
	memset(r.mem[0] + 3 * 4096, 0, 2 * 4096); /* pages 3 and 4 zero */
	memset(r.mem[0] + MIB, 0, MIB);           /* chunk 1: all zero */
	CHECK_OK(rdmig_source_set_skip_zero(r.s, 1));
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, 0, len));
	CHECK_OK(rdmig_source_end_iteration(r.s));

	CHECK_EQ(count(EV_SEND, RDMIG_MSG_COMPRESS), 0);
	CHECK_EQ(count(EV_REQUEST, RDMIG_MSG_REGISTER_REQUEST), 2); /* chunks 0 and 2 */
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 3);
	CHECK_EQ(nth_write(0)->remote, DEST_HOST(0) + 4096);
	CHECK_EQ(nth_write(0)->len, 2 * 4096);
	CHECK_EQ(nth_write(1)->remote, DEST_HOST(0) + 5 * 4096);
	CHECK_EQ(nth_write(1)->len, MIB - 5 * 4096);
	CHECK_EQ(nth_write(2)->remote, DEST_HOST(0) + 2 * MIB);
	CHECK_EQ(nth_write(2)->len, MIB);
	st = stats_of(&r);
	CHECK_EQ(st.bytes_written, 2 * MIB - 3 * 4096);
	CHECK_EQ(st.bytes_compressed, 0);
	finish(&r);
}

/* Without skipping (the default) the same whole-block call goes as QEMU
 * sends it: the all-zero chunk as one COMPRESS, the others written whole,
 * zero pages and all. */
TEST(default_compresses_zero_chunk_of_a_whole_block)
{
	static const uint64_t len = 3 * MIB;
	struct run r;
	struct rdmig_engine_stats st;

	CHECK_OK(start(&r, &len, 1, 0, false));
	memset(r.mem[0], 0, 4096);
	memset(r.mem[0] + MIB, 0, MIB);
	CHECK_OK(rdmig_source_setup(r.s));
	CHECK_OK(rdmig_source_write(r.s, 0, 0, len));
	CHECK_OK(rdmig_source_end_iteration(r.s));

	CHECK_EQ(count(EV_SEND, RDMIG_MSG_COMPRESS), 1);
	CHECK_EQ(fd.ev[find(0, EV_SEND, RDMIG_MSG_COMPRESS)].comp.offset, DEST_OFFSET(0) + MIB);
	CHECK_EQ(count(EV_WRITE, RDMIG_MSG_NONE), 2);
	st = stats_of(&r);
	CHECK_EQ(st.bytes_written, 2 * MIB);
	CHECK_EQ(st.bytes_compressed, MIB);
	finish(&r);
}
