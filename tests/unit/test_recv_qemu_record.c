/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_recv_qemu_record.c - what REGISTER_FINISHED costs `rdmig recv --qemu`
 * (tools/recv_qemu_record.c, issue 15 item 6): a pass in which the source
 * registered and compressed nothing is no scan of all RAM, and the phases
 * are capped at RQ_MAX_PHASES with a clear error; record.txt stays cheap.
 * The state has no connection: its counters read as zero, as for a source
 * sending bare REGISTER_FINISHED messages.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "recv_qemu.h"


/* One RAM block of `bytes`, never touched (MAP_NORESERVE, like recv --qemu). */
static void setup(struct rq_state *s, uint64_t bytes)
{
	memset(s, 0, sizeof(*s));
	s->page = sysconf(_SC_PAGESIZE);
	s->qs.count = 1;
	s->qs.blocks = calloc(1, sizeof(*s->qs.blocks));
	s->rb = calloc(1, sizeof(*s->rb));
	s->qs.blocks[0].length = bytes;
	snprintf(s->qs.blocks[0].name, sizeof(s->qs.blocks[0].name), "pc.ram");
	s->rb[0].mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	s->rb[0].nchunks = (uint32_t)(bytes >> RDMIG_CHUNK_SHIFT);
	s->rb[0].data_phase = calloc(s->rb[0].nchunks, sizeof(uint32_t));
	s->rb[0].zero_phase = calloc(s->rb[0].nchunks, sizeof(uint32_t));
	s->rb[0].resident = calloc(s->rb[0].nchunks, sizeof(uint32_t));
	s->rb[0].nonzero = calloc(s->rb[0].nchunks, 1);
	snprintf(s->rb[0].file, sizeof(s->rb[0].file), "pc.ram.img");
}

static void teardown(struct rq_state *s, uint64_t bytes)
{
	munmap(s->rb[0].mem, bytes);
	free(s->rb[0].data_phase);
	free(s->rb[0].zero_phase);
	free(s->rb[0].resident);
	free(s->rb[0].nonzero);
	free(s->rb);
	free(s->qs.blocks);
	free(s->ph);
}

/* 2000 bare REGISTER_FINISHED with 8 GiB of RAM: the old code scanned all
 * 8192 chunks with mincore for each (10-12 ms apiece: over 20 s). */
TEST(bare_register_finished_scans_nothing)
{
	const uint64_t bytes = 8ull << 30;
	struct rq_state s;
	double t0, dt;

	setup(&s, bytes);
	CHECK(s.rb[0].mem != MAP_FAILED);
	t0 = mono_now();
	for (int i = 0; i < 2000; i++)
		CHECK_OK(rq_end_pass(&s));
	dt = mono_now() - t0;
	fprintf(stderr, "2000 REGISTER_FINISHED, 8 GiB of RAM: %.3f s (%.1f us each)\n", dt,
		dt / 2000 * 1e6);
	CHECK(dt < 1.0);
	CHECK_EQ(s.nph, 2000);
	CHECK(!s.ph[1999].scanned);
	teardown(&s, bytes);
}

/* RQ_MAX_PHASES passes are recorded; one more is refused, saying why; the
 * record of that many stays quick to write. */
TEST(phases_are_capped)
{
	const uint64_t bytes = 1ull << 30;
	char dir[] = "/tmp/test-rqrecord.XXXXXX", path[64], line[256];
	struct rq_state s;
	unsigned long phases = 0;
	double t0;
	FILE *f;

	setup(&s, bytes);
	for (uint32_t i = 0; i < RQ_MAX_PHASES; i++)
		if (rq_end_pass(&s))
			CHECK_FAIL_AT("pass %u refused: %s", i, s.err);
	CHECK_EQ(rq_end_pass(&s), -1);
	fprintf(stderr, "%s\n", s.err);
	CHECK(strstr(s.err, "more than 100000 registration passes (REGISTER_FINISHED)"));
	CHECK_EQ(s.nph, RQ_MAX_PHASES);

	CHECK(mkdtemp(dir) != NULL);
	s.a.out = dir;
	CHECK_OK(out_dir_open(&s.a.dir, dir, false, s.err, sizeof(s.err)));
	t0 = mono_now();
	CHECK_OK(rq_write_record(&s, "the test"));
	fprintf(stderr, "record.txt of %u phases written in %.3f s\n", RQ_MAX_PHASES,
		mono_now() - t0);
	CHECK(mono_now() - t0 < 2.0);
	snprintf(path, sizeof(path), "%s/record.txt", dir);
	CHECK((f = fopen(path, "r")) != NULL);
	while (fgets(line, sizeof(line), f))
		phases += !strncmp(line, "phase ", 6);
	fclose(f);
	CHECK_EQ(phases, RQ_MAX_PHASES);
	unlink(path);
	out_dir_close(&s.a.dir);
	rmdir(dir);
	teardown(&s, bytes);
}

CHECK_MAIN()
