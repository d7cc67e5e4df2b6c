/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_sha256.c - tools/sha256.c against the FIPS 180-4 / NIST example
 * vectors, and incremental hashing split at every offset.
 */
#include "check.h"
#include "sha256.h"

static void hex_of(const void *data, size_t len, char out[65])
{
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256(data, len, d);
	sha256_hex(d, out);
}

TEST(empty)
{
	char hex[65];

	hex_of("", 0, hex);
	CHECK_STR_CONTAINS(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of(NULL, 0, hex); /* NULL with length 0 is allowed */
	CHECK_STR_CONTAINS(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(abc)
{
	char hex[65];

	hex_of("abc", 3, hex);
	CHECK_STR_CONTAINS(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(two_blocks_448_bits)
{
	static const char m[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char hex[65];

	CHECK_EQ(strlen(m) * 8, 448);
	hex_of(m, strlen(m), hex);
	CHECK_STR_CONTAINS(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(two_blocks_896_bits)
{
	static const char m[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
				"ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	char hex[65];

	hex_of(m, strlen(m), hex);
	CHECK_STR_CONTAINS(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(million_a)
{
	static char a[1000];
	struct sha256 h;
	uint8_t d[SHA256_DIGEST_SIZE];
	char hex[65];

	memset(a, 'a', sizeof(a));
	sha256_init(&h);
	for (int i = 0; i < 1000; i++)
		sha256_update(&h, a, sizeof(a));
	sha256_final(&h, d);
	sha256_hex(d, hex);
	CHECK_STR_CONTAINS(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Every padding case: lengths around the 55/56/64 boundaries hashed one
 * byte at a time must equal the one-shot hash. */
TEST(byte_at_a_time_lengths_0_to_130)
{
	uint8_t msg[130], one[SHA256_DIGEST_SIZE], inc[SHA256_DIGEST_SIZE];

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 31 + 1);
	for (size_t n = 0; n <= sizeof(msg); n++) {
		struct sha256 h;
		sha256(msg, n, one);
		sha256_init(&h);
		for (size_t i = 0; i < n; i++)
			sha256_update(&h, msg + i, 1);
		sha256_final(&h, inc);
		CHECK_MEM_EQ(one, inc, sizeof(one));
	}
}

TEST(split_at_every_offset_200_bytes)
{
	uint8_t msg[200], d[SHA256_DIGEST_SIZE];
	char hex[65];

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	/* expected value from an independent implementation (Python hashlib) */
	hex_of(msg, sizeof(msg), hex);
	CHECK_STR_CONTAINS(hex, "2c7e18c942ef065b526a2d4e5546283749cd3ddfb51d8fc71f42717363685f46");
	for (size_t cut = 0; cut <= sizeof(msg); cut++) {
		struct sha256 h;
		sha256_init(&h);
		sha256_update(&h, msg, cut);
		sha256_update(&h, msg + cut, sizeof(msg) - cut);
		sha256_final(&h, d);
		sha256_hex(d, hex);
		if (strcmp(hex, "2c7e18c942ef065b526a2d4e5546283749cd3ddfb51d8fc71f42717363685f46"))
			CHECK_FAIL_AT("split at %zu: %s", cut, hex);
	}
}

CHECK_MAIN()
