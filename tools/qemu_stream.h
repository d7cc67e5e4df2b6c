/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_stream.h - an incremental, defensive reader of the parts of a QEMU
 * (7.2) migration stream that an RDMA destination needs: the RAM block list
 * at its head, and whether it ended properly.  docs/qemu-stream.md lists
 * every field relied on and the QEMU versions it holds for.
 *
 *   be32 0x5145564d "QEVM", be32 3
 *   [0x07 configuration: be32 len, machine name, subsections 0x05 ...]
 *   [0x08 commands: be16 cmd, be16 len, data]
 *   0x01 SECTION_START be32 id, u8 len, "ram", be32 instance, be32 version 4
 *        be64 total | RAM_SAVE_FLAG_MEM_SIZE
 *        per block: u8 len, name, be64 used_length   (until the sum = total)
 *        be64 RAM_SAVE_FLAG_HOOK    <- RDMA: RAM_BLOCKS_REQUEST follows
 *        be64 RAM_SAVE_FLAG_EOS
 *   [0x7e footer: be32 id]
 *   0x02 PART / 0x03 END of ram: HOOK, EOS, footer   (one per iteration)
 *   0x04 FULL sections: device state, opaque to us
 *   0x00 QEMU_VM_EOF, then 0x06 VMDESCRIPTION: be32 len, JSON text
 *
 * The parser is fed the stream in arbitrary pieces and never reads past
 * what it is given.  Up to the block list everything must be understood
 * (an error names the field, its value and its stream offset); after it,
 * the parser follows the RAM section's iterations as long as it can and
 * then only watches for the end: the stream ended properly when its last
 * bytes are QEMU_VM_EOF followed by a complete vmdesc record, or when the
 * parser followed it structurally to QEMU_VM_EOF.
 */
#ifndef RDMIG_QEMU_STREAM_H
#define RDMIG_QEMU_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define QS_FILE_MAGIC 0x5145564du /* "QEVM" */
#define QS_FILE_VERSION 3u
#define QS_RAM_VERSION 4u         /* ram's section version_id, 2.0 .. 9.x */
#define QS_MAX_BLOCKS 4096u       /* one RAM_BLOCKS_RESULT's worth */
#define QS_MAX_NAME 255u          /* a u8 length */
#define QS_MAX_MACHINE 256u
#define QS_MAX_VMDESC (64u << 20) /* a vmdesc is ~100 KiB for a small pc */

/* What a call to qs_feed completed (a bit set). */
#define QS_EV_BLOCKS 0x1 /* the block list is complete: blocks/count/total */
#define QS_EV_HOOK 0x2   /* a RAM_SAVE_FLAG_HOOK word: hooks/last_hook_end */

/* How the stream ended (qs_finish). */
enum qs_end {
	QS_END_NONE = 0,
	QS_END_VMDESC,     /* QEMU_VM_EOF + QEMU_VM_VMDESCRIPTION record */
	QS_END_EOF,        /* QEMU_VM_EOF as the last byte, followed structurally */
};

struct qs_block {
	char name[QS_MAX_NAME + 1]; /* printable ASCII, NUL-terminated */
	uint64_t length;            /* used_length */
};

struct qs_parser {
	/* ---- results ---- */
	char machine[QS_MAX_MACHINE + 1]; /* configuration's machine type, or "" */
	struct qs_block *blocks;          /* count entries, in the source's order */
	uint32_t count;
	uint64_t total;         /* sum of the lengths (the MEM_SIZE word) */
	uint64_t blocks_end;    /* stream offset just past the block list */
	uint32_t ram_section_id;
	uint32_t hooks;         /* RAM_SAVE_FLAG_HOOK words seen */
	uint64_t last_hook_end; /* stream offset just past the latest one */
	uint32_t ram_sections;  /* ram START/PART/END sections completed */
	int ram_ended;          /* ram's END section completed */
	uint32_t page_bits;     /* target page bits (12 unless configured) */
	uint64_t offset;        /* stream bytes consumed */
	int opaque;             /* no longer following the structure ... */
	uint64_t opaque_from;   /* ... from this offset ... */
	char opaque_why[160];   /* ... because of this */
	enum qs_end end;        /* set by a successful qs_finish */
	uint64_t eof_offset;    /* where QEMU_VM_EOF was (valid with end) */

	/* ---- internal ---- */
	uint64_t max_total;
	int over_limit;     /* it failed because the RAM announced passed max_total */
	int state, failed, footers, ram_seen, in_setup, config_seen, sections;
	uint32_t section_id, section_type;
	uint32_t blocks_cap, sub_kind;
	uint64_t blocks_sum;
	char section_name[QS_MAX_NAME + 1];
	size_t need, have;
	uint64_t skip, skip_total;
	uint8_t acc[QS_MAX_MACHINE + 8];
	uint8_t first, last;    /* of a skipped vmdesc */
	uint64_t win;           /* the last 8 bytes, newest in the low byte */
	uint32_t win_len;
	uint64_t cand_eof, cand_end; /* latest vmdesc candidate (opaque mode) */
	int cand;
	char err[320];
};

/* Start a parser: the RAM blocks may add up to at most max_total bytes. */
void qs_init(struct qs_parser *p, uint64_t max_total);
/*
 * Consume len bytes.  Returns the QS_EV_* bits these bytes completed (0
 * when nothing), or -1 on a violation (message in qs_errmsg; the parser
 * then stays failed).
 */
int qs_feed(struct qs_parser *p, const void *data, size_t len);
/* The source disconnected: 0 when the stream ended properly (p->end says
 * how), else -1 with a message saying where it stopped. */
int qs_finish(struct qs_parser *p);
int qs_blocks_done(const struct qs_parser *p);
const char *qs_errmsg(const struct qs_parser *p);
const char *qs_end_name(enum qs_end e); /* "vmdesc", "eof", ... */
void qs_free(struct qs_parser *p);

#endif
