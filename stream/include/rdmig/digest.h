/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmig/digest.h - librdmig-stream's digests, which rdmig/imgstream.h's
 * span records, hash pool and verification use (rdmig/imgstream.h
 * includes it, and states the library's conventions).
 */
#ifndef RDMIG_DIGEST_H
#define RDMIG_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Digests - the checksums of `rdmig send` / `rdmig recv`, computed by
 * maintained libraries (libxxhash, OpenSSL's libcrypto), never by code of
 * ours.
 *
 *   xxh64     the default: XXH64, 64 bits (libxxhash).  It guards against
 *             corruption, not against an adversary; neither can a digest
 *             that the source itself sends.  Plain 64-bit arithmetic, no
 *             SIMD: 4.7 GB/s per vCPU in the emulated test guest (13x
 *             XXH3's), 19 GB/s on the host (Debian's libxxhash builds XXH3
 *             for SSE2 only: 16 GB/s there).
 *   xxh3-128  XXH3, 128 bits (libxxhash): 370 MB/s per vCPU in the test
 *             guest, where its SIMD is emulated, 16 GB/s on the host.
 *   sha256    SHA-256 (libcrypto, with its assembly paths), for users who
 *             want a cryptographic hash: 61 MB/s in the guest, 1.6 GB/s on
 *             the host.
 *   off       no checksum at all.
 *
 * Digests are written in their canonical byte order (big-endian for
 * XXH64 and XXH3-128, as XXH64_canonicalFromHash and
 * XXH128_canonicalFromHash give them), so they print and
 * compare the same everywhere.
 */

#define RDMIG_DIGEST_MAX 32 /* bytes of the largest digest */
#define RDMIG_DIGEST_HEX_MAX (2 * RDMIG_DIGEST_MAX + 1)

/* The values travel in the image stream's header (imgstream.h). */
enum rdmig_digest_alg {
	RDMIG_DIGEST_OFF = 0,
	RDMIG_DIGEST_XXH3_128 = 1,
	RDMIG_DIGEST_SHA256 = 2,
	RDMIG_DIGEST_XXH64 = 3,
};
#define RDMIG_DIGEST_DEFAULT RDMIG_DIGEST_XXH64

/* "xxh64", "xxh3-128" (or "xxh3"), "sha256", "off": 0, or -1 for anything
 * else. */
int rdmig_digest_parse(const char *name, enum rdmig_digest_alg *out);
/* "xxh64", "xxh3-128", "sha256", "off"; NULL for a value outside the enum. */
const char *rdmig_digest_name(uint32_t alg);
/* Bytes of a digest: 8, 16, 32, 0 for off. */
size_t rdmig_digest_size(enum rdmig_digest_alg alg);

/* The digest of len bytes (nothing for RDMIG_DIGEST_OFF). */
void rdmig_digest_compute(enum rdmig_digest_alg alg, const void *data, size_t len,
			  uint8_t out[RDMIG_DIGEST_MAX]);

/* Lower-case hex of the first n bytes of d, NUL-terminated. */
void rdmig_digest_hex(const uint8_t *d, size_t n, char out[RDMIG_DIGEST_HEX_MAX]);

#ifdef __cplusplus
}
#endif

#endif
