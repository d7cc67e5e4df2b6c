/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_wire.c - libFuzzer target for rdmig_msg_parse and the record codecs.
 *
 * The input is one received control message.  It is parsed with every expect
 * value 0..12; the answers must agree with each other (expect only adds the
 * "unexpected" rule), a rejection must leave a bounded, terminated `why`,
 * and an accepted message must satisfy everything parse promises.  Every
 * record of an accepted payload is then decoded and re-encoded: the bytes
 * must come back unchanged except padding, which is always sent as 0.
 * Any violation aborts, which libFuzzer reports as a crash.
 *
 * Only the public header is used: this is what a peer's bytes meet.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdmig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "fuzz_wire: " __VA_ARGS__);                                        \
		fputc('\n', stderr);                                                               \
		abort();                                                                           \
	} while (0)

#define WHY_MAX 128
#define GUARD 0x5a

/* ---------------------------------------------------- record round trips -- */

/* out == in except that out's padding word at pad (if pad >= 0) is zero. */
static void check_bytes(const char *what, const uint8_t *in, const uint8_t *out, size_t n, int pad)
{
	for (size_t i = 0; i < n; i++) {
		bool in_pad = pad >= 0 && i >= (size_t)pad && i < (size_t)pad + 4;
		uint8_t want = in_pad ? 0 : in[i];

		if (out[i] != want)
			FAIL("%s: byte %zu re-encoded as 0x%02x, want 0x%02x", what, i, out[i], want);
	}
}

static void roundtrip_register(const uint8_t *in)
{
	struct rdmig_register a, b;
	uint8_t out[RDMIG_REGISTER_SIZE];

	rdmig_decode_register(in, &a);
	rdmig_encode_register(&a, out);
	check_bytes("Register", in, out, sizeof(out), 12);
	rdmig_decode_register(out, &b);
	if (a.key != b.key || a.block_index != b.block_index || a.chunks != b.chunks)
		FAIL("Register: decode(encode(x)) != x");
}

static void roundtrip_register_result(const uint8_t *in)
{
	struct rdmig_register_result a, b;
	uint8_t out[RDMIG_REGISTER_RESULT_SIZE];

	rdmig_decode_register_result(in, &a);
	rdmig_encode_register_result(&a, out);
	check_bytes("RegisterResult", in, out, sizeof(out), 4);
	rdmig_decode_register_result(out, &b);
	if (a.rkey != b.rkey || a.host_addr != b.host_addr)
		FAIL("RegisterResult: decode(encode(x)) != x");
}

static void roundtrip_compress(const uint8_t *in)
{
	struct rdmig_compress a, b;
	uint8_t out[RDMIG_COMPRESS_SIZE];

	rdmig_decode_compress(in, &a);
	rdmig_encode_compress(&a, out);
	check_bytes("Compress", in, out, sizeof(out), -1);
	rdmig_decode_compress(out, &b);
	if (a.value != b.value || a.block_index != b.block_index || a.offset != b.offset ||
	    a.length != b.length)
		FAIL("Compress: decode(encode(x)) != x");
}

static void roundtrip_dest_block(const uint8_t *in)
{
	struct rdmig_dest_block a, b;
	uint8_t out[RDMIG_DEST_BLOCK_SIZE];

	rdmig_decode_dest_block(in, &a);
	rdmig_encode_dest_block(&a, out);
	check_bytes("DestBlock", in, out, sizeof(out), 28);
	rdmig_decode_dest_block(out, &b);
	if (a.remote_host_addr != b.remote_host_addr || a.offset != b.offset ||
	    a.length != b.length || a.remote_rkey != b.remote_rkey)
		FAIL("DestBlock: decode(encode(x)) != x");
}

static void roundtrip_header(const uint8_t *in)
{
	struct rdmig_header a, b;
	uint8_t out[RDMIG_HEADER_SIZE];

	rdmig_decode_header(in, &a);
	rdmig_encode_header(&a, out);
	check_bytes("header", in, out, sizeof(out), 12);
	rdmig_decode_header(out, &b);
	if (a.len != b.len || a.type != b.type || a.repeat != b.repeat)
		FAIL("header: decode(encode(x)) != x");
}

/* Decode and re-encode every record of an accepted message's payload. */
static void roundtrip_records(const struct rdmig_msg *m)
{
	const uint8_t *p = m->payload;
	size_t rec = 0, count = 0;
	void (*roundtrip)(const uint8_t *) = NULL;

	switch (m->type) {
	case RDMIG_MSG_REGISTER_REQUEST:
	case RDMIG_MSG_UNREGISTER_REQUEST:
		rec = RDMIG_REGISTER_SIZE, count = m->repeat, roundtrip = roundtrip_register;
		break;
	case RDMIG_MSG_REGISTER_RESULT:
		rec = RDMIG_REGISTER_RESULT_SIZE, count = m->repeat;
		roundtrip = roundtrip_register_result;
		break;
	case RDMIG_MSG_COMPRESS:
		rec = RDMIG_COMPRESS_SIZE, count = m->repeat, roundtrip = roundtrip_compress;
		break;
	case RDMIG_MSG_RAM_BLOCKS_RESULT:
		/* The block count is len / 32 (QEMU sends repeat 1). */
		rec = RDMIG_DEST_BLOCK_SIZE, count = m->len / RDMIG_DEST_BLOCK_SIZE;
		roundtrip = roundtrip_dest_block;
		break;
	case RDMIG_MSG_QEMU_FILE:
		return; /* opaque stream bytes */
	default:
		if (m->len != 0)
			FAIL("%s accepted with len %u", rdmig_msg_type_name(m->type), m->len);
		return;
	}
	if ((uint64_t)rec * count != m->len)
		FAIL("%s accepted with repeat %u and len %u", rdmig_msg_type_name(m->type), m->repeat,
		     m->len);
	for (size_t i = 0; i < count; i++)
		roundtrip(p + i * rec);
}

/* -------------------------------------------------------------- parsing -- */

static bool is_parse_error(int rc)
{
	return rc == RDMIG_EMSG_SHORT || rc == RDMIG_EMSG_LEN || rc == RDMIG_EMSG_SIZE ||
	       rc == RDMIG_EMSG_TYPE || rc == RDMIG_EPEER || rc == RDMIG_EMSG_REPEAT ||
	       rc == RDMIG_EMSG_REPEAT_LEN || rc == RDMIG_EMSG_UNEXPECTED;
}

/* Parse with a why buffer of why_len bytes inside a guarded array. */
static int parse(const uint8_t *data, size_t size, uint32_t expect, struct rdmig_msg *m,
		 size_t why_len)
{
	char why[WHY_MAX + 8];
	int rc;

	memset(why, GUARD, sizeof(why));
	rc = rdmig_msg_parse(data, size, expect, m, why, why_len);
	for (size_t i = why_len; i < sizeof(why); i++)
		if ((unsigned char)why[i] != GUARD)
			FAIL("why written at byte %zu with why_len %zu", i, why_len);
	if (why_len > 0 && !memchr(why, '\0', why_len))
		FAIL("why not terminated within why_len %zu", why_len);
	if (rc != 0 && why_len > 1 && why[0] == '\0')
		FAIL("rejected (%s) without a reason", rdmig_err_name(rc));
	if (rc != rdmig_msg_parse(data, size, expect, m, NULL, 0))
		FAIL("the result depends on why");
	return rc;
}

static void check_accepted(const uint8_t *data, size_t size, uint32_t expect,
			   const struct rdmig_msg *m)
{
	if ((uint64_t)size != (uint64_t)RDMIG_HEADER_SIZE + m->len || m->len > RDMIG_MAX_LEN)
		FAIL("accepted size %zu with len %u", size, m->len);
	if (m->payload != data + RDMIG_HEADER_SIZE)
		FAIL("payload does not follow the header");
	if (m->type <= RDMIG_MSG_ERROR || m->type >= RDMIG_MSG_TYPE_COUNT)
		FAIL("accepted type %u", m->type);
	if (m->repeat > RDMIG_MAX_REPEAT)
		FAIL("accepted repeat %u", m->repeat);
	if (expect != RDMIG_MSG_NONE && m->type != expect)
		FAIL("accepted type %u while expecting %u", m->type, expect);
	if (strcmp(rdmig_msg_type_name(m->type), "?") == 0)
		FAIL("type %u has no name", m->type);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdmig_msg any, m;
	size_t why_len = (size * 7) % (WHY_MAX + 1);
	int rc_any = parse(data, size, RDMIG_MSG_NONE, &any, why_len);

	if (!is_parse_error(rc_any) && rc_any != 0)
		FAIL("parse returned %d (%s)", rc_any, rdmig_err_name(rc_any));
	for (uint32_t expect = 0; expect <= RDMIG_MSG_TYPE_COUNT; expect++) {
		int rc = parse(data, size, expect, &m, why_len);
		int want = rc_any;

		/* Expecting a type only adds the last rule. */
		if (rc_any == 0 && expect != RDMIG_MSG_NONE && any.type != expect)
			want = RDMIG_EMSG_UNEXPECTED;
		if (rc != want)
			FAIL("expect %u: %s, but %s with expect NONE", expect, rdmig_err_name(rc),
			     rdmig_err_name(rc_any));
		if (rc == 0)
			check_accepted(data, size, expect, &m);
	}
	if (size >= RDMIG_HEADER_SIZE)
		roundtrip_header(data);
	if (rc_any == 0)
		roundtrip_records(&any);
	return 0;
}
