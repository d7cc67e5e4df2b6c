/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sha256.h - SHA-256 (FIPS 180-4), incremental, libc only.
 *
 *   struct sha256 h;
 *   sha256_init(&h);
 *   sha256_update(&h, buf, len);   (any number of times, any split)
 *   sha256_final(&h, digest);      (h must be re-initialised to reuse it)
 */
#ifndef RDMIG_SHA256_H
#define RDMIG_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE 64

struct sha256 {
	uint32_t state[8];
	uint64_t total;                  /* bytes hashed so far */
	uint8_t buf[SHA256_BLOCK_SIZE];  /* a partial block */
	size_t used;                     /* bytes in buf */
};

void sha256_init(struct sha256 *h);
void sha256_update(struct sha256 *h, const void *data, size_t len);
void sha256_final(struct sha256 *h, uint8_t digest[SHA256_DIGEST_SIZE]);

/* One-shot convenience. */
void sha256(const void *data, size_t len, uint8_t digest[SHA256_DIGEST_SIZE]);

/* Lower-case hex of a digest into out (65 bytes, NUL-terminated). */
void sha256_hex(const uint8_t digest[SHA256_DIGEST_SIZE], char out[2 * SHA256_DIGEST_SIZE + 1]);

#endif
