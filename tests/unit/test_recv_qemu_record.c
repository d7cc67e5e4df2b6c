/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_recv_qemu_record.c - the record of `rdmig recv --qemu`
 * (src/sessions/qemu_recorder.c and qemu_record_write.c over
 * librdmig-stream's recorder, stream/qemu_record.c): what
 * REGISTER_FINISHED costs (no look at all of RAM; phases capped at
 * QEMU_REC_MAX_PHASES with a clear error; record.txt stays cheap), and the
 * touched chunks built from the library's destination events: which pass
 * registered or only compressed each chunk, as the `touched` lines say.
 * The view has no connection: its counters read as zero, as for a source
 * sending bare REGISTER_FINISHED messages.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "qemu_recorder.h"

/* What recv --qemu keeps around its recorder: the stream parser it reads,
 * a block's memory and image name, the options whose cancel stops a long
 * record, the output directory and the error buffer. */
struct fixture {
	struct rdmig_qs_parser qs;
	struct qemu_recorder rec;
	uint8_t *mem;
	char file[32];
	struct rdmig_opts opts;
	struct out_dir dir;
	char err[768];
};

static const struct qemu_rec_view no_connection; /* counters and stats read as zero */

static int add_phase(struct fixture *s, int kind)
{
	return qemu_rec_add_phase(&s->rec, kind, &no_connection, s->err, sizeof(s->err));
}

static int end_pass(struct fixture *s)
{
	return qemu_rec_end_pass(&s->rec, &no_connection, s->err, sizeof(s->err));
}

static int write_record(struct fixture *s, const char *failure)
{
	return qemu_rec_write(&s->rec, &no_connection, &s->dir, &s->opts, failure, s->err,
			      sizeof(s->err));
}

/* CPU time, not wall time: the bounds are on work, which a loaded host
 * does not stretch (phases_are_capped failed at a load average of 10) */
static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
/* One RAM block of `bytes`, never touched (MAP_NORESERVE, like recv --qemu). */
static void setup(struct fixture *s, uint64_t bytes)
{
	memset(s, 0, sizeof(*s));
	rdmig_opts_init(&s->opts); /* as recv's: no cancel_fd (0 would be stdin) */
	s->dir.fd = -1;
	s->qs.count = 1;
	s->qs.blocks = calloc(1, sizeof(*s->qs.blocks));
	s->qs.blocks[0].length = bytes;
	snprintf(s->qs.blocks[0].name, sizeof(s->qs.blocks[0].name), "pc.ram");
	s->mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	qemu_rec_init(&s->rec, &s->qs);
	CHECK_OK(qemu_rec_open_blocks(&s->rec, s->err, sizeof(s->err)));
	snprintf(s->file, sizeof(s->file), "pc.ram.img");
	s->rec.blocks[0].file = s->file;
	CHECK_OK(qemu_rec_track_block(&s->rec, 0, s->err, sizeof(s->err)));
}

static void teardown(struct fixture *s, uint64_t bytes)
{
	munmap(s->mem, bytes);
	qemu_rec_free(&s->rec);
	free(s->qs.blocks);
}

/* 2000 bare REGISTER_FINISHED with 8 GiB of RAM: an old version scanned all
 * 8192 chunks with mincore for each (10-12 ms apiece: over 20 s). */
TEST(bare_register_finished_scans_nothing)
{
	const uint64_t bytes = 8ull << 30;
	struct fixture s;
	double t0, dt;

	setup(&s, bytes);
	CHECK(s.mem != MAP_FAILED);
	t0 = cpu_seconds();
	for (int i = 0; i < 2000; i++)
		CHECK_OK(end_pass(&s));
	dt = cpu_seconds() - t0;
	fprintf(stderr, "2000 REGISTER_FINISHED, 8 GiB of RAM: %.3f s (%.1f us each)\n", dt,
		dt / 2000 * 1e6);
	CHECK(dt < 1.0);
	CHECK_EQ(s.rec.nphases, 2000);
	CHECK(!s.rec.phases[1999].touched);
	teardown(&s, bytes);
}

/* QEMU_REC_MAX_PHASES passes are recorded; one more is refused, saying why; the
 * record of that many stays quick to write. */
TEST(phases_are_capped)
{
	const uint64_t bytes = 1ull << 30;
	char dir[] = "/tmp/test-rqrecord.XXXXXX", path[64], line[256];
	struct fixture s;
	unsigned long phases = 0;
	double t0;
	FILE *f;

	setup(&s, bytes);
	for (uint32_t i = 0; i < QEMU_REC_MAX_PHASES; i++)
		if (end_pass(&s))
			CHECK_FAIL_AT("pass %u refused: %s", i, s.err);
	CHECK_EQ(end_pass(&s), -1);
	fprintf(stderr, "%s\n", s.err);
	CHECK(strstr(s.err, "more than 100000 registration passes (REGISTER_FINISHED)"));
	CHECK_EQ(s.rec.nphases, QEMU_REC_MAX_PHASES);

	CHECK(mkdtemp(dir) != NULL);
	CHECK_OK(out_dir_open(&s.dir, dir, false, s.err, sizeof(s.err)));
	t0 = cpu_seconds();
	CHECK_OK(write_record(&s, "the test"));
	fprintf(stderr, "record.txt of %u phases written in %.3f s\n", QEMU_REC_MAX_PHASES,
		cpu_seconds() - t0);
	CHECK(cpu_seconds() - t0 < 2.0);
	snprintf(path, sizeof(path), "%s/record.txt", dir);
	CHECK((f = fopen(path, "r")) != NULL);
	while (fgets(line, sizeof(line), f))
		phases += !strncmp(line, "phase ", 6);
	fclose(f);
	CHECK_EQ(phases, QEMU_REC_MAX_PHASES);
	unlink(path);
	out_dir_close(&s.dir);
	rmdir(dir);
	teardown(&s, bytes);
}

/* ------------------------------------------- touched chunks -- */

#define MIB (1ull << 20)

static int note(struct fixture *s, int type, uint32_t block, uint64_t offset, uint64_t len)
{
	struct rdmig_dest_range r = {block, (uint32_t)(offset >> RDMIG_CHUNK_SHIFT), offset, len};

	return qemu_rec_note_range(&s->rec, type, &r, NULL, s->err, sizeof(s->err));
}

/* DIR/record.txt of s (ended as failed: the touched lines are the same). */
static void record_text(struct fixture *s, char *text, size_t size)
{
	char dir[] = "/tmp/test-rqrecord.XXXXXX", path[64];
	size_t n;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_OK(out_dir_open(&s->dir, dir, false, s->err, sizeof(s->err)));
	CHECK_OK(write_record(s, "the test"));
	snprintf(path, sizeof(path), "%s/record.txt", dir);
	CHECK((f = fopen(path, "r")) != NULL);
	n = fread(text, 1, size - 1, f);
	text[n] = '\0';
	fclose(f);
	unlink(path);
	out_dir_close(&s->dir);
	rmdir(dir);
}

/*
 * Phase 0 RAM_BLOCKS_REQUEST, phase 1 QEMU's setup pass (nothing), then:
 * phase 2 registers chunks 0 and 2, compresses 1 and the end of 3, and
 * compresses 5 before registering it (data: what it ends up holding);
 * phase 3 registers 3 (compressed before: zero in 2, data in 3) and
 * compresses 0 and 1 again (no change: data or zero already); phase 4
 * reports nothing and lists no chunk.
 */
TEST(touched_chunks_come_from_the_destination_events)
{
	const uint64_t bytes = 8 * MIB;
	struct fixture s;
	static char text[8192];

	setup(&s, bytes);
	CHECK_OK(add_phase(&s, RDMIG_QREC_RAM_BLOCKS));
	CHECK_OK(end_pass(&s));
	CHECK_OK(note(&s, RDMIG_EV_REGISTERED, 0, 0, MIB));
	CHECK_OK(note(&s, RDMIG_EV_COMPRESSED, 0, MIB, MIB));
	CHECK_OK(note(&s, RDMIG_EV_COMPRESSED, 0, 4 * MIB - 4096, 4096));
	CHECK_OK(note(&s, RDMIG_EV_REGISTERED, 0, 2 * MIB, MIB));
	CHECK_OK(note(&s, RDMIG_EV_COMPRESSED, 0, 5 * MIB, 8192));
	CHECK_OK(note(&s, RDMIG_EV_REGISTERED, 0, 5 * MIB, MIB));
	CHECK_OK(end_pass(&s));
	CHECK_OK(note(&s, RDMIG_EV_REGISTERED, 0, 3 * MIB, MIB));
	CHECK_OK(note(&s, RDMIG_EV_COMPRESSED, 0, 0, 2 * MIB));
	CHECK_OK(end_pass(&s));
	CHECK_OK(end_pass(&s));
	CHECK_EQ(s.rec.nphases, 5);
	CHECK(!s.rec.phases[1].touched && s.rec.phases[2].touched && s.rec.phases[3].touched &&
	      !s.rec.phases[4].touched);
	CHECK_EQ(s.rec.blocks[0].ch.data_phase[3], 3);
	CHECK_EQ(s.rec.blocks[0].ch.zero_phase[3], 2);
	CHECK_EQ(s.rec.blocks[0].ch.zero_phase[5], 0);
	record_text(&s, text, sizeof(text));
	CHECK_STR_CONTAINS(text, "\ntouched 2 block=0 data=0,2,5 zero=1,3\n");
	CHECK_STR_CONTAINS(text, "\ntouched 3 block=0 data=3 zero=-\n");
	CHECK(!strstr(text, "touched 1 ") && !strstr(text, "touched 4 "));
	teardown(&s, bytes);
}

/* The record counts 1 MiB chunks whatever the migration's chunk size: a
 * registration of a 4 MiB chunk marks four; a range is clipped to the
 * block; a block the tool does not have is an error, not a write. */
TEST(a_range_marks_every_record_chunk_it_overlaps)
{
	const uint64_t bytes = 8 * MIB;
	struct fixture s;

	setup(&s, bytes);
	CHECK_OK(add_phase(&s, RDMIG_QREC_RAM_BLOCKS));
	CHECK_OK(note(&s, RDMIG_EV_REGISTERED, 0, 4 * MIB, 4 * MIB));
	CHECK_OK(note(&s, RDMIG_EV_COMPRESSED, 0, MIB + 1, 2 * MIB));
	CHECK_OK(note(&s, RDMIG_EV_COMPRESSED, 0, 7 * MIB, UINT64_MAX));
	CHECK_OK(note(&s, RDMIG_EV_COMPRESSED, 0, 9 * MIB, MIB));
	CHECK_OK(note(&s, RDMIG_EV_COMPRESSED, 0, 0, 0));
	for (uint32_t c = 0; c < 8; c++) {
		CHECK_EQ(s.rec.blocks[0].ch.data_phase[c], c >= 4 ? 1u : 0u);
		CHECK_EQ(s.rec.blocks[0].ch.zero_phase[c], c >= 1 && c <= 3 ? 1u : 0u);
	}
	CHECK_EQ(note(&s, RDMIG_EV_REGISTERED, 1, 0, MIB), -1);
	CHECK_STR_CONTAINS(s.err, "block 1 of 1");
	teardown(&s, bytes);
}

/* record.txt of 20000 passes over a 1 TiB block: each pass's touched line
 * came from a walk of all 1,048,576 chunks (twice), 4 x 10^10 steps;
 * now the chunks are swept once for every pass together. */
TEST(touched_lines_are_written_in_one_sweep_of_the_chunks)
{
	const uint64_t bytes = 1ull << 40;
	const uint32_t passes = 20000;
	size_t size = 8u << 20;
	char *text = malloc(size), want[128];
	struct fixture s;
	double t0, dt;

	setup(&s, bytes);
	CHECK(s.mem != MAP_FAILED);
	CHECK_OK(add_phase(&s, RDMIG_QREC_RAM_BLOCKS));
	CHECK_OK(end_pass(&s));
	/* pass j + 2 registers chunks 2j and 2j + 1 and compresses 2j + 3,
	 * which the next pass registers: zero here, data there */
	for (uint32_t j = 0; j < passes; j++) {
		CHECK_OK(note(&s, RDMIG_EV_REGISTERED, 0, 2ull * j * MIB, 2 * MIB));
		CHECK_OK(note(&s, RDMIG_EV_COMPRESSED, 0, (2ull * j + 3) * MIB, MIB));
		CHECK_OK(end_pass(&s));
	}
	t0 = cpu_seconds();
	record_text(&s, text, size);
	dt = cpu_seconds() - t0;
	fprintf(stderr, "record.txt of %u touched passes over 1 TiB written in %.3f s\n", passes, dt);
	CHECK(dt < 5.0);
	CHECK_STR_CONTAINS(text, "\ntouched 2 block=0 data=0-1 zero=3\n");
	CHECK_STR_CONTAINS(text, "\ntouched 3 block=0 data=2-3 zero=5\n");
	snprintf(want, sizeof(want), "\ntouched %u block=0 data=%u-%u zero=%u\n", passes + 1,
		 2 * (passes - 1), 2 * (passes - 1) + 1, 2 * (passes - 1) + 3);
	CHECK_STR_CONTAINS(text, want);
	CHECK(!strstr(text, "touched 1 "));
	free(text);
	teardown(&s, bytes);
}

/* The recorder stops when its caller says so: after the first
 * few passes of 20,000 nothing more is written but the line that says so. */
static unsigned stop_calls;

static bool stop_after_five(void *ctx)
{
	(void)ctx;
	return ++stop_calls > 5;
}

static void many_passes(struct fixture *s, uint32_t passes)
{
	CHECK_OK(add_phase(s, RDMIG_QREC_RAM_BLOCKS));
	for (uint32_t j = 0; j < passes; j++) {
		CHECK_OK(note(s, RDMIG_EV_REGISTERED, 0, 2ull * j * MIB, MIB));
		CHECK_OK(end_pass(s));
	}
}

TEST(the_recorder_stops_when_asked)
{
	const uint64_t bytes = 1ull << 40;
	size_t size = 1u << 20, n;
	char *text = malloc(size);
	struct fixture s;
	struct rdmig_qrec rec;
	FILE *f;

	setup(&s, bytes);
	many_passes(&s, 20000);
	rec = (struct rdmig_qrec){.qs = &s.qs, .blocks = s.rec.blocks, .phases = s.rec.phases,
				  .nphases = (uint32_t)s.rec.nphases, .stop = stop_after_five};
	CHECK((f = fmemopen(text, size, "w")) != NULL);
	stop_calls = 0;
	CHECK_EQ(rdmig_qrec_write(f, &rec, NULL), -1);
	n = (size_t)ftell(f);
	fclose(f);
	text[n < size ? n : size - 1] = '\0';
	CHECK(n < 4096); /* a handful of passes, not 20,000 */
	CHECK_STR_CONTAINS(text, "\nend failed the record was interrupted\n");
	CHECK(!strstr(text, "touched 100 "));
	free(text);
	teardown(&s, bytes);
}

/* recv --qemu's record stops at SIGINT/SIGTERM: the byte the handler
 * writes to the pipe that is the library's cancel_fd (here written by the
 * test).  The record is kept as far as it got, and the error says so. */
TEST(recv_qemu_record_is_interrupted_by_the_cancel_pipe)
{
	const uint64_t bytes = 1ull << 40;
	char dir[] = "/tmp/test-rqrecord.XXXXXX", path[64], *text = malloc(1 << 20);
	struct fixture s;
	int pipefd[2];
	size_t n;
	FILE *f;

	setup(&s, bytes);
	many_passes(&s, 20000);
	CHECK_OK(pipe(pipefd));
	CHECK_EQ(write(pipefd[1], "!", 1), 1);
	s.opts.cancel_fd = pipefd[0];
	CHECK(mkdtemp(dir) != NULL);
	CHECK_OK(out_dir_open(&s.dir, dir, false, s.err, sizeof(s.err)));
	CHECK_EQ(write_record(&s, NULL), -1);
	CHECK_STR_CONTAINS(s.err, "was interrupted");
	snprintf(path, sizeof(path), "%s/record.txt", dir);
	CHECK((f = fopen(path, "r")) != NULL);
	n = fread(text, 1, (1 << 20) - 1, f);
	text[n] = '\0';
	fclose(f);
	CHECK(n < 4096);
	CHECK_STR_CONTAINS(text, "\nend failed the record was interrupted\n");
	unlink(path);
	out_dir_close(&s.dir);
	rmdir(dir);
	close(pipefd[0]);
	close(pipefd[1]);
	free(text);
	teardown(&s, bytes);
}

CHECK_MAIN()
