/* SPDX-License-Identifier: BSD-2-Clause */
/* images_verdict.c - the destination's verdict message (images_verdict.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "images_verdict.h"

#define VERDICT_FIXED 24u /* the six u32 before the reason */

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* The bytes of one image's record under digest alg. */
static size_t record_size(uint32_t digest)
{
	return 8 + rdmig_digest_size((enum rdmig_digest_alg)digest);
}

int verdict_encode(uint32_t outcome, uint32_t digest, const struct rdmig_imgs_block *blocks,
		   const uint8_t (*digests)[RDMIG_DIGEST_MAX], uint32_t n, const char *reason,
		   uint8_t **out, size_t *len)
{
	size_t rlen = reason ? strnlen(reason, VERDICT_REASON_MAX) : 0;
	size_t dsize = rdmig_digest_size((enum rdmig_digest_alg)digest);
	uint32_t count = outcome == VERDICT_COMMITTED ? n : 0;
	size_t total = VERDICT_FIXED + rlen + (size_t)count * record_size(digest);
	uint8_t *buf = malloc(total), *p = buf;

	if (!buf)
		return -1;
	p = put32(p, VERDICT_MAGIC);
	p = put32(p, VERDICT_VERSION);
	p = put32(p, outcome);
	p = put32(p, digest);
	p = put32(p, count);
	p = put32(p, (uint32_t)rlen);
	memcpy(p, reason ? reason : "", rlen);
	p += rlen;
	for (uint32_t i = 0; i < count; i++) {
		p = put32(p, (uint32_t)(blocks[i].length >> 32));
		p = put32(p, (uint32_t)blocks[i].length);
		if (dsize)
			memcpy(p, digests ? digests[i] : blocks[i].digest, dsize);
		p += dsize;
	}
	*out = buf;
	*len = total;
	return 0;
}

int verdict_decode(const uint8_t *p, size_t len, struct verdict *v, char *err, size_t errlen)
{
	size_t rlen;

	memset(v, 0, sizeof(*v));
	if (len < VERDICT_FIXED || get32(p) != VERDICT_MAGIC || get32(p + 4) != VERDICT_VERSION) {
		snprintf(err, errlen, "a message of %zu bytes that is no verdict of version %u", len,
			 VERDICT_VERSION);
		return -1;
	}
	v->outcome = get32(p + 8);
	v->digest = get32(p + 12);
	v->count = get32(p + 16);
	rlen = get32(p + 20);
	if (v->outcome > VERDICT_FAILED || !rdmig_digest_name((enum rdmig_digest_alg)v->digest) ||
	    rlen > VERDICT_REASON_MAX || (v->outcome == VERDICT_FAILED && v->count)) {
		snprintf(err, errlen, "a verdict with outcome %u, digest %u, %u images and a "
			 "reason of %zu bytes", v->outcome, v->digest, v->count, rlen);
		return -1;
	}
	if (len - VERDICT_FIXED < rlen ||
	    (len - VERDICT_FIXED - rlen) != (size_t)v->count * record_size(v->digest)) {
		snprintf(err, errlen, "a verdict of %zu bytes for %u images", len, v->count);
		return -1;
	}
	memcpy(v->reason, p + VERDICT_FIXED, rlen);
	v->reason[rlen] = '\0';
	for (size_t i = 0; i < rlen; i++) /* the peer's words go to logs and terminals */
		if ((unsigned char)v->reason[i] < 0x20 || v->reason[i] == 0x7f)
			v->reason[i] = '?';
	v->records = p + VERDICT_FIXED + rlen;
	return 0;
}

int verdict_check(const struct verdict *v, uint32_t digest, const struct rdmig_imgs_block *blocks,
		  uint32_t n, char *err, size_t errlen)
{
	size_t dsize = rdmig_digest_size((enum rdmig_digest_alg)digest);
	const uint8_t *r = v->records;

	if (v->count != n || v->digest != digest) {
		snprintf(err, errlen, "the destination committed %u images under digest %u; %u "
			 "were sent under digest %u", v->count, v->digest, n, digest);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++, r += record_size(digest)) {
		if (get64(r) != blocks[i].length) {
			snprintf(err, errlen, "the destination committed %s with %llu bytes; %llu "
				 "were sent", blocks[i].name, (unsigned long long)get64(r),
				 (unsigned long long)blocks[i].length);
			return -1;
		}
		if (dsize && memcmp(r + 8, blocks[i].digest, dsize)) {
			snprintf(err, errlen, "the destination committed %s with another digest "
				 "than the one sent", blocks[i].name);
			return -1;
		}
	}
	return 0;
}
