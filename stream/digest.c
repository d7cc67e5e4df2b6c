/* SPDX-License-Identifier: BSD-2-Clause */
/* digest.c - checksums through libxxhash and libcrypto (rdmig/imgstream.h). */
#include <string.h>
#include <openssl/evp.h>
#include <xxhash.h>
#include <rdmig/digest.h>

int rdmig_digest_parse(const char *name, enum rdmig_digest_alg *out)
{
	if (!strcmp(name, "xxh64"))
		*out = RDMIG_DIGEST_XXH64;
	else if (!strcmp(name, "xxh3-128") || !strcmp(name, "xxh3"))
		*out = RDMIG_DIGEST_XXH3_128;
	else if (!strcmp(name, "sha256"))
		*out = RDMIG_DIGEST_SHA256;
	else if (!strcmp(name, "off"))
		*out = RDMIG_DIGEST_OFF;
	else
		return -1;
	return 0;
}

const char *rdmig_digest_name(uint32_t alg)
{
	switch (alg) {
	case RDMIG_DIGEST_OFF:
		return "off";
	case RDMIG_DIGEST_XXH3_128:
		return "xxh3-128";
	case RDMIG_DIGEST_SHA256:
		return "sha256";
	case RDMIG_DIGEST_XXH64:
		return "xxh64";
	}
	return NULL;
}

size_t rdmig_digest_size(enum rdmig_digest_alg alg)
{
	switch (alg) {
	case RDMIG_DIGEST_XXH64:
		return 8;
	case RDMIG_DIGEST_XXH3_128:
		return 16;
	case RDMIG_DIGEST_SHA256:
		return 32;
	case RDMIG_DIGEST_OFF:
		break;
	}
	return 0;
}

/* SHA-256 through the EVP interface: the one OpenSSL 3 maintains, which
 * picks the CPU's fastest implementation (SHA-NI, AVX2, SSSE3). */
static void sha256_of(const void *data, size_t len, uint8_t out[RDMIG_DIGEST_MAX])
{
	unsigned int n = 0;

	if (!EVP_Digest(data, len, out, &n, EVP_sha256(), NULL))
		memset(out, 0, RDMIG_DIGEST_MAX); /* cannot happen with a built-in digest */
}

void rdmig_digest_compute(enum rdmig_digest_alg alg, const void *data, size_t len,
			  uint8_t out[RDMIG_DIGEST_MAX])
{
	memset(out, 0, RDMIG_DIGEST_MAX);
	if (alg == RDMIG_DIGEST_XXH64) {
		XXH64_canonical_t c;
		XXH64_canonicalFromHash(&c, XXH64(data, len, 0));
		memcpy(out, c.digest, sizeof(c.digest));
	} else if (alg == RDMIG_DIGEST_XXH3_128) {
		XXH128_canonical_t c;
		XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
		memcpy(out, c.digest, sizeof(c.digest));
	} else if (alg == RDMIG_DIGEST_SHA256) {
		sha256_of(data, len, out);
	}
}

void rdmig_digest_hex(const uint8_t *d, size_t n, char out[RDMIG_DIGEST_HEX_MAX])
{
	static const char hex[] = "0123456789abcdef";

	if (n > RDMIG_DIGEST_MAX)
		n = RDMIG_DIGEST_MAX;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[2 * n] = '\0';
}
