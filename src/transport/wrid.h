/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wrid.h - the layout of our work-request ids (local, not on the wire).
 *
 *    63                              32 31                 8 7        0
 *   +----------------------------------+--------------------+----------+
 *   |            chunk (32)            |    block (24)      | kind (8) |
 *   +----------------------------------+--------------------+----------+
 *
 * Control sends and receives use only the kind; RDMA writes (the migration
 * engine) carry their block and chunk so a failed write can be named.
 * Inline control sends and most writes are unsignaled (see send_queue.h).
 */
#ifndef RDMIG_WRID_H
#define RDMIG_WRID_H

#include <stdint.h>

enum wrid_kind {
	WRID_SEND_COPY = 1,   /* control send from SLOT_SEND */
	WRID_SEND_INLINE = 2, /* control send posted inline */
	WRID_RECV_READY = 3,  /* receive into SLOT_READY */
	WRID_RECV_DATA = 4,   /* receive into SLOT_DATA */
	WRID_WRITE = 5,       /* RDMA WRITE of migration data */
	WRID_FLUSH = 6,       /* zero-length signaled WRITE retiring unsignaled sends */
};

static inline uint64_t wrid_make(enum wrid_kind kind, uint32_t block, uint32_t chunk)
{
	return (uint64_t)chunk << 32 | (uint64_t)(block & 0xffffffu) << 8 | (uint64_t)kind;
}

static inline enum wrid_kind wrid_kind(uint64_t wrid)
{
	return (enum wrid_kind)(wrid & 0xffu);
}

static inline uint32_t wrid_block(uint64_t wrid)
{
	return (uint32_t)(wrid >> 8) & 0xffffffu;
}

static inline uint32_t wrid_chunk(uint64_t wrid)
{
	return (uint32_t)(wrid >> 32);
}

#endif
