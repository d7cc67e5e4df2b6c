/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dest_zranges.h - the ranges one COMPRESS message zeroes, kept sorted so
 * that the destination (dest_serve.c) can refuse a record overlapping another.
 */
#ifndef RDMIG_DEST_ZRANGES_H
#define RDMIG_DEST_ZRANGES_H

#include <stdint.h>

/* A COMPRESS range: [start, end) of block `block`, from record `rec`. */
struct zrange {
	uint32_t block, rec;
	uint64_t start, end;
};

/* Add [start, end) of block to the message's sorted ranges (n of them),
 * unless it overlaps one: then return that one's record number.  So one
 * message zeroes each byte at most once, and its work is bounded by the
 * blocks' sizes, however many records repeat a range.  Returns -1 when
 * added. */
long rdmig__zr_add(struct zrange *zr, uint32_t *n, uint32_t block, uint32_t rec, uint64_t start,
		   uint64_t end);

#endif
