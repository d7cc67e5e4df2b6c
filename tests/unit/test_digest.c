/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_digest.c - librdmig-stream's checksums (stream/digest.c): known answers of
 * SHA-256 (FIPS 180-4), XXH64 and XXH3-128 (xxhsum 0.8.1, `xxhsum -H1`
 * and `-H2`, whose output is the canonical big-endian form digest.c writes
 * too), names, sizes and hex.
 */
#include "check.h"
#include <rdmig/imgstream.h>

/* The hex of the digest of len bytes. */
static const char *hex_of(enum rdmig_digest_alg alg, const void *data, size_t len)
{
	static char hex[RDMIG_DIGEST_HEX_MAX];
	uint8_t d[RDMIG_DIGEST_MAX];

	rdmig_digest_compute(alg, data, len, d);
	rdmig_digest_hex(d, rdmig_digest_size(alg), hex);
	return hex;
}

/* i % 251 for i in 0..n-1: a pattern no power of two divides. */
static uint8_t *pattern(size_t n)
{
	uint8_t *p = malloc(n);

	if (!p)
		abort();
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i % 251);
	return p;
}

#define CHECK_HEX(alg, data, len, want) CHECK_EQ(strcmp(hex_of(alg, data, len), want), 0)

TEST(sha256_known_answers)
{
	uint8_t *p = pattern(1000);

	/* FIPS 180-4 (and the NIST examples): "" and "abc" */
	CHECK_HEX(RDMIG_DIGEST_SHA256, "", 0,
		  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	CHECK_HEX(RDMIG_DIGEST_SHA256, "abc", 3,
		  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK_HEX(RDMIG_DIGEST_SHA256, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  56, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* sha256sum (coreutils) of the pattern */
	CHECK_HEX(RDMIG_DIGEST_SHA256, p, 1000,
		  "4e4c294b331f7a2099a379bec34b9f9fc03dc46ab465d998f4d683da53487e6d");
	free(p);
}

/* A known answer: of TEXT when it is set, else of the first LEN bytes of
 * the pattern; the hex as xxhsum -H1 / -H2 prints it. */
struct known_answer {
	const char *text;
	size_t len;
	const char *hex;
};

#define KNOWN_TEXTS(empty, abc, fox)                                             \
	{"", 0, empty}, {"abc", 0, abc},                                         \
	{"The quick brown fox jumps over the lazy dog", 0, fox}

static void check_known_answers(enum rdmig_digest_alg alg, const struct known_answer *k,
				size_t n)
{
	uint8_t *p = pattern(100000);

	for (size_t i = 0; i < n; i++) {
		const char *got = k[i].text ? hex_of(alg, k[i].text, strlen(k[i].text))
					    : hex_of(alg, p, k[i].len);
		if (strcmp(got, k[i].hex)) {
			fprintf(stderr, "%s known answer %zu (%s, %zu bytes): %s, want %s\n",
				rdmig_digest_name(alg), i, k[i].text ? "text" : "pattern",
				k[i].text ? strlen(k[i].text) : k[i].len, got, k[i].hex);
			check_failed = 1;
		}
	}
	free(p);
}

/* XXH64 has a path for under 32 bytes and one for 32 and more. */
TEST(xxh64_known_answers)
{
	static const struct known_answer k[] = {
		KNOWN_TEXTS("ef46db3751d8e999", "44bc2cf5ad770999", "0b242d361fda71bc"),
		{NULL, 31, "c346d2b59b4d8ee1"},
		{NULL, 200, "50dc1079b99e879c"},
		{NULL, 1000, "f306f04aa88b54d3"},
		{NULL, 100000, "4cf75ee72cd8f4cc"},
	};

	check_known_answers(RDMIG_DIGEST_XXH64, k, sizeof(k) / sizeof(*k));
}

/* Each length takes another path of XXH3: 0, 1..3, 17..128, 129..240, long. */
TEST(xxh3_128_known_answers)
{
	static const struct known_answer k[] = {
		KNOWN_TEXTS("99aa06d3014798d86001c324468d497f", "06b05ab6733a618578af5f94892f3950",
			    "ddd650205ca3e7fa24a1cc2e3a8a7651"),
		{NULL, 200, "cb0395310643ba0edd97e9af3609d9f5"},
		{NULL, 1000, "18bf41bc8229e27733ef703fb2b20ed1"},
		{NULL, 100000, "54182c58bbb1337c42c23aeead96750d"},
	};

	check_known_answers(RDMIG_DIGEST_XXH3_128, k, sizeof(k) / sizeof(*k));
}

/* Canonical order: the first byte is the high byte of the high half
 * (xxhsum --little-endian prints "abc" as 50392f89...f3b65ab006). */
TEST(xxh3_128_is_big_endian)
{
	uint8_t d[RDMIG_DIGEST_MAX];

	rdmig_digest_compute(RDMIG_DIGEST_XXH3_128, "abc", 3, d);
	CHECK_EQ(d[0], 0x06);
	CHECK_EQ(d[15], 0x50);
}

/* The same bytes at another address, and a NULL pointer for no bytes. */
TEST(digest_depends_on_bytes_only)
{
	uint8_t buf[64], a[RDMIG_DIGEST_MAX], b[RDMIG_DIGEST_MAX];

	for (int i = 0; i < 64; i++)
		buf[i] = (uint8_t)(i * 3);
	for (int alg = RDMIG_DIGEST_XXH3_128; alg <= RDMIG_DIGEST_XXH64; alg++) {
		size_t n = rdmig_digest_size(alg);
		rdmig_digest_compute(alg, buf, 32, a);
		memmove(buf + 32, buf, 32);
		rdmig_digest_compute(alg, buf + 32, 32, b);
		CHECK_MEM_EQ(a, b, n);
		buf[40] ^= 1;
		rdmig_digest_compute(alg, buf + 32, 32, b);
		CHECK(memcmp(a, b, n) != 0);
		rdmig_digest_compute(alg, NULL, 0, a);
		rdmig_digest_compute(alg, "", 0, b);
		CHECK_MEM_EQ(a, b, n);
	}
}

TEST(parse_names)
{
	static const char *const bad[] = {"", "XXH3", "xxh3-64", "xxh3-128 ", "sha-256", "SHA256",
					  "sha2561", "md5", "none", "0", "Off", "XXH64", "xxh64 ",
					  "xxh6"};
	enum rdmig_digest_alg a;

	CHECK_OK(rdmig_digest_parse("xxh64", &a));
	CHECK_EQ(a, RDMIG_DIGEST_XXH64);
	CHECK_OK(rdmig_digest_parse("xxh3-128", &a));
	CHECK_EQ(a, RDMIG_DIGEST_XXH3_128);
	a = RDMIG_DIGEST_OFF;
	CHECK_OK(rdmig_digest_parse("xxh3", &a));
	CHECK_EQ(a, RDMIG_DIGEST_XXH3_128);
	CHECK_OK(rdmig_digest_parse("sha256", &a));
	CHECK_EQ(a, RDMIG_DIGEST_SHA256);
	CHECK_OK(rdmig_digest_parse("off", &a));
	CHECK_EQ(a, RDMIG_DIGEST_OFF);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		a = RDMIG_DIGEST_SHA256;
		if (rdmig_digest_parse(bad[i], &a) != -1)
			CHECK_FAIL_AT("'%s' parsed", bad[i]);
		CHECK_EQ(a, RDMIG_DIGEST_SHA256); /* untouched */
	}
	CHECK_EQ(RDMIG_DIGEST_DEFAULT, RDMIG_DIGEST_XXH64);
}

TEST(names_and_sizes)
{
	CHECK_EQ(strcmp(rdmig_digest_name(RDMIG_DIGEST_OFF), "off"), 0);
	CHECK_EQ(strcmp(rdmig_digest_name(RDMIG_DIGEST_XXH3_128), "xxh3-128"), 0);
	CHECK_EQ(strcmp(rdmig_digest_name(RDMIG_DIGEST_SHA256), "sha256"), 0);
	CHECK_EQ(strcmp(rdmig_digest_name(RDMIG_DIGEST_XXH64), "xxh64"), 0);
	CHECK(rdmig_digest_name(4) == NULL);
	CHECK(rdmig_digest_name(255) == NULL);
	CHECK(rdmig_digest_name(UINT32_MAX) == NULL);
	CHECK_EQ(rdmig_digest_size(RDMIG_DIGEST_OFF), 0);
	CHECK_EQ(rdmig_digest_size(RDMIG_DIGEST_XXH3_128), 16);
	CHECK_EQ(rdmig_digest_size(RDMIG_DIGEST_SHA256), 32);
	CHECK_EQ(rdmig_digest_size(RDMIG_DIGEST_XXH64), 8);
	CHECK(RDMIG_DIGEST_MAX >= 32);
	/* every name parses back to its value (the values travel in streams) */
	for (uint32_t v = 0; v <= RDMIG_DIGEST_XXH64; v++) {
		enum rdmig_digest_alg a;
		CHECK_OK(rdmig_digest_parse(rdmig_digest_name(v), &a));
		CHECK_EQ(a, v);
	}
}

TEST(hex)
{
	uint8_t d[RDMIG_DIGEST_MAX + 4];
	char out[RDMIG_DIGEST_HEX_MAX];

	for (size_t i = 0; i < sizeof(d); i++)
		d[i] = (uint8_t)(i * 17 + 0x0f);
	memset(out, 'z', sizeof(out));
	rdmig_digest_hex(d, 0, out);
	CHECK_EQ(strcmp(out, ""), 0);
	rdmig_digest_hex((const uint8_t *)"\x00\x01\xab\xff", 4, out);
	CHECK_EQ(strcmp(out, "0001abff"), 0);
	rdmig_digest_hex(d, 16, out);
	CHECK_EQ(strlen(out), 32);
	CHECK_EQ(strncmp(out, "0f2031", 6), 0);
	rdmig_digest_hex(d, 32, out);
	CHECK_EQ(strlen(out), 64);
	/* more than RDMIG_DIGEST_MAX bytes: cut to RDMIG_DIGEST_MAX, still terminated */
	memset(out, 'z', sizeof(out));
	rdmig_digest_hex(d, sizeof(d), out);
	CHECK_EQ(strlen(out), 2 * RDMIG_DIGEST_MAX);
	CHECK_EQ(out[2 * RDMIG_DIGEST_MAX], '\0');
}

CHECK_MAIN()
