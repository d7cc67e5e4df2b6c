/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_stream.c - libFuzzer target for librdmig-stream's parsers of what a
 * peer or a file hands us: QEMU's migration stream (rdmig_qs_*), rdmig's
 * image stream (rdmig_imgs_*), recv --qemu's record (rdmig_rr_parse) and a
 * row of `info ramblock` (rdmig_qs_ramblock_row).
 *
 * The first input byte picks the parser, the second how the rest is cut
 * into pieces: a streaming parser must give the same answer whether it is
 * fed everything at once or piece by piece, and once it has failed it
 * must stay failed with a terminated message.  Any violation aborts,
 * which libFuzzer reports as a crash; ASan/UBSan catch the rest.
 *
 * Only the installed header is used: this is what hostile bytes meet.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdmig/imgstream.h"
#include "rdmig/qemu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "fuzz_stream: " __VA_ARGS__);                                      \
		fputc('\n', stderr);                                                               \
		abort();                                                                           \
	} while (0)

/* A total small enough that no parser allocates much for a short input. */
#define MAX_TOTAL (64ull << 20)

static void check_message(const char *who, const char *msg)
{
	if (!msg || !msg[0] || strnlen(msg, 320) == 320)
		FAIL("%s failed without a terminated message", who);
}

/* The two streaming parsers, seen alike. */
struct feeder {
	const char *name;
	int (*feed)(void *p, const void *data, size_t len);
	const char *(*errmsg)(const void *p);
};

static int qs_feed(void *p, const void *d, size_t n) { return rdmig_qs_feed(p, d, n); }
static const char *qs_msg(const void *p) { return rdmig_qs_errmsg(p); }
static int imgs_feed(void *p, const void *d, size_t n) { return rdmig_imgs_feed(p, d, n); }
static const char *imgs_msg(const void *p) { return rdmig_imgs_errmsg(p); }

static const struct feeder QS = {"rdmig_qs_feed", qs_feed, qs_msg};
static const struct feeder IMGS = {"rdmig_imgs_feed", imgs_feed, imgs_msg};

/* Feed in pieces of 1..step bytes (step 0: all at once); the OR of the
 * events, or -1 once the parser failed (it must then keep failing). */
static int feed(const struct feeder *f, void *p, const uint8_t *d, size_t n, size_t step)
{
	int events = 0;

	for (size_t at = 0; at < n;) {
		size_t len = step ? (step < n - at ? step : n - at) : n - at;
		int ret = f->feed(p, d + at, len);

		if (ret < 0) {
			check_message(f->name, f->errmsg(p));
			if (f->feed(p, d, 1) >= 0)
				FAIL("%s accepted bytes after failing", f->name);
			return -1;
		}
		events |= ret;
		at += len;
	}
	return events;
}

static void fuzz_qemu_stream(const uint8_t *d, size_t n, size_t step)
{
	struct rdmig_qs_parser whole, pieces;
	int a, b, end_a, end_b;

	rdmig_qs_init(&whole, MAX_TOTAL);
	rdmig_qs_init(&pieces, MAX_TOTAL);
	a = feed(&QS, &whole, d, n, 0);
	b = feed(&QS, &pieces, d, n, step);
	if ((a < 0) != (b < 0) || (a >= 0 && a != b))
		FAIL("QEMU stream: %d at once, %d in pieces of %zu", a, b, step);
	if (a >= 0 && rdmig_qs_blocks_done(&whole) &&
	    (whole.count != pieces.count || whole.total != pieces.total))
		FAIL("QEMU stream: block lists differ with pieces of %zu", step);
	end_a = rdmig_qs_finish(&whole);
	end_b = rdmig_qs_finish(&pieces);
	if (end_a != end_b)
		FAIL("QEMU stream: finish %d at once, %d in pieces", end_a, end_b);
	if (end_a < 0)
		check_message("rdmig_qs_finish", rdmig_qs_errmsg(&whole));
	else if (!rdmig_qs_end_name(whole.end))
		FAIL("QEMU stream: an end without a name");
	rdmig_qs_free(&whole);
	rdmig_qs_free(&pieces);
}

static void fuzz_image_stream(const uint8_t *d, size_t n, size_t step)
{
	struct rdmig_imgs_parser whole, pieces;
	int a, b;

	rdmig_imgs_parser_init(&whole, MAX_TOTAL);
	rdmig_imgs_parser_init(&pieces, MAX_TOTAL);
	a = feed(&IMGS, &whole, d, n, 0);
	b = feed(&IMGS, &pieces, d, n, step);
	if ((a < 0) != (b < 0) || (a >= 0 && a != b))
		FAIL("image stream: %d at once, %d in pieces of %zu", a, b, step);
	if (a >= 0 && rdmig_imgs_header_done(&whole)) {
		if (whole.total > MAX_TOTAL)
			FAIL("image stream: a total of %llu passed the limit",
			     (unsigned long long)whole.total);
		if (whole.spans_known > whole.spans_total ||
		    whole.spans_known != pieces.spans_known)
			FAIL("image stream: %llu/%llu spans known",
			     (unsigned long long)whole.spans_known,
			     (unsigned long long)whole.spans_total);
		if (rdmig_imgs_landed_bytes(&whole) > whole.total)
			FAIL("image stream: more landed than the blocks hold");
	}
	if (rdmig_imgs_finish(&whole) != rdmig_imgs_finish(&pieces))
		FAIL("image stream: the ends differ with pieces of %zu", step);
	rdmig_imgs_parser_free(&whole);
	rdmig_imgs_parser_free(&pieces);
}

static void fuzz_record(const uint8_t *d, size_t n)
{
	struct rdmig_replay_record r;
	char err[256];

	memset(err, 0x5a, sizeof(err));
	if (rdmig_rr_parse((const char *)d, n, &r, err, sizeof(err)) < 0) {
		if (!memchr(err, '\0', sizeof(err)) || !err[0])
			FAIL("rdmig_rr_parse failed without a terminated message");
		return;
	}
	rdmig_rr_free(&r);
}

static void fuzz_ramblock_row(const uint8_t *d, size_t n)
{
	struct rdmig_qs_ramblock row;
	char *line = malloc(n + 1);
	int ret;

	if (!line)
		return;
	memcpy(line, d, n);
	line[n] = '\0';
	ret = rdmig_qs_ramblock_row(line, &row);
	if (ret < -1 || ret > 1)
		FAIL("rdmig_qs_ramblock_row returned %d", ret);
	if (ret == 0 && strnlen(row.name, sizeof(row.name)) == sizeof(row.name))
		FAIL("rdmig_qs_ramblock_row: an unterminated name");
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t step = data[1] % 17; /* 0: all at once */

	switch (data[0] % 4) {
	case 0:
		fuzz_qemu_stream(data + 2, size - 2, step);
		break;
	case 1:
		fuzz_image_stream(data + 2, size - 2, step);
		break;
	case 2:
		fuzz_record(data + 2, size - 2);
		break;
	default:
		fuzz_ramblock_row(data + 2, size - 2);
		break;
	}
	return 0;
}
