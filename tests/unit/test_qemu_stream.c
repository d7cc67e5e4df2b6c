/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_qemu_stream.c - the reader of QEMU's migration stream: a stream
 * built by hand from the format (docs/qemu-stream.md) parses the same at
 * every split point, a real QEMU 7.2 head gives QEMU's block list, a
 * stream cut anywhere before its end is refused, and each rule rejects
 * what breaks it with a message naming the field, the value and the offset.
 *
 * Every piece is fed from its own exact-size heap copy, so that a read past
 * the data is caught by AddressSanitizer (RDMIG_SANITIZE=ON).
 */
#include "check.h"
#include <rdmig/qemu.h>

#define MIB (1ull << 20)

struct raw {
	uint8_t b[8192];
	size_t n;
};

static void be(struct raw *r, uint64_t v, size_t n)
{
	for (size_t i = n; i-- > 0; v >>= 8)
		r->b[r->n + i] = (uint8_t)v;
	r->n += n;
}

static void bytes(struct raw *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

/* u8 length + text, as QEMU writes names */
static void str8(struct raw *r, const char *s)
{
	be(r, strlen(s), 1);
	bytes(r, s, strlen(s));
}

static void file_header(struct raw *r)
{
	r->n = 0;
	be(r, 0x5145564d, 4);
	be(r, 3, 4);
}

static void configuration(struct raw *r, const char *machine)
{
	be(r, 0x07, 1);
	be(r, strlen(machine), 4);
	bytes(r, machine, strlen(machine));
}

static void section_start(struct raw *r, uint32_t id, const char *name, uint32_t version)
{
	be(r, 0x01, 1);
	be(r, id, 4);
	str8(r, name);
	be(r, 0, 4);
	be(r, version, 4);
}

static void footer(struct raw *r, uint32_t id)
{
	be(r, 0x7e, 1);
	be(r, id, 4);
}

static void block(struct raw *r, const char *name, uint64_t len)
{
	str8(r, name);
	be(r, len, 8);
}

#define HOOK 0x80u
#define EOS 0x10u

static const char vmdesc[] = "{\"page_size\": 4096, \"devices\": []}";

/* The head up to and including the block list: what arrives before
 * RAM_BLOCKS_REQUEST, minus the HOOK word. */
static void sample_head(struct raw *r)
{
	file_header(r);
	configuration(r, "pc-i440fx-7.2");
	be(r, 0x05, 1); /* subsection configuration/uuid */
	str8(r, "configuration/uuid");
	be(r, 1, 4);
	for (int i = 0; i < 16; i++)
		be(r, 0x10 + i, 1);
	be(r, 0x08, 1); /* QEMU_VM_COMMAND PING */
	be(r, 2, 2);
	be(r, 4, 2);
	be(r, 1, 4);
	section_start(r, 2, "ram", 4);
	be(r, (64 * MIB + 128 * 1024 + 256 * 1024) | 0x04, 8);
	block(r, "pc.ram", 64 * MIB);
	block(r, "/rom@etc/acpi/tables", 128 * 1024);
	block(r, "pc.bios", 256 * 1024);
}

/* One iteration's RAM section over RDMA: HOOK, EOS, footer. */
static void ram_section(struct raw *r, int type, uint32_t id)
{
	if (type) {
		be(r, (uint64_t)type, 1);
		be(r, id, 4);
	}
	be(r, HOOK, 8);
	be(r, EOS, 8);
	footer(r, id);
}

/* Device state: a FULL section whose data holds decoys of the end. */
static void device_state(struct raw *r)
{
	static const uint8_t data[] = {
		0x00, 0x06, 0x00, 0x00, 0x00, 0x05, '{', 'a', 0x00, 'b', '}', /* decoy with a NUL */
		0x00, 0x06, 0xff, 0xff, 0xff, 0xff, '{',                      /* decoy, too long */
		0x7e, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,               /* footer-like */
	};
	be(r, 0x04, 1);
	be(r, 3, 4);
	str8(r, "timer");
	be(r, 0, 4);
	be(r, 2, 4);
	bytes(r, data, sizeof(data));
	footer(r, 3);
}

static void eof_vmdesc(struct raw *r)
{
	be(r, 0x00, 1);
	be(r, 0x06, 1);
	be(r, strlen(vmdesc), 4);
	bytes(r, vmdesc, strlen(vmdesc));
}

/* A whole stream as QEMU 7.2 sends it over RDMA: setup, one iteration,
 * the completion, device state, EOF and vmdesc.  *eof: QEMU_VM_EOF's
 * offset. */
static void sample_stream(struct raw *r, size_t *blocks_end, size_t *eof)
{
	sample_head(r);
	*blocks_end = r->n;
	ram_section(r, 0, 2);
	ram_section(r, 0x02, 2);
	ram_section(r, 0x03, 2);
	device_state(r);
	*eof = r->n;
	eof_vmdesc(r);
}

/* Feed [data, data + len) from an exact-size copy. */
static int feed(struct rdmig_qs_parser *p, const uint8_t *data, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ev;

	if (len)
		memcpy(copy, data, len);
	ev = rdmig_qs_feed(p, copy, len);
	free(copy);
	return ev;
}

static int feed_all(struct rdmig_qs_parser *p, const struct raw *r)
{
	return feed(p, r->b, r->n);
}

/* ---------------------------------------------------------------- cases -- */

TEST(whole_stream)
{
	struct rdmig_qs_parser p;
	struct raw r;
	size_t blocks_end, eof;
	int ev;

	sample_stream(&r, &blocks_end, &eof);
	rdmig_qs_init(&p, 1ull << 40);
	ev = feed_all(&p, &r);
	CHECK_EQ(ev, RDMIG_QS_EV_BLOCKS | RDMIG_QS_EV_HOOK);
	CHECK(!strcmp(p.machine, "pc-i440fx-7.2"));
	CHECK_EQ(p.count, 3);
	CHECK(!strcmp(p.blocks[0].name, "pc.ram"));
	CHECK_EQ(p.blocks[0].length, 64 * MIB);
	CHECK(!strcmp(p.blocks[1].name, "/rom@etc/acpi/tables"));
	CHECK_EQ(p.blocks[1].length, 128 * 1024);
	CHECK(!strcmp(p.blocks[2].name, "pc.bios"));
	CHECK_EQ(p.total, 64 * MIB + 384 * 1024);
	CHECK_EQ(p.blocks_end, blocks_end);
	CHECK_EQ(p.ram_section_id, 2);
	CHECK_EQ(p.hooks, 3);
	CHECK_EQ(p.ram_sections, 3);
	CHECK(p.ram_ended);
	CHECK(p.opaque);
	CHECK_STR_CONTAINS(p.opaque_why, "QEMU_VM_SECTION_FULL");
	CHECK_OK(rdmig_qs_finish(&p));
	CHECK_EQ(p.end, RDMIG_QS_END_VMDESC);
	CHECK_EQ(p.eof_offset, eof);
	rdmig_qs_free(&p);
}

/* The hooks' offsets: where each registration phase starts. */
TEST(hook_offsets)
{
	struct rdmig_qs_parser p;
	struct raw r;
	size_t blocks_end, eof, phase[3];

	sample_stream(&r, &blocks_end, &eof);
	phase[0] = blocks_end + 8;
	phase[1] = blocks_end + 8 + 8 + 5 + 5 + 8; /* EOS, footer, PART header, HOOK */
	phase[2] = phase[1] + 8 + 5 + 5 + 8;
	rdmig_qs_init(&p, 1ull << 40);
	for (size_t i = 0, h = 0; i < r.n; i++) {
		int ev = feed(&p, r.b + i, 1);
		CHECK(ev >= 0);
		if (ev & RDMIG_QS_EV_HOOK) {
			CHECK(h < 3);
			CHECK_EQ(p.last_hook_end, phase[h]);
			CHECK_EQ(p.last_hook_end, i + 1);
			h++;
		}
	}
	CHECK_OK(rdmig_qs_finish(&p));
	rdmig_qs_free(&p);
}

/* Any split into two pieces (and byte by byte) gives the same result. */
TEST(every_split_point)
{
	struct raw r;
	size_t blocks_end, eof;

	sample_stream(&r, &blocks_end, &eof);
	for (size_t k = 0; k <= r.n; k++) {
		struct rdmig_qs_parser p;
		int e1, e2;

		rdmig_qs_init(&p, 1ull << 40);
		e1 = feed(&p, r.b, k);
		e2 = feed(&p, r.b + k, r.n - k);
		if (e1 < 0 || e2 < 0)
			CHECK_FAIL_AT("split at %zu: %s", k, rdmig_qs_errmsg(&p));
		CHECK_EQ(e1 | e2, RDMIG_QS_EV_BLOCKS | RDMIG_QS_EV_HOOK);
		CHECK_EQ((e1 & RDMIG_QS_EV_BLOCKS) != 0, k >= blocks_end);
		CHECK_EQ(p.count, 3);
		CHECK_EQ(p.blocks_end, blocks_end);
		CHECK_EQ(p.hooks, 3);
		CHECK(!strcmp(p.blocks[2].name, "pc.bios"));
		if (rdmig_qs_finish(&p))
			CHECK_FAIL_AT("split at %zu: %s", k, rdmig_qs_errmsg(&p));
		CHECK_EQ(p.eof_offset, eof);
		rdmig_qs_free(&p);
	}
}

TEST(byte_by_byte)
{
	struct rdmig_qs_parser p;
	struct raw r;
	size_t blocks_end, eof;
	int all = 0;

	sample_stream(&r, &blocks_end, &eof);
	rdmig_qs_init(&p, 1ull << 40);
	for (size_t i = 0; i < r.n; i++) {
		int ev = feed(&p, r.b + i, 1);
		if (ev < 0)
			CHECK_FAIL_AT("byte %zu: %s", i, rdmig_qs_errmsg(&p));
		if (ev & RDMIG_QS_EV_BLOCKS)
			CHECK_EQ(i + 1, blocks_end);
		all |= ev;
	}
	CHECK_EQ(all, RDMIG_QS_EV_BLOCKS | RDMIG_QS_EV_HOOK);
	CHECK_OK(rdmig_qs_finish(&p));
	CHECK_EQ(p.end, RDMIG_QS_END_VMDESC);
	rdmig_qs_free(&p);
}

/* A disconnect anywhere before the end is not a proper end, including
 * right after QEMU_VM_EOF inside device state (or after the decoys in it,
 * which look like a footer followed by QEMU_VM_EOF). */
TEST(every_truncation_fails)
{
	struct raw r;
	size_t blocks_end, eof;

	sample_stream(&r, &blocks_end, &eof);
	for (size_t k = 0; k < r.n; k++) {
		struct rdmig_qs_parser p;

		rdmig_qs_init(&p, 1ull << 40);
		CHECK(feed(&p, r.b, k) >= 0);
		if (!rdmig_qs_finish(&p)) {
			CHECK_FAIL_AT("a stream cut after %zu of %zu bytes was accepted", k, r.n);
		} else {
			CHECK_STR_CONTAINS(rdmig_qs_errmsg(&p), "stream stopped after");
		}
		rdmig_qs_free(&p);
	}
}

TEST(truncation_messages)
{
	struct rdmig_qs_parser p;
	struct raw r;
	size_t blocks_end, eof;

	sample_stream(&r, &blocks_end, &eof);
	rdmig_qs_init(&p, 1ull << 40);
	feed(&p, r.b, 30);
	CHECK_EQ(rdmig_qs_finish(&p), -1);
	CHECK_STR_CONTAINS(rdmig_qs_errmsg(&p), "after 30 bytes");
	CHECK_STR_CONTAINS(rdmig_qs_errmsg(&p), "before QEMU_VM_EOF");
	rdmig_qs_free(&p);

	rdmig_qs_init(&p, 1ull << 40);
	feed(&p, r.b, r.n - 3);
	CHECK_EQ(rdmig_qs_finish(&p), -1);
	CHECK_STR_CONTAINS(rdmig_qs_errmsg(&p), "without QEMU_VM_EOF and its vmdesc");
	CHECK_STR_CONTAINS(rdmig_qs_errmsg(&p), "QEMU_VM_SECTION_FULL");
	rdmig_qs_free(&p);
}

/* Without device state the parser follows the stream to its last byte. */
TEST(structured_end)
{
	struct rdmig_qs_parser p;
	struct raw r;
	size_t end_no_vmdesc;

	sample_head(&r);
	ram_section(&r, 0, 2);
	ram_section(&r, 0x03, 2);
	be(&r, 0x00, 1);
	end_no_vmdesc = r.n;
	rdmig_qs_init(&p, 1ull << 40);
	CHECK(feed(&p, r.b, end_no_vmdesc) >= 0);
	CHECK(!p.opaque);
	CHECK_OK(rdmig_qs_finish(&p));
	CHECK_EQ(p.end, RDMIG_QS_END_EOF);
	CHECK_EQ(p.eof_offset, end_no_vmdesc - 1);
	rdmig_qs_free(&p);

	be(&r, 0x06, 1);
	be(&r, strlen(vmdesc), 4);
	bytes(&r, vmdesc, strlen(vmdesc));
	for (size_t k = 0; k <= r.n; k++) {
		rdmig_qs_init(&p, 1ull << 40);
		CHECK(feed(&p, r.b, k) >= 0 && feed(&p, r.b + k, r.n - k) >= 0);
		CHECK(!p.opaque);
		CHECK_OK(rdmig_qs_finish(&p));
		CHECK_EQ(p.end, RDMIG_QS_END_VMDESC);
		rdmig_qs_free(&p);
	}
	/* cut inside the vmdesc */
	rdmig_qs_init(&p, 1ull << 40);
	feed(&p, r.b, r.n - 1);
	CHECK_EQ(rdmig_qs_finish(&p), -1);
	CHECK_STR_CONTAINS(rdmig_qs_errmsg(&p), "inside the vmdesc");
	rdmig_qs_free(&p);
}

/* The head of a real stream: QEMU 7.2, -M pc, 64 MiB from a memory backend
 * named "mem", -nodefaults (its first 180 bytes, up to the block list). */
TEST(qemu_7_2_head)
{
	static const uint8_t head[] = {
		0x51, 0x45, 0x56, 0x4d, 0x00, 0x00, 0x00, 0x03, 0x07, 0x00, 0x00, 0x00,
		0x0d, 0x70, 0x63, 0x2d, 0x69, 0x34, 0x34, 0x30, 0x66, 0x78, 0x2d, 0x37,
		0x2e, 0x32, 0x01, 0x00, 0x00, 0x00, 0x02, 0x03, 0x72, 0x61, 0x6d, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x04,
		0x08, 0x20, 0x04, 0x03, 0x6d, 0x65, 0x6d, 0x00, 0x00, 0x00, 0x00, 0x04,
		0x00, 0x00, 0x00, 0x14, 0x2f, 0x72, 0x6f, 0x6d, 0x40, 0x65, 0x74, 0x63,
		0x2f, 0x61, 0x63, 0x70, 0x69, 0x2f, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x73,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x07, 0x70, 0x63, 0x2e,
		0x62, 0x69, 0x6f, 0x73, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00,
		0x06, 0x70, 0x63, 0x2e, 0x72, 0x6f, 0x6d, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x02, 0x00, 0x00, 0x15, 0x2f, 0x72, 0x6f, 0x6d, 0x40, 0x65, 0x74, 0x63,
		0x2f, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x2d, 0x6c, 0x6f, 0x61, 0x64, 0x65,
		0x72, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x12, 0x2f, 0x72,
		0x6f, 0x6d, 0x40, 0x65, 0x74, 0x63, 0x2f, 0x61, 0x63, 0x70, 0x69, 0x2f,
		0x72, 0x73, 0x64, 0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
	};
	static const struct { const char *name; uint64_t length; } want[] = {
		{"mem", 64 * MIB}, {"/rom@etc/acpi/tables", 0x20000}, {"pc.bios", 0x40000},
		{"pc.rom", 0x20000}, {"/rom@etc/table-loader", 0x1000}, {"/rom@etc/acpi/rsdp", 0x1000},
	};
	struct rdmig_qs_parser p;

	rdmig_qs_init(&p, 1ull << 40);
	CHECK_EQ(feed(&p, head, sizeof(head)), RDMIG_QS_EV_BLOCKS);
	CHECK(!strcmp(p.machine, "pc-i440fx-7.2"));
	CHECK_EQ(p.count, 6);
	CHECK_EQ(p.total, 0x4082000);
	CHECK_EQ(p.blocks_end, sizeof(head));
	for (int i = 0; i < 6; i++) {
		CHECK(!strcmp(p.blocks[i].name, want[i].name));
		CHECK_EQ(p.blocks[i].length, want[i].length);
	}
	rdmig_qs_free(&p);
}

/* target-page-bits changes where the flags end in RAM words. */
TEST(target_page_bits)
{
	struct rdmig_qs_parser p;
	struct raw r;

	file_header(&r);
	configuration(&r, "virt-7.2");
	be(&r, 0x05, 1);
	str8(&r, "configuration/target-page-bits");
	be(&r, 1, 4);
	be(&r, 16, 4);
	section_start(&r, 1, "ram", 4);
	be(&r, (128 * 1024) | 0x04, 8);
	block(&r, "mach-virt.ram", 128 * 1024);
	rdmig_qs_init(&p, 1ull << 40);
	CHECK_EQ(feed_all(&p, &r), RDMIG_QS_EV_BLOCKS);
	CHECK_EQ(p.page_bits, 16);
	rdmig_qs_free(&p);

	/* a 4 KiB block is not a whole 64 KiB page */
	file_header(&r);
	configuration(&r, "virt-7.2");
	be(&r, 0x05, 1);
	str8(&r, "configuration/target-page-bits");
	be(&r, 1, 4);
	be(&r, 16, 4);
	section_start(&r, 1, "ram", 4);
	be(&r, (128 * 1024) | 0x04, 8);
	block(&r, "x", 4096);
	rdmig_qs_init(&p, 1ull << 40);
	CHECK_EQ(feed_all(&p, &r), -1);
	CHECK_STR_CONTAINS(rdmig_qs_errmsg(&p),
			   "length 4096 is not a positive multiple of the 65536-byte page");
	rdmig_qs_free(&p);
}

/* A stream without configuration (old machine types) and without footers. */
TEST(no_configuration_no_footers)
{
	struct rdmig_qs_parser p;
	struct raw r;

	file_header(&r);
	section_start(&r, 0, "ram", 4);
	be(&r, (8 * MIB) | 0x04, 8);
	block(&r, "pc.ram", 8 * MIB);
	be(&r, HOOK, 8);
	be(&r, EOS, 8);
	be(&r, 0x03, 1); /* END, no footer before it */
	be(&r, 0, 4);
	be(&r, HOOK, 8);
	be(&r, EOS, 8);
	eof_vmdesc(&r);
	rdmig_qs_init(&p, 1ull << 40);
	CHECK_EQ(feed_all(&p, &r), RDMIG_QS_EV_BLOCKS | RDMIG_QS_EV_HOOK);
	CHECK(!strcmp(p.machine, ""));
	CHECK(p.ram_ended);
	CHECK_OK(rdmig_qs_finish(&p));
	rdmig_qs_free(&p);
}

/* ------------------------------------------------------ hostile input -- */

/* Feed r; the parser must fail with a message holding every needle. */
#define CHECK_REJECTS(r, ...)                                                                      \
	do {                                                                                       \
		static const char *const needles_[] = {__VA_ARGS__};                               \
		struct rdmig_qs_parser p_;                                                         \
		rdmig_qs_init(&p_, 1ull << 32);                                                    \
		if (feed_all(&p_, (r)) != -1)                                                      \
			CHECK_FAIL_AT("accepted; expected \"%s\"", needles_[0]);                   \
		for (size_t i_ = 0; i_ < sizeof(needles_) / sizeof(needles_[0]); i_++)             \
			CHECK_STR_CONTAINS(rdmig_qs_errmsg(&p_), needles_[i_]);                    \
		CHECK_EQ(rdmig_qs_feed(&p_, "x", 1), -1); /* stays failed */                       \
		CHECK_EQ(rdmig_qs_finish(&p_), -1);                                                \
		rdmig_qs_free(&p_);                                                                \
	} while (0)

/* The head up to the ram section's version: callers add the RAM setup. */
static void ram_prefix(struct raw *r)
{
	file_header(r);
	configuration(r, "pc-i440fx-7.2");
	section_start(r, 2, "ram", 4);
}

TEST(bad_file_header)
{
	struct raw r = {.n = 0};

	be(&r, 0x524d4948, 4);
	be(&r, 3, 4);
	CHECK_REJECTS(&r, "stream offset 0 (file magic)", "0x524d4948", "not a QEMU migration");
	file_header(&r);
	r.b[7] = 2;
	CHECK_REJECTS(&r, "stream offset 4 (file version)", ": 2 (");
}

TEST(bad_configuration)
{
	struct raw r;

	file_header(&r);
	be(&r, 0x07, 1);
	be(&r, 0, 4);
	CHECK_REJECTS(&r, "stream offset 9 (configuration: machine name length)", "0 (must be 1 to 256)");
	file_header(&r);
	be(&r, 0x07, 1);
	be(&r, 0x7fffffff, 4);
	CHECK_REJECTS(&r, "machine name length", "2147483647");
	file_header(&r);
	configuration(&r, "pc\x01x");
	CHECK_REJECTS(&r, "stream offset 13 (configuration: machine name)", "byte 2 is 0x01");
	file_header(&r);
	configuration(&r, "pc");
	configuration(&r, "pc");
	CHECK_REJECTS(&r, "only allowed once");
	file_header(&r);
	configuration(&r, "pc");
	be(&r, 0x05, 1);
	str8(&r, "configuration/new-thing");
	CHECK_REJECTS(&r, "(subsection name)", "'configuration/new-thing' is not understood");
	file_header(&r);
	configuration(&r, "pc");
	be(&r, 0x05, 1);
	str8(&r, "configuration/uuid");
	be(&r, 2, 4);
	CHECK_REJECTS(&r, "(subsection version)", "version 2");
	file_header(&r);
	configuration(&r, "pc");
	be(&r, 0x05, 1);
	str8(&r, "configuration/target-page-bits");
	be(&r, 1, 4);
	be(&r, 40, 4);
	CHECK_REJECTS(&r, "(target page bits)", "40");
}

TEST(capability_refused)
{
	struct raw r;

	file_header(&r);
	configuration(&r, "pc");
	be(&r, 0x05, 1);
	str8(&r, "configuration/capabilities");
	be(&r, 1, 4);
	be(&r, 1, 4);
	str8(&r, "x-ignore-shared");
	CHECK_REJECTS(&r, "(capability name)", "'x-ignore-shared'", "not supported");
}

TEST(bad_sections)
{
	struct raw r;

	file_header(&r);
	be(&r, 0x42, 1);
	CHECK_REJECTS(&r, "stream offset 8 (section type)", "0x42 is not a section type");
	file_header(&r);
	section_start(&r, 1, "block", 1);
	CHECK_REJECTS(&r, "section 'block' (id 1) starts before the RAM section");
	file_header(&r);
	be(&r, 0x04, 1);
	CHECK_REJECTS(&r, "device state (QEMU_VM_SECTION_FULL) before the RAM section");
	file_header(&r);
	be(&r, 0x02, 1);
	be(&r, 7, 4);
	CHECK_REJECTS(&r, "QEMU_VM_SECTION_PART of section 7 before the RAM section");
	file_header(&r);
	be(&r, 0x00, 1);
	CHECK_REJECTS(&r, "QEMU_VM_EOF before any RAM section");
	file_header(&r);
	section_start(&r, 2, "ram", 3);
	CHECK_REJECTS(&r, "(section version)", "'ram' section version 3");
	file_header(&r);
	be(&r, 0x01, 1);
	be(&r, 2, 4);
	be(&r, 0, 1);
	CHECK_REJECTS(&r, "(section name length)", ": 0");
}

TEST(bad_commands)
{
	struct raw r;

	file_header(&r);
	be(&r, 0x08, 1);
	be(&r, 3, 2); /* POSTCOPY_ADVISE */
	be(&r, 16, 2);
	CHECK_REJECTS(&r, "stream offset 9 (command header)", "QEMU_VM_COMMAND 3 (POSTCOPY_ADVISE)");
	file_header(&r);
	be(&r, 0x08, 1);
	be(&r, 2, 2); /* PING with a wrong length */
	be(&r, 60000, 2);
	CHECK_REJECTS(&r, "(PING) of 60000 bytes");
	file_header(&r);
	be(&r, 0x08, 1);
	be(&r, 999, 2);
	be(&r, 0, 2);
	CHECK_REJECTS(&r, "QEMU_VM_COMMAND 999 (?)");
}

/* QEMU 10.0 (machine types 10.0 and later) sends MIG_CMD_SWITCHOVER_START
 * between the last iteration and the completion; it carries nothing. */
TEST(qemu_10_switchover_start)
{
	struct rdmig_qs_parser p;
	struct raw r;

	sample_head(&r);
	ram_section(&r, 0, 2);
	ram_section(&r, 0x02, 2);
	be(&r, 0x08, 1); /* QEMU_VM_COMMAND SWITCHOVER_START */
	be(&r, 11, 2);
	be(&r, 0, 2);
	ram_section(&r, 0x03, 2);
	device_state(&r);
	eof_vmdesc(&r);
	rdmig_qs_init(&p, 1ull << 40);
	CHECK_EQ(feed_all(&p, &r), RDMIG_QS_EV_BLOCKS | RDMIG_QS_EV_HOOK);
	CHECK_EQ(p.hooks, 3);
	CHECK(p.ram_ended);
	CHECK_OK(rdmig_qs_finish(&p));
	CHECK_EQ(p.end, RDMIG_QS_END_VMDESC);
	rdmig_qs_free(&p);

	file_header(&r); /* with a payload it is not QEMU's */
	be(&r, 0x08, 1);
	be(&r, 11, 2);
	be(&r, 4, 2);
	CHECK_REJECTS(&r, "QEMU_VM_COMMAND 11 (SWITCHOVER_START) of 4 bytes");
}

TEST(bad_ram_total)
{
	struct raw r;

	ram_prefix(&r);
	be(&r, (8 * MIB) | 0x08, 8);
	CHECK_REJECTS(&r, "(RAM total size word)", "0x0000000000800008", "flags 0x8");
	ram_prefix(&r);
	be(&r, 0x04, 8);
	CHECK_REJECTS(&r, "announces 0 bytes");
	ram_prefix(&r);
	be(&r, (1ull << 40) | 0x04, 8);
	CHECK_REJECTS(&r, "announces 1099511627776 bytes of RAM, above the limit of 4294967296");
}

TEST(bad_blocks)
{
	struct raw r;

	ram_prefix(&r);
	be(&r, (8 * MIB) | 0x04, 8);
	be(&r, 0, 1);
	CHECK_REJECTS(&r, "(RAM block name length)", "RAM block 0: name length 0");

	ram_prefix(&r);
	be(&r, (8 * MIB) | 0x04, 8);
	block(&r, "pc\xff.ram", 8 * MIB);
	CHECK_REJECTS(&r, "(RAM block name)", "byte 2 is 0xff");

	ram_prefix(&r);
	be(&r, (8 * MIB) | 0x04, 8);
	block(&r, "a", 4 * MIB);
	block(&r, "a", 4 * MIB);
	CHECK_REJECTS(&r, "RAM blocks 0 and 1 are both named 'a'");

	ram_prefix(&r);
	be(&r, (8 * MIB) | 0x04, 8);
	block(&r, "a", 0);
	CHECK_REJECTS(&r, "(RAM block length)", "'a': length 0 is not a positive multiple");

	ram_prefix(&r);
	be(&r, (8 * MIB) | 0x04, 8);
	block(&r, "a", 4 * MIB + 100);
	CHECK_REJECTS(&r, "length 4194404 is not a positive multiple of the 4096-byte page");

	ram_prefix(&r);
	be(&r, (8 * MIB) | 0x04, 8);
	block(&r, "a", 4 * MIB);
	block(&r, "b", 8 * MIB);
	CHECK_REJECTS(&r, "RAM block 1 'b': length 8388608 takes the blocks past the announced "
		      "total of 8388608 bytes (4194304 before it)");

	/* a length that would wrap a 64-bit sum */
	ram_prefix(&r);
	be(&r, (8 * MIB) | 0x04, 8);
	block(&r, "a", 4 * MIB);
	block(&r, "b", 0xfffffffffffff000ull);
	CHECK_REJECTS(&r, "takes the blocks past the announced total");
}

TEST(too_many_blocks)
{
	struct rdmig_qs_parser p;
	struct raw r;
	uint8_t *buf;
	size_t n;

	/* 4097 one-page blocks: the head itself is too large for struct raw */
	ram_prefix(&r);
	be(&r, (4097ull * 4096) | 0x04, 8);
	buf = malloc(r.n + 4097 * 16);
	memcpy(buf, r.b, r.n);
	n = r.n;
	for (int i = 0; i < 4097; i++) {
		char name[16]; /* "b%04d" of an int: the compiler counts 11 digits */
		snprintf(name, sizeof(name), "b%04d", i);
		buf[n++] = 5;
		memcpy(buf + n, name, 5);
		n += 5;
		for (int k = 0; k < 8; k++)
			buf[n++] = (uint8_t)(4096ull >> (56 - 8 * k));
	}
	rdmig_qs_init(&p, 1ull << 40);
	CHECK_EQ(feed(&p, buf, n), -1);
	CHECK_STR_CONTAINS(rdmig_qs_errmsg(&p), "more than 4096 RAM blocks");
	rdmig_qs_free(&p);
	free(buf);
}

TEST(bad_ram_data)
{
	struct raw r;

	/* a wrong footer id */
	sample_head(&r);
	be(&r, HOOK, 8);
	be(&r, EOS, 8);
	footer(&r, 5);
	CHECK_REJECTS(&r, "(section footer id)", "5, but the section is 2");

	/* footers were sent, then one is missing */
	sample_head(&r);
	ram_section(&r, 0, 2);
	be(&r, 0x02, 1);
	be(&r, 2, 4);
	be(&r, EOS, 8);
	be(&r, 0x03, 1);
	CHECK_REJECTS(&r, "(byte after RAM_SAVE_FLAG_EOS)", "section 2 ends without its footer");

	/* ram continues after its END */
	sample_head(&r);
	ram_section(&r, 0, 2);
	ram_section(&r, 0x03, 2);
	be(&r, 0x02, 1);
	be(&r, 2, 4);
	CHECK_REJECTS(&r, "QEMU_VM_SECTION_PART of 'ram' after its END");

	/* a second ram START */
	sample_head(&r);
	ram_section(&r, 0, 2);
	section_start(&r, 9, "ram", 4);
	CHECK_REJECTS(&r, "a second 'ram' section (id 9)");
}

/* Unknown RAM data or another iterable section: not an error, but the
 * parser only watches for the end from there. */
TEST(unknown_data_goes_opaque)
{
	struct rdmig_qs_parser p;
	struct raw r;

	sample_head(&r);
	be(&r, HOOK, 8);
	be(&r, 0x1000 | 0x08, 8); /* a page: not RDMA */
	rdmig_qs_init(&p, 1ull << 40);
	CHECK_EQ(feed_all(&p, &r), RDMIG_QS_EV_BLOCKS | RDMIG_QS_EV_HOOK);
	CHECK(p.opaque);
	CHECK_EQ(p.opaque_from, r.n - 8);
	CHECK_STR_CONTAINS(p.opaque_why, "RAM data word 0x0000000000001008");
	footer(&r, 2);
	eof_vmdesc(&r);
	CHECK(feed(&p, r.b + r.n - 5 - 6 - strlen(vmdesc), 5 + 6 + strlen(vmdesc)) >= 0);
	CHECK_OK(rdmig_qs_finish(&p));
	CHECK_EQ(p.end, RDMIG_QS_END_VMDESC);
	rdmig_qs_free(&p);

	sample_head(&r);
	ram_section(&r, 0, 2);
	section_start(&r, 3, "dirty-bitmap", 1);
	rdmig_qs_init(&p, 1ull << 40);
	CHECK(feed_all(&p, &r) >= 0);
	CHECK(p.opaque);
	CHECK_STR_CONTAINS(p.opaque_why, "section 'dirty-bitmap' (id 3) is not understood");
	rdmig_qs_free(&p);
}

TEST(bad_end)
{
	struct raw r;

	sample_head(&r);
	ram_section(&r, 0, 2);
	ram_section(&r, 0x03, 2);
	be(&r, 0x00, 1);
	be(&r, 0x07, 1);
	CHECK_REJECTS(&r, "(byte after QEMU_VM_EOF)", "0x07 (only QEMU_VM_VMDESCRIPTION");

	sample_head(&r);
	ram_section(&r, 0, 2);
	be(&r, 0x00, 1);
	be(&r, 0x06, 1);
	be(&r, 0xffffffff, 4);
	CHECK_REJECTS(&r, "(vmdesc length)", "4294967295 (must be 2 to 67108864)");

	sample_head(&r);
	ram_section(&r, 0, 2);
	be(&r, 0x00, 1);
	be(&r, 0x06, 1);
	be(&r, 4, 4);
	bytes(&r, "abcd", 4);
	CHECK_REJECTS(&r, "(vmdesc)", "4 bytes that are not a JSON object (first byte 0x61, last 0x64)");

	sample_head(&r);
	ram_section(&r, 0, 2);
	eof_vmdesc(&r);
	be(&r, 0x00, 1);
	CHECK_REJECTS(&r, "1 byte after the stream's vmdesc record");
}

/* In opaque data, only a vmdesc that ends exactly at the end counts. */
TEST(vmdesc_must_end_the_stream)
{
	struct rdmig_qs_parser p;
	struct raw r;
	size_t blocks_end, eof;

	sample_stream(&r, &blocks_end, &eof);
	be(&r, 'x', 1); /* one byte too many after the JSON */
	rdmig_qs_init(&p, 1ull << 40);
	CHECK(feed_all(&p, &r) >= 0);
	CHECK_EQ(rdmig_qs_finish(&p), -1);
	rdmig_qs_free(&p);

	/* a NUL inside the JSON text: not QEMU's vmdesc */
	sample_stream(&r, &blocks_end, &eof);
	r.b[r.n - 5] = 0;
	rdmig_qs_init(&p, 1ull << 40);
	CHECK(feed_all(&p, &r) >= 0);
	CHECK_EQ(rdmig_qs_finish(&p), -1);
	rdmig_qs_free(&p);
}

/* Rows of the source's `info ramblock` (rdmig_qs_ramblock_row): QEMU 7.2's
 * columns, 8.x's with HVA and RO, names with spaces, the heading, and lines
 * that are not rows. */
TEST(info_ramblock_rows)
{
	struct rdmig_qs_ramblock row;
	char l1[] = "              Block Name    PSize              Offset               Used"
		    "              Total\n";
	char l2[] = "                  pc.ram    4 KiB  0x0000000000000000 0x0000000040000000 "
		    "0x0000000040000000\n";
	char l3[] = "    /rom@etc/acpi/tables    4 KiB  0x0000000040a00000 0x0000000000020000 "
		    "0x0000000000200000 0x00007f1234560000  rw\n";
	char l4[] = "my block  4 KiB 0x100000 0x200000 0x200000";
	char blank[] = "  \r\n";
	char bad[] = "pc.ram 4 KiB 0x0 nothex 0x40000000";

	CHECK_EQ(rdmig_qs_ramblock_row(l1, &row), 1);
	CHECK_EQ(rdmig_qs_ramblock_row(blank, &row), 1);
	CHECK_EQ(rdmig_qs_ramblock_row(l2, &row), 0);
	CHECK(!strcmp(row.name, "pc.ram"));
	CHECK_EQ(row.offset, 0);
	CHECK_EQ(row.used, 0x40000000);
	CHECK_EQ(rdmig_qs_ramblock_row(l3, &row), 0);
	CHECK(!strcmp(row.name, "/rom@etc/acpi/tables"));
	CHECK_EQ(row.offset, 0x40a00000);
	CHECK_EQ(row.used, 0x20000);
	CHECK_EQ(rdmig_qs_ramblock_row(l4, &row), 0);
	CHECK(!strcmp(row.name, "my block"));
	CHECK_EQ(row.offset, 0x100000);
	CHECK_EQ(rdmig_qs_ramblock_row(bad, &row), -1);
}

CHECK_MAIN()
