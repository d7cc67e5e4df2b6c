/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_verdict.h - the destination's verdict on an image-set migration,
 * the one message an rdmig destination sends after the image stream's
 * trailer when both sides negotiated RDMIG_CAP_VERDICT.
 *
 * It travels as a QEMU_FILE message from the destination to the source,
 * sent without a READY credit into the receive the source posted with its
 * last stream message (a reply, as REGISTER_RESULT is one), and only
 * after the destination made its outputs durable, or failed.  Payload,
 * all integers big-endian:
 *
 *   u32 magic      0x52564454 "RVDT"
 *   u32 version    1
 *   u32 outcome    0 committed, 1 failed
 *   u32 digest     enum rdmig_digest_alg of the digests below
 *   u32 count      images committed (0 when failed)
 *   u32 reason_len bytes of reason (at most VERDICT_REASON_MAX; failed only)
 *   reason         the destination's words, not NUL-terminated
 *   count x { u64 length; u8 digest[rdmig_digest_size(digest)] }
 *
 * The source compares every length and digest with its own: a committed
 * verdict that names other images is no success.
 */
#ifndef RDMIG_IMAGES_VERDICT_H
#define RDMIG_IMAGES_VERDICT_H

#include <stddef.h>
#include <stdint.h>
#include "rdmig/imgstream.h"

#define VERDICT_MAGIC 0x52564454u
#define VERDICT_VERSION 1u
#define VERDICT_REASON_MAX 1024u

enum { VERDICT_COMMITTED = 0, VERDICT_FAILED = 1 };

struct verdict {
	uint32_t outcome;
	uint32_t digest;
	uint32_t count;
	const uint8_t *records; /* decoded: points into the message */
	char reason[VERDICT_REASON_MAX + 1];
};

/* A committed verdict over blocks[0..n) with their digests (res may be
 * NULL without digests), or a failed one with reason: a malloc'd payload
 * in *out, its length in *len.  0, or -1 (out of memory). */
int verdict_encode(uint32_t outcome, uint32_t digest, const struct rdmig_imgs_block *blocks,
		   const uint8_t (*digests)[RDMIG_DIGEST_MAX], uint32_t n, const char *reason,
		   uint8_t **out, size_t *len);
/* Parse a payload: 0, or -1 with what is wrong in err. */
int verdict_decode(const uint8_t *p, size_t len, struct verdict *v, char *err, size_t errlen);
/* A committed verdict against what the source sent: 0 when every length
 * and digest agrees, else -1 with the first difference in err. */
int verdict_check(const struct verdict *v, uint32_t digest, const struct rdmig_imgs_block *blocks,
		  uint32_t n, char *err, size_t errlen);

#endif
