/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_verdict.c - the destination's verdict message (src/images/images_verdict.c):
 * what the encoder writes the decoder reads back; the source accepts a
 * committed verdict only when every length and digest is what it sent;
 * a failed one carries its reason, made printable; and each malformed
 * message is refused with a message, never read past its end.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "images_verdict.h"

static void two_blocks(struct rdmig_imgs_block b[2])
{
	memset(b, 0, 2 * sizeof(*b));
	strcpy(b[0].name, "ram");
	b[0].length = 5ull << 32; /* both halves of the u64 matter */
	memset(b[0].digest, 0xa5, sizeof(b[0].digest));
	strcpy(b[1].name, "vram");
	b[1].length = 4096;
	memset(b[1].digest, 0x3c, sizeof(b[1].digest));
}

TEST(committed_round_trip)
{
	struct rdmig_imgs_block b[2];
	struct verdict v;
	uint8_t *buf;
	size_t len;
	char err[256];

	two_blocks(b);
	CHECK_OK(verdict_encode(VERDICT_COMMITTED, RDMIG_DIGEST_SHA256, b, NULL, 2, NULL, &buf, &len));
	CHECK_EQ(len, 24u + 2 * (8 + 32));
	CHECK_OK(verdict_decode(buf, len, &v, err, sizeof(err)));
	CHECK_EQ(v.outcome, VERDICT_COMMITTED);
	CHECK_EQ(v.count, 2u);
	CHECK_OK(verdict_check(&v, RDMIG_DIGEST_SHA256, b, 2, err, sizeof(err)));
	free(buf);
}

TEST(a_different_length_or_digest_is_no_success)
{
	struct rdmig_imgs_block b[2], sent[2];
	struct verdict v;
	uint8_t *buf;
	size_t len;
	char err[256];

	two_blocks(b);
	two_blocks(sent);
	CHECK_OK(verdict_encode(VERDICT_COMMITTED, RDMIG_DIGEST_SHA256, b, NULL, 2, NULL, &buf, &len));
	CHECK_OK(verdict_decode(buf, len, &v, err, sizeof(err)));
	sent[1].length++;
	CHECK(verdict_check(&v, RDMIG_DIGEST_SHA256, sent, 2, err, sizeof(err)) < 0);
	CHECK_STR_CONTAINS(err, "vram with 4096 bytes");
	sent[1].length--;
	sent[0].digest[31] ^= 1;
	CHECK(verdict_check(&v, RDMIG_DIGEST_SHA256, sent, 2, err, sizeof(err)) < 0);
	CHECK_STR_CONTAINS(err, "ram with another digest");
	CHECK(verdict_check(&v, RDMIG_DIGEST_SHA256, sent, 1, err, sizeof(err)) < 0);
	CHECK_STR_CONTAINS(err, "committed 2 images");
	free(buf);
}

TEST(without_digests_lengths_still_count)
{
	struct rdmig_imgs_block b[2];
	struct verdict v;
	uint8_t *buf;
	size_t len;
	char err[256];

	two_blocks(b);
	CHECK_OK(verdict_encode(VERDICT_COMMITTED, RDMIG_DIGEST_OFF, b, NULL, 2, NULL, &buf, &len));
	CHECK_EQ(len, 24u + 2 * 8);
	CHECK_OK(verdict_decode(buf, len, &v, err, sizeof(err)));
	CHECK_OK(verdict_check(&v, RDMIG_DIGEST_OFF, b, 2, err, sizeof(err)));
	b[0].length = 1;
	CHECK(verdict_check(&v, RDMIG_DIGEST_OFF, b, 2, err, sizeof(err)) < 0);
	free(buf);
}

TEST(a_failure_carries_its_reason_made_printable)
{
	struct verdict v;
	uint8_t *buf;
	size_t len;
	char err[256];

	CHECK_OK(verdict_encode(VERDICT_FAILED, RDMIG_DIGEST_XXH64, NULL, NULL, 0,
				"disk full\n\x1b[2J", &buf, &len));
	CHECK_OK(verdict_decode(buf, len, &v, err, sizeof(err)));
	CHECK_EQ(v.outcome, VERDICT_FAILED);
	CHECK_EQ(v.count, 0u);
	CHECK_EQ(strcmp(v.reason, "disk full??[2J"), 0);
	free(buf);
}

TEST(malformed_verdicts_are_refused)
{
	struct rdmig_imgs_block b[2];
	struct verdict v;
	uint8_t *buf, *copy;
	size_t len;
	char err[256];

	two_blocks(b);
	CHECK_OK(verdict_encode(VERDICT_COMMITTED, RDMIG_DIGEST_XXH64, b, NULL, 2, NULL, &buf, &len));
	copy = malloc(len);
	CHECK(copy != NULL);
	/* every truncation: the records' count no longer fits */
	for (size_t n = 0; n < len; n++) {
		memcpy(copy, buf, n);
		CHECK(verdict_decode(copy, n, &v, err, sizeof(err)) < 0);
	}
	memcpy(copy, buf, len);
	copy[3] ^= 1; /* magic */
	CHECK(verdict_decode(copy, len, &v, err, sizeof(err)) < 0);
	CHECK_STR_CONTAINS(err, "no verdict");
	memcpy(copy, buf, len);
	copy[11] = 7; /* outcome */
	CHECK(verdict_decode(copy, len, &v, err, sizeof(err)) < 0);
	memcpy(copy, buf, len);
	copy[19] = 3; /* count: 3 images in the room of 2 */
	CHECK(verdict_decode(copy, len, &v, err, sizeof(err)) < 0);
	memcpy(copy, buf, len);
	copy[20] = 0xff; /* a reason longer than allowed */
	CHECK(verdict_decode(copy, len, &v, err, sizeof(err)) < 0);
	free(copy);
	free(buf);
}

CHECK_MAIN()
