/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_replay_record.c - the reader of `rdmig recv --qemu`'s record.txt
 * (stream/replay_record.c): a real record's shape parses into the plan a
 * replay follows (each chunk in the first pass that touched it, the rest in
 * the last pass), and every rule rejects what breaks it with the line and
 * field.  Inputs are exact-size heap copies so that ASan catches over-reads.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include "check.h"
#include <rdmig/qemu.h>

/* From a stopped 64 MiB -M pc VM, dynamic registration (shortened). */
static const char DYNAMIC[] =
	"rdmig-qemu-record 1\n"
	"machine pc-i440fx-7.2\n"
	"pin_all 0\n"
	"blocks 2 total=67371008\n"
	"block 0 offset=0x0 length=67108864 chunks=64 file=pc.ram.img name=pc.ram\n"
	"block 1 offset=0x4000000 length=262144 chunks=1 file=pc.bios.img name=pc bios (rom)\n"
	"phase 0 ram_blocks_request offset=191 hook=191 t=0.035617\n"
	"phase 1 registration offset=191 hook=191 register_requests=0 compress=0 unregister=0 "
	"chunks_registered=0 bytes_compressed=0 t=0.038351\n"
	"phase 2 registration offset=217 hook=217 register_requests=2 compress=1 unregister=0 "
	"chunks_registered=2 bytes_compressed=1048576 t=0.117139\n"
	"touched 2 block=0 data=0,2 zero=1\n"
	"phase 3 registration offset=243 hook=243 register_requests=1 compress=1 unregister=0 "
	"chunks_registered=1 bytes_compressed=8192 t=0.205756\n"
	"touched 3 block=0 data=3,1 zero=4-6\n"
	"touched 3 block=1 data=0 zero=-\n"
	"phase 4 registration offset=300 hook=300 register_requests=0 compress=0 unregister=0 "
	"chunks_registered=0 bytes_compressed=0 t=0.3\n"
	"stream bytes=1000 hooks=4 ram_sections=3 ram_end=1 watched_from=854\n"
	"end ok how=eof+vmdesc eof=900 t=2.373082\n"
	"nonzero 0 chunks=0,2-4\n"
	"nonzero 1 chunks=0\n";

static int parse(const char *text, struct rdmig_replay_record *r, char *err, size_t errlen)
{
	size_t n = strlen(text);
	char *copy = calloc(1, n ? n : 1); /* exactly n bytes are read */
	int ret;

	if (n)
		memcpy(copy, text, n);
	ret = rdmig_rr_parse(copy, n, r, err, errlen);
	free(copy);
	return ret;
}

TEST(a_dynamic_record_plans_each_chunk_in_its_first_pass)
{
	struct rdmig_replay_record r;
	char err[512] = "";

	CHECK_OK(parse(DYNAMIC, &r, err, sizeof(err)));
	CHECK_STR_CONTAINS(r.machine, "pc-i440fx-7.2");
	CHECK(!r.pin_all);
	CHECK_EQ(r.nblocks, 2u);
	CHECK_STR_CONTAINS(r.blocks[1].name, "pc bios (rom)");
	CHECK_STR_CONTAINS(r.blocks[1].file, "pc.bios.img");
	CHECK_EQ(r.ram_bytes, 67108864ull + 262144ull);
	CHECK_EQ(r.nphases, 5u);
	CHECK(r.phases[0].ram_blocks);
	CHECK_EQ(r.phases[3].offset, 243ull);
	CHECK_EQ(r.stream_bytes, 1000ull);
	CHECK_EQ(r.blocks[0].send_phase[0], 2u);
	CHECK_EQ(r.blocks[0].send_phase[1], 2u); /* compressed in 2, registered in 3 */
	CHECK_EQ(r.blocks[0].send_phase[2], 2u);
	CHECK_EQ(r.blocks[0].send_phase[3], 3u);
	CHECK_EQ(r.blocks[0].send_phase[6], 3u);
	CHECK_EQ(r.blocks[0].send_phase[7], 4u);  /* never seen: the last pass */
	CHECK_EQ(r.blocks[0].send_phase[63], 4u);
	CHECK_EQ(r.blocks[1].send_phase[0], 3u);
	rdmig_rr_free(&r);
}

TEST(a_pin_all_record_sends_everything_in_the_last_pass)
{
	static const char rec[] = "rdmig-qemu-record 1\nmachine -\npin_all 1\nblocks 1 total=3\n"
				  "block 0 offset=- length=3145729 chunks=4 file=a.img name=a\n"
				  "phase 0 ram_blocks_request offset=10 hook=10 t=0\n"
				  "phase 1 registration offset=10 hook=10 t=0\n"
				  "phase 2 registration offset=20 hook=20 t=0\n"
				  "phase 3 ram_blocks_request offset=20 hook=20 t=0\n";
	struct rdmig_replay_record r;
	char err[512] = "";
	char *two_setups = strdup(rec);

	/* a second RAM_BLOCKS_REQUEST is refused ... */
	CHECK_EQ(parse(rec, &r, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "line 9: a second ram_blocks_request (phase 3)");
	/* ... and without it the record plans all 4 chunks into phase 2 */
	strcpy(strstr(two_setups, "phase 3"), "stream bytes=20\nend ok\n");
	CHECK_OK(parse(two_setups, &r, err, sizeof(err)));
	CHECK(r.pin_all);
	for (uint32_t c = 0; c < 4; c++)
		CHECK_EQ(r.blocks[0].send_phase[c], 2u);
	rdmig_rr_free(&r);
	free(two_setups);
}

/* Replace the first occurrence of `from` in DYNAMIC by `to`; parse; expect
 * a refusal whose message contains want. */
static void refused(const char *from, const char *to, const char *want)
{
	const char *at = strstr(DYNAMIC, from);
	size_t n = strlen(DYNAMIC) + strlen(to) + 1;
	char *text = malloc(n), err[512] = "";
	struct rdmig_replay_record r;

	if (!at)
		CHECK_FAIL_AT("'%s' is not in the record", from);
	snprintf(text, n, "%.*s%s%s", (int)(at - DYNAMIC), DYNAMIC, to, at + strlen(from));
	CHECK_EQ(parse(text, &r, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, want);
	CHECK_EQ(r.nblocks, 0u); /* emptied */
	free(text);
}

TEST(each_rule_refuses_what_breaks_it)
{
	refused("rdmig-qemu-record 1", "rdmig-qemu-record 2", "line 1: not an rdmig QEMU record");
	refused("pin_all 0", "pin_all 2", "line 3: pin_all must be 0 or 1");
	refused("blocks 2 ", "blocks 3 ", "2 block lines for 3 blocks");
	refused("blocks 2 ", "blocks 0 ", "a record without RAM blocks");
	refused("block 1 offset", "block 5 offset", "line 6: index 5 is out of range (2)");
	refused("chunks=64", "chunks=65", "block 0: chunks=65 for length=67108864");
	refused("length=67108864", "length=1099511627777", "length=1099511627777 is not a number");
	refused("file=pc.ram.img", "file=../etc/passwd", "no file= naming an image");
	refused("file=pc.ram.img", "file=..", "no file= naming an image");
	refused(" name=pc.ram", " nom=pc.ram", "block 0: no name=");
	refused("phase 1 registration", "phase 1 ram_blocks_request", "a second ram_blocks_request");
	refused("phase 0 ram_blocks_request", "phase 0 registration", "the first phase must be");
	refused("phase 2 registration", "phase 7 registration", "phase 7 where phase 2 was due");
	refused("phase 3 registration offset=243", "phase 3 registration offset=100",
		"phase 3 at stream offset 100, before phase 2's 217");
	refused("phase 4 registration offset=300", "phase 4 registration offset=5000",
		"past the stream's 1000 bytes");
	refused("phase 2 registration", "phase 2 unregister", "neither ram_blocks_request nor");
	refused("touched 2 block=0 data=0,2", "touched 2 block=0 data=0,64",
		"chunk range 64-64 is outside the block's 64 chunks");
	refused("zero=4-6", "zero=6-4", "chunk range 6-4 is outside");
	refused("zero=4-6", "zero=4-", "bad chunk range");
	refused("zero=4-6", "zero=4;5", "bad chunk range separator");
	refused("data=0,2", "data=99999999999999999999", "outside the block's 64 chunks");
	refused("touched 2 block=0", "touched 0 block=0", "chunks touched in phase 0");
	refused("touched 2 block=0", "touched 2 block=9", "block=9 is not a number up to 1");
	refused("touched 2 block=0 data=0,2 zero=1", "touched 2 block=0 data=0,2",
		"touched needs data= and zero=");
	refused("stream bytes=1000", "stream bytes=lots", "bytes=lots is not a number");
	refused("end ok how", "end failed the source disconnected", "the recorded migration failed");
	refused("end ok how=eof+vmdesc eof=900 t=2.373082\n", "", "'nonzero' before 'end ok'");
	refused("nonzero 0", "phase 9", "'phase' after 'end'");
	refused("machine pc-i440fx-7.2", "machine pc i440fx", "is not one word");
	refused("machine pc-i440fx-7.2", "frobnicate 1", "line 2: unknown line 'frobnicate'");
	/* a bare word: its handler would read past the line (fuzz_stream) */
	refused("machine pc-i440fx-7.2", "machine", "line 2: 'machine' without a value");
	refused("pin_all 0", "pin_all", "line 3: 'pin_all' without a value");
	refused("stream bytes=1000 hooks=4 ram_sections=3 ram_end=1 watched_from=854", "stream",
		"'stream' without a value");
}

TEST(empty_truncated_and_binary_records_are_refused)
{
	struct rdmig_replay_record r;
	char err[512] = "";
	char nul[] = "rdmig-qemu-record 1\nmachine \0x\n";

	CHECK_EQ(parse("", &r, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "empty record");
	for (size_t cut = 1; cut < strlen(DYNAMIC) - 1; cut += 7) {
		char *text = malloc(cut);
		memcpy(text, DYNAMIC, cut);
		if (!rdmig_rr_parse(text, cut, &r, err, sizeof(err))) {
			/* only a cut after "end ok" leaves a whole record */
			if (cut < (size_t)(strstr(DYNAMIC, "end ok") - DYNAMIC) + 6)
				CHECK_FAIL_AT("a record cut at %zu bytes was accepted", cut);
			rdmig_rr_free(&r);
		}
		free(text);
	}
	CHECK_EQ(rdmig_rr_parse(nul, sizeof(nul) - 1, &r, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "NUL byte");
}

/* ------------------------------------------- what a record may cost -- */

/* CPU time, not wall time: the bounds are on work, which a loaded host
 * does not stretch */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A growing text buffer for generated records. */
struct text {
	char *p;
	size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = (t->len + (size_t)n + 1) * 2;
		t->p = realloc(t->p, t->cap);
	}
	va_start(ap, fmt);
	vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* nblocks blocks of len bytes each, then phases 0 and 1. */
static void head(struct text *t, uint32_t nblocks, uint64_t len)
{
	add(t, "rdmig-qemu-record 1\nmachine -\npin_all 0\nblocks %u total=0\n", nblocks);
	for (uint32_t i = 0; i < nblocks; i++)
		add(t, "block %u offset=- length=%llu chunks=%llu file=b%u.img name=b%u\n", i,
		    (unsigned long long)len, (unsigned long long)((len + (1u << 20) - 1) >> 20), i, i);
	add(t, "phase 0 ram_blocks_request offset=0 hook=0 t=0\n"
	       "phase 1 registration offset=0 hook=0 t=0\n");
}

/* The hostile record: 4096 blocks of 1 TiB (16 GiB of plan, and
 * minutes, before the images were looked at).  Refused at the 17th block,
 * when the claims pass 16 TiB, having planned at most 64 MiB. */
TEST(a_record_claiming_more_than_16_tib_is_refused_at_the_block_that_passes_it)
{
	struct text t = {0};
	struct rdmig_replay_record r;
	char err[512] = "";
	double t0;

	head(&t, RDMIG_RR_MAX_BLOCKS, 1ull << 40);
	add(&t, "stream bytes=0\nend ok\n");
	t0 = now();
	CHECK_EQ(rdmig_rr_parse(t.p, t.len, &r, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "line 21: block 16: the blocks claim more than 17592186044416 bytes");
	CHECK(now() - t0 < 10.0);
	free(t.p);
}

/* The directory as rdmig send --qemu-replay sees it, faked: b0.img is
 * 3 MiB, b1.img is refused, the rest do not exist. */
struct fake_dir {
	unsigned calls;
};

static int fake_image(void *ctx, const char *file, uint64_t *size, char *err, size_t errlen)
{
	struct fake_dir *d = ctx;

	d->calls++;
	if (!strcmp(file, "b0.img")) {
		*size = 3ull << 20;
		return 0;
	}
	snprintf(err, errlen, "%s", strcmp(file, "b1.img") ? "no such file" : "a symbolic link");
	return -1;
}

TEST(each_block_is_checked_against_its_image_before_it_is_planned)
{
	struct text t = {0};
	struct rdmig_replay_record r;
	struct fake_dir d = {0};
	char err[512] = "";

	/* the hostile record again: refused at its first block, which claims
	 * 1 TiB of a 3 MiB file; the message gives the claim, not the size */
	head(&t, RDMIG_RR_MAX_BLOCKS, 1ull << 40);
	add(&t, "stream bytes=0\nend ok\n");
	CHECK_EQ(rdmig_rr_parse_dir(t.p, t.len, fake_image, &d, &r, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "line 5: block 0: image 'b0.img' does not have the record's "
				"length=1099511627776 bytes");
	CHECK(!strstr(err, "3145728"));
	CHECK_EQ(d.calls, 1u);
	CHECK_EQ(r.nblocks, 0u);
	t.len = 0;
	/* the right length for b0; b1's refusal is passed on with its name */
	head(&t, 2, 3ull << 20);
	add(&t, "stream bytes=0\nend ok\n");
	CHECK_EQ(rdmig_rr_parse_dir(t.p, t.len, fake_image, &d, &r, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "line 6: block 1: image 'b1.img': a symbolic link");
	t.len = 0;
	head(&t, 1, 3ull << 20);
	add(&t, "stream bytes=0\nend ok\n");
	CHECK_OK(rdmig_rr_parse_dir(t.p, t.len, fake_image, &d, &r, err, sizeof(err)));
	CHECK_EQ(r.ram_bytes, 3ull << 20);
	rdmig_rr_free(&r);
	free(t.p);
}

/* 64 block lines naming one image read it 64 times into 64 copies: a
 * record names each image once. */
TEST(a_record_naming_one_image_twice_is_refused)
{
	struct text t = {0};
	struct rdmig_replay_record r;
	char err[512] = "";

	add(&t, "rdmig-qemu-record 1\nmachine -\npin_all 0\nblocks 2 total=0\n"
		"block 0 offset=- length=0 chunks=0 file=a.img name=b0\n"
		"block 1 offset=- length=0 chunks=0 file=a.img name=b1\n"
		"phase 0 ram_blocks_request offset=0 hook=0 t=0\n"
		"phase 1 registration offset=0 hook=0 t=0\nstream bytes=0\nend ok\n");
	CHECK_EQ(rdmig_rr_parse(t.p, t.len, &r, err, sizeof(err)), -1);
	CHECK_STR_CONTAINS(err, "line 6: block 1: image 'a.img' is block 0's already");
	CHECK_EQ(r.nblocks, 0u);
	free(t.p);
}

/* 100,000 `touched` lines over all of a 1 TiB block took about 100 s (each
 * walked its million chunks); now each chunk is given its pass once. */
TEST(touched_lines_over_a_whole_block_cost_its_chunks_once)
{
	struct text t = {0};
	struct rdmig_replay_record r;
	char err[512] = "";
	double t0, took;

	head(&t, 1, 1ull << 40);
	add(&t, "touched 1 block=0 data=5-9 zero=-\n");
	add(&t, "phase 2 registration offset=0 hook=0 t=0\n");
	for (int i = 0; i < 100000; i++)
		add(&t, "touched 2 block=0 data=0-1048575 zero=3,0-1048575\n");
	add(&t, "stream bytes=0\nend ok\n");
	t0 = now();
	CHECK_OK(rdmig_rr_parse(t.p, t.len, &r, err, sizeof(err)));
	took = now() - t0;
	CHECK_EQ(r.blocks[0].send_phase[4], 2u);
	CHECK_EQ(r.blocks[0].send_phase[5], 1u); /* its first pass */
	CHECK_EQ(r.blocks[0].send_phase[9], 1u);
	CHECK_EQ(r.blocks[0].send_phase[10], 2u);
	CHECK_EQ(r.blocks[0].send_phase[1048575], 2u);
	if (took > 10.0)
		CHECK_FAIL_AT("parsing took %.1f s", took);
	rdmig_rr_free(&r);
	free(t.p);
}

TEST(touched_lines_out_of_phase_order_are_refused)
{
	refused("touched 3 block=1 data=0 zero=-\n", "touched 3 block=1 data=0 zero=-\ntouched 2 "
		"block=1 data=0 zero=-\n", "line 14: chunks touched in phase 2 after phase 3");
}

CHECK_MAIN()
