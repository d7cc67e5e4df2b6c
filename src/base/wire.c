/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wire.c - the wire format: record encoders/decoders and the validation of
 * a received control message (docs/protocol.md, "Control messages").
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "wire.h"

/* The position of a field inside a wire buffer, taken from the layout. */
#define AT(buf, rec, field) ((buf) + offsetof(struct rdmig_wire_##rec, field))

/* ------------------------------------------------------------ records -- */

void rdmig_encode_header(const struct rdmig_header *h, uint8_t out[RDMIG_HEADER_SIZE])
{
	rdmig_store_be32(AT(out, header, len), h->len);
	rdmig_store_be32(AT(out, header, type), h->type);
	rdmig_store_be32(AT(out, header, repeat), h->repeat);
	rdmig_store_be32(AT(out, header, padding), 0);
}

/* padding is ignored on receipt: QEMU never converts it. */
void rdmig_decode_header(const uint8_t in[RDMIG_HEADER_SIZE], struct rdmig_header *h)
{
	h->len = rdmig_load_be32(AT(in, header, len));
	h->type = rdmig_load_be32(AT(in, header, type));
	h->repeat = rdmig_load_be32(AT(in, header, repeat));
}

void rdmig_encode_caps(const struct rdmig_caps *c, uint8_t out[RDMIG_CAPS_SIZE])
{
	rdmig_store_be32(AT(out, caps, version), c->version);
	rdmig_store_be32(AT(out, caps, flags), c->flags);
}

void rdmig_decode_caps(const uint8_t in[RDMIG_CAPS_SIZE], struct rdmig_caps *c)
{
	c->version = rdmig_load_be32(AT(in, caps, version));
	c->flags = rdmig_load_be32(AT(in, caps, flags));
}

void rdmig_encode_register(const struct rdmig_register *r, uint8_t out[RDMIG_REGISTER_SIZE])
{
	rdmig_store_be64(AT(out, register, key), r->key);
	rdmig_store_be32(AT(out, register, block_index), r->block_index);
	rdmig_store_be32(AT(out, register, padding), 0);
	rdmig_store_be64(AT(out, register, chunks), r->chunks);
}

void rdmig_decode_register(const uint8_t in[RDMIG_REGISTER_SIZE], struct rdmig_register *r)
{
	r->key = rdmig_load_be64(AT(in, register, key));
	r->block_index = rdmig_load_be32(AT(in, register, block_index));
	r->chunks = rdmig_load_be64(AT(in, register, chunks));
}

void rdmig_encode_register_result(const struct rdmig_register_result *r,
				  uint8_t out[RDMIG_REGISTER_RESULT_SIZE])
{
	rdmig_store_be32(AT(out, register_result, rkey), r->rkey);
	rdmig_store_be32(AT(out, register_result, padding), 0);
	rdmig_store_be64(AT(out, register_result, host_addr), r->host_addr);
}

void rdmig_decode_register_result(const uint8_t in[RDMIG_REGISTER_RESULT_SIZE],
				  struct rdmig_register_result *r)
{
	r->rkey = rdmig_load_be32(AT(in, register_result, rkey));
	r->host_addr = rdmig_load_be64(AT(in, register_result, host_addr));
}

void rdmig_encode_compress(const struct rdmig_compress *c, uint8_t out[RDMIG_COMPRESS_SIZE])
{
	rdmig_store_be32(AT(out, compress, value), c->value);
	rdmig_store_be32(AT(out, compress, block_index), c->block_index);
	rdmig_store_be64(AT(out, compress, offset), c->offset);
	rdmig_store_be64(AT(out, compress, length), c->length);
}

void rdmig_decode_compress(const uint8_t in[RDMIG_COMPRESS_SIZE], struct rdmig_compress *c)
{
	c->value = rdmig_load_be32(AT(in, compress, value));
	c->block_index = rdmig_load_be32(AT(in, compress, block_index));
	c->offset = rdmig_load_be64(AT(in, compress, offset));
	c->length = rdmig_load_be64(AT(in, compress, length));
}

void rdmig_encode_dest_block(const struct rdmig_dest_block *b, uint8_t out[RDMIG_DEST_BLOCK_SIZE])
{
	rdmig_store_be64(AT(out, dest_block, remote_host_addr), b->remote_host_addr);
	rdmig_store_be64(AT(out, dest_block, offset), b->offset);
	rdmig_store_be64(AT(out, dest_block, length), b->length);
	rdmig_store_be32(AT(out, dest_block, remote_rkey), b->remote_rkey);
	rdmig_store_be32(AT(out, dest_block, padding), 0);
}

void rdmig_decode_dest_block(const uint8_t in[RDMIG_DEST_BLOCK_SIZE], struct rdmig_dest_block *b)
{
	b->remote_host_addr = rdmig_load_be64(AT(in, dest_block, remote_host_addr));
	b->offset = rdmig_load_be64(AT(in, dest_block, offset));
	b->length = rdmig_load_be64(AT(in, dest_block, length));
	b->remote_rkey = rdmig_load_be32(AT(in, dest_block, remote_rkey));
}

/* -------------------------------------------------------------- types -- */

static const char *const msg_type_names[RDMIG_MSG_TYPE_COUNT] = {
	[RDMIG_MSG_NONE] = "NONE",
	[RDMIG_MSG_ERROR] = "ERROR",
	[RDMIG_MSG_READY] = "READY",
	[RDMIG_MSG_QEMU_FILE] = "QEMU_FILE",
	[RDMIG_MSG_RAM_BLOCKS_REQUEST] = "RAM_BLOCKS_REQUEST",
	[RDMIG_MSG_RAM_BLOCKS_RESULT] = "RAM_BLOCKS_RESULT",
	[RDMIG_MSG_COMPRESS] = "COMPRESS",
	[RDMIG_MSG_REGISTER_REQUEST] = "REGISTER_REQUEST",
	[RDMIG_MSG_REGISTER_RESULT] = "REGISTER_RESULT",
	[RDMIG_MSG_REGISTER_FINISHED] = "REGISTER_FINISHED",
	[RDMIG_MSG_UNREGISTER_REQUEST] = "UNREGISTER_REQUEST",
	[RDMIG_MSG_UNREGISTER_FINISHED] = "UNREGISTER_FINISHED",
};

const char *rdmig_msg_type_name(uint32_t type)
{
	return type < RDMIG_MSG_TYPE_COUNT ? msg_type_names[type] : "?";
}

uint32_t rdmig__wire_record_size(uint32_t type)
{
	switch (type) {
	case RDMIG_MSG_REGISTER_REQUEST:
	case RDMIG_MSG_UNREGISTER_REQUEST:
		return RDMIG_REGISTER_SIZE;
	case RDMIG_MSG_COMPRESS:
		return RDMIG_COMPRESS_SIZE;
	case RDMIG_MSG_REGISTER_RESULT:
		return RDMIG_REGISTER_RESULT_SIZE;
	case RDMIG_MSG_RAM_BLOCKS_RESULT:
		return RDMIG_DEST_BLOCK_SIZE;
	default:
		return 0;
	}
}

/* ---------------------------------------------------------- validation -- */

/* Explain a rejection into why (when given) and return its code. */
__attribute__((format(printf, 4, 5))) static int reject(char *why, size_t why_len, int code,
							 const char *fmt, ...)
{
	va_list ap;

	if (why && why_len > 0) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* The checks that need only the header and the received byte count. */
static int check_size(const struct rdmig_header *h, size_t size, char *why, size_t why_len)
{
	/* Checked first so that 16 + len below cannot wrap, and because a
	 * len past the control buffer cannot describe a real message. */
	if (h->len > RDMIG_MAX_LEN)
		return reject(why, why_len, RDMIG_EMSG_LEN, "header len %" PRIu32
			      " exceeds the limit %u", h->len, RDMIG_MAX_LEN);
	if ((uint64_t)size != (uint64_t)RDMIG_HEADER_SIZE + h->len)
		return reject(why, why_len, RDMIG_EMSG_SIZE, "message size %zu differs from 16 + header len %"
			      PRIu32 " = %" PRIu64, size, h->len, (uint64_t)RDMIG_HEADER_SIZE + h->len);
	return 0;
}

static int check_type(const struct rdmig_header *h, char *why, size_t why_len)
{
	/* NONE (0) only means "expect any" locally; it is never sent. */
	if (h->type == RDMIG_MSG_NONE || h->type >= RDMIG_MSG_TYPE_COUNT)
		return reject(why, why_len, RDMIG_EMSG_TYPE,
			      "header type %" PRIu32 " is not a known message type", h->type);
	/* ERROR aborts whatever we were waiting for, as in QEMU. */
	if (h->type == RDMIG_MSG_ERROR)
		return reject(why, why_len, RDMIG_EPEER,
			      "header type 1 (ERROR): the peer is aborting");
	return 0;
}

/* A typed payload must hold exactly repeat records (repeat >= 1). */
static int check_records(const struct rdmig_header *h, char *why, size_t why_len)
{
	uint64_t rec = rdmig__wire_record_size(h->type);

	if (h->repeat >= 1 && (uint64_t)h->repeat * rec == h->len)
		return 0;
	return reject(why, why_len, RDMIG_EMSG_REPEAT_LEN,
		      "header repeat %" PRIu32 " and len %" PRIu32 " do not fit %s: it needs"
		      " repeat >= 1 and len = repeat * %" PRIu64,
		      h->repeat, h->len, rdmig_msg_type_name(h->type), rec);
}

/*
 * repeat/len consistency per type.  These are exactly what QEMU 7.2+ sends
 * (repeat 1 with the matching len, len 0 for header-only types), so a real
 * peer always passes, while a payload that does not hold whole records is
 * caught here rather than misread later.
 *
 * RAM_BLOCKS_RESULT is the exception in form: QEMU sends it with repeat 1
 * and len = n * 32 for n blocks (its source computes n from len and never
 * looks at repeat), so tying len to repeat would reject every real reply
 * with more than one block.  Only whole DestBlocks are required; n may be 0.
 */
static int check_repeat_len(const struct rdmig_header *h, char *why, size_t why_len)
{
	switch (h->type) {
	case RDMIG_MSG_REGISTER_REQUEST:
	case RDMIG_MSG_UNREGISTER_REQUEST:
	case RDMIG_MSG_REGISTER_RESULT:
	case RDMIG_MSG_COMPRESS:
		return check_records(h, why, why_len);
	case RDMIG_MSG_RAM_BLOCKS_RESULT:
		if (h->len % RDMIG_DEST_BLOCK_SIZE == 0)
			return 0;
		return reject(why, why_len, RDMIG_EMSG_REPEAT_LEN,
			      "header len %" PRIu32 " of RAM_BLOCKS_RESULT (repeat %" PRIu32
			      ") is not a whole number of 32-byte DestBlocks", h->len, h->repeat);
	case RDMIG_MSG_READY:
	case RDMIG_MSG_RAM_BLOCKS_REQUEST:
	case RDMIG_MSG_REGISTER_FINISHED:
	case RDMIG_MSG_UNREGISTER_FINISHED:
		if (h->len == 0)
			return 0;
		return reject(why, why_len, RDMIG_EMSG_REPEAT_LEN,
			      "header len %" PRIu32 " of %s (repeat %" PRIu32 ") must be 0",
			      h->len, rdmig_msg_type_name(h->type), h->repeat);
	default: /* QEMU_FILE: opaque stream bytes, any len */
		return 0;
	}
}

static int check_header(const struct rdmig_header *h, size_t size, uint32_t expect, char *why,
			size_t why_len)
{
	int rc;

	if ((rc = check_size(h, size, why, why_len)) != 0)
		return rc;
	if ((rc = check_type(h, why, why_len)) != 0)
		return rc;
	if (h->repeat > RDMIG_MAX_REPEAT)
		return reject(why, why_len, RDMIG_EMSG_REPEAT, "header repeat %" PRIu32
			      " exceeds the limit %u", h->repeat, RDMIG_MAX_REPEAT);
	if ((rc = check_repeat_len(h, why, why_len)) != 0)
		return rc;
	if (expect != RDMIG_MSG_NONE && h->type != expect)
		return reject(why, why_len, RDMIG_EMSG_UNEXPECTED,
			      "header type %" PRIu32 " (%s) is not the expected %" PRIu32 " (%s)",
			      h->type, rdmig_msg_type_name(h->type), expect,
			      rdmig_msg_type_name(expect));
	return 0;
}

int rdmig_msg_parse(const void *buf, size_t size, uint32_t expect, struct rdmig_msg *out,
		    char *why, size_t why_len)
{
	const uint8_t *bytes = buf;
	struct rdmig_header h;
	int rc;

	if (why && why_len > 0)
		why[0] = '\0';
	/* Nothing beyond bytes[0..size) is read: the header only once
	 * size >= 16, the payload never (out->payload merely points at it). */
	if (size < RDMIG_HEADER_SIZE)
		return reject(why, why_len, RDMIG_EMSG_SHORT, "message size %zu is shorter than"
			      " the %u-byte header", size, RDMIG_HEADER_SIZE);
	if (!bytes || !out)
		return reject(why, why_len, RDMIG_EINVAL, "buf or out is NULL");
	rdmig_decode_header(bytes, &h);
	if ((rc = check_header(&h, size, expect, why, why_len)) != 0)
		return rc;
	out->type = h.type;
	out->repeat = h.repeat;
	out->len = h.len;
	out->payload = bytes + RDMIG_HEADER_SIZE;
	return 0;
}
