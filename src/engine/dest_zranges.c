/* SPDX-License-Identifier: BSD-2-Clause */
/* dest_zranges.c - the sorted COMPRESS ranges of one message (dest_zranges.h). */
#include <string.h>
#include "dest_zranges.h"

static int zr_cmp(const struct zrange *a, uint32_t block, uint64_t start)
{
	if (a->block != block)
		return a->block < block ? -1 : 1;
	return a->start < start ? -1 : a->start > start;
}

long rdmig__zr_add(struct zrange *zr, uint32_t *n, uint32_t block, uint32_t rec, uint64_t start,
		   uint64_t end)
{
	uint32_t lo = 0, hi = *n;

	while (lo < hi) { /* the first range at or after (block, start) */
		uint32_t mid = lo + (hi - lo) / 2;
		if (zr_cmp(&zr[mid], block, start) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && zr[lo - 1].block == block && zr[lo - 1].end > start)
		return zr[lo - 1].rec;
	if (lo < *n && zr[lo].block == block && zr[lo].start < end)
		return zr[lo].rec;
	memmove(&zr[lo + 1], &zr[lo], (*n - lo) * sizeof(*zr));
	zr[lo] = (struct zrange){block, rec, start, end};
	(*n)++;
	return -1;
}
