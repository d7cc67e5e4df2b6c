/* SPDX-License-Identifier: BSD-2-Clause */
/* qemu_stream.c - reads a QEMU migration stream field by field: its head
 * (configuration, the RAM block list) and the RAM section's iterations, as
 * far as it understands them (format: rdmig/qemu.h, docs/qemu-stream.md).
 * Watching for the end beyond that is qemu_stream_end.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "qemu_stream_end.h"
#include "qemu_stream_states.h"
#include "stream_field.h"

/* Section types (savevm.c). */
enum {
	VM_EOF = 0x00,
	VM_SECTION_START = 0x01,
	VM_SECTION_PART = 0x02,
	VM_SECTION_END = 0x03,
	VM_SECTION_FULL = 0x04,
	VM_SUBSECTION = 0x05,
	VM_VMDESCRIPTION = 0x06,
	VM_CONFIGURATION = 0x07,
	VM_COMMAND = 0x08,
	VM_SECTION_FOOTER = 0x7e,
};

/* RAM data words (ram.c): the low target-page bits are flags. */
#define RAM_SAVE_FLAG_MEM_SIZE 0x04u
#define RAM_SAVE_FLAG_EOS 0x10u
#define RAM_SAVE_FLAG_HOOK 0x80u /* RDMA: the registration phase starts here */

/* QEMU_VM_COMMAND values we let pass; each carries a fixed length.
 * SWITCHOVER_START (QEMU 10.0, machine types 10.0 and later) tells the
 * destination's devices that the switchover is near; it has no payload and
 * changes nothing in RAM, so it is kept in stream.bin and replayed as is. */
#define MIG_CMD_OPEN_RETURN_PATH 1u
#define MIG_CMD_PING 2u
#define MIG_CMD_SWITCHOVER_START 11u


/* Subsections of the configuration that we know the size of. */
enum { SUB_PAGE_BITS = 1, SUB_CAPS, SUB_UUID };

static const char *const cmd_names[] = {
	"INVALID", "OPEN_RETURN_PATH", "PING", "POSTCOPY_ADVISE", "POSTCOPY_LISTEN",
	"POSTCOPY_RUN", "POSTCOPY_RAM_DISCARD", "POSTCOPY_RESUME", "PACKAGED", "RECV_BITMAP",
	"ENABLE_COLO", "SWITCHOVER_START",
};

static int expect(struct rdmig_qs_parser *p, int state, size_t need)
{
	p->state = state;
	p->need = need;
	p->have = 0;
	return 0;
}

/* Skip n bytes of field `state` without keeping them (skip_done follows). */
static int skip(struct rdmig_qs_parser *p, int state, uint64_t n)
{
	p->state = state;
	p->skip = p->skip_total = n;
	p->need = p->have = 0;
	return 0;
}

__attribute__((format(printf, 3, 0)))
static int failv(struct rdmig_qs_parser *p, uint64_t at, const char *fmt, va_list ap)
{
	char msg[240];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(p->err, sizeof(p->err), "stream offset %llu (%s): %s", (unsigned long long)at,
		 rdmig__qs_field_name(p->state), msg);
	p->failed = 1;
	return -1;
}

/* Fail, naming the current field and the offset of its first byte. */
__attribute__((format(printf, 2, 3)))
static int fail(struct rdmig_qs_parser *p, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = failv(p, p->offset - p->have, fmt, ap);
	va_end(ap);
	return ret;
}

__attribute__((format(printf, 3, 4)))
static int fail_at(struct rdmig_qs_parser *p, uint64_t at, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = failv(p, at, fmt, ap);
	va_end(ap);
	return ret;
}

void rdmig_qs_init(struct rdmig_qs_parser *p, uint64_t max_total)
{
	memset(p, 0, sizeof(*p));
	p->max_total = max_total;
	p->page_bits = 12; /* x86; other targets send configuration/target-page-bits */
	p->footers = -1;   /* not known until the first section ends */
	expect(p, S_MAGIC, 4);
}

void rdmig_qs_free(struct rdmig_qs_parser *p)
{
	free(p->blocks);
	p->blocks = NULL;
}

/* 0 if the n bytes are printable ASCII, else -1 with a message naming what. */
static int printable(struct rdmig_qs_parser *p, const uint8_t *s, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return fail(p, "%s: byte %zu is 0x%02x (QEMU's names are printable ASCII)", what,
				    i, s[i]);
	return 0;
}

static int field_is(const struct rdmig_qs_parser *p, const char *s)
{
	return p->need == strlen(s) && !memcmp(p->acc, s, p->need);
}

/* ---------------------------------------------------------- sections -- */

/* A top-level byte: a section type, a command, or the end. */
static int top(struct rdmig_qs_parser *p, uint8_t t)
{
	uint64_t at = p->offset - 1;

	switch (t) {
	case VM_EOF:
		if (!p->ram_seen)
			return fail(p, "QEMU_VM_EOF before any RAM section");
		p->eof_offset = at;
		return expect(p, S_AFTER_EOF, 1);
	case VM_CONFIGURATION:
		if (p->config_seen || p->sections)
			return fail(p, "a configuration (0x07) is only allowed once, right after the "
				    "file header");
		p->config_seen = 1;
		return expect(p, S_CFG_LEN, 4);
	case VM_COMMAND:
		return expect(p, S_CMD_HEAD, 4);
	case VM_SECTION_START: case VM_SECTION_PART: case VM_SECTION_END:
		p->section_type = t;
		p->sections++;
		return expect(p, S_SEC_ID, 4);
	case VM_SECTION_FULL:
		if (!p->ram_seen)
			return fail(p, "device state (QEMU_VM_SECTION_FULL) before the RAM section: "
				    "the RAM blocks cannot be found");
		/* device state has no lengths: from here on, watch for the end */
		rdmig__qs_go_opaque(p, at, "device state (QEMU_VM_SECTION_FULL)");
		rdmig__qs_opaque_byte(p, t, at);
		return 0;
	default:
		return fail(p, "0x%02x is not a section type", t);
	}
}

static int section_start(struct rdmig_qs_parser *p, uint64_t id, uint64_t version)
{
	const char *name = p->section_name;

	if (strcmp(name, "ram")) {
		if (!p->ram_seen)
			return fail(p, "section '%s' (id %llu) starts before the RAM section; its "
				    "setup data carries no length, so the RAM blocks cannot be found",
				    name, (unsigned long long)id);
		return rdmig__qs_go_opaque(p, p->offset, "section '%s' (id %llu) is not understood",
					   name, (unsigned long long)id);
	}
	if (p->ram_seen)
		return fail(p, "a second 'ram' section (id %llu)", (unsigned long long)id);
	if (version != RDMIG_QS_RAM_VERSION)
		return fail(p, "'ram' section version %llu (this reader knows version %u)",
			    (unsigned long long)version, RDMIG_QS_RAM_VERSION);
	p->ram_seen = 1;
	p->in_setup = 1;
	p->ram_section_id = (uint32_t)id;
	return expect(p, S_RAM_SIZE, 8);
}

/* PART or END of a section that has started. */
static int section_continue(struct rdmig_qs_parser *p, uint64_t id)
{
	const char *kind = p->section_type == VM_SECTION_PART ? "PART" : "END";

	if (!p->ram_seen)
		return fail(p, "QEMU_VM_SECTION_%s of section %llu before the RAM section started",
			    kind, (unsigned long long)id);
	if (id != p->ram_section_id)
		return rdmig__qs_go_opaque(p, p->offset,
					   "QEMU_VM_SECTION_%s of section %llu, not ram's", kind,
					   (unsigned long long)id);
	if (p->ram_ended)
		return fail(p, "QEMU_VM_SECTION_%s of 'ram' after its END", kind);
	return expect(p, S_RAM_WORD, 8);
}

/* ----------------------------------------------------------- RAM data -- */

static int ram_total(struct rdmig_qs_parser *p, uint64_t word)
{
	uint64_t mask = (1ull << p->page_bits) - 1, flags = word & mask, total = word & ~mask;

	if (flags != RAM_SAVE_FLAG_MEM_SIZE)
		return fail(p, "0x%016llx: flags 0x%llx, expected RAM_SAVE_FLAG_MEM_SIZE (0x%x)",
			    (unsigned long long)word, (unsigned long long)flags,
			    RAM_SAVE_FLAG_MEM_SIZE);
	if (total == 0)
		return fail(p, "the source announces 0 bytes of RAM");
	if (total > p->max_total && (p->over_limit = 1))
		return fail(p, "the source announces %llu bytes of RAM, above the limit of %llu",
			    (unsigned long long)total, (unsigned long long)p->max_total);
	p->total = total;
	return expect(p, S_BLK_NAMELEN, 1);
}

static int block_name(struct rdmig_qs_parser *p)
{
	struct rdmig_qs_block *b;

	if (printable(p, p->acc, p->need, "name"))
		return -1;
	if (p->count == RDMIG_QS_MAX_BLOCKS)
		return fail(p, "more than %u RAM blocks", RDMIG_QS_MAX_BLOCKS);
	if (p->count == p->blocks_cap) {
		uint32_t cap = p->blocks_cap ? p->blocks_cap * 2 : 16;
		struct rdmig_qs_block *n = realloc(p->blocks, cap * sizeof(*n));
		if (!n)
			return fail(p, "out of memory for %u block descriptions", cap);
		p->blocks = n;
		p->blocks_cap = cap;
	}
	b = &p->blocks[p->count];
	memcpy(b->name, p->acc, p->need);
	b->name[p->need] = '\0';
	for (uint32_t i = 0; i < p->count; i++)
		if (!strcmp(p->blocks[i].name, b->name))
			return fail(p, "RAM blocks %u and %u are both named '%s'", i, p->count, b->name);
	return expect(p, S_BLK_LENGTH, 8);
}

static int block_length(struct rdmig_qs_parser *p, uint64_t len)
{
	struct rdmig_qs_block *b = &p->blocks[p->count];
	uint64_t page = 1ull << p->page_bits, sum = p->blocks_sum;

	if (len == 0 || len % page)
		return fail(p, "RAM block %u '%s': length %llu is not a positive multiple of the "
			    "%llu-byte page", p->count, b->name, (unsigned long long)len,
			    (unsigned long long)page);
	/* sum <= total holds, so total - sum cannot wrap */
	if (len > p->total - sum)
		return fail(p, "RAM block %u '%s': length %llu takes the blocks past the announced "
			    "total of %llu bytes (%llu before it)", p->count, b->name,
			    (unsigned long long)len, (unsigned long long)p->total,
			    (unsigned long long)sum);
	b->length = len;
	p->count++;
	p->blocks_sum += len;
	if (p->blocks_sum < p->total)
		return expect(p, S_BLK_NAMELEN, 1);
	p->blocks_end = p->offset;
	expect(p, S_RAM_WORD, 8);
	return RDMIG_QS_EV_BLOCKS;
}

/* A RAM data word after the block list, in a START, PART or END section.
 * Over RDMA the pages travel as RDMA WRITEs, and the stream holds only
 * HOOK (a registration phase follows) and EOS (the section's data ends). */
static int ram_word(struct rdmig_qs_parser *p, uint64_t word)
{
	uint64_t mask = (1ull << p->page_bits) - 1, flags = word & mask;

	if (word == RAM_SAVE_FLAG_HOOK) {
		p->hooks++;
		p->last_hook_end = p->offset;
		expect(p, S_RAM_WORD, 8);
		return RDMIG_QS_EV_HOOK;
	}
	if (word == RAM_SAVE_FLAG_EOS) {
		if (p->section_type == VM_SECTION_END)
			p->ram_ended = 1;
		p->in_setup = 0;
		p->ram_sections++;
		return expect(p, S_AFTER_EOS, 1);
	}
	return rdmig__qs_go_opaque(p, p->offset - 8,
				   "RAM data word 0x%016llx (flags 0x%llx) is not what "
				   "QEMU's RDMA transport sends",
				   (unsigned long long)word, (unsigned long long)flags);
}

/* ----------------------------------------------------- configuration -- */

static int sub_name(struct rdmig_qs_parser *p)
{
	if (printable(p, p->acc, p->need, "subsection name"))
		return -1;
	if (field_is(p, "configuration/target-page-bits"))
		p->sub_kind = SUB_PAGE_BITS;
	else if (field_is(p, "configuration/capabilities"))
		p->sub_kind = SUB_CAPS;
	else if (field_is(p, "configuration/uuid"))
		p->sub_kind = SUB_UUID;
	else
		return fail(p, "'%.*s' is not understood (a subsection carries no length, so it "
			    "cannot be skipped)", (int)p->need, (const char *)p->acc);
	return expect(p, S_SUB_VERSION, 4);
}

static int sub_version(struct rdmig_qs_parser *p, uint64_t v)
{
	if (v != 1)
		return fail(p, "version %llu (this reader knows version 1)", (unsigned long long)v);
	switch (p->sub_kind) {
	case SUB_PAGE_BITS: return expect(p, S_SUB_PAGE_BITS, 4);
	case SUB_CAPS: return expect(p, S_CAPS_COUNT, 4);
	default: return expect(p, S_SUB_UUID, 16);
	}
}

/* The configuration lists the capabilities that change the stream's
 * format; in QEMU 7.2 only x-ignore-shared, which leaves shared blocks out
 * of RDMA's block list without saying which they are. */
static int capability(struct rdmig_qs_parser *p)
{
	if (printable(p, p->acc, p->need, "capability name"))
		return -1;
	return fail(p, "the source has capability '%.*s' on; it changes the RAM section and is "
		    "not supported", (int)p->need, (const char *)p->acc);
}

/* ----------------------------------------------------------- commands -- */

static int command(struct rdmig_qs_parser *p, uint64_t cmd, uint64_t len)
{
	const char *name = cmd < sizeof(cmd_names) / sizeof(cmd_names[0]) ? cmd_names[cmd] : "?";

	if ((cmd == MIG_CMD_OPEN_RETURN_PATH && len == 0) || (cmd == MIG_CMD_PING && len == 4) ||
	    (cmd == MIG_CMD_SWITCHOVER_START && len == 0))
		return len ? skip(p, S_CMD_DATA, len) : expect(p, S_TOP, 1);
	return fail(p, "QEMU_VM_COMMAND %llu (%s) of %llu bytes is not supported (postcopy, COLO "
		    "and packaged streams are not)", (unsigned long long)cmd, name,
		    (unsigned long long)len);
}

/* ------------------------------------------------------------- fields -- */

/* The current field (p->need bytes in p->acc) is complete: check it and
 * move on.  Returns RDMIG_QS_EV_* bits, or -1. */
static int field_done(struct rdmig_qs_parser *p)
{
	uint64_t v = sf_get_be(p->acc, p->need < 8 ? p->need : 8);

	switch (p->state) {
	case S_MAGIC:
		if (v != RDMIG_QS_FILE_MAGIC)
			return fail(p,
				    "0x%08llx, expected 0x%08x (\"QEVM\"): not a QEMU migration "
				    "stream",
				    (unsigned long long)v, RDMIG_QS_FILE_MAGIC);
		return expect(p, S_VERSION, 4);
	case S_VERSION:
		if (v != RDMIG_QS_FILE_VERSION)
			return fail(p, "%llu (this reader knows version %u)", (unsigned long long)v,
				    RDMIG_QS_FILE_VERSION);
		return expect(p, S_TOP, 1);
	case S_TOP:
		return top(p, p->acc[0]);

	case S_CFG_LEN:
		if (v < 1 || v > RDMIG_QS_MAX_MACHINE)
			return fail(p, "%llu (must be 1 to %u)", (unsigned long long)v,
				    RDMIG_QS_MAX_MACHINE);
		return expect(p, S_CFG_NAME, (size_t)v);
	case S_CFG_NAME:
		if (printable(p, p->acc, p->need, "machine name"))
			return -1;
		memcpy(p->machine, p->acc, p->need);
		p->machine[p->need] = '\0';
		return expect(p, S_CFG_NEXT, 1);
	case S_CFG_NEXT:
		return p->acc[0] == VM_SUBSECTION ? expect(p, S_SUB_NAMELEN, 1) : top(p, p->acc[0]);
	case S_SUB_NAMELEN:
		if (v == 0)
			return fail(p, "0");
		return expect(p, S_SUB_NAME, (size_t)v);
	case S_CAP_LEN:
		if (v == 0)
			return fail(p, "0");
		return expect(p, S_CAP_NAME, (size_t)v);
	case S_SUB_NAME:
		return sub_name(p);
	case S_SUB_VERSION:
		return sub_version(p, v);
	case S_SUB_PAGE_BITS:
		if (v < 10 || v > 16)
			return fail(p, "%llu (QEMU's targets use 10 to 16)", (unsigned long long)v);
		p->page_bits = (uint32_t)v;
		return expect(p, S_CFG_NEXT, 1);
	case S_CAPS_COUNT:
		return v ? expect(p, S_CAP_LEN, 1) : expect(p, S_CFG_NEXT, 1);
	case S_CAP_NAME:
		return capability(p);
	case S_SUB_UUID:
		return expect(p, S_CFG_NEXT, 1);

	case S_CMD_HEAD:
		return command(p, v >> 16, v & 0xffff);

	case S_SEC_ID:
		p->section_id = (uint32_t)v;
		if (p->section_type == VM_SECTION_START)
			return expect(p, S_SEC_IDLEN, 1);
		return section_continue(p, v);
	case S_SEC_IDLEN:
		if (v == 0)
			return fail(p, "0");
		return expect(p, S_SEC_IDSTR, (size_t)v);
	case S_SEC_IDSTR:
		if (printable(p, p->acc, p->need, "section name"))
			return -1;
		memcpy(p->section_name, p->acc, p->need);
		p->section_name[p->need] = '\0';
		return expect(p, S_SEC_INSTANCE, 4);
	case S_SEC_INSTANCE:
		return expect(p, S_SEC_VERSION, 4);
	case S_SEC_VERSION:
		return section_start(p, p->section_id, v);

	case S_RAM_SIZE:
		return ram_total(p, v);
	case S_BLK_NAMELEN:
		if (v == 0)
			return fail(p, "RAM block %u: name length 0", p->count);
		return expect(p, S_BLK_NAME, (size_t)v);
	case S_BLK_NAME:
		return block_name(p);
	case S_BLK_LENGTH:
		return block_length(p, v);
	case S_RAM_WORD:
		return ram_word(p, v);

	case S_AFTER_EOS:
		if (p->acc[0] == VM_SECTION_FOOTER)
			return expect(p, S_FOOTER_ID, 4);
		if (p->footers == 1)
			return fail(p, "0x%02x: section %u ends without its footer (0x7e)", p->acc[0],
				    p->section_id);
		p->footers = 0;
		return top(p, p->acc[0]);
	case S_FOOTER_ID:
		if (v != p->section_id)
			return fail(p, "%llu, but the section is %u", (unsigned long long)v,
				    p->section_id);
		p->footers = 1;
		return expect(p, S_TOP, 1);

	case S_AFTER_EOF:
		if (p->acc[0] != VM_VMDESCRIPTION)
			return fail(p, "0x%02x (only QEMU_VM_VMDESCRIPTION, 0x06, may follow)",
				    p->acc[0]);
		return expect(p, S_VMDESC_LEN, 4);
	case S_VMDESC_LEN:
		if (v < 2 || v > RDMIG_QS_MAX_VMDESC)
			return fail(p, "%llu (must be 2 to %u)", (unsigned long long)v,
				    RDMIG_QS_MAX_VMDESC);
		return skip(p, S_VMDESC, v);
	}
	return fail(p, "internal: state %d", p->state);
}

/* The last byte of a skipped field went by. */
static int skip_done(struct rdmig_qs_parser *p)
{
	if (p->state == S_CMD_DATA)
		return expect(p, S_TOP, 1);
	/* S_VMDESC */
	if (p->first != '{' || p->last != '}')
		return fail_at(p, p->offset - p->skip_total, "%llu bytes that are not a JSON object "
			       "(first byte 0x%02x, last 0x%02x)", (unsigned long long)p->skip_total,
			       p->first, p->last);
	p->end = RDMIG_QS_END_VMDESC;
	return expect(p, S_DONE, 0);
}

int rdmig_qs_feed(struct rdmig_qs_parser *p, const void *data, size_t len)
{
	const uint8_t *in = data;
	int events = 0;

	if (p->failed)
		return -1;
	while (len > 0) {
		size_t n;
		int ev;

		if (p->opaque) {
			rdmig__qs_watch(p, in, len);
			break;
		}
		if (p->state == S_DONE)
			return fail(p, "%zu byte%s after the stream's vmdesc record", len,
				    len == 1 ? "" : "s");
		if (p->state == S_CMD_DATA || p->state == S_VMDESC) {
			n = p->skip < len ? (size_t)p->skip : len;
			if (p->skip == p->skip_total)
				p->first = in[0];
			p->last = in[n - 1];
			p->skip -= n;
			p->offset += n;
			in += n;
			len -= n;
			if (p->skip == 0 && skip_done(p) < 0)
				return -1;
			continue;
		}
		if (!sf_take(p->acc, p->need, &p->have, &in, &len, &p->offset))
			break;
		if ((ev = field_done(p)) < 0)
			return -1;
		events |= ev;
	}
	return events;
}

int rdmig_qs_blocks_done(const struct rdmig_qs_parser *p)
{
	return p->blocks_end != 0;
}

const char *rdmig_qs_errmsg(const struct rdmig_qs_parser *p)
{
	return p->err;
}
