/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_chunk_size.c - the registration chunk as an option:
 * rdmig_opts.chunk_size is validated like QEMU's x-rdma-chunk-size (a
 * power of two from 1 MiB to 1 GiB), and the destination engine numbers,
 * registers and bounds chunks by it: at 1 MiB, 32 MiB and 1 GiB, with
 * blocks that are not a multiple of the chunk, hostile chunk indices and
 * lengths just past a block are refused, and what it registers never leaves
 * the chunk asked for nor the block.  No device: the channel and
 * registration are the fake engine_io of tests/fuzz/fake_io.h.
 */
#include <sys/mman.h>
#include "check.h"
#include "fake_io.h"
#include "opts.h"

#define MIB (1024ull * 1024)
#define GIB (1024ull * MIB)

/* ------------------------------------------------------------ options -- */

TEST(chunk_size_defaults_to_1_mib)
{
	struct rdmig_opts o, got;
	char err[RDMIG_ERRMSG_SIZE] = "";

	rdmig_opts_init(&o);
	CHECK_EQ(o.chunk_size, RDMIG_CHUNK_SIZE);
	CHECK_EQ(RDMIG_CHUNK_SIZE, MIB);
	CHECK_OK(rdmig__opts_copy(&got, &o, err));
	CHECK_EQ(got.chunk_size, MIB);
	o.chunk_size = 0; /* zeroed by the caller: the default */
	CHECK_OK(rdmig__opts_copy(&got, &o, err));
	CHECK_EQ(got.chunk_size, MIB);
	CHECK_OK(rdmig__opts_copy(&got, NULL, err));
	CHECK_EQ(got.chunk_size, MIB);
}

/* An older program's struct ends before chunk_size: the default. */
TEST(opts_of_an_older_program_get_the_default_chunk)
{
	struct {
		struct rdmig_opts o;
		unsigned char after[64];
	} m;
	struct rdmig_opts got;
	char err[RDMIG_ERRMSG_SIZE] = "";
	size_t old_size = offsetof(struct rdmig_opts, chunk_size);

	memset(&m, 0xab, sizeof(m)); /* read, 0xab... would be refused */
	rdmig_opts_init_sized(&m.o, old_size);
	CHECK_OK(rdmig__opts_copy(&got, &m.o, err));
	CHECK_EQ(got.chunk_size, MIB);
}

TEST(every_power_of_two_from_1_mib_to_1_gib_is_a_chunk_size)
{
	struct rdmig_opts o, got;
	char err[RDMIG_ERRMSG_SIZE] = "";

	rdmig_opts_init(&o);
	for (uint64_t v = MIB; v <= GIB; v <<= 1) {
		o.chunk_size = v;
		CHECK_OK(rdmig__opts_copy(&got, &o, err));
		CHECK_EQ(got.chunk_size, v);
	}
}

TEST(other_chunk_sizes_are_refused_with_einval)
{
	static const uint64_t bad[] = {1,        4096,          512 * 1024, MIB - 1, MIB + 1,
				       3 * MIB,  33 * MIB,      GIB - MIB,  GIB + 1, 2 * GIB,
				       1ull << 40, UINT64_MAX, 3 * GIB};
	struct rdmig_opts o, got;
	char err[RDMIG_ERRMSG_SIZE] = "";

	rdmig_opts_init(&o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.chunk_size = bad[i];
		err[0] = '\0';
		CHECK_EQ(rdmig__opts_copy(&got, &o, err), RDMIG_EINVAL);
		CHECK_STR_CONTAINS(err, "chunk size");
		CHECK_STR_CONTAINS(err, "power of two from 1 MiB to 1 GiB");
	}
}

/* ------------------------------------------------- the destination -- */


struct run {
	struct fake_frames q;
	struct fake_conn conn;
	struct rdmig_dest *d;
	uint64_t chunk;
	uint8_t *block[2];
	uint64_t length[2];
	size_t nblocks;
	/* the last registration */
	const uint8_t *reg_addr;
	size_t reg_len;
	unsigned regs;
};

static bool next_frame(void *ctx, const uint8_t **buf, size_t *len)
{
	struct run *r = ctx;

	return fake_frames_next(&r->q, buf, len);
}

static void delivered(void *ctx, int rc, const struct rdmig_msg *m)
{
	(void)ctx, (void)rc, (void)m;
}

/* Every registration stays inside a block and starts on a chunk of it. */
static void check_reg(void *ctx, const uint8_t *addr, size_t len, enum engine_access access)
{
	struct run *r = ctx;
	bool inside = false;

	(void)access;
	for (size_t i = 0; i < r->nblocks; i++)
		if (addr >= r->block[i] && len <= r->length[i] &&
		    (uint64_t)(addr - r->block[i]) <= r->length[i] - len &&
		    (uint64_t)(addr - r->block[i]) % r->chunk == 0)
			inside = true;
	if (!inside)
		fake_fail("registration of %zu bytes at %p is not a chunk of a block", len,
			  (const void *)addr);
	r->reg_addr = addr;
	r->reg_len = len;
	r->regs++;
}

static void add_frame(struct run *r, uint32_t type, uint32_t repeat, const void *payload,
		      uint32_t len)
{
	fake_frames_add(&r->q, type, repeat, payload, len);
}

static void add_register(struct run *r, uint32_t type, uint64_t key, uint32_t block,
			 uint64_t chunks)
{
	struct rdmig_register g = {key, block, chunks};
	uint8_t rec[RDMIG_REGISTER_SIZE];

	rdmig_encode_register(&g, rec);
	add_frame(r, type, 1, rec, sizeof(rec));
}

static void add_compress(struct run *r, uint32_t block, uint64_t offset, uint64_t length)
{
	struct rdmig_compress cp = {0, block, offset, length};
	uint8_t rec[RDMIG_COMPRESS_SIZE];

	rdmig_encode_compress(&cp, rec);
	add_frame(r, RDMIG_MSG_COMPRESS, 1, rec, sizeof(rec));
}

/* Blocks of these lengths (untouched mappings: the fakes register nothing
 * for real), a destination with `chunk` set the way `late` says (false:
 * through the options; true: rdmig_dest_set_chunk_size), and the RAM_BLOCKS
 * exchange as the first message. */
static void start(struct run *r, uint64_t chunk, bool late, const uint64_t *lengths, size_t n,
		  bool pin_all)
{
	struct fake_hooks hooks = {next_frame, NULL, delivered, check_reg, NULL, r};
	struct rdmig_block b[2];

	memset(r, 0, sizeof(*r));
	r->chunk = chunk;
	r->nblocks = n;
	for (size_t i = 0; i < n; i++) {
		r->length[i] = lengths[i];
		r->block[i] = mmap(NULL, lengths[i], PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		CHECK(r->block[i] != MAP_FAILED);
		b[i] = (struct rdmig_block){i ? "b" : "a", r->block[i], lengths[i], 0};
	}
	rdmig_opts_init(&r->conn.opts);
	if (!late)
		r->conn.opts.chunk_size = chunk;
	r->conn.established = true;
	r->conn.caps = (struct rdmig_caps){RDMIG_CAP_VERSION, pin_all ? RDMIG_CAP_PIN_ALL : 0};
	fake_begin(&r->conn, &hooks, 0);
	CHECK_OK(rdmig__dest_create(&fake.io, &r->d));
	if (late)
		CHECK_OK(rdmig_dest_set_chunk_size(r->d, chunk));
	CHECK_OK(rdmig_dest_set_blocks(r->d, b, n));
	add_frame(r, RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, NULL, 0);
}

static void finish(struct run *r)
{
	rdmig_dest_destroy(r->d);
	fake_end();
	for (size_t i = 0; i < r->nblocks; i++)
		munmap(r->block[i], r->length[i]);
	fake_frames_free(&r->q);
}

/* Run until the end or a failure: the code. */
static int run(struct run *r)
{
	struct rdmig_event ev = {0};
	int ret;

	do
		ret = rdmig_dest_next(r->d, &ev);
	while (ret == 0 && ev.type != RDMIG_EV_END);
	return ret;
}

/* The rkey of REGISTER_RESULT number i among the replies. */
static const struct fake_region *result_region(unsigned i)
{
	struct rdmig_register_result res;

	if (i >= fake.nreplies || fake.replies[i].type != RDMIG_MSG_REGISTER_RESULT)
		fake_fail("reply %u is not a REGISTER_RESULT", i);
	rdmig_decode_register_result(fake.replies[i].payload, &res);
	return fake_region_of(res.rkey);
}

static const uint64_t chunk_sizes[] = {MIB, 32 * MIB, GIB};

/* A block of 2 chunks and a bit: the last chunk is short. */
static uint64_t odd_length(uint64_t chunk)
{
	return 2 * chunk + 12345;
}

TEST(dest_registers_whole_chunks_of_the_chunk_size)
{
	for (size_t k = 0; k < 3; k++) {
		uint64_t c = chunk_sizes[k], len = odd_length(c);
		static struct run r;
		const struct fake_region *reg;

		start(&r, c, k == 1, &len, 1, false);
		add_register(&r, RDMIG_MSG_REGISTER_REQUEST, c + 4096, 0, 0); /* chunk 1 */
		add_register(&r, RDMIG_MSG_REGISTER_REQUEST, 2 * c + 100, 0, 0); /* short last */
		add_register(&r, RDMIG_MSG_REGISTER_REQUEST, 7, 0, 1); /* chunks 0..1: taken */
		CHECK_EQ(run(&r), RDMIG_EPROTO);
		CHECK_STR_CONTAINS(r.conn.errmsg, "chunk 1 is already registered");
		reg = result_region(1);
		CHECK(reg && reg->addr == r.block[0] + c && reg->len == c);
		reg = result_region(2);
		CHECK(reg && reg->addr == r.block[0] + 2 * c && reg->len == 12345);
		CHECK_EQ(r.regs, 2);
		finish(&r);
	}
}

TEST(dest_registers_a_block_shorter_than_one_chunk_whole)
{
	for (size_t k = 0; k < 3; k++) {
		uint64_t c = chunk_sizes[k], len = 3 * MIB / 2 + 1;
		static struct run r;
		const struct fake_region *reg;

		if (len > c)
			len = c - 4096;
		start(&r, c, false, &len, 1, false);
		add_register(&r, RDMIG_MSG_REGISTER_REQUEST, len - 1, 0, 0);
		add_register(&r, RDMIG_MSG_UNREGISTER_REQUEST, 0, 0, 0);
		CHECK_EQ(run(&r), 0);
		reg = result_region(1);
		CHECK(reg && reg->addr == r.block[0] && reg->len == len);
		CHECK(!reg->live); /* chunk 0 was its own region: released */
		finish(&r);
	}
}

TEST(dest_refuses_a_register_just_past_the_block_at_every_chunk_size)
{
	for (size_t k = 0; k < 3; k++) {
		uint64_t c = chunk_sizes[k], len = odd_length(c);
		static struct run r;

		start(&r, c, false, &len, 1, false);
		add_register(&r, RDMIG_MSG_REGISTER_REQUEST, len, 0, 0);
		CHECK_EQ(run(&r), RDMIG_ERANGE);
		CHECK_STR_CONTAINS(r.conn.errmsg, "is outside block 0");
		CHECK_EQ(fake.errors_sent, 1);
		CHECK_EQ(r.regs, 0);
		finish(&r);
	}
}

/* chunks beyond the block's last: what a source with smaller chunks might
 * ask; refused and named a possible mismatch */
TEST(dest_refuses_chunks_past_the_last_as_a_chunk_size_mismatch)
{
	for (size_t k = 0; k < 3; k++) {
		uint64_t c = chunk_sizes[k], len = odd_length(c);
		static struct run r;
		char want[160];

		start(&r, c, k == 2, &len, 1, false);
		add_register(&r, RDMIG_MSG_REGISTER_REQUEST, 2 * c, 0, 1);
		CHECK_EQ(run(&r), RDMIG_ERANGE);
		snprintf(want, sizeof(want), "chunk 2 plus 1 more of block 0, which has 3 of %llu "
			 "bytes (a chunk-size mismatch?)", (unsigned long long)c);
		CHECK_STR_CONTAINS(r.conn.errmsg, want);
		CHECK_EQ(r.regs, 0);
		finish(&r);

		start(&r, c, false, &len, 1, false);
		add_register(&r, RDMIG_MSG_REGISTER_REQUEST, 0, 0, UINT64_MAX);
		CHECK_EQ(run(&r), RDMIG_ERANGE);
		CHECK_EQ(r.regs, 0);
		finish(&r);

		start(&r, c, false, &len, 1, false);
		add_register(&r, RDMIG_MSG_UNREGISTER_REQUEST, 3, 0, 0);
		CHECK_EQ(run(&r), RDMIG_ERANGE);
		snprintf(want, sizeof(want), "chunk 3 of block 0, which has 3 of %llu bytes (a "
			 "chunk-size mismatch?)", (unsigned long long)c);
		CHECK_STR_CONTAINS(r.conn.errmsg, want);
		finish(&r);
	}
}

/* all chunks at once: one region, clamped to the block */
TEST(dest_registers_every_chunk_of_a_block_in_one_request_up_to_its_end)
{
	for (size_t k = 0; k < 3; k++) {
		uint64_t c = chunk_sizes[k], len = odd_length(c);
		static struct run r;
		const struct fake_region *reg;

		start(&r, c, false, &len, 1, false);
		add_register(&r, RDMIG_MSG_REGISTER_REQUEST, 0, 0, 2);
		CHECK_EQ(run(&r), 0);
		reg = result_region(1);
		CHECK(reg && reg->addr == r.block[0] && reg->len == len);
		finish(&r);
	}
}

TEST(dest_refuses_a_compress_one_byte_past_the_block_at_every_chunk_size)
{
	for (size_t k = 0; k < 3; k++) {
		uint64_t c = chunk_sizes[k], len = odd_length(c);
		static struct run r;

		start(&r, c, false, &len, 1, false);
		add_compress(&r, 0, len - 10, 11);
		CHECK_EQ(run(&r), RDMIG_ERANGE);
		CHECK_STR_CONTAINS(r.conn.errmsg, "is outside block 0");
		finish(&r);
	}
}

/* the library lays blocks out chunk-aligned, at its chunk size */
TEST(dest_lays_blocks_out_on_chunk_boundaries)
{
	for (size_t k = 0; k < 3; k++) {
		uint64_t c = chunk_sizes[k], lens[2] = {c + 1, 4096};
		static struct run r;
		struct rdmig_dest_block db;

		start(&r, c, k != 0, lens, 2, false);
		add_register(&r, RDMIG_MSG_REGISTER_REQUEST, 2 * c + 4095, 1, 0);
		CHECK_EQ(run(&r), 0);
		CHECK_EQ(fake.replies[0].type, RDMIG_MSG_RAM_BLOCKS_RESULT);
		rdmig_decode_dest_block(fake.replies[0].payload + RDMIG_DEST_BLOCK_SIZE, &db);
		CHECK_EQ(db.offset, 2 * c);
		CHECK(result_region(1)->addr == r.block[1]);
		finish(&r);
	}
}

TEST(set_chunk_size_checks_its_value_and_comes_before_the_blocks)
{
	static struct run r;
	uint64_t len = 4096;

	CHECK_EQ(rdmig_dest_set_chunk_size(NULL, MIB), RDMIG_EINVAL);
	start(&r, MIB, false, &len, 1, false);
	CHECK_EQ(rdmig_dest_set_chunk_size(r.d, 32 * MIB), RDMIG_ESTATE);
	CHECK_STR_CONTAINS(r.conn.errmsg, "before the blocks");
	finish(&r);

	memset(&r.conn, 0, sizeof(r.conn));
	rdmig_opts_init(&r.conn.opts);
	r.conn.established = true;
	{
		struct engine_io io = fake_io_of(&r.conn);
		CHECK_OK(rdmig__dest_create(&io, &r.d));
	}
	CHECK_EQ(rdmig_dest_set_chunk_size(r.d, 3 * MIB), RDMIG_EINVAL);
	CHECK_STR_CONTAINS(r.conn.errmsg, "power of two from 1 MiB to 1 GiB");
	CHECK_EQ(rdmig_dest_set_chunk_size(r.d, 2 * GIB), RDMIG_EINVAL);
	CHECK_OK(rdmig_dest_set_chunk_size(r.d, GIB));
	CHECK_OK(rdmig_dest_set_chunk_size(r.d, 0)); /* the default again */
	rdmig_dest_destroy(r.d);
}

CHECK_MAIN()
