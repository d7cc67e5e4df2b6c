/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stream_field.h - the byte handling both incremental stream parsers of
 * librdmig-stream share (imgstream.c for rdmig's own stream,
 * qemu_stream.c for QEMU's): integers are big-endian in both formats, and a field may arrive
 * split across any number of pieces, so each parser collects the current
 * field in a buffer until it is whole.
 */
#ifndef RDMIG_STREAM_FIELD_H
#define RDMIG_STREAM_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The big-endian integer in the n (at most 8) bytes at p. */
static inline uint64_t sf_get_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Store the low n bytes of v at p, big-endian; returns p + n. */
static inline uint8_t *sf_put_be(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = n; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
	return p + n;
}

/* Move what the input (*in, *len bytes) holds of the current field into
 * acc, which has *have of its need bytes already; the input and the
 * stream offset move past what was taken.  True once the field is whole
 * (at once for a field of 0 bytes). */
static inline bool sf_take(uint8_t *acc, size_t need, size_t *have, const uint8_t **in,
			   size_t *len, uint64_t *offset)
{
	size_t n = need - *have < *len ? need - *have : *len;

	memcpy(acc + *have, *in, n);
	*have += n;
	*offset += n;
	*in += n;
	*len -= n;
	return *have == need;
}

#endif
