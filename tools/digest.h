/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * digest.h - the checksums of `rdmig send` / `rdmig recv`, computed by
 * maintained libraries (libxxhash, OpenSSL's libcrypto), never by code of
 * ours.
 *
 *   xxh3-128  the default: XXH3, 128 bits (libxxhash).  It guards against
 *             corruption, not against an adversary; neither can a digest
 *             that the source itself sends.  350 MB/s per vCPU in the test
 *             guest, 15 GB/s on the host.
 *   sha256    SHA-256 (libcrypto, with its assembly paths), for users who
 *             want a cryptographic hash: 61 MB/s in the guest, 1.6 GB/s on
 *             the host.
 *   off       no checksum at all.
 *
 * Digests are written in their canonical byte order (big-endian for
 * XXH3-128, as XXH128_canonicalFromHash gives it), so they print and
 * compare the same everywhere.
 */
#ifndef RDMIG_DIGEST_H
#define RDMIG_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define DIGEST_MAX 32 /* bytes of the largest digest */
#define DIGEST_HEX_MAX (2 * DIGEST_MAX + 1)

/* The values travel in the image stream's header (imgstream.h). */
enum digest_alg {
	DIGEST_OFF = 0,
	DIGEST_XXH3_128 = 1,
	DIGEST_SHA256 = 2,
};
#define DIGEST_DEFAULT DIGEST_XXH3_128

/* "xxh3-128" (or "xxh3"), "sha256", "off": 0, or -1 for anything else. */
int digest_parse(const char *name, enum digest_alg *out);
/* "xxh3-128", "sha256", "off"; NULL for a value outside the enum. */
const char *digest_name(uint32_t alg);
/* Bytes of a digest: 16, 32, 0 for off. */
size_t digest_size(enum digest_alg alg);

/* The digest of len bytes (nothing for DIGEST_OFF). */
void digest_compute(enum digest_alg alg, const void *data, size_t len, uint8_t out[DIGEST_MAX]);

/* Lower-case hex of the first n bytes of d, NUL-terminated. */
void digest_hex(const uint8_t *d, size_t n, char out[DIGEST_HEX_MAX]);

#endif
