/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_hostile.c - a hostile peer against the real migration engine.
 *
 * Each case opens one connection and breaks one rule: a malformed frame, a
 * field out of range, a message out of order, a lie in a reply or in the
 * capability record.  The destination (rdmig_dest_*, as `rdmig recv` runs
 * it) and the source (rdmig_source_*, as `rdmig send` runs it) must refuse
 * with a code and a message naming the field and its value, tell the peer
 * (ERROR), and never touch memory outside the destination's blocks.
 *
 * The destination's blocks lie between PROT_NONE guard pages: a stray CPU
 * write kills the destination, and the device can neither register nor
 * write them.  Every block starts as a pattern and is compared afterwards.
 *
 *   | guard | ram: 1 MiB + 64 KiB (chunks 0, 1) | guard |   RAM offset 0
 *   | guard | vram: 256 KiB (chunk 0)          | guard |   RAM offset 2 MiB
 *   | guard | empty: 0 bytes                   | guard |   RAM offset 3 MiB
 *
 * The hostile side speaks through the public API where it can and posts
 * raw bytes (rawpeer.h) where the API would refuse.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "testhooks.h"
#include "rawpeer.h"

#define KIB 1024u
#define MIB (1024u * KIB)
#define PAGE 4096u

enum { RAM, VRAM, EMPTY, NBLOCKS };
static const struct {
	const char *name;
	uint64_t length;
	uint64_t offset; /* where the destination lays it out (in order, chunk-aligned) */
} layout[NBLOCKS] = {
	[RAM] = {"ram", MIB + 64 * KIB, 0},
	[VRAM] = {"vram", 256 * KIB, 2 * MIB},
	[EMPTY] = {"empty", 0, 3 * MIB},
};
#define RAM_END (layout[RAM].offset + layout[RAM].length)
#define VRAM_END (layout[VRAM].offset + layout[VRAM].length)

static const struct rdmig_msg finished = {RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL};

static void compress_rec(uint8_t rec[RDMIG_COMPRESS_SIZE], uint32_t value, uint32_t block,
			 uint64_t offset, uint64_t length)
{
	struct rdmig_compress cp = {value, block, offset, length};
	rdmig_encode_compress(&cp, rec);
}

static void register_rec(uint8_t rec[RDMIG_REGISTER_SIZE], uint64_t key, uint32_t block,
			 uint64_t chunks)
{
	struct rdmig_register r = {.key = key, .block_index = block, .chunks = chunks};
	rdmig_encode_register(&r, rec);
}

/* ------------------------------------------------- guarded memory -- */

struct guarded {
	uint8_t *map; /* guard page, the block's pages, guard page */
	size_t map_len;
	uint8_t *host; /* the block, right after the first guard */
};

static bool map_guarded(struct guarded *g, uint64_t len, uint32_t seed)
{
	size_t pages = (size_t)((len + PAGE - 1) / PAGE);

	g->map_len = (pages + 2) * PAGE;
	g->map = mmap(NULL, g->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED)
		return false;
	g->host = g->map + PAGE;
	if (pages && mprotect(g->host, pages * PAGE, PROT_READ | PROT_WRITE))
		return false;
	fill_pattern(g->host, len, seed);
	return true;
}

/* Bytes of one block that a valid record before the bad one may change. */
struct allowed {
	bool any;
	int block;
	uint64_t off, len;
	bool zeroed; /* they must now be zero (COMPRESS); else anything goes (a write) */
};

/* Every byte of block i still holds its pattern, except the allowed range. */
static void check_block(const struct guarded *g, int i, const struct allowed *a)
{
	uint64_t len = layout[i].length;
	uint64_t lo = a->any && a->block == i ? a->off : len;
	uint64_t hi = a->any && a->block == i ? a->off + a->len : len;
	uint8_t *want = malloc(len + 1);
	uint64_t bad = len;

	fill_pattern(want, len, (uint32_t)i + 1);
	for (uint64_t k = 0; k < len && bad == len; k++) {
		bool in_allowed = k >= lo && k < hi;
		if (in_allowed ? a->zeroed && g->host[k] != 0 : g->host[k] != want[k])
			bad = k;
	}
	free(want);
	if (bad != len)
		CHECK_FAIL_AT("block %s changed at byte %llu (0x%02x)", layout[i].name,
			      (unsigned long long)bad, g->host[bad]);
}

/* --------------------------------------- a hostile source -> rdmig_dest -- */

struct attack {
	/* what the hostile source sends: one message with a well-formed header... */
	bool blocks_first; /* after a RAM_BLOCKS_REQUEST / RESULT, as a real source */
	uint32_t type, repeat, len;
	const void *payload;
	/* ...or raw bytes, header and all... */
	const uint8_t *raw;
	size_t raw_len;
	/* ...or a script of its own */
	void (*script)(struct rdmig_conn *c, struct attack *a);
	int write_block;        /* raw RDMA WRITE scripts: where, relative to */
	int64_t write_at;       /* the block's start, and how much */
	uint32_t write_len;
	int word[2];            /* a pipe: the source tells the destination "sent" */
	/* what the destination must do */
	int ret;                /* rdmig_dest_next's code */
	const char *says;       /* in rdmig_dest_errmsg: the field and its value */
	bool device_ends;       /* the device refuses the access and ends the connection */
	bool next_again;        /* rdmig_dest_next once more, after the source's word */
	bool pin_all;
	struct allowed allowed;
};

/* A message of len bytes of rec_size-byte records (repeat 1 when empty). */
static struct attack typed(uint32_t type, const void *payload, uint32_t len, uint32_t rec_size,
			   int ret, const char *says)
{
	return (struct attack){.blocks_first = true, .type = type,
			       .repeat = len ? len / rec_size : 1, .len = len, .payload = payload,
			       .ret = ret, .says = says};
}

static struct attack raw(const uint8_t *bytes, size_t len, int ret, const char *says)
{
	return (struct attack){.raw = bytes, .raw_len = len, .ret = ret, .says = says};
}

/* Wait (bounded) for the source's word; 0 when it came. */
static int wait_word(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char x;

	if (poll(&pfd, 1, 15000) != 1 || read(fd, &x, 1) != 1)
		return -1;
	return 0;
}

static void dest_under_attack(struct rdmig_conn *c, void *arg)
{
	struct attack *a = arg;
	struct guarded g[NBLOCKS];
	struct rdmig_block blocks[NBLOCKS];
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev = {0};
	char says[512];
	int ret, again = 0;

	for (int i = 0; i < NBLOCKS; i++) {
		CHECK(map_guarded(&g[i], layout[i].length, (uint32_t)i + 1));
		blocks[i] = (struct rdmig_block){layout[i].name, g[i].host, layout[i].length, 0};
	}
	CHECK_OK(rdmig_dest_create(c, &d));
	CHECK_OK(rdmig_dest_set_blocks(d, blocks, NBLOCKS));
	do
		ret = rdmig_dest_next(d, &ev);
	while (ret == 0 && ev.type != RDMIG_EV_END);
	snprintf(says, sizeof(says), "%s", rdmig_dest_errmsg(d));
	if (a->next_again) {
		CHECK_OK(wait_word(a->word[0]));
		again = rdmig_dest_next(d, &ev);
	}
	for (int i = 0; i < NBLOCKS; i++)
		check_block(&g[i], i, &a->allowed);
	rdmig_dest_destroy(d);
	for (int i = 0; i < NBLOCKS; i++)
		munmap(g[i].map, g[i].map_len);
	if (a->device_ends) {
		/* the device refused the access and broke the connection: the
		 * destination sees the end, or the failed receive */
		CHECK(ret == 0 || ret == RDMIG_ECOMPLETION);
		return;
	}
	CHECK_EQ(ret, a->ret);
	CHECK_STR_CONTAINS(says, a->says);
	if (a->next_again)
		CHECK_EQ(again, a->ret); /* nothing is served after the failure */
}

/* RAM_BLOCKS_REQUEST and its RESULT, as a real source starts. */
static int exchange_blocks(struct rdmig_conn *c, struct rdmig_dest_block db[NBLOCKS])
{
	struct rdmig_msg reply;
	int ret = rdmig_request(c, &(struct rdmig_msg){RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, 0, NULL},
				RDMIG_MSG_RAM_BLOCKS_RESULT, &reply);

	if (ret)
		return ret;
	if (reply.len != NBLOCKS * RDMIG_DEST_BLOCK_SIZE)
		return -1;
	for (int i = 0; db && i < NBLOCKS; i++)
		rdmig_decode_dest_block((const uint8_t *)reply.payload + i * RDMIG_DEST_BLOCK_SIZE,
					&db[i]);
	return 0;
}

/* The reply a request waits for (0: none). */
static uint32_t reply_to(uint32_t type)
{
	switch (type) {
	case RDMIG_MSG_RAM_BLOCKS_REQUEST:
		return RDMIG_MSG_RAM_BLOCKS_RESULT;
	case RDMIG_MSG_REGISTER_REQUEST:
		return RDMIG_MSG_REGISTER_RESULT;
	case RDMIG_MSG_UNREGISTER_REQUEST:
		return RDMIG_MSG_UNREGISTER_FINISHED;
	default:
		return 0;
	}
}

/* Send the one bad message; the destination's ERROR must come back where
 * the next READY (or the reply) was due. */
static void send_one(struct rdmig_conn *c, struct attack *a)
{
	struct rdmig_msg msg = {a->type, a->repeat, a->len, a->payload}, reply;
	int ret;

	if (a->blocks_first)
		CHECK_OK(exchange_blocks(c, NULL));
	if (a->raw) {
		CHECK_OK(raw_send(c, a->raw, a->raw_len));
		ret = rdmig_send(c, &finished);
	} else if (reply_to(a->type)) {
		ret = rdmig_request(c, &msg, reply_to(a->type), &reply);
	} else {
		CHECK_OK(rdmig_send(c, &msg));
		ret = rdmig_send(c, &finished);
	}
	CHECK_EQ(ret, RDMIG_EPEER);
	CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), "the peer sent ERROR");
}

static void run_attack(const struct dev *dev, struct attack *a)
{
	struct pair p = {.dev = dev, .dest = dest_under_attack, .arg = a};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;

	test_opts(&o);
	o.pin_all = a->pin_all;
	test_opts(&p.dest_opts);
	p.dest_opts.pin_all = a->pin_all;
	a->word[0] = a->word[1] = -1;
	if (a->next_again)
		CHECK_OK(pipe(a->word));
	CHECK_OK(pair_start(&p));
	if (test_connect(&p, &o, &c) == 0)
		(a->script ? a->script : send_one)(c, a);
	else
		check_failed = 1;
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
	if (a->next_again) {
		close(a->word[0]);
		close(a->word[1]);
	}
}

/* ---------------------------------------------- malformed frames -- */

DEVICE_TEST(unknown_type_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE] = {0};
	struct attack a = raw(f, raw_frame(f, 12, 1, 0, NULL, 0), RDMIG_EMSG_TYPE,
			      "header type 12 is not a known message type");
	run_attack(dev, &a);
}

DEVICE_TEST(type_none_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_NONE, 1, 0, NULL, 0), RDMIG_EMSG_TYPE,
			      "header type 0 is not a known message type");
	run_attack(dev, &a);
}

DEVICE_TEST(stream_len_above_the_limit_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_QEMU_FILE, 1, RDMIG_MAX_LEN + 1, NULL, 0),
			      RDMIG_EMSG_LEN, "header len 524273 exceeds the limit 524272");
	run_attack(dev, &a);
}

DEVICE_TEST(message_larger_than_announced_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE + 2 * RDMIG_COMPRESS_SIZE] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_COMPRESS, 1, RDMIG_COMPRESS_SIZE, NULL, 0) +
				      2 * RDMIG_COMPRESS_SIZE,
			      RDMIG_EMSG_SIZE, "message size 64 differs from 16 + header len 24");
	run_attack(dev, &a);
}

DEVICE_TEST(truncated_stream_message_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE + 100] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_QEMU_FILE, 1, 100, NULL, 0) + 60,
			      RDMIG_EMSG_SIZE, "message size 76 differs from 16 + header len 100");
	run_attack(dev, &a);
}

DEVICE_TEST(message_shorter_than_a_header_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE] = {0};
	struct attack a = raw(f, 8, RDMIG_EMSG_SHORT,
			      "message size 8 is shorter than the 16-byte header");
	raw_frame(f, RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL, 0);
	run_attack(dev, &a);
}

DEVICE_TEST(empty_send_is_refused)
{
	uint8_t f[1] = {0};
	struct attack a = raw(f, 0, RDMIG_EMSG_SHORT, "message size 0 is shorter");
	run_attack(dev, &a);
}

DEVICE_TEST(repeat_zero_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_REGISTER_REQUEST, 0, 0, NULL, 0),
			      RDMIG_EMSG_REPEAT_LEN, "header repeat 0 and len 0 do not fit REGISTER_REQUEST");
	run_attack(dev, &a);
}

DEVICE_TEST(repeat_above_the_limit_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_REGISTER_FINISHED, 4097, 0, NULL, 0),
			      RDMIG_EMSG_REPEAT, "header repeat 4097 exceeds the limit 4096");
	run_attack(dev, &a);
}

DEVICE_TEST(repeat_huge_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE + RDMIG_REGISTER_SIZE] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_REGISTER_REQUEST, UINT32_MAX,
					   RDMIG_REGISTER_SIZE, NULL, 0) + RDMIG_REGISTER_SIZE,
			      RDMIG_EMSG_REPEAT, "header repeat 4294967295 exceeds the limit");
	run_attack(dev, &a);
}

DEVICE_TEST(repeat_not_matching_len_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE + RDMIG_REGISTER_SIZE] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_REGISTER_REQUEST, 2, RDMIG_REGISTER_SIZE,
					   NULL, 0) + RDMIG_REGISTER_SIZE,
			      RDMIG_EMSG_REPEAT_LEN, "header repeat 2 and len 24 do not fit REGISTER_REQUEST");
	run_attack(dev, &a);
}

DEVICE_TEST(partial_record_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE + RDMIG_COMPRESS_SIZE] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_COMPRESS, 1, 23, NULL, 0) + 23,
			      RDMIG_EMSG_REPEAT_LEN, "header repeat 1 and len 23 do not fit COMPRESS");
	run_attack(dev, &a);
}

DEVICE_TEST(payload_on_a_header_only_message_is_refused)
{
	uint8_t f[RDMIG_HEADER_SIZE + 8] = {0};
	struct attack a = raw(f, raw_frame(f, RDMIG_MSG_REGISTER_FINISHED, 1, 8, NULL, 0) + 8,
			      RDMIG_EMSG_REPEAT_LEN, "header len 8 of REGISTER_FINISHED (repeat 1) must be 0");
	run_attack(dev, &a);
}

/* More than a control buffer holds: the device fails the receive. */
static void send_beyond_the_receive_buffer(struct rdmig_conn *c, struct attack *a)
{
	size_t len = RDMIG_CONTROL_BUFFER + PAGE;
	uint8_t *f = calloc(1, len);
	int ret;

	raw_frame(f, RDMIG_MSG_QEMU_FILE, 1, (uint32_t)(len - RDMIG_HEADER_SIZE), NULL, 0);
	ret = raw_send(c, f, len);
	free(f);
	if (!ret)
		ret = raw_wait_end(c);
	CHECK(ret == RDMIG_ECOMPLETION || ret == RDMIG_EDISCONNECTED);
}

DEVICE_TEST(message_beyond_the_receive_buffer_fails_the_receive)
{
	struct attack a = {.script = send_beyond_the_receive_buffer, .ret = RDMIG_ECOMPLETION,
			   .says = "control receive (READY slot) failed"};
	run_attack(dev, &a);
}

/* ------------------------------------------ messages out of order -- */

DEVICE_TEST(register_result_at_the_destination_is_refused)
{
	uint8_t rec[RDMIG_REGISTER_RESULT_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_REGISTER_RESULT, rec, sizeof(rec), sizeof(rec),
				RDMIG_EPROTO, "the destination does not accept REGISTER_RESULT");
	run_attack(dev, &a);
}

DEVICE_TEST(ready_at_the_destination_is_refused)
{
	struct attack a = typed(RDMIG_MSG_READY, NULL, 0, 1, RDMIG_EPROTO,
				"the destination does not accept READY");
	run_attack(dev, &a);
}

DEVICE_TEST(ram_blocks_result_at_the_destination_is_refused)
{
	uint8_t rec[RDMIG_DEST_BLOCK_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_RAM_BLOCKS_RESULT, rec, sizeof(rec), sizeof(rec),
				RDMIG_EPROTO, "the destination does not accept RAM_BLOCKS_RESULT");
	run_attack(dev, &a);
}

DEVICE_TEST(unregister_finished_at_the_destination_is_refused)
{
	struct attack a = typed(RDMIG_MSG_UNREGISTER_FINISHED, NULL, 0, 1, RDMIG_EPROTO,
				"the destination does not accept UNREGISTER_FINISHED");
	run_attack(dev, &a);
}

DEVICE_TEST(second_ram_blocks_request_is_refused)
{
	struct attack a = typed(RDMIG_MSG_RAM_BLOCKS_REQUEST, NULL, 0, 1, RDMIG_EPROTO,
				"a second RAM_BLOCKS_REQUEST");
	run_attack(dev, &a);
}

DEVICE_TEST(register_before_ram_blocks_is_refused)
{
	uint8_t rec[RDMIG_REGISTER_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_REGISTER_REQUEST, rec, sizeof(rec), sizeof(rec),
				RDMIG_ERANGE, "REGISTER_REQUEST record 0: block index 0, but no RAM "
				"blocks were exchanged yet");
	register_rec(rec, 0, RAM, 0);
	a.blocks_first = false;
	run_attack(dev, &a);
}

DEVICE_TEST(compress_before_ram_blocks_is_refused)
{
	uint8_t rec[RDMIG_COMPRESS_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_COMPRESS, rec, sizeof(rec), sizeof(rec), RDMIG_ERANGE,
				"COMPRESS record 0: block index 0, but no RAM blocks were exchanged");
	compress_rec(rec, 0, RAM, 0, PAGE);
	a.blocks_first = false;
	run_attack(dev, &a);
}

DEVICE_TEST(unregister_before_ram_blocks_is_refused)
{
	uint8_t rec[RDMIG_REGISTER_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_UNREGISTER_REQUEST, rec, sizeof(rec), sizeof(rec),
				RDMIG_ERANGE, "UNREGISTER_REQUEST record 0: block index 0, but no "
				"RAM blocks were exchanged yet");
	register_rec(rec, 0, RAM, 0);
	a.blocks_first = false;
	run_attack(dev, &a);
}

/* ERROR, then a valid COMPRESS without waiting for a READY that will never
 * come: the destination stopped at the ERROR and has no receive posted. */
static void error_then_compress(struct rdmig_conn *c, struct attack *a)
{
	uint8_t rec[RDMIG_COMPRESS_SIZE], f[RDMIG_HEADER_SIZE + RDMIG_COMPRESS_SIZE] = {0};
	int ret;

	CHECK_OK(exchange_blocks(c, NULL));
	CHECK_OK(rdmig_send_error(c));
	compress_rec(rec, 0, RAM, 0, PAGE);
	ret = raw_post(c, f, raw_frame(f, RDMIG_MSG_COMPRESS, 1, sizeof(rec), rec, sizeof(rec)));
	if (!ret)
		ret = raw_wait_end(c);
	CHECK(ret == RDMIG_ECOMPLETION || ret == RDMIG_EDISCONNECTED);
}

DEVICE_TEST(nothing_is_served_after_the_peer_error)
{
	struct attack a = {.script = error_then_compress, .ret = RDMIG_EPEER,
			   .says = "the peer sent ERROR"};
	run_attack(dev, &a);
}

/* A bad COMPRESS (refused with ERROR), then, ignoring the ERROR, a valid
 * one.  The destination posts a receive only before a READY, so this send
 * finds none: RoCE fails it (RNR), iWARP takes it and ends the connection.
 * Either way it is never served. */
static void compress_after_the_destination_error(struct rdmig_conn *c, struct attack *a)
{
	uint8_t bad[RDMIG_COMPRESS_SIZE], good[RDMIG_COMPRESS_SIZE] = {0};
	uint8_t f[RDMIG_HEADER_SIZE + RDMIG_COMPRESS_SIZE] = {0};
	int ret;

	CHECK_OK(exchange_blocks(c, NULL));
	compress_rec(bad, 0, 9, 0, PAGE);
	CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_COMPRESS, 1, sizeof(bad), bad}));
	CHECK_EQ(rdmig_send(c, &finished), RDMIG_EPEER);
	compress_rec(good, 0, RAM, 0, PAGE);
	ret = raw_post(c, f, raw_frame(f, RDMIG_MSG_COMPRESS, 1, sizeof(good), good, sizeof(good)));
	CHECK_EQ(write(a->word[1], "x", 1), 1);
	if (!ret)
		ret = raw_wait_end(c);
	CHECK(ret == RDMIG_ECOMPLETION || ret == RDMIG_EDISCONNECTED);
}

DEVICE_TEST(nothing_is_served_after_the_destination_error)
{
	struct attack a = {.script = compress_after_the_destination_error, .ret = RDMIG_ERANGE,
			   .says = "COMPRESS record 0: block index 9, but that block does not exist",
			   .next_again = true};
	run_attack(dev, &a);
}

/* ------------------------------------------------ REGISTER_REQUEST -- */

static void register_attack(const struct dev *dev, uint64_t key, uint32_t block, uint64_t chunks,
			    const char *says)
{
	uint8_t rec[RDMIG_REGISTER_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_REGISTER_REQUEST, rec, sizeof(rec), sizeof(rec),
				RDMIG_ERANGE, says);

	register_rec(rec, key, block, chunks);
	run_attack(dev, &a);
}

DEVICE_TEST(register_of_a_missing_block_is_refused)
{
	register_attack(dev, 0, 7, 0,
			"REGISTER_REQUEST record 0: block index 7, but that block does not exist");
}

DEVICE_TEST(register_of_block_index_max_is_refused)
{
	register_attack(dev, 0, UINT32_MAX, 0, "block index 4294967295, but that block does not");
}

DEVICE_TEST(register_below_the_block_is_refused)
{
	register_attack(dev, layout[VRAM].offset - 1, VRAM, 0,
			"REGISTER_REQUEST record 0: address 0x1fffff is outside block 1 (vram: "
			"offset 0x200000, 262144 bytes)");
}

DEVICE_TEST(register_at_the_block_end_is_refused)
{
	register_attack(dev, RAM_END, RAM, 0,
			"REGISTER_REQUEST record 0: address 0x110000 is outside block 0");
}

DEVICE_TEST(register_of_chunks_beyond_the_block_is_refused)
{
	register_attack(dev, MIB, RAM, 1, "chunk 1 plus 1 more of block 0, which has 2");
}

DEVICE_TEST(register_of_chunk_count_max_is_refused)
{
	register_attack(dev, 0, RAM, UINT64_MAX,
			"chunk 0 plus 18446744073709551615 more of block 0, which has 2");
}

DEVICE_TEST(register_in_an_empty_block_is_refused)
{
	register_attack(dev, layout[EMPTY].offset, EMPTY, 0,
			"address 0x300000 is outside block 2 (empty: offset 0x300000, 0 bytes)");
}

/* 4096 records, all valid but the last. */
DEVICE_TEST(register_repeat_4096_with_the_last_record_bad_is_refused)
{
	uint32_t len = RDMIG_MAX_REPEAT * RDMIG_REGISTER_SIZE;
	uint8_t *recs = calloc(1, len);
	struct attack a = typed(RDMIG_MSG_REGISTER_REQUEST, recs, len, RDMIG_REGISTER_SIZE,
				RDMIG_ERANGE, "REGISTER_REQUEST record 4095: block index 3, but");

	for (uint32_t i = 0; i < RDMIG_MAX_REPEAT; i++)
		register_rec(recs + i * RDMIG_REGISTER_SIZE, layout[VRAM].offset,
			     i + 1 < RDMIG_MAX_REPEAT ? VRAM : NBLOCKS, 0);
	run_attack(dev, &a);
	free(recs);
}

/* A range over a chunk that is registered already, in a range of its own:
 * registering it again would pin its bytes twice, so it is refused. */
DEVICE_TEST(register_over_a_registered_chunk_is_refused)
{
	uint8_t recs[2 * RDMIG_REGISTER_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_REGISTER_REQUEST, recs, sizeof(recs),
				RDMIG_REGISTER_SIZE, RDMIG_EPROTO,
				"REGISTER_REQUEST record 1: chunks 0..1 of block 0 (ram), but chunk 0 "
				"is already registered in another range");

	register_rec(recs, 0, RAM, 0);
	register_rec(recs + RDMIG_REGISTER_SIZE, 0, RAM, 1);
	run_attack(dev, &a);
}

/* Registration amplification: REGISTER_REQUESTs of 4096 records,
 * each the whole of a block, again and again.  Each range is registered
 * once and answered with that key; the destination's pinned memory (VmPin)
 * grows by at most its blocks. */
#define PIN_ROUNDS 3

/* VmPin of this process in KiB, or -1. */
static long vmpin_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static void dest_counts_pins(struct rdmig_conn *c, void *arg)
{
	struct guarded g[NBLOCKS];
	struct rdmig_block blocks[NBLOCKS];
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev = {0};
	long before, after, bound = (long)((layout[RAM].length + layout[VRAM].length) / KIB);
	int ret;

	for (int i = 0; i < NBLOCKS; i++) {
		CHECK(map_guarded(&g[i], layout[i].length, (uint32_t)i + 1));
		blocks[i] = (struct rdmig_block){layout[i].name, g[i].host, layout[i].length, 0};
	}
	CHECK_OK(rdmig_dest_create(c, &d));
	CHECK_OK(rdmig_dest_set_blocks(d, blocks, NBLOCKS));
	before = vmpin_kib();
	do
		ret = rdmig_dest_next(d, &ev);
	while (ret == 0 && ev.type != RDMIG_EV_ITERATION_DONE && ev.type != RDMIG_EV_END);
	after = vmpin_kib();
	fprintf(stderr, "# destination VmPin: %ld KiB before, %ld KiB after %d x 4096 "
		"whole-block requests (bound: +%ld KiB, its blocks); %s\n", before, after,
		PIN_ROUNDS, bound, rdmig_dest_errmsg(d));
	CHECK_OK(ret);
	CHECK_EQ(ev.type, RDMIG_EV_ITERATION_DONE);
	CHECK(before >= 0 && after >= 0);
	CHECK(after - before <= bound);
	while (ret == 0 && ev.type != RDMIG_EV_END)
		ret = rdmig_dest_next(d, &ev);
	rdmig_dest_destroy(d);
	for (int i = 0; i < NBLOCKS; i++)
		munmap(g[i].map, g[i].map_len);
}

/* One request of 4096 records, all block `block` whole; every record must
 * come back with the same key. */
static void ask_whole_block(struct rdmig_conn *c, uint8_t *recs, int block)
{
	uint32_t len = RDMIG_MAX_REPEAT * RDMIG_REGISTER_SIZE;
	uint64_t chunks = (layout[block].length - 1) >> RDMIG_CHUNK_SHIFT;
	struct rdmig_msg reply;
	struct rdmig_register_result first, res;

	for (uint32_t i = 0; i < RDMIG_MAX_REPEAT; i++)
		register_rec(recs + i * RDMIG_REGISTER_SIZE, layout[block].offset, (uint32_t)block,
			     chunks);
	if (rdmig_request(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_REQUEST, RDMIG_MAX_REPEAT, len,
						 recs},
			  RDMIG_MSG_REGISTER_RESULT, &reply)) {
		CHECK_FAIL_AT("REGISTER_REQUEST of block %d: %s", block, rdmig_conn_errmsg(c));
		return;
	}
	CHECK_EQ(reply.repeat, RDMIG_MAX_REPEAT);
	rdmig_decode_register_result(reply.payload, &first);
	for (uint32_t i = 1; i < reply.repeat; i++) {
		rdmig_decode_register_result((const uint8_t *)reply.payload +
					     i * RDMIG_REGISTER_RESULT_SIZE, &res);
		if (res.rkey != first.rkey)
			CHECK_FAIL_AT("record %u: rkey 0x%x, record 0: 0x%x", i, res.rkey,
				      first.rkey);
	}
}

DEVICE_TEST(whole_block_requests_again_and_again_pin_each_block_once)
{
	struct pair p = {.dev = dev, .dest = dest_counts_pins};
	uint8_t *recs = calloc(RDMIG_MAX_REPEAT, RDMIG_REGISTER_SIZE);
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;

	CHECK(recs != NULL);
	test_opts(&o);
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	if (test_connect(&p, &o, &c) == 0) {
		CHECK_OK(exchange_blocks(c, NULL));
		for (int round = 0; round < PIN_ROUNDS && !check_failed; round++) {
			ask_whole_block(c, recs, RAM);
			ask_whole_block(c, recs, VRAM);
		}
		CHECK_OK(rdmig_send(c, &finished));
	} else {
		check_failed = 1;
	}
	rdmig_conn_destroy(c);
	free(recs);
	CHECK_OK(pair_finish(&p, 60));
}

/* --------------------------------------- sends without a credit -- */

/* A source that sends its next message back to back, without waiting for
 * READY, while the destination still handles the last one: the
 * payload the caller holds must stay intact until its next call. */
#define B2B_LEN 4096u

static void dest_holds_a_message(struct rdmig_conn *c, void *arg)
{
	int *handling = arg;
	uint8_t want[B2B_LEN];
	struct rdmig_dest *d = NULL;
	struct rdmig_event ev = {0};

	memset(want, 'A', sizeof(want));
	CHECK_OK(rdmig_dest_create(c, &d));
	CHECK_OK(rdmig_dest_next(d, &ev));
	CHECK_EQ(ev.type, RDMIG_EV_STREAM);
	CHECK_EQ(ev.len, B2B_LEN);
	CHECK_EQ(write(handling[1], "h", 1), 1);
	usleep(500 * 1000); /* the caller is busy with ev.data; B arrives meanwhile */
	if (ev.type == RDMIG_EV_STREAM && ev.len == B2B_LEN)
		CHECK(memcmp(ev.data, want, B2B_LEN) == 0); /* a byte per mismatch is too many */
	rdmig_dest_destroy(d);
}

DEVICE_TEST(a_message_being_handled_is_not_overwritten_by_a_send_without_credit)
{
	int handling[2];
	struct pair p = {.dev = dev, .dest = dest_holds_a_message, .arg = handling};
	uint8_t a[B2B_LEN], f[RDMIG_HEADER_SIZE + B2B_LEN];
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;

	memset(a, 'A', sizeof(a));
	CHECK_OK(pipe(handling));
	test_opts(&o);
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	if (test_connect(&p, &o, &c) == 0) {
		CHECK_OK(rdmig_send(c, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, B2B_LEN, a}));
		CHECK_OK(wait_word(handling[0]));
		memset(a, 'B', sizeof(a));
		/* no READY came: the send finds no receive, or (before the fix) the slot */
		fprintf(stderr, "# the send without credit: %s\n",
			rdmig_err_name(raw_post(c, f, raw_frame(f, RDMIG_MSG_QEMU_FILE, 1, B2B_LEN,
								a, B2B_LEN))));
	} else {
		check_failed = 1;
	}
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
	close(handling[0]);
	close(handling[1]);
}

/* ---------------------------------------------- UNREGISTER_REQUEST -- */

static void unregister_attack(const struct dev *dev, uint64_t chunk, uint32_t block,
			      const char *says)
{
	uint8_t rec[RDMIG_REGISTER_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_UNREGISTER_REQUEST, rec, sizeof(rec), sizeof(rec),
				RDMIG_ERANGE, says);

	register_rec(rec, chunk, block, 0);
	run_attack(dev, &a);
}

DEVICE_TEST(unregister_of_a_chunk_beyond_the_block_is_refused)
{
	unregister_attack(dev, 1, VRAM, "UNREGISTER_REQUEST record 0: chunk 1 of block 1, which has 1");
}

DEVICE_TEST(unregister_of_chunk_max_is_refused)
{
	unregister_attack(dev, UINT64_MAX, RAM,
			  "UNREGISTER_REQUEST record 0: chunk 18446744073709551615 of block 0");
}

DEVICE_TEST(unregister_of_a_missing_block_is_refused)
{
	unregister_attack(dev, 0, NBLOCKS,
			  "UNREGISTER_REQUEST record 0: block index 3, but that block does not exist");
}

/* -------------------------------------------------------- COMPRESS -- */

static void compress_attack(const struct dev *dev, uint32_t value, uint32_t block,
			    uint64_t offset, uint64_t length, int ret, const char *says)
{
	uint8_t rec[RDMIG_COMPRESS_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_COMPRESS, rec, sizeof(rec), sizeof(rec), ret, says);

	compress_rec(rec, value, block, offset, length);
	run_attack(dev, &a);
}

DEVICE_TEST(compress_beyond_the_block_is_refused)
{
	compress_attack(dev, 0, RAM, RAM_END - PAGE, 2 * PAGE, RDMIG_ERANGE,
			"COMPRESS record 0: range 0x10f000+8192 is outside block 0 (ram: offset "
			"0x0, 1114112 bytes)");
}

DEVICE_TEST(compress_with_a_wrapping_length_is_refused)
{
	compress_attack(dev, 0, RAM, PAGE, UINT64_MAX - PAGE + 1, RDMIG_ERANGE,
			"COMPRESS record 0: range 0x1000+18446744073709547520 is outside block 0");
}

DEVICE_TEST(compress_below_the_block_is_refused)
{
	compress_attack(dev, 0, VRAM, layout[VRAM].offset - PAGE, PAGE, RDMIG_ERANGE,
			"COMPRESS record 0: range 0x1ff000+4096 is outside block 1");
}

DEVICE_TEST(compress_at_a_wrapping_offset_is_refused)
{
	compress_attack(dev, 0, VRAM, UINT64_MAX - 100, PAGE, RDMIG_ERANGE,
			"COMPRESS record 0: range 0xffffffffffffff9b+4096 is outside block 1");
}

DEVICE_TEST(compress_with_a_value_is_refused)
{
	compress_attack(dev, 5, RAM, 0, PAGE, RDMIG_EPROTO, "COMPRESS record 0: value 5");
}

DEVICE_TEST(compress_of_a_missing_block_is_refused)
{
	compress_attack(dev, 0, 9, 0, PAGE, RDMIG_ERANGE,
			"COMPRESS record 0: block index 9, but that block does not exist");
}

/* Record 0 is valid and zeroes its page; record 1 runs off the block. */
DEVICE_TEST(compress_with_a_bad_second_record_is_refused)
{
	uint8_t recs[2 * RDMIG_COMPRESS_SIZE] = {0};
	struct attack a = typed(RDMIG_MSG_COMPRESS, recs, sizeof(recs), RDMIG_COMPRESS_SIZE,
				RDMIG_ERANGE, "COMPRESS record 1: range 0x23f000+8192 is outside block 1");

	compress_rec(recs, 0, VRAM, layout[VRAM].offset, PAGE);
	compress_rec(recs + RDMIG_COMPRESS_SIZE, 0, VRAM, VRAM_END - PAGE, 2 * PAGE);
	a.allowed = (struct allowed){true, VRAM, 0, PAGE, true};
	run_attack(dev, &a);
}

/* ------------------------- RDMA WRITEs where no key reaches (the device) -- */

/* Register chunk 0 of a block, then write with its key where it does not reach. */
static void write_beyond_a_registered_chunk(struct rdmig_conn *c, struct attack *a)
{
	uint8_t rec[RDMIG_REGISTER_SIZE] = {0};
	struct rdmig_register_result res;
	struct rdmig_msg reply;
	int ret;

	CHECK_OK(exchange_blocks(c, NULL));
	register_rec(rec, layout[a->write_block].offset, (uint32_t)a->write_block, 0);
	CHECK_OK(rdmig_request(c, &(struct rdmig_msg){RDMIG_MSG_REGISTER_REQUEST, 1, sizeof(rec), rec},
			       RDMIG_MSG_REGISTER_RESULT, &reply));
	rdmig_decode_register_result(reply.payload, &res);
	ret = raw_write(c, res.host_addr + (uint64_t)a->write_at, res.rkey, a->write_len);
	if (!ret)
		ret = raw_wait_end(c);
	CHECK(ret == RDMIG_ECOMPLETION || ret == RDMIG_EDISCONNECTED);
}

/* With PIN_ALL: write with the block's own key past its end. */
static void write_beyond_a_pinned_block(struct rdmig_conn *c, struct attack *a)
{
	struct rdmig_dest_block db[NBLOCKS];
	struct rdmig_caps caps;
	int ret;

	rdmig_conn_caps(c, &caps);
	CHECK_EQ(caps.flags, RDMIG_CAP_PIN_ALL);
	CHECK_OK(exchange_blocks(c, db));
	ret = raw_write(c, db[a->write_block].remote_host_addr + (uint64_t)a->write_at,
			db[a->write_block].remote_rkey, a->write_len);
	if (!ret)
		ret = raw_wait_end(c);
	CHECK(ret == RDMIG_ECOMPLETION || ret == RDMIG_EDISCONNECTED);
}

DEVICE_TEST(write_into_an_unregistered_chunk_is_refused_by_the_device)
{
	struct attack a = {.script = write_beyond_a_registered_chunk, .write_block = RAM,
			   .write_at = MIB, .write_len = PAGE, .device_ends = true};
	run_attack(dev, &a);
}

DEVICE_TEST(write_before_a_registered_chunk_is_refused_by_the_device)
{
	struct attack a = {.script = write_beyond_a_registered_chunk, .write_block = VRAM,
			   .write_at = -(int64_t)PAGE, .write_len = PAGE, .device_ends = true};
	run_attack(dev, &a);
}

/* The part inside the block is the source's to write; none beyond it. */
DEVICE_TEST(write_past_a_pinned_block_is_refused_by_the_device)
{
	struct attack a = {.script = write_beyond_a_pinned_block, .write_block = VRAM,
			   .write_at = (int64_t)layout[VRAM].length - 2048, .write_len = PAGE,
			   .device_ends = true, .pin_all = true};
	a.allowed = (struct allowed){true, VRAM, layout[VRAM].length - 2048, 2048, false};
	run_attack(dev, &a);
}

/* ------------------------------------ capability records from a source -- */

struct caps_verdict {
	int ret;
	const char *says;
	uint32_t flags; /* accepted: the flags the destination agreed to */
};

static void dest_refuses_the_caps(struct rdmig_listener *l, int code, void *arg)
{
	const struct caps_verdict *v = arg;

	CHECK_EQ(code, v->ret);
	CHECK_STR_CONTAINS(rdmig_listener_errmsg(l), v->says);
}

static void dest_accepts_the_caps(struct rdmig_conn *c, void *arg)
{
	const struct caps_verdict *v = arg;
	struct rdmig_caps caps;

	CHECK_EQ(v->ret, 0);
	rdmig_conn_caps(c, &caps);
	CHECK_EQ(caps.version, RDMIG_CAP_VERSION);
	CHECK_EQ(caps.flags, v->flags);
}

/* A refused request does not end rdmig_accept: it waits on for a valid
 * source, and when none comes its timeout names the refusal. */
#define REFUSED_ACCEPT_MS 3000

/* A bare rdma_cm source sends pdata; the destination's verdict is v. */
static void run_caps(const struct dev *dev, const uint8_t *pdata, uint8_t plen,
		     struct caps_verdict *v, bool allow_pin_all, struct raw_cm *r)
{
	struct pair p = {.dev = dev, .dest = dest_accepts_the_caps,
			 .dest_accept_failed = dest_refuses_the_caps, .arg = v};

	test_opts(&p.dest_opts);
	p.dest_opts.accept_timeout_ms = REFUSED_ACCEPT_MS;
	p.dest_opts.pin_all = allow_pin_all;
	CHECK_OK(pair_start(&p));
	if (raw_cm_connect(r, dev->ip, p.port, pdata, plen))
		check_failed = 1;
	CHECK_OK(pair_finish(&p, 60));
}

/* iWARP delivers the 4 bytes as they are; InfiniBand (rxe) pads private
 * data with zeros to 56 bytes, so there the record reads as version
 * 0xffffffff. */
DEVICE_TEST(caps_record_too_short_is_rejected)
{
	const uint8_t pdata[4] = {0xff, 0xff, 0xff, 0xff};
	bool iwarp = !strcmp(dev->kind, "siw");
	struct caps_verdict v = {RDMIG_ETIMEDOUT,
				 iwarp ? "the source sent 4 bytes of private data; a capability "
					 "record needs 8"
				       : "the source asked for capability version 4294967295"};
	struct raw_cm r;

	run_caps(dev, pdata, sizeof(pdata), &v, false, &r);
	CHECK_EQ(r.event, RDMA_CM_EVENT_REJECTED);
	raw_cm_close(&r);
}

DEVICE_TEST(caps_version_0_is_rejected)
{
	struct pair p = {.dev = dev, .dest = dest_accepts_the_caps,
			 .dest_accept_failed = dest_refuses_the_caps};
	struct caps_verdict v = {RDMIG_ETIMEDOUT, "1 connection request refused meanwhile, the "
				 "last: the source asked for capability version 0"};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;

	p.arg = &v;
	test_opts(&o);
	test_opts(&p.dest_opts);
	p.dest_opts.accept_timeout_ms = REFUSED_ACCEPT_MS;
	CHECK_OK(pair_start(&p));
	CHECK_OK(rdmig_conn_create(&o, &c));
	rdmig__conn_set_cap_version(c, 0);
	CHECK_EQ(rdmig_connect(c, dev->ip, p.port), RDMIG_EVERSION);
	CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), "it speaks capability version 1, we asked for "
			   "version 0");
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

DEVICE_TEST(caps_unknown_flags_are_cleared)
{
	struct rdmig_caps all = {RDMIG_CAP_VERSION, UINT32_MAX}, echo;
	struct caps_verdict v = {0, "", RDMIG_CAP_PIN_ALL};
	uint8_t pdata[RDMIG_CAPS_SIZE];
	struct raw_cm r;

	rdmig_encode_caps(&all, pdata);
	run_caps(dev, pdata, sizeof(pdata), &v, true, &r);
	CHECK_EQ(r.event, RDMA_CM_EVENT_ESTABLISHED);
	CHECK(r.plen >= RDMIG_CAPS_SIZE);
	rdmig_decode_caps(r.pdata, &echo);
	CHECK_EQ(echo.version, RDMIG_CAP_VERSION);
	CHECK_EQ(echo.flags, RDMIG_CAP_PIN_ALL);
	raw_cm_close(&r);
}

static void dest_must_accept(struct rdmig_listener *l, int code, void *arg)
{
	CHECK_FAIL_AT("accept ended with %s (%s) before the real source came",
		      rdmig_err_name(code), rdmig_listener_errmsg(l));
}

/* Two malformed requests (a short record, version 2) come first:
 * each is rejected, and the real source that follows is still accepted. */
DEVICE_TEST(bad_requests_do_not_end_the_wait_for_the_real_source)
{
	struct caps_verdict v = {0, "", 0};
	struct pair p = {.dev = dev, .dest = dest_accepts_the_caps,
			 .dest_accept_failed = dest_must_accept, .arg = &v};
	/* 4 bytes: short on iWARP; InfiniBand pads them with zeros to a
	 * record of version 0xffffffff (see caps_record_too_short_is_rejected) */
	const uint8_t shortrec[4] = {0xff, 0xff, 0xff, 0xff};
	struct rdmig_caps v2 = {2, 0};
	uint8_t pdata[RDMIG_CAPS_SIZE];
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct raw_cm r;

	rdmig_encode_caps(&v2, pdata);
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	CHECK_OK(raw_cm_connect(&r, dev->ip, p.port, shortrec, sizeof(shortrec)));
	CHECK_EQ(r.event, RDMA_CM_EVENT_REJECTED);
	raw_cm_close(&r);
	CHECK_OK(raw_cm_connect(&r, dev->ip, p.port, pdata, sizeof(pdata)));
	CHECK_EQ(r.event, RDMA_CM_EVENT_REJECTED);
	raw_cm_close(&r);
	test_opts(&o);
	CHECK_OK(test_connect(&p, &o, &c));
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

/* --------------------------------- a hostile destination -> rdmig_source -- */

/* The source's blocks: ram and vram of the layout above. */
#define SRC_NBLOCKS 2

/* How a reply is bent: the true records, edited, then framed like this. */
struct frame_lie {
	uint32_t type;      /* 0: the reply's own type */
	bool set_repeat;    /* repeat instead of the true one */
	uint32_t repeat;
	uint32_t extra;     /* zero bytes appended to the payload (counted in len) */
	uint32_t cut;       /* bytes dropped from the payload's end (counted in len) */
	uint32_t withheld;  /* bytes len counts that are not sent */
};

struct lie {
	/* RAM_BLOCKS_RESULT: edit the true blocks, frame them with `blocks` */
	void (*edit_blocks)(struct rdmig_dest_block db[], uint32_t *n);
	struct frame_lie blocks;
	bool error_reply;    /* ERROR instead of a RAM_BLOCKS_RESULT */
	bool bad_credit;     /* a QEMU_FILE where the first READY is due */
	/* REGISTER_RESULT (the blocks were true): edit, frame with `result` */
	void (*edit_result)(struct rdmig_register_result *r);
	struct frame_lie result;
	/* the verdict: the source's code and message... */
	int ret;
	const char *says;
	bool device_ends;    /* a write the device refuses (ECOMPLETION or a disconnect) */
	/* ...and what the hostile destination sees next (EPEER: the source's ERROR) */
	int dest_sees;
};

/* Frame payload (len bytes) as `lie` says and post it (a reply needs no credit). */
static int send_bent(struct rdmig_conn *c, uint32_t type, uint32_t repeat, const uint8_t *payload,
		     uint32_t len, const struct frame_lie *lie)
{
	uint32_t plen = len + lie->extra - lie->cut;
	uint8_t *f = calloc(1, RDMIG_HEADER_SIZE + len + lie->extra);
	int ret;

	raw_frame(f, lie->type ? lie->type : type, lie->set_repeat ? lie->repeat : repeat, plen,
		  payload, len);
	ret = raw_post(c, f, RDMIG_HEADER_SIZE + plen - lie->withheld);
	free(f);
	return ret;
}

static void lying_dest(struct rdmig_conn *c, void *arg)
{
	static const struct frame_lie honest;
	struct lie *l = arg;
	struct guarded g[SRC_NBLOCKS];
	struct ibv_mr *mr[SRC_NBLOCKS] = {NULL};
	struct rdmig_dest_block db[SRC_NBLOCKS + 1];
	uint8_t buf[(SRC_NBLOCKS + 1) * RDMIG_DEST_BLOCK_SIZE];
	uint32_t n = SRC_NBLOCKS;
	struct rdmig_msg m;

	if (l->bad_credit) {
		uint8_t f[RDMIG_HEADER_SIZE + 4] = {0};
		CHECK_OK(raw_post(c, f, raw_frame(f, RDMIG_MSG_QEMU_FILE, 1, 4, "oops", 4)));
		CHECK_EQ(raw_wait_message(c), l->dest_sees);
		return;
	}
	for (int i = 0; i < SRC_NBLOCKS; i++) {
		CHECK(map_guarded(&g[i], layout[i].length, 0));
		CHECK((mr[i] = raw_reg_remote(c, g[i].host, layout[i].length)) != NULL);
		db[i] = (struct rdmig_dest_block){(uintptr_t)g[i].host, layout[i].offset,
						  layout[i].length, mr[i]->rkey};
	}
	CHECK_OK(rdmig_recv(c, RDMIG_MSG_RAM_BLOCKS_REQUEST, &m));
	if (l->error_reply) {
		CHECK_OK(rdmig_reply(c, &(struct rdmig_msg){RDMIG_MSG_ERROR, 1, 0, NULL}));
	} else {
		if (l->edit_blocks)
			l->edit_blocks(db, &n);
		for (uint32_t i = 0; i < n; i++)
			rdmig_encode_dest_block(&db[i], buf + i * RDMIG_DEST_BLOCK_SIZE);
		CHECK_OK(send_bent(c, RDMIG_MSG_RAM_BLOCKS_RESULT, 1, buf,
				   n * RDMIG_DEST_BLOCK_SIZE, l->edit_result ? &honest : &l->blocks));
	}
	if (l->edit_result) {
		struct rdmig_register r;
		struct rdmig_register_result res;
		uint8_t out[RDMIG_REGISTER_RESULT_SIZE] = {0};

		CHECK_OK(rdmig_recv(c, RDMIG_MSG_REGISTER_REQUEST, &m));
		rdmig_decode_register(m.payload, &r);
		CHECK_EQ(r.block_index, RAM);
		res = (struct rdmig_register_result){mr[RAM]->rkey, db[RAM].remote_host_addr};
		l->edit_result(&res);
		rdmig_encode_register_result(&res, out);
		CHECK_OK(send_bent(c, RDMIG_MSG_REGISTER_RESULT, 1, out, sizeof(out), &l->result));
	}
	CHECK_EQ(rdmig_recv(c, RDMIG_MSG_NONE, &m), l->dest_sees);
	for (int i = 0; i < SRC_NBLOCKS; i++) {
		ibv_dereg_mr(mr[i]);
		munmap(g[i].map, g[i].map_len);
	}
}

static void run_lie(const struct dev *dev, struct lie *l)
{
	struct pair p = {.dev = dev, .dest = lying_dest, .arg = l};
	struct rdmig_block blocks[SRC_NBLOCKS];
	uint8_t *mem[SRC_NBLOCKS];
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;
	struct rdmig_source *s = NULL;
	int ret;

	test_opts(&o);
	test_opts(&p.dest_opts);
	CHECK_OK(pair_start(&p));
	/* after the fork: the destination child must not inherit (and leak) these */
	for (int i = 0; i < SRC_NBLOCKS; i++) {
		mem[i] = malloc(layout[i].length);
		fill_pattern(mem[i], layout[i].length, 50 + (uint32_t)i);
		blocks[i] = (struct rdmig_block){layout[i].name, mem[i], layout[i].length, 0};
	}
	ret = test_connect(&p, &o, &c);
	if (!ret)
		ret = rdmig_source_create(c, blocks, SRC_NBLOCKS, &s);
	CHECK_OK(ret);
	if (l->bad_credit)
		ret = rdmig_source_write_stream(s, "hello", 5);
	else
		ret = rdmig_source_setup(s);
	if (!ret && l->edit_result) {
		ret = rdmig_source_write(s, RAM, 0, PAGE);
		if (!ret)
			ret = rdmig_source_end_iteration(s);
	}
	/* iWARP does not acknowledge writes: the failure may show only at the
	 * next exchange, when the destination has gone */
	if (l->device_ends && !ret)
		ret = rdmig_source_write_stream(s, "end", 3);
	if (l->device_ends) {
		CHECK(ret == RDMIG_ECOMPLETION || ret == RDMIG_EDISCONNECTED);
		if (ret == RDMIG_ECOMPLETION)
			CHECK_STR_CONTAINS(rdmig_source_errmsg(s), "RDMA write of block 0 chunk 0");
	} else {
		CHECK_EQ(ret, l->ret);
		CHECK_STR_CONTAINS(rdmig_source_errmsg(s), l->says);
	}
	rdmig_source_destroy(s);
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
	for (int i = 0; i < SRC_NBLOCKS; i++)
		free(mem[i]);
}

static void one_block(struct rdmig_dest_block db[], uint32_t *n)
{
	*n = 1;
}

static void three_blocks(struct rdmig_dest_block db[], uint32_t *n)
{
	db[2] = db[1];
	*n = 3;
}

static void vram_one_byte_longer(struct rdmig_dest_block db[], uint32_t *n)
{
	db[VRAM].length++;
}

static void ram_address_wraps(struct rdmig_dest_block db[], uint32_t *n)
{
	db[RAM].remote_host_addr = UINT64_MAX - PAGE;
}

static void vram_offset_wraps(struct rdmig_dest_block db[], uint32_t *n)
{
	db[VRAM].offset = UINT64_MAX - 100;
}

static void no_blocks(struct rdmig_dest_block db[], uint32_t *n)
{
	*n = 0;
}

DEVICE_TEST(blocks_result_with_fewer_blocks_is_refused)
{
	struct lie l = {.edit_blocks = one_block, .ret = RDMIG_ERANGE,
			.says = "the destination has 1 RAM blocks, the source 2",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(blocks_result_with_more_blocks_is_refused)
{
	struct lie l = {.edit_blocks = three_blocks, .ret = RDMIG_ERANGE,
			.says = "the destination has 3 RAM blocks, the source 2",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(blocks_result_with_another_length_is_refused)
{
	struct lie l = {.edit_blocks = vram_one_byte_longer, .ret = RDMIG_ERANGE,
			.says = "RAM block 1 (vram): the destination's is 262145 bytes, the "
				"source's 262144",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(blocks_result_with_a_wrapping_address_is_refused)
{
	struct lie l = {.edit_blocks = ram_address_wraps, .ret = RDMIG_ERANGE,
			.says = "RAM block 0 (ram): address 0xffffffffffffefff + 1114112 bytes "
				"wraps around",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(blocks_result_with_a_wrapping_offset_is_refused)
{
	struct lie l = {.edit_blocks = vram_offset_wraps, .ret = RDMIG_ERANGE,
			.says = "RAM block 1 (vram): offset 0xffffffffffffff9b + 262144 bytes "
				"wraps around",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(blocks_result_with_a_partial_record_is_refused)
{
	struct lie l = {.blocks = {.extra = 8}, .ret = RDMIG_EMSG_REPEAT_LEN,
			.says = "header len 72 of RAM_BLOCKS_RESULT (repeat 1) is not a whole "
				"number of 32-byte DestBlocks",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(blocks_result_with_repeat_above_the_limit_is_refused)
{
	struct lie l = {.blocks = {.set_repeat = true, .repeat = 5000}, .ret = RDMIG_EMSG_REPEAT,
			.says = "header repeat 5000 exceeds the limit 4096",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(truncated_blocks_result_is_refused)
{
	struct lie l = {.blocks = {.withheld = 8}, .ret = RDMIG_EMSG_SIZE,
			.says = "message size 72 differs from 16 + header len 64",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(reply_of_another_type_is_refused)
{
	struct lie l = {.edit_blocks = no_blocks, .blocks = {.type = RDMIG_MSG_UNREGISTER_FINISHED},
			.ret = RDMIG_EMSG_UNEXPECTED,
			.says = "header type 11 (UNREGISTER_FINISHED) is not the expected 5 "
				"(RAM_BLOCKS_RESULT)",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(error_instead_of_blocks_result_ends_the_setup)
{
	struct lie l = {.error_reply = true, .ret = RDMIG_EPEER,
			.says = "the peer sent ERROR while we waited for RAM_BLOCKS_RESULT",
			.dest_sees = RDMIG_EDISCONNECTED};
	run_lie(dev, &l);
}

DEVICE_TEST(stream_message_instead_of_ready_is_refused)
{
	struct lie l = {.bad_credit = true, .ret = RDMIG_EMSG_UNEXPECTED,
			.says = "header type 3 (QEMU_FILE) is not the expected 2 (READY)",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

static void address_of_chunk_1(struct rdmig_register_result *r)
{
	r->host_addr += MIB; /* the chunk, not the block start */
}

static void shorter_result(struct rdmig_register_result *r)
{
}

static void foreign_rkey(struct rdmig_register_result *r)
{
	r->rkey ^= 0x5a5a00u;
}

DEVICE_TEST(register_result_with_another_address_is_refused)
{
	struct lie l = {.edit_result = address_of_chunk_1, .ret = RDMIG_ERANGE,
			.says = "REGISTER_RESULT for block 0 (ram): host address",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(register_result_with_a_short_len_is_refused)
{
	struct lie l = {.edit_result = shorter_result, .result = {.cut = 8},
			.ret = RDMIG_EMSG_REPEAT_LEN,
			.says = "header repeat 1 and len 8 do not fit REGISTER_RESULT",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

DEVICE_TEST(register_result_with_two_records_is_refused)
{
	struct lie l = {.edit_result = shorter_result,
			.result = {.set_repeat = true, .repeat = 2, .extra = 16},
			.ret = RDMIG_EPROTO, .says = "REGISTER_RESULT with repeat 2 for a request of 1",
			.dest_sees = RDMIG_EPEER};
	run_lie(dev, &l);
}

/* An rkey cannot be checked by the source: the device refuses the write. */
DEVICE_TEST(register_result_with_a_foreign_rkey_fails_the_write)
{
	struct lie l = {.edit_result = foreign_rkey, .device_ends = true,
			.dest_sees = RDMIG_EDISCONNECTED};
	run_lie(dev, &l);
}

/* ------------------------------- capability echoes from a destination -- */

static void run_echo(const struct dev *dev, uint32_t version, uint32_t flags, int want,
		     const char *says)
{
	struct rdmig_caps echo = {version, flags}, caps;
	uint8_t pdata[RDMIG_CAPS_SIZE];
	struct pair p = {.dev = dev};
	struct rdmig_opts o;
	struct rdmig_conn *c = NULL;

	rdmig_encode_caps(&echo, pdata);
	test_opts(&o);
	CHECK_OK(raw_listener_start(&p, pdata, sizeof(pdata)));
	CHECK_OK(rdmig_conn_create(&o, &c));
	CHECK_EQ(rdmig_connect(c, dev->ip, p.port), want);
	if (want) {
		CHECK_STR_CONTAINS(rdmig_conn_errmsg(c), says);
	} else {
		rdmig_conn_caps(c, &caps);
		CHECK_EQ(caps.version, RDMIG_CAP_VERSION);
		CHECK_EQ(caps.flags, 0); /* nothing was asked: nothing is granted */
	}
	rdmig_conn_destroy(c);
	CHECK_OK(pair_finish(&p, 60));
}

DEVICE_TEST(caps_echo_of_version_2_is_refused)
{
	run_echo(dev, 2, 0, RDMIG_EVERSION,
		 "the destination answered with capability version 2; rdmig speaks version 1");
}

DEVICE_TEST(caps_echo_of_version_0_is_refused)
{
	run_echo(dev, 0, 0, RDMIG_EVERSION, "the destination answered with capability version 0");
}

DEVICE_TEST(caps_echo_granting_what_was_not_asked_grants_nothing)
{
	run_echo(dev, RDMIG_CAP_VERSION, UINT32_MAX, 0, "");
}

CHECK_MAIN()
