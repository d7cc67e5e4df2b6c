/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_wire.c - the wire format against golden bytes worked out by hand from
 * docs/protocol.md, and rdmig_msg_parse against every validation rule.
 *
 * The golden arrays are written out literally on purpose: they must not be
 * produced by the code under test.  Record goldens use distinct byte values
 * per field (01 02 03 ...) so that a swapped half, a wrong offset or a
 * little-endian store shows up as a byte mismatch.
 */
#include <stdbool.h>

#include "check.h"
#include "rdmig.h"
#include <rdmig/private.h>
#include "wire.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------- helpers -- */

static bool header_eq(const struct rdmig_header *a, const struct rdmig_header *b)
{
	return a->len == b->len && a->type == b->type && a->repeat == b->repeat;
}

static bool caps_eq(const struct rdmig_caps *a, const struct rdmig_caps *b)
{
	return a->version == b->version && a->flags == b->flags;
}

static bool register_eq(const struct rdmig_register *a, const struct rdmig_register *b)
{
	return a->key == b->key && a->block_index == b->block_index && a->chunks == b->chunks;
}

static bool register_result_eq(const struct rdmig_register_result *a,
			       const struct rdmig_register_result *b)
{
	return a->rkey == b->rkey && a->host_addr == b->host_addr;
}

static bool compress_eq(const struct rdmig_compress *a, const struct rdmig_compress *b)
{
	return a->value == b->value && a->block_index == b->block_index && a->offset == b->offset &&
	       a->length == b->length;
}

static bool dest_block_eq(const struct rdmig_dest_block *a, const struct rdmig_dest_block *b)
{
	return a->remote_host_addr == b->remote_host_addr && a->offset == b->offset &&
	       a->length == b->length && a->remote_rkey == b->remote_rkey;
}

/* A heap copy of exactly `size` bytes, so that ASan sees any read past it. */
static uint8_t *heap_copy(const void *src, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);

	if (p && size)
		memcpy(p, src, size);
	return p;
}

/* A heap message of exactly `size` bytes whose header says len/type/repeat. */
static uint8_t *heap_msg(uint32_t len, uint32_t type, uint32_t repeat, size_t size)
{
	uint8_t hdr[RDMIG_HEADER_SIZE];
	struct rdmig_header h = {len, type, repeat};
	uint8_t *p = calloc(1, size ? size : 1);

	rdmig_encode_header(&h, hdr);
	if (p)
		memcpy(p, hdr, size < sizeof(hdr) ? size : sizeof(hdr));
	return p;
}

/* One parse of a golden message that must succeed with these fields. */
static void check_parses_to(const uint8_t *buf, size_t size, uint32_t expect, uint32_t type,
			    uint32_t repeat, uint32_t len)
{
	struct rdmig_msg m;
	char why[128] = "stale";

	memset(&m, 0xa5, sizeof(m));
	CHECK_EQ(rdmig_msg_parse(buf, size, expect, &m, why, sizeof(why)), 0);
	CHECK_EQ(why[0], '\0');
	CHECK_EQ(m.type, type);
	CHECK_EQ(m.repeat, repeat);
	CHECK_EQ(m.len, len);
	CHECK(m.payload == buf + RDMIG_HEADER_SIZE);
}

/*
 * The golden message parses (expecting any type and expecting its own type)
 * to exactly type/repeat/len with the payload right after the header, and
 * encoding that header reproduces the golden header bytes.
 */
static void check_golden_msg(const uint8_t *golden, size_t size, uint32_t type, uint32_t repeat,
			     uint32_t len)
{
	struct rdmig_header h = {len, type, repeat};
	uint8_t hdr[RDMIG_HEADER_SIZE];
	uint8_t *copy;

	CHECK_EQ(size, RDMIG_HEADER_SIZE + len);
	rdmig_encode_header(&h, hdr);
	CHECK_MEM_EQ(hdr, golden, sizeof(hdr));
	copy = heap_copy(golden, size);
	CHECK(copy != NULL);
	check_parses_to(copy, size, RDMIG_MSG_NONE, type, repeat, len);
	if (!check_failed)
		check_parses_to(copy, size, type, type, repeat, len);
	free(copy);
}

/* Parse must fail with `code` and explain it naming both needles. */
static void check_reject(const void *buf, size_t size, uint32_t expect, int code,
			 const char *needle1, const char *needle2)
{
	struct rdmig_msg m = {0};
	char why[256];

	memset(why, 'x', sizeof(why));
	CHECK_EQ(rdmig_msg_parse(buf, size, expect, &m, why, sizeof(why)), code);
	CHECK(memchr(why, '\0', sizeof(why)) != NULL);
	CHECK_STR_CONTAINS(why, needle1);
	CHECK_STR_CONTAINS(why, needle2);
	/* The code does not depend on whether an explanation is wanted. */
	CHECK_EQ(rdmig_msg_parse(buf, size, expect, &m, NULL, 0), code);
	CHECK_EQ(rdmig_msg_parse(buf, size, expect, &m, NULL, sizeof(why)), code);
}

/* Build a heap message with the given header and size, and check_reject it. */
static void check_reject_hdr(uint32_t len, uint32_t type, uint32_t repeat, size_t size,
			     uint32_t expect, int code, const char *needle1, const char *needle2)
{
	uint8_t *buf = heap_msg(len, type, repeat, size);

	CHECK(buf != NULL);
	check_reject(buf, size, expect, code, needle1, needle2);
	free(buf);
}

/* Build a heap message with a consistent size and expect it to parse. */
static void check_accept_hdr(uint32_t len, uint32_t type, uint32_t repeat, uint32_t expect)
{
	size_t size = RDMIG_HEADER_SIZE + (size_t)len;
	uint8_t *buf = heap_msg(len, type, repeat, size);
	struct rdmig_msg m = {0};
	char why[256] = "";
	int rc;

	CHECK(buf != NULL);
	rc = rdmig_msg_parse(buf, size, expect, &m, why, sizeof(why));
	free(buf);
	if (rc != 0)
		CHECK_FAIL_AT("len %u type %u repeat %u: %s (%s)", (unsigned)len, (unsigned)type,
			      (unsigned)repeat, rdmig_err_name(rc), why);
	CHECK_EQ(m.type, type);
	CHECK_EQ(m.repeat, repeat);
	CHECK_EQ(m.len, len);
}

/* A small deterministic generator for the round-trip sweeps. */
static uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* --------------------------------------------------- golden: records -- */

TEST(golden_header)
{
	static const uint8_t golden[] = {
		0x01, 0x02, 0x03, 0x04, /* len */
		0x05, 0x06, 0x07, 0x08, /* type */
		0x09, 0x0a, 0x0b, 0x0c, /* repeat */
		0x00, 0x00, 0x00, 0x00, /* padding: sent as 0 */
	};
	const struct rdmig_header h = {.len = 0x01020304, .type = 0x05060708, .repeat = 0x090a0b0c};
	uint8_t out[RDMIG_HEADER_SIZE];
	struct rdmig_header d;

	CHECK_EQ(sizeof(golden), RDMIG_HEADER_SIZE);
	memset(out, 0xee, sizeof(out));
	rdmig_encode_header(&h, out);
	CHECK_MEM_EQ(out, golden, sizeof(golden));
	rdmig_decode_header(golden, &d);
	CHECK(header_eq(&d, &h));
}

TEST(golden_header_padding_ignored)
{
	static const uint8_t golden[] = {
		0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef, /* padding is not ours to read */
	};
	struct rdmig_header d;

	rdmig_decode_header(golden, &d);
	CHECK_EQ(d.len, 24);
	CHECK_EQ(d.type, RDMIG_MSG_REGISTER_REQUEST);
	CHECK_EQ(d.repeat, 1);
}

TEST(golden_caps)
{
	static const uint8_t golden_pin_all[] = {
		0x00, 0x00, 0x00, 0x01, /* version 1 */
		0x00, 0x00, 0x00, 0x01, /* flags: PIN_ALL */
	};
	static const uint8_t golden_pattern[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
	const struct rdmig_caps pin_all = {RDMIG_CAP_VERSION, RDMIG_CAP_PIN_ALL};
	const struct rdmig_caps pattern = {0x01020304, 0x05060708};
	uint8_t out[RDMIG_CAPS_SIZE];
	struct rdmig_caps d;

	CHECK_EQ(sizeof(golden_pin_all), RDMIG_CAPS_SIZE);
	rdmig_encode_caps(&pin_all, out);
	CHECK_MEM_EQ(out, golden_pin_all, sizeof(out));
	rdmig_decode_caps(golden_pin_all, &d);
	CHECK(caps_eq(&d, &pin_all));
	rdmig_encode_caps(&pattern, out);
	CHECK_MEM_EQ(out, golden_pattern, sizeof(out));
	rdmig_decode_caps(golden_pattern, &d);
	CHECK(caps_eq(&d, &pattern));
}

TEST(golden_register)
{
	static const uint8_t golden[] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* key, high half first */
		0x09, 0x0a, 0x0b, 0x0c,                         /* block_index */
		0x00, 0x00, 0x00, 0x00,                         /* padding */
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, /* chunks */
	};
	const struct rdmig_register r = {
		.key = 0x0102030405060708, .block_index = 0x090a0b0c, .chunks = 0x1112131415161718};
	uint8_t out[RDMIG_REGISTER_SIZE];
	struct rdmig_register d;

	CHECK_EQ(sizeof(golden), RDMIG_REGISTER_SIZE);
	memset(out, 0xee, sizeof(out));
	rdmig_encode_register(&r, out);
	CHECK_MEM_EQ(out, golden, sizeof(golden));
	rdmig_decode_register(golden, &d);
	CHECK(register_eq(&d, &r));
}

TEST(golden_register_result)
{
	static const uint8_t golden[] = {
		0x01, 0x02, 0x03, 0x04,                         /* rkey */
		0x00, 0x00, 0x00, 0x00,                         /* padding */
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, /* host_addr */
	};
	const struct rdmig_register_result r = {.rkey = 0x01020304, .host_addr = 0x1112131415161718};
	uint8_t out[RDMIG_REGISTER_RESULT_SIZE];
	struct rdmig_register_result d;

	CHECK_EQ(sizeof(golden), RDMIG_REGISTER_RESULT_SIZE);
	memset(out, 0xee, sizeof(out));
	rdmig_encode_register_result(&r, out);
	CHECK_MEM_EQ(out, golden, sizeof(golden));
	rdmig_decode_register_result(golden, &d);
	CHECK(register_result_eq(&d, &r));
}

TEST(golden_compress)
{
	static const uint8_t golden[] = {
		0x01, 0x02, 0x03, 0x04,                         /* value */
		0x05, 0x06, 0x07, 0x08,                         /* block_index */
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, /* offset */
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, /* length */
	};
	const struct rdmig_compress c = {.value = 0x01020304,
					 .block_index = 0x05060708,
					 .offset = 0x1112131415161718,
					 .length = 0x2122232425262728};
	uint8_t out[RDMIG_COMPRESS_SIZE];
	struct rdmig_compress d;

	CHECK_EQ(sizeof(golden), RDMIG_COMPRESS_SIZE);
	memset(out, 0xee, sizeof(out));
	rdmig_encode_compress(&c, out);
	CHECK_MEM_EQ(out, golden, sizeof(golden));
	rdmig_decode_compress(golden, &d);
	CHECK(compress_eq(&d, &c));
}

TEST(golden_dest_block)
{
	static const uint8_t golden[] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* remote_host_addr */
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, /* offset */
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, /* length */
		0x31, 0x32, 0x33, 0x34,                         /* remote_rkey */
		0x00, 0x00, 0x00, 0x00,                         /* padding */
	};
	const struct rdmig_dest_block b = {.remote_host_addr = 0x0102030405060708,
					   .offset = 0x1112131415161718,
					   .length = 0x2122232425262728,
					   .remote_rkey = 0x31323334};
	uint8_t out[RDMIG_DEST_BLOCK_SIZE];
	struct rdmig_dest_block d;

	CHECK_EQ(sizeof(golden), RDMIG_DEST_BLOCK_SIZE);
	memset(out, 0xee, sizeof(out));
	rdmig_encode_dest_block(&b, out);
	CHECK_MEM_EQ(out, golden, sizeof(golden));
	rdmig_decode_dest_block(golden, &d);
	CHECK(dest_block_eq(&d, &b));
}

TEST(golden_record_padding_ignored)
{
	/* Padding words set to ff on receipt must not leak into any field. */
	static const uint8_t reg[] = {
		0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 2,
	};
	static const uint8_t res[] = {
		0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0x10, 0,
	};
	static const uint8_t blk[] = {
		0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3,
		0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff,
	};
	struct rdmig_register r;
	struct rdmig_register_result rr;
	struct rdmig_dest_block b;

	rdmig_decode_register(reg, &r);
	CHECK_EQ(r.key, 5);
	CHECK_EQ(r.block_index, 1);
	CHECK_EQ(r.chunks, 2);
	rdmig_decode_register_result(res, &rr);
	CHECK_EQ(rr.rkey, 9);
	CHECK_EQ(rr.host_addr, 0x1000);
	rdmig_decode_dest_block(blk, &b);
	CHECK_EQ(b.remote_host_addr, 1);
	CHECK_EQ(b.offset, 2);
	CHECK_EQ(b.length, 3);
	CHECK_EQ(b.remote_rkey, 4);
}

/* --------------------------------------------------- golden: messages -- */

TEST(golden_msg_error)
{
	static const uint8_t golden[] = {
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* len 0, type ERROR */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
	};
	const struct rdmig_header h = {0, RDMIG_MSG_ERROR, 1};
	uint8_t out[RDMIG_HEADER_SIZE];

	rdmig_encode_header(&h, out);
	CHECK_MEM_EQ(out, golden, sizeof(golden));
	/* ERROR is well formed but never "succeeds": the peer is aborting. */
	check_reject(golden, sizeof(golden), RDMIG_MSG_NONE, RDMIG_EPEER, "ERROR", "type 1");
}

TEST(golden_msg_ready)
{
	static const uint8_t golden[] = {
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, /* len 0, type READY */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
	};

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_READY, 1, 0);
}

TEST(golden_msg_qemu_file)
{
	static const uint8_t golden[] = {
		0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x03, /* len 8, type QEMU_FILE */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
		0x51, 0x45, 0x56, 0x4d, 0x00, 0x00, 0x00, 0x03, /* "QEVM", stream version 3 */
	};

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_QEMU_FILE, 1, 8);
	if (check_failed)
		return;
	CHECK_MEM_EQ(golden + 16, "QEVM\0\0\0\3", 8);
}

TEST(golden_msg_ram_blocks_request)
{
	static const uint8_t golden[] = {
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, /* len 0, type RAM_BLOCKS_REQUEST */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
	};

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, 0);
}

TEST(golden_msg_ram_blocks_result)
{
	/* Two blocks.  QEMU sends repeat 1 whatever the block count. */
	static const uint8_t golden[] = {
		0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x05, /* len 64, type RAM_BLOCKS_RESULT */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
		/* block 0: 1 GiB at offset 0 */
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, /* remote_host_addr */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* offset */
		0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, /* length */
		0x00, 0xab, 0xcd, 0xee, 0x00, 0x00, 0x00, 0x00, /* remote_rkey, padding */
		/* block 1: 256 KiB at offset 1 GiB */
		0x00, 0x00, 0x7f, 0x10, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00,
		0x00, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x00,
	};
	const struct rdmig_dest_block want[2] = {
		{0x00007f0000000000, 0, 0x40000000, 0x00abcdee},
		{0x00007f1000000000, 0x40000000, 0x40000, 0x00abcdef},
	};
	uint8_t out[2 * RDMIG_DEST_BLOCK_SIZE];

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_RAM_BLOCKS_RESULT, 1, 64);
	for (int i = 0; i < 2; i++) {
		struct rdmig_dest_block d;

		rdmig_encode_dest_block(&want[i], out + i * RDMIG_DEST_BLOCK_SIZE);
		rdmig_decode_dest_block(golden + 16 + i * RDMIG_DEST_BLOCK_SIZE, &d);
		CHECK(dest_block_eq(&d, &want[i]));
	}
	CHECK_MEM_EQ(out, golden + 16, sizeof(out));
}

TEST(golden_msg_compress)
{
	static const uint8_t golden[] = {
		0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x06, /* len 24, type COMPRESS */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
		0x00, 0x00, 0x00, 0x00,                         /* value 0: zero the range */
		0x00, 0x00, 0x00, 0x02,                         /* block_index 2 */
		0x00, 0x00, 0x00, 0x00, 0x40, 0x30, 0x00, 0x00, /* offset */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, /* length 1 MiB */
	};
	const struct rdmig_compress want = {0, 2, 0x40300000, 0x100000};
	uint8_t out[RDMIG_COMPRESS_SIZE];
	struct rdmig_compress d;

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_COMPRESS, 1, 24);
	rdmig_encode_compress(&want, out);
	CHECK_MEM_EQ(out, golden + 16, sizeof(out));
	rdmig_decode_compress(golden + 16, &d);
	CHECK(compress_eq(&d, &want));
}

TEST(golden_msg_register_request)
{
	/* The 40 bytes of the hot path: key 0x0000000100200000, block 3, chunks 1. */
	static const uint8_t golden[40] = {
		0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x07, /* len 24, type REGISTER_REQUEST */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x20, 0x00, 0x00, /* key */
		0x00, 0x00, 0x00, 0x03,                         /* block_index 3 */
		0x00, 0x00, 0x00, 0x00,                         /* padding */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* chunks 1 */
	};
	const struct rdmig_register want = {0x0000000100200000, 3, 1};
	uint8_t out[RDMIG_REGISTER_SIZE];
	struct rdmig_register d;

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_REGISTER_REQUEST, 1, 24);
	rdmig_encode_register(&want, out);
	CHECK_MEM_EQ(out, golden + 16, sizeof(out));
	rdmig_decode_register(golden + 16, &d);
	CHECK(register_eq(&d, &want));
}

TEST(golden_msg_register_result)
{
	static const uint8_t golden[32] = {
		0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x08, /* len 16, type REGISTER_RESULT */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
		0x00, 0x00, 0x1a, 0x2b,                         /* rkey */
		0x00, 0x00, 0x00, 0x00,                         /* padding */
		0x00, 0x00, 0x7f, 0x3a, 0x12, 0x40, 0x00, 0x00, /* host_addr of the block start */
	};
	const struct rdmig_register_result want = {0x1a2b, 0x00007f3a12400000};
	uint8_t out[RDMIG_REGISTER_RESULT_SIZE];
	struct rdmig_register_result d;

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_REGISTER_RESULT, 1, 16);
	rdmig_encode_register_result(&want, out);
	CHECK_MEM_EQ(out, golden + 16, sizeof(out));
	rdmig_decode_register_result(golden + 16, &d);
	CHECK(register_result_eq(&d, &want));
}

TEST(golden_msg_register_finished)
{
	static const uint8_t golden[] = {
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, /* len 0, type REGISTER_FINISHED */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
	};

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_REGISTER_FINISHED, 1, 0);
}

TEST(golden_msg_unregister_request)
{
	static const uint8_t golden[40] = {
		0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x0a, /* len 24, type UNREGISTER_REQUEST */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* repeat 1 */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, /* key = chunk 5 */
		0x00, 0x00, 0x00, 0x01,                         /* block_index 1 */
		0x00, 0x00, 0x00, 0x00,                         /* padding */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* chunks 0 */
	};
	const struct rdmig_register want = {5, 1, 0};
	uint8_t out[RDMIG_REGISTER_SIZE];
	struct rdmig_register d;

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_UNREGISTER_REQUEST, 1, 24);
	rdmig_encode_register(&want, out);
	CHECK_MEM_EQ(out, golden + 16, sizeof(out));
	rdmig_decode_register(golden + 16, &d);
	CHECK(register_eq(&d, &want));
}

TEST(golden_msg_unregister_finished)
{
	/* QEMU's destination sends this reply with repeat 0. */
	static const uint8_t golden[] = {
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0b, /* len 0, type UNREGISTER_FINISHED */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* repeat 0 */
	};

	check_golden_msg(golden, sizeof(golden), RDMIG_MSG_UNREGISTER_FINISHED, 0, 0);
}

/* --------------------------------------------------------- round trips -- */

TEST(roundtrip_header)
{
	const uint32_t v[] = {0, 1, 0x80000000u, 0xffffffffu};
	uint64_t s = 0x9e3779b97f4a7c15u;

	for (size_t i = 0; i < 1000 + ARRAY_SIZE(v); i++) {
		struct rdmig_header h, d;
		uint8_t out[RDMIG_HEADER_SIZE];

		if (i < ARRAY_SIZE(v))
			h = (struct rdmig_header){v[i], v[i], v[i]};
		else
			h = (struct rdmig_header){(uint32_t)xorshift64(&s), (uint32_t)xorshift64(&s),
						  (uint32_t)xorshift64(&s)};
		rdmig_encode_header(&h, out);
		rdmig_decode_header(out, &d);
		CHECK(header_eq(&d, &h));
		CHECK_EQ(rdmig_load_be32(out + 12), 0);
	}
}

TEST(roundtrip_caps)
{
	const struct rdmig_caps v[] = {{0, 0}, {0xffffffffu, 0xffffffffu}, {1, 1}};
	uint64_t s = 42;

	for (size_t i = 0; i < 1000 + ARRAY_SIZE(v); i++) {
		struct rdmig_caps c, d;
		uint8_t out[RDMIG_CAPS_SIZE];

		c = i < ARRAY_SIZE(v) ? v[i]
				      : (struct rdmig_caps){(uint32_t)xorshift64(&s),
							    (uint32_t)xorshift64(&s)};
		rdmig_encode_caps(&c, out);
		rdmig_decode_caps(out, &d);
		CHECK(caps_eq(&d, &c));
	}
}

TEST(roundtrip_register)
{
	const struct rdmig_register v[] = {{0, 0, 0}, {UINT64_MAX, UINT32_MAX, UINT64_MAX}};
	uint64_t s = 7;

	for (size_t i = 0; i < 1000 + ARRAY_SIZE(v); i++) {
		struct rdmig_register r, d;
		uint8_t out[RDMIG_REGISTER_SIZE];

		r = i < ARRAY_SIZE(v) ? v[i]
				      : (struct rdmig_register){xorshift64(&s), (uint32_t)xorshift64(&s),
								xorshift64(&s)};
		rdmig_encode_register(&r, out);
		rdmig_decode_register(out, &d);
		CHECK(register_eq(&d, &r));
		CHECK_EQ(rdmig_load_be32(out + 12), 0);
	}
}

TEST(roundtrip_register_result)
{
	const struct rdmig_register_result v[] = {{0, 0}, {UINT32_MAX, UINT64_MAX}};
	uint64_t s = 8;

	for (size_t i = 0; i < 1000 + ARRAY_SIZE(v); i++) {
		struct rdmig_register_result r, d;
		uint8_t out[RDMIG_REGISTER_RESULT_SIZE];

		r = i < ARRAY_SIZE(v) ? v[i]
				      : (struct rdmig_register_result){(uint32_t)xorshift64(&s),
								       xorshift64(&s)};
		rdmig_encode_register_result(&r, out);
		rdmig_decode_register_result(out, &d);
		CHECK(register_result_eq(&d, &r));
		CHECK_EQ(rdmig_load_be32(out + 4), 0);
	}
}

TEST(roundtrip_compress)
{
	const struct rdmig_compress v[] = {{0, 0, 0, 0}, {UINT32_MAX, UINT32_MAX, UINT64_MAX, UINT64_MAX}};
	uint64_t s = 9;

	for (size_t i = 0; i < 1000 + ARRAY_SIZE(v); i++) {
		struct rdmig_compress c, d;
		uint8_t out[RDMIG_COMPRESS_SIZE];

		c = i < ARRAY_SIZE(v) ? v[i]
				      : (struct rdmig_compress){(uint32_t)xorshift64(&s),
								(uint32_t)xorshift64(&s), xorshift64(&s),
								xorshift64(&s)};
		rdmig_encode_compress(&c, out);
		rdmig_decode_compress(out, &d);
		CHECK(compress_eq(&d, &c));
	}
}

TEST(roundtrip_dest_block)
{
	const struct rdmig_dest_block v[] = {{0, 0, 0, 0},
					     {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX}};
	uint64_t s = 10;

	for (size_t i = 0; i < 1000 + ARRAY_SIZE(v); i++) {
		struct rdmig_dest_block b, d;
		uint8_t out[RDMIG_DEST_BLOCK_SIZE];

		b = i < ARRAY_SIZE(v) ? v[i]
				      : (struct rdmig_dest_block){xorshift64(&s), xorshift64(&s),
								  xorshift64(&s), (uint32_t)xorshift64(&s)};
		rdmig_encode_dest_block(&b, out);
		rdmig_decode_dest_block(out, &d);
		CHECK(dest_block_eq(&d, &b));
		CHECK_EQ(rdmig_load_be32(out + 28), 0);
	}
}

TEST(roundtrip_all_ones_bytes)
{
	/* Decoding all-ones bytes gives all-ones fields; re-encoding gives the
	 * same bytes except the padding words, which are always sent as 0. */
	uint8_t ff[32], out[32], want[32];
	struct rdmig_register r;
	struct rdmig_register_result rr;
	struct rdmig_compress c;
	struct rdmig_dest_block b;

	memset(ff, 0xff, sizeof(ff));
	rdmig_decode_register(ff, &r);
	CHECK(r.key == UINT64_MAX && r.block_index == UINT32_MAX && r.chunks == UINT64_MAX);
	rdmig_encode_register(&r, out);
	memcpy(want, ff, 24);
	memset(want + 12, 0, 4);
	CHECK_MEM_EQ(out, want, 24);

	rdmig_decode_register_result(ff, &rr);
	CHECK(rr.rkey == UINT32_MAX && rr.host_addr == UINT64_MAX);
	rdmig_encode_register_result(&rr, out);
	memcpy(want, ff, 16);
	memset(want + 4, 0, 4);
	CHECK_MEM_EQ(out, want, 16);

	rdmig_decode_compress(ff, &c);
	CHECK(c.value == UINT32_MAX && c.block_index == UINT32_MAX && c.offset == UINT64_MAX &&
	      c.length == UINT64_MAX);
	rdmig_encode_compress(&c, out);
	CHECK_MEM_EQ(out, ff, 24);

	rdmig_decode_dest_block(ff, &b);
	CHECK(b.remote_host_addr == UINT64_MAX && b.offset == UINT64_MAX &&
	      b.length == UINT64_MAX && b.remote_rkey == UINT32_MAX);
	rdmig_encode_dest_block(&b, out);
	memcpy(want, ff, 32);
	memset(want + 28, 0, 4);
	CHECK_MEM_EQ(out, want, 32);
}

/* ---------------------------------------------------------- type names -- */

TEST(msg_type_names)
{
	static const char *const names[RDMIG_MSG_TYPE_COUNT] = {
		"NONE", "ERROR", "READY", "QEMU_FILE", "RAM_BLOCKS_REQUEST", "RAM_BLOCKS_RESULT",
		"COMPRESS", "REGISTER_REQUEST", "REGISTER_RESULT", "REGISTER_FINISHED",
		"UNREGISTER_REQUEST", "UNREGISTER_FINISHED",
	};

	for (uint32_t t = 0; t < RDMIG_MSG_TYPE_COUNT; t++)
		CHECK(strcmp(rdmig_msg_type_name(t), names[t]) == 0);
	CHECK(strcmp(rdmig_msg_type_name(RDMIG_MSG_TYPE_COUNT), "?") == 0);
	CHECK(strcmp(rdmig_msg_type_name(0x80000000u), "?") == 0);
	CHECK(strcmp(rdmig_msg_type_name(UINT32_MAX), "?") == 0);
}

TEST(wire_record_sizes)
{
	CHECK_EQ(rdmig__wire_record_size(RDMIG_MSG_REGISTER_REQUEST), 24);
	CHECK_EQ(rdmig__wire_record_size(RDMIG_MSG_UNREGISTER_REQUEST), 24);
	CHECK_EQ(rdmig__wire_record_size(RDMIG_MSG_COMPRESS), 24);
	CHECK_EQ(rdmig__wire_record_size(RDMIG_MSG_REGISTER_RESULT), 16);
	CHECK_EQ(rdmig__wire_record_size(RDMIG_MSG_RAM_BLOCKS_RESULT), 32);
	CHECK_EQ(rdmig__wire_record_size(RDMIG_MSG_QEMU_FILE), 0);
	CHECK_EQ(rdmig__wire_record_size(RDMIG_MSG_READY), 0);
	CHECK_EQ(rdmig__wire_record_size(UINT32_MAX), 0);
}

/* ------------------------------------------------- parse: acceptance -- */

TEST(parse_accepts_every_type)
{
	/* What QEMU sends for each type (repeat 1; UNREGISTER_FINISHED 0). */
	check_accept_hdr(0, RDMIG_MSG_READY, 1, RDMIG_MSG_READY);
	check_accept_hdr(100, RDMIG_MSG_QEMU_FILE, 1, RDMIG_MSG_QEMU_FILE);
	check_accept_hdr(0, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, RDMIG_MSG_NONE);
	check_accept_hdr(5 * 32, RDMIG_MSG_RAM_BLOCKS_RESULT, 1, RDMIG_MSG_RAM_BLOCKS_RESULT);
	check_accept_hdr(24, RDMIG_MSG_COMPRESS, 1, RDMIG_MSG_NONE);
	check_accept_hdr(24, RDMIG_MSG_REGISTER_REQUEST, 1, RDMIG_MSG_NONE);
	check_accept_hdr(16, RDMIG_MSG_REGISTER_RESULT, 1, RDMIG_MSG_REGISTER_RESULT);
	check_accept_hdr(0, RDMIG_MSG_REGISTER_FINISHED, 1, RDMIG_MSG_NONE);
	check_accept_hdr(24, RDMIG_MSG_UNREGISTER_REQUEST, 1, RDMIG_MSG_NONE);
	check_accept_hdr(0, RDMIG_MSG_UNREGISTER_FINISHED, 0, RDMIG_MSG_UNREGISTER_FINISHED);
}

TEST(parse_accepts_many_records)
{
	check_accept_hdr(4096 * 24, RDMIG_MSG_REGISTER_REQUEST, 4096, RDMIG_MSG_NONE);
	check_accept_hdr(2 * 24, RDMIG_MSG_UNREGISTER_REQUEST, 2, RDMIG_MSG_NONE);
	check_accept_hdr(3 * 16, RDMIG_MSG_REGISTER_RESULT, 3, RDMIG_MSG_NONE);
	check_accept_hdr(2 * 24, RDMIG_MSG_COMPRESS, 2, RDMIG_MSG_NONE);
}

TEST(parse_accepts_ram_blocks_result_counts)
{
	/* The block count comes from len; repeat is not a count here. */
	check_accept_hdr(0, RDMIG_MSG_RAM_BLOCKS_RESULT, 0, RDMIG_MSG_NONE);
	check_accept_hdr(0, RDMIG_MSG_RAM_BLOCKS_RESULT, 1, RDMIG_MSG_NONE);
	check_accept_hdr(32, RDMIG_MSG_RAM_BLOCKS_RESULT, 1, RDMIG_MSG_NONE);
	check_accept_hdr(3 * 32, RDMIG_MSG_RAM_BLOCKS_RESULT, 3, RDMIG_MSG_NONE);
	check_accept_hdr(RDMIG_MAX_LEN - RDMIG_MAX_LEN % 32, RDMIG_MSG_RAM_BLOCKS_RESULT, 1,
			 RDMIG_MSG_NONE);
}

TEST(parse_accepts_qemu_file_any_len_and_repeat)
{
	check_accept_hdr(0, RDMIG_MSG_QEMU_FILE, 0, RDMIG_MSG_NONE);
	check_accept_hdr(1, RDMIG_MSG_QEMU_FILE, 1, RDMIG_MSG_NONE);
	check_accept_hdr(RDMIG_MAX_STREAM_CHUNK, RDMIG_MSG_QEMU_FILE, 7, RDMIG_MSG_NONE);
	check_accept_hdr(12345, RDMIG_MSG_QEMU_FILE, RDMIG_MAX_REPEAT, RDMIG_MSG_QEMU_FILE);
}

TEST(parse_accepts_len_at_limit)
{
	check_accept_hdr(RDMIG_MAX_LEN, RDMIG_MSG_QEMU_FILE, 1, RDMIG_MSG_QEMU_FILE);
}

TEST(parse_success_clears_why)
{
	uint8_t msg[RDMIG_HEADER_SIZE];
	const struct rdmig_header h = {0, RDMIG_MSG_READY, 1};
	struct rdmig_msg m;
	char why[16] = "old junk";

	rdmig_encode_header(&h, msg);
	CHECK_OK(rdmig_msg_parse(msg, sizeof(msg), RDMIG_MSG_READY, &m, why, sizeof(why)));
	CHECK_EQ(why[0], '\0');
	CHECK_OK(rdmig_msg_parse(msg, sizeof(msg), RDMIG_MSG_READY, &m, NULL, 0));
	CHECK(m.payload == msg + RDMIG_HEADER_SIZE);
}

/* --------------------------------------------------- parse: rejection -- */

TEST(parse_rejects_short)
{
	const size_t sizes[] = {0, 1, 12, 15};

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint8_t *buf = heap_msg(0, RDMIG_MSG_READY, 1, sizes[i]);
		char val[32];

		snprintf(val, sizeof(val), "size %zu", sizes[i]);
		check_reject(buf, sizes[i], RDMIG_MSG_NONE, RDMIG_EMSG_SHORT, val, "16");
		free(buf);
		if (check_failed)
			return;
	}
	/* Nothing to read at all: not even the pointer is used. */
	check_reject(NULL, 0, RDMIG_MSG_NONE, RDMIG_EMSG_SHORT, "size 0", "header");
}

TEST(parse_rejects_len_over_limit)
{
	/* Even with a matching size, a len past the control buffer is refused. */
	check_reject_hdr(RDMIG_MAX_LEN + 1, RDMIG_MSG_QEMU_FILE, 1, RDMIG_CONTROL_BUFFER + 1,
			 RDMIG_MSG_NONE, RDMIG_EMSG_LEN, "header len 524273", "limit 524272");
	if (check_failed)
		return;
	check_reject_hdr(600000, RDMIG_MSG_QEMU_FILE, 1, 16, RDMIG_MSG_NONE, RDMIG_EMSG_LEN,
			 "header len 600000 exceeds the limit 524272", "");
	if (check_failed)
		return;
	/* 16 + len would wrap a 32-bit sum here. */
	check_reject_hdr(UINT32_MAX, RDMIG_MSG_QEMU_FILE, 1, 16, RDMIG_MSG_NONE, RDMIG_EMSG_LEN,
			 "header len 4294967295", "524272");
}

TEST(parse_rejects_size_bigger)
{
	check_reject_hdr(0, RDMIG_MSG_READY, 1, 17, RDMIG_MSG_NONE, RDMIG_EMSG_SIZE, "size 17",
			 "len 0");
	if (check_failed)
		return;
	check_reject_hdr(24, RDMIG_MSG_REGISTER_REQUEST, 1, 41, RDMIG_MSG_NONE, RDMIG_EMSG_SIZE,
			 "size 41", "len 24");
}

TEST(parse_rejects_size_smaller)
{
	check_reject_hdr(24, RDMIG_MSG_REGISTER_REQUEST, 1, 39, RDMIG_MSG_NONE, RDMIG_EMSG_SIZE,
			 "size 39", "len 24");
	if (check_failed)
		return;
	/* A header alone that announces a payload. */
	check_reject_hdr(RDMIG_MAX_LEN, RDMIG_MSG_QEMU_FILE, 1, 16, RDMIG_MSG_NONE,
			 RDMIG_EMSG_SIZE, "size 16", "len 524272");
}

TEST(parse_rejects_type_zero)
{
	check_reject_hdr(0, 0, 1, 16, RDMIG_MSG_NONE, RDMIG_EMSG_TYPE, "header type 0", "known");
}

TEST(parse_rejects_type_twelve)
{
	check_reject_hdr(0, 12, 1, 16, RDMIG_MSG_NONE, RDMIG_EMSG_TYPE, "header type 12", "known");
}

TEST(parse_rejects_type_all_ones)
{
	check_reject_hdr(0, UINT32_MAX, 1, 16, RDMIG_MSG_NONE, RDMIG_EMSG_TYPE,
			 "header type 4294967295", "known");
}

TEST(parse_error_is_epeer_whatever_expected)
{
	const uint32_t expects[] = {RDMIG_MSG_NONE, RDMIG_MSG_ERROR, RDMIG_MSG_READY,
				    RDMIG_MSG_QEMU_FILE, RDMIG_MSG_REGISTER_RESULT};

	for (size_t i = 0; i < ARRAY_SIZE(expects); i++) {
		check_reject_hdr(0, RDMIG_MSG_ERROR, 1, 16, expects[i], RDMIG_EPEER, "type 1",
				 "ERROR");
		if (check_failed)
			return;
	}
	/* Its repeat and len are not held against it: the peer is gone anyway. */
	check_reject_hdr(8, RDMIG_MSG_ERROR, 99999, 24, RDMIG_MSG_NONE, RDMIG_EPEER, "ERROR", "");
}

TEST(parse_rejects_repeat_over_limit)
{
	check_reject_hdr(10, RDMIG_MSG_QEMU_FILE, RDMIG_MAX_REPEAT + 1, 26, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT, "header repeat 4097", "4096");
	if (check_failed)
		return;
	/* Consistent with len, but still too many records. */
	check_reject_hdr(4097 * 24, RDMIG_MSG_REGISTER_REQUEST, 4097, 16 + 4097 * 24,
			 RDMIG_MSG_NONE, RDMIG_EMSG_REPEAT, "header repeat 4097", "4096");
	if (check_failed)
		return;
	check_reject_hdr(0, RDMIG_MSG_READY, UINT32_MAX, 16, RDMIG_MSG_NONE, RDMIG_EMSG_REPEAT,
			 "header repeat 4294967295", "4096");
}

TEST(parse_rejects_register_request_repeat_len)
{
	/* repeat 0, a len that is not repeat * 24, and vice versa. */
	check_reject_hdr(0, RDMIG_MSG_REGISTER_REQUEST, 0, 16, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "repeat 0", "REGISTER_REQUEST");
	if (check_failed)
		return;
	check_reject_hdr(24, RDMIG_MSG_REGISTER_REQUEST, 0, 40, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "repeat 0 and len 24", "REGISTER_REQUEST");
	if (check_failed)
		return;
	check_reject_hdr(48, RDMIG_MSG_REGISTER_REQUEST, 1, 64, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "repeat 1 and len 48", "* 24");
	if (check_failed)
		return;
	check_reject_hdr(24, RDMIG_MSG_REGISTER_REQUEST, 2, 40, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "repeat 2 and len 24", "REGISTER_REQUEST");
	if (check_failed)
		return;
	check_reject_hdr(25, RDMIG_MSG_REGISTER_REQUEST, 1, 41, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "len 25", "REGISTER_REQUEST");
}

TEST(parse_rejects_unregister_request_repeat_len)
{
	check_reject_hdr(0, RDMIG_MSG_UNREGISTER_REQUEST, 0, 16, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "repeat 0", "UNREGISTER_REQUEST");
	if (check_failed)
		return;
	check_reject_hdr(16, RDMIG_MSG_UNREGISTER_REQUEST, 1, 32, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "len 16", "UNREGISTER_REQUEST");
}

TEST(parse_rejects_register_result_repeat_len)
{
	check_reject_hdr(0, RDMIG_MSG_REGISTER_RESULT, 0, 16, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "repeat 0", "REGISTER_RESULT");
	if (check_failed)
		return;
	check_reject_hdr(24, RDMIG_MSG_REGISTER_RESULT, 1, 40, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "len 24", "* 16");
	if (check_failed)
		return;
	/* What QEMU's header would say for repeat 2 (len stays 16). */
	check_reject_hdr(16, RDMIG_MSG_REGISTER_RESULT, 2, 32, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "repeat 2 and len 16", "REGISTER_RESULT");
}

TEST(parse_rejects_compress_repeat_len)
{
	check_reject_hdr(24, RDMIG_MSG_COMPRESS, 0, 40, RDMIG_MSG_NONE, RDMIG_EMSG_REPEAT_LEN,
			 "repeat 0", "COMPRESS");
	if (check_failed)
		return;
	check_reject_hdr(16, RDMIG_MSG_COMPRESS, 1, 32, RDMIG_MSG_NONE, RDMIG_EMSG_REPEAT_LEN,
			 "len 16", "COMPRESS");
}

TEST(parse_rejects_ram_blocks_result_partial_block)
{
	check_reject_hdr(33, RDMIG_MSG_RAM_BLOCKS_RESULT, 1, 49, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "header len 33", "RAM_BLOCKS_RESULT");
	if (check_failed)
		return;
	check_reject_hdr(31, RDMIG_MSG_RAM_BLOCKS_RESULT, 0, 47, RDMIG_MSG_NONE,
			 RDMIG_EMSG_REPEAT_LEN, "header len 31", "DestBlock");
}

TEST(parse_rejects_header_only_with_payload)
{
	const uint32_t types[] = {RDMIG_MSG_READY, RDMIG_MSG_RAM_BLOCKS_REQUEST,
				  RDMIG_MSG_REGISTER_FINISHED, RDMIG_MSG_UNREGISTER_FINISHED};

	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		check_reject_hdr(1, types[i], 1, 17, RDMIG_MSG_NONE, RDMIG_EMSG_REPEAT_LEN,
				 "header len 1", rdmig_msg_type_name(types[i]));
		if (check_failed)
			return;
		check_reject_hdr(24, types[i], 1, 40, types[i], RDMIG_EMSG_REPEAT_LEN,
				 "header len 24", "must be 0");
		if (check_failed)
			return;
	}
}

TEST(parse_rejects_unexpected)
{
	check_reject_hdr(0, RDMIG_MSG_READY, 1, 16, RDMIG_MSG_QEMU_FILE, RDMIG_EMSG_UNEXPECTED,
			 "header type 2 (READY)", "expected 3 (QEMU_FILE)");
	if (check_failed)
		return;
	check_reject_hdr(24, RDMIG_MSG_REGISTER_REQUEST, 1, 40, RDMIG_MSG_REGISTER_RESULT,
			 RDMIG_EMSG_UNEXPECTED, "REGISTER_REQUEST", "expected 8 (REGISTER_RESULT)");
	if (check_failed)
		return;
	/* An out-of-range expect matches nothing. */
	check_reject_hdr(0, RDMIG_MSG_READY, 1, 16, 12, RDMIG_EMSG_UNEXPECTED, "READY",
			 "expected 12 (?)");
}

/* Each rule is applied in the documented order: the first failure wins. */
TEST(parse_rule_order)
{
	/* len over the limit beats a wrong size and an unknown type. */
	check_reject_hdr(RDMIG_MAX_LEN + 1, 0, 5000, 16, RDMIG_MSG_READY, RDMIG_EMSG_LEN, "len", "");
	if (check_failed)
		return;
	/* size beats an unknown type. */
	check_reject_hdr(4, 0, 5000, 16, RDMIG_MSG_READY, RDMIG_EMSG_SIZE, "size", "");
	if (check_failed)
		return;
	/* an unknown type beats a repeat over the limit. */
	check_reject_hdr(0, 99, 5000, 16, RDMIG_MSG_READY, RDMIG_EMSG_TYPE, "type 99", "");
	if (check_failed)
		return;
	/* a malformed ERROR is still a size error... */
	check_reject_hdr(4, RDMIG_MSG_ERROR, 1, 16, RDMIG_MSG_NONE, RDMIG_EMSG_SIZE, "size", "");
	if (check_failed)
		return;
	/* ...but ERROR beats repeat, repeat/len and expect. */
	check_reject_hdr(0, RDMIG_MSG_ERROR, 5000, 16, RDMIG_MSG_READY, RDMIG_EPEER, "ERROR", "");
	if (check_failed)
		return;
	/* repeat over the limit beats repeat/len and expect. */
	check_reject_hdr(0, RDMIG_MSG_REGISTER_REQUEST, 5000, 16, RDMIG_MSG_READY,
			 RDMIG_EMSG_REPEAT, "repeat 5000", "");
	if (check_failed)
		return;
	/* repeat/len beats expect. */
	check_reject_hdr(8, RDMIG_MSG_READY, 1, 24, RDMIG_MSG_QEMU_FILE, RDMIG_EMSG_REPEAT_LEN,
			 "len 8", "");
}

TEST(parse_why_bounded)
{
	uint8_t msg[RDMIG_HEADER_SIZE];
	const struct rdmig_header h = {RDMIG_MAX_LEN + 1, RDMIG_MSG_QEMU_FILE, 1};
	struct rdmig_msg m;
	char why[16];

	rdmig_encode_header(&h, msg);
	/* why_len 0: not one byte written. */
	memset(why, '#', sizeof(why));
	CHECK_EQ(rdmig_msg_parse(msg, sizeof(msg), 0, &m, why, 0), RDMIG_EMSG_LEN);
	for (size_t i = 0; i < sizeof(why); i++)
		CHECK_EQ(why[i], '#');
	/* why_len 1: just the terminator. */
	CHECK_EQ(rdmig_msg_parse(msg, sizeof(msg), 0, &m, why, 1), RDMIG_EMSG_LEN);
	CHECK_EQ(why[0], '\0');
	CHECK_EQ(why[1], '#');
	/* why_len 8: truncated to 7 characters, terminated, nothing past it. */
	memset(why, '#', sizeof(why));
	CHECK_EQ(rdmig_msg_parse(msg, sizeof(msg), 0, &m, why, 8), RDMIG_EMSG_LEN);
	CHECK_EQ(strlen(why), 7);
	CHECK(strncmp(why, "header ", 7) == 0);
	for (size_t i = 8; i < sizeof(why); i++)
		CHECK_EQ(why[i], '#');
	/* The short path too. */
	memset(why, '#', sizeof(why));
	CHECK_EQ(rdmig_msg_parse(msg, 3, 0, &m, why, 4), RDMIG_EMSG_SHORT);
	CHECK_EQ(strlen(why), 3);
	CHECK_EQ(why[4], '#');
}

TEST(parse_reads_only_size_bytes)
{
	/* A valid message at the very end of an exact-size heap block, under
	 * ASan, with a size that claims less than the header says. */
	static const uint8_t reg[40] = {
		0, 0, 0, 0x18, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0,
	};
	struct rdmig_msg m;

	for (size_t size = 0; size <= sizeof(reg); size++) {
		uint8_t *buf = heap_copy(reg, size);
		int rc = rdmig_msg_parse(buf, size, RDMIG_MSG_NONE, &m, NULL, 0);

		free(buf);
		CHECK_EQ(rc, size < 16 ? RDMIG_EMSG_SHORT : size == 40 ? 0 : RDMIG_EMSG_SIZE);
	}
}

TEST(parse_null_arguments)
{
	uint8_t msg[RDMIG_HEADER_SIZE];
	const struct rdmig_header h = {0, RDMIG_MSG_READY, 1};
	char why[64];

	rdmig_encode_header(&h, msg);
	check_reject(NULL, 16, RDMIG_MSG_NONE, RDMIG_EINVAL, "NULL", "");
	if (check_failed)
		return;
	CHECK_EQ(rdmig_msg_parse(msg, sizeof(msg), RDMIG_MSG_NONE, NULL, why, sizeof(why)),
		 RDMIG_EINVAL);
}

/* The public chunk geometry and zero test (rdmig.h), as the engine uses them. */
TEST(chunk_geometry_counts_and_cuts_the_last_chunk)
{
	const uint64_t M = 1ull << 20;

	CHECK_EQ(rdmig_chunk_count(0, M), 0);
	CHECK_EQ(rdmig_chunk_count(1, M), 1);
	CHECK_EQ(rdmig_chunk_count(M, M), 1);
	CHECK_EQ(rdmig_chunk_count(M + 1, M), 2);
	CHECK_EQ(rdmig_chunk_count(64 * M, 32 * M), 2);
	CHECK_EQ(rdmig_chunk_len(3 * M + 5, 0, M), M);
	CHECK_EQ(rdmig_chunk_len(3 * M + 5, 3, M), 5);
	CHECK_EQ(rdmig_chunk_len(3 * M + 5, 4, M), 0);
	CHECK_EQ(rdmig_chunk_len(40 * M, 1, 32 * M), 8 * M);
	CHECK_EQ(rdmig_chunk_len(1ull << 40, (1ull << 10) - 1, 1ull << 30), 1ull << 30);
}

TEST(is_zero_finds_one_set_byte_anywhere)
{
	static uint8_t buf[4096 + 64];

	CHECK(rdmig_is_zero(buf, 0));
	CHECK(rdmig_is_zero(buf, sizeof(buf)));
	/* every position, at aligned and unaligned starts and lengths */
	for (size_t start = 0; start < 9; start++)
		for (size_t i = start; i < 300; i++) {
			buf[i] = 0x80;
			CHECK(!rdmig_is_zero(buf + start, 300 - start));
			CHECK(rdmig_is_zero(buf + start, i - start));
			buf[i] = 0;
		}
	buf[sizeof(buf) - 1] = 1;
	CHECK(!rdmig_is_zero(buf, sizeof(buf)));
	CHECK(rdmig_is_zero(buf, sizeof(buf) - 1));
	buf[sizeof(buf) - 1] = 0;
}

CHECK_MAIN()
