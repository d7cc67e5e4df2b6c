/* SPDX-License-Identifier: BSD-2-Clause */
/* sha256.c - SHA-256 as specified in FIPS 180-4, section 6.2. */
#include <string.h>
#include "sha256.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Process one 64-byte block (6.2.2 steps 1-4). */
static void compress(uint32_t st[8], const uint8_t *blk)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;

	for (int t = 0; t < 16; t++)
		w[t] = load_be32(blk + 4 * t);
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	a = st[0]; b = st[1]; c = st[2]; d = st[3];
	e = st[4]; f = st[5]; g = st[6]; hh = st[7];
	for (int t = 0; t < 64; t++) {
		uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	st[0] += a; st[1] += b; st[2] += c; st[3] += d;
	st[4] += e; st[5] += f; st[6] += g; st[7] += hh;
}

void sha256_init(struct sha256 *h)
{
	static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(h->state, H0, sizeof(H0));
	h->total = 0;
	h->used = 0;
}

void sha256_update(struct sha256 *h, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (!len)
		return; /* data may be NULL then: memcpy must not see it */
	h->total += len;
	/* Top up a partial block first, then whole blocks straight from the input. */
	if (h->used) {
		size_t n = SHA256_BLOCK_SIZE - h->used;
		if (n > len)
			n = len;
		memcpy(h->buf + h->used, p, n);
		h->used += n;
		p += n;
		len -= n;
		if (h->used < SHA256_BLOCK_SIZE)
			return;
		compress(h->state, h->buf);
		h->used = 0;
	}
	for (; len >= SHA256_BLOCK_SIZE; p += SHA256_BLOCK_SIZE, len -= SHA256_BLOCK_SIZE)
		compress(h->state, p);
	if (len) {
		memcpy(h->buf, p, len);
		h->used = len;
	}
}

void sha256_final(struct sha256 *h, uint8_t digest[SHA256_DIGEST_SIZE])
{
	uint64_t bits = h->total * 8;

	/* Padding (5.1.1): 0x80, zeros up to 56 mod 64, then the bit length. */
	h->buf[h->used++] = 0x80;
	if (h->used > 56) {
		memset(h->buf + h->used, 0, SHA256_BLOCK_SIZE - h->used);
		compress(h->state, h->buf);
		h->used = 0;
	}
	memset(h->buf + h->used, 0, 56 - h->used);
	store_be32(h->buf + 56, (uint32_t)(bits >> 32));
	store_be32(h->buf + 60, (uint32_t)bits);
	compress(h->state, h->buf);
	for (int i = 0; i < 8; i++)
		store_be32(digest + 4 * i, h->state[i]);
	h->used = 0;
}

void sha256(const void *data, size_t len, uint8_t digest[SHA256_DIGEST_SIZE])
{
	struct sha256 h;

	sha256_init(&h);
	sha256_update(&h, data, len);
	sha256_final(&h, digest);
}

void sha256_hex(const uint8_t digest[SHA256_DIGEST_SIZE], char out[2 * SHA256_DIGEST_SIZE + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < SHA256_DIGEST_SIZE; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[2 * SHA256_DIGEST_SIZE] = '\0';
}
