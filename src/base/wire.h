/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wire.h - internal view of the wire format (the protocol is described in
 * shared/docs/protocol.md, and where QEMU differs from it in docs/design.md).
 *
 * The public encode/decode functions in rdmig.h convert between host-order
 * structs and wire bytes.  This header holds what the rest of the library
 * (and the tests) may need besides: the byte-order helpers and the wire
 * layouts.
 *
 * The wire structs are made only of byte arrays, so they have alignment 1
 * and no padding on any ABI: they are "packed" without a compiler
 * attribute.  They are never overlaid on a buffer; the code takes field
 * positions from them with offsetof() and reads and writes bytes, so there
 * are no unaligned or type-punned accesses.
 */
#ifndef RDMIG_WIRE_H
#define RDMIG_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "rdmig.h"

/* ------------------------------------------------ byte-order helpers -- */

static inline uint32_t rdmig_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void rdmig_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* QEMU sends a u64 as two big-endian halves, high first: plain big-endian. */
static inline uint64_t rdmig_load_be64(const uint8_t *p)
{
	return (uint64_t)rdmig_load_be32(p) << 32 | rdmig_load_be32(p + 4);
}

static inline void rdmig_store_be64(uint8_t *p, uint64_t v)
{
	rdmig_store_be32(p, (uint32_t)(v >> 32));
	rdmig_store_be32(p + 4, (uint32_t)v);
}

/* ------------------------------------------------------- wire layouts -- */

struct rdmig_wire_header {
	uint8_t len[4];
	uint8_t type[4];
	uint8_t repeat[4];
	uint8_t padding[4];
};

struct rdmig_wire_caps {
	uint8_t version[4];
	uint8_t flags[4];
};

struct rdmig_wire_register {
	uint8_t key[8];
	uint8_t block_index[4];
	uint8_t padding[4];
	uint8_t chunks[8];
};

struct rdmig_wire_register_result {
	uint8_t rkey[4];
	uint8_t padding[4];
	uint8_t host_addr[8];
};

struct rdmig_wire_compress {
	uint8_t value[4];
	uint8_t block_index[4];
	uint8_t offset[8];
	uint8_t length[8];
};

struct rdmig_wire_dest_block {
	uint8_t remote_host_addr[8];
	uint8_t offset[8];
	uint8_t length[8];
	uint8_t remote_rkey[4];
	uint8_t padding[4];
};

/* The sizes are the protocol's; a layout that drifts must not compile. */
_Static_assert(sizeof(struct rdmig_wire_header) == RDMIG_HEADER_SIZE, "header is 16 bytes");
_Static_assert(sizeof(struct rdmig_wire_caps) == RDMIG_CAPS_SIZE, "caps are 8 bytes");
_Static_assert(sizeof(struct rdmig_wire_register) == RDMIG_REGISTER_SIZE, "Register is 24 bytes");
_Static_assert(sizeof(struct rdmig_wire_register_result) == RDMIG_REGISTER_RESULT_SIZE,
	       "RegisterResult is 16 bytes");
_Static_assert(sizeof(struct rdmig_wire_compress) == RDMIG_COMPRESS_SIZE, "Compress is 24 bytes");
_Static_assert(sizeof(struct rdmig_wire_dest_block) == RDMIG_DEST_BLOCK_SIZE,
	       "DestBlock is 32 bytes");
/* The offsets that the protocol document names explicitly. */
_Static_assert(offsetof(struct rdmig_wire_header, repeat) == 8, "header repeat at 8");
_Static_assert(offsetof(struct rdmig_wire_register, chunks) == 16, "Register chunks at 16");
_Static_assert(offsetof(struct rdmig_wire_dest_block, remote_rkey) == 24, "DestBlock rkey at 24");

/*
 * The size of one payload record of a message type: 24 for REGISTER_REQUEST,
 * UNREGISTER_REQUEST and COMPRESS, 16 for REGISTER_RESULT, 32 for
 * RAM_BLOCKS_RESULT, 0 for types without records.
 */
uint32_t rdmig__wire_record_size(uint32_t type);

#endif /* RDMIG_WIRE_H */
