/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmig/qemu.h - librdmig-stream, part 1 of 2: QEMU's migration stream as
 * an RDMA destination sees it (the stream parser and its end detection, a
 * row of `info ramblock`), the recorder of `rdmig recv --qemu`, and the
 * reader and replay planner of its record for `rdmig send --qemu-replay`.
 * Part 2 is rdmig/imgstream.h.  Link with `pkg-config --libs rdmig-stream`
 * (librdmig-stream, which needs neither librdmig nor verbs).
 *
 * Conventions (those of rdmig/imgstream.h, which says why they are not
 * librdmig's): errors are returned, never printed (0, or -1 with a
 * message: rdmig_qs_errmsg() or the caller's err buffer); the library
 * never prints, never exits and opens no file (the caller feeds the
 * stream, reads the record, and opens the one the recorder writes into).
 * Lifecycles are *_init and *_free (rdmig_rr_parse and rdmig_rr_free).
 * Names are rdmig_qs_* (the stream), rdmig_qrec_* (the recorder) and
 * rdmig_rr_* (reading a record); fields marked internal are not to be
 * touched, and these structs are not extensible (a change is a new
 * soname).  A parser belongs to one thread at a time; nothing here keeps
 * global state.
 *
 * The stream parser: an incremental, defensive reader of the parts of a QEMU
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
#ifndef RDMIG_QEMU_H
#define RDMIG_QEMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RDMIG_QS_FILE_MAGIC 0x5145564du /* "QEVM" */
#define RDMIG_QS_FILE_VERSION 3u
#define RDMIG_QS_RAM_VERSION 4u         /* ram's section version_id, 2.0 .. 9.x */
#define RDMIG_QS_MAX_BLOCKS 4096u       /* one RAM_BLOCKS_RESULT's worth */
#define RDMIG_QS_MAX_NAME 255u          /* a u8 length */
#define RDMIG_QS_MAX_MACHINE 256u
#define RDMIG_QS_MAX_VMDESC (64u << 20) /* a vmdesc is ~100 KiB for a small pc */

/* What a call to rdmig_qs_feed completed (a bit set). */
#define RDMIG_QS_EV_BLOCKS 0x1 /* the block list is complete: blocks/count/total */
#define RDMIG_QS_EV_HOOK 0x2   /* a RAM_SAVE_FLAG_HOOK word: hooks/last_hook_end */

/* How the stream ended (rdmig_qs_finish). */
enum rdmig_qs_end {
	RDMIG_QS_END_NONE = 0,
	RDMIG_QS_END_VMDESC, /* QEMU_VM_EOF + QEMU_VM_VMDESCRIPTION record */
	RDMIG_QS_END_EOF,    /* QEMU_VM_EOF as the last byte, followed structurally */
};

struct rdmig_qs_block {
	char name[RDMIG_QS_MAX_NAME + 1]; /* printable ASCII, NUL-terminated */
	uint64_t length;            /* used_length */
};

struct rdmig_qs_parser {
	/* ---- results ---- */
	char machine[RDMIG_QS_MAX_MACHINE + 1]; /* configuration's machine type, or "" */
	struct rdmig_qs_block *blocks;          /* count entries, in the source's order */
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
	enum rdmig_qs_end end;        /* set by a successful rdmig_qs_finish */
	uint64_t eof_offset;    /* where QEMU_VM_EOF was (valid with end) */

	/* ---- internal ---- */
	uint64_t max_total;
	int over_limit;     /* it failed because the RAM announced passed max_total */
	int state, failed, footers, ram_seen, in_setup, config_seen, sections;
	uint32_t section_id, section_type;
	uint32_t blocks_cap, sub_kind;
	uint64_t blocks_sum;
	char section_name[RDMIG_QS_MAX_NAME + 1];
	size_t need, have;
	uint64_t skip, skip_total;
	uint8_t acc[RDMIG_QS_MAX_MACHINE + 8];
	uint8_t first, last;    /* of a skipped vmdesc */
	uint64_t win;           /* the last 8 bytes, newest in the low byte */
	uint32_t win_len;
	uint64_t cand_eof, cand_end; /* latest vmdesc candidate (opaque mode) */
	int cand;
	char err[320];
};

/* Start a parser: the RAM blocks may add up to at most max_total bytes. */
void rdmig_qs_init(struct rdmig_qs_parser *p, uint64_t max_total);
/*
 * Consume len bytes.  Returns the RDMIG_QS_EV_* bits these bytes completed (0
 * when nothing), or -1 on a violation (message in rdmig_qs_errmsg; the parser
 * then stays failed).
 */
int rdmig_qs_feed(struct rdmig_qs_parser *p, const void *data, size_t len);
/* The source disconnected: 0 when the stream ended properly (p->end says
 * how), else -1 with a message saying where it stopped. */
int rdmig_qs_finish(struct rdmig_qs_parser *p);
int rdmig_qs_blocks_done(const struct rdmig_qs_parser *p);
const char *rdmig_qs_errmsg(const struct rdmig_qs_parser *p);
const char *rdmig_qs_end_name(enum rdmig_qs_end e); /* "vmdesc", "eof", ... */
void rdmig_qs_free(struct rdmig_qs_parser *p);

/* One row of the source's `info ramblock` (HMP): its RAM offsets, which
 * QEMU's REGISTER_REQUEST and COMPRESS use and its stream does not carry. */
struct rdmig_qs_ramblock {
	char name[RDMIG_QS_MAX_NAME + 1]; /* may contain spaces */
	uint64_t offset, used;
};

/*
 * Parse one line of `info ramblock` (it is cut up in place): NAME PSIZE
 * UNIT 0xOFFSET 0xUSED 0xTOTAL, and since QEMU 8.x also 0xHVA RO; the
 * offset is the first of three hex columns, and everything before PSIZE
 * is the name.  0 = a row (in *row), 1 = not a row (blank, or the
 * heading), -1 = malformed.
 */
int rdmig_qs_ramblock_row(char *line, struct rdmig_qs_ramblock *row);

/*
 * The record - read the record `rdmig recv --qemu` writes
 * (DIR/record.txt, format in docs/qemu-stream.md) and plan its replay.
 *
 * A replay sends the recorded stream bytes up to each control phase, then
 * the phase: RAM_BLOCKS_REQUEST, or one registration pass (REGISTER /
 * COMPRESS / RDMA WRITEs closed by REGISTER_FINISHED).  The plan says in
 * which pass each 1 MiB chunk of each block is sent: the first pass the
 * record saw it registered or compressed in, else the last pass (pin-all
 * records have no per-chunk lines: QEMU wrote everything through the
 * pinned blocks, so the last pass carries every chunk).
 *
 * Pure parsing, no I/O: the caller reads the file.  Every number, index,
 * range and name is checked; an error names the line and the field.
 */

#define RDMIG_RR_MAX_BLOCKS 4096u
#define RDMIG_RR_MAX_PHASES 1000000u
#define RDMIG_RR_MAX_BLOCK_BYTES (1ull << 40) /* 1 TiB per block */
#define RDMIG_RR_MAX_RECORD_BYTES (64u << 20)
/* All blocks together: 16 TiB, a plan of 64 MiB (4 bytes per 1 MiB chunk) */
#define RDMIG_RR_MAX_RAM_BYTES (16ull << 40)

struct rdmig_rr_block {
	char *name;          /* QEMU's block name (may contain spaces) */
	char *file;          /* its image in the record's directory */
	uint64_t length;
	uint32_t nchunks;
	uint32_t *send_phase; /* per chunk: the phase that sends it */
};

struct rdmig_rr_phase {
	bool ram_blocks;     /* RAM_BLOCKS_REQUEST; else a registration pass */
	uint64_t offset;     /* stream bytes sent before it */
};

struct rdmig_replay_record {
	char machine[128];
	bool pin_all;
	uint32_t nblocks;
	struct rdmig_rr_block *blocks;
	uint32_t nphases;
	struct rdmig_rr_phase *phases;
	uint64_t stream_bytes;
	uint64_t ram_bytes;  /* sum of block lengths */
};

/* Parse text (len bytes, need not be NUL-terminated) into r.  Returns 0,
 * or -1 with "line N: ..." in err; r is then empty.  What the parse costs
 * follows from the text and from what its blocks claim, at most
 * RDMIG_RR_MAX_RAM_BYTES in all: 4 bytes per 1 MiB chunk for the plan, as
 * much again while parsing; every chunk is given its pass once, however
 * many `touched` lines name it (they must come in phase order). */
int rdmig_rr_parse(const char *text, size_t len, struct rdmig_replay_record *r, char *err,
		   size_t errlen);

/*
 * The record's directory as the caller sees it: the size of the image
 * named file (a name rdmig_rr_parse_dir has checked to be one path
 * component), or -1 with why it is refused in err (missing, not a regular
 * file, ...; errlen is at least 64).  Called once per `block` line, before
 * anything is allocated for the block.
 */
typedef int (*rdmig_rr_image_fn)(void *ctx, const char *file, uint64_t *size, char *err,
				 size_t errlen);
/* rdmig_rr_parse, with every block's length checked against its image's
 * real size (image(ctx, ...)) as its line is read: a record then costs
 * what its text and the images really there cost, and one claiming
 * blocks its directory does not hold is refused at the first of them. */
int rdmig_rr_parse_dir(const char *text, size_t len, rdmig_rr_image_fn image, void *ctx,
		       struct rdmig_replay_record *r, char *err, size_t errlen);
void rdmig_rr_free(struct rdmig_replay_record *r);

/*
 * The recorder - what `rdmig recv --qemu` writes as DIR/record.txt (the
 * format is in docs/qemu-stream.md; rdmig_rr_parse reads it back): the
 * stream's figures from the parser, the RAM blocks, and the control phases
 * of the migration (RAM_BLOCKS_REQUEST, then one registration pass per
 * REGISTER_FINISHED) with, per pass, the 1 MiB record chunks it touched.
 * The caller keeps the phases and the chunks, notes what the destination
 * reports (rdmig_dest_set_events) with rdmig_qrec_note, and writes the
 * record to a stream it opened.
 */
#define RDMIG_QREC_CHUNK_SHIFT 20u /* the record's chunks: 1 MiB, whatever the migration's */

enum rdmig_qrec_kind {
	RDMIG_QREC_RAM_BLOCKS = 1, /* RAM_BLOCKS_REQUEST */
	RDMIG_QREC_REGISTRATION,   /* a pass that REGISTER_FINISHED closed */
};

struct rdmig_qrec_phase {
	int kind;        /* enum rdmig_qrec_kind */
	double t;        /* seconds since the source connected, at the event */
	uint64_t offset; /* stream bytes received before it */
	uint64_t hook;   /* the offset just past the stream's latest HOOK word, 0 if none */
	uint64_t register_requests, compress, unregister, chunks_registered, bytes_compressed;
	int touched;     /* chunks were noted in this pass */
};

/* A block's record chunks: per chunk the phase in which it first held data
 * (was registered) and the one in which it was compressed before it held
 * data (0 = never), and whether it holds data after the migration (set by
 * the caller, who has the memory). */
struct rdmig_qrec_chunks {
	uint32_t nchunks;
	uint32_t *data_phase, *zero_phase;
	uint8_t *nonzero;
};

/* Allocate the chunks of a block of length bytes, all zero: 0, or -1 when
 * out of memory (c is then empty; rdmig_qrec_chunks_free takes it). */
int rdmig_qrec_chunks_init(struct rdmig_qrec_chunks *c, uint64_t length);
void rdmig_qrec_chunks_free(struct rdmig_qrec_chunks *c);

/*
 * Bytes [offset, offset + len) of the block were registered (registered
 * true) or covered by a COMPRESS in pass `phase`: a registered chunk holds
 * data from this pass on, a compressed one that holds no data yet was zero
 * in it.  A chunk compressed in one pass may be registered in a later one;
 * registered in the pass that compressed it, it counts as data there.
 * Ranges past the block are cut.  Returns true when a chunk was touched
 * (the pass has something to record), including ones that already held
 * data.
 */
bool rdmig_qrec_note(struct rdmig_qrec_chunks *c, uint32_t phase, bool registered,
		     uint64_t offset, uint64_t len);

/* One RAM block of the record (qs->blocks[i] gives its name and length). */
struct rdmig_qrec_block {
	const char *file;  /* its image in the record's directory */
	uint64_t offset;   /* the source's RAM offset, when have_offset */
	int have_offset;
	struct rdmig_qrec_chunks ch;
};

struct rdmig_qrec {
	const struct rdmig_qs_parser *qs;
	int pin_all;
	const struct rdmig_qrec_block *blocks; /* qs->count entries; NULL before they exist */
	const struct rdmig_qrec_phase *phases;
	uint32_t nphases;
	uint64_t stream_bytes; /* stream bytes received */
	double seconds;        /* from the connection to the end (written on success) */
	/* Optional: asked now and then while the record is written (per
	 * pass, per block, every RDMIG_QREC_STOP_EVERY chunks of a sweep);
	 * true stops it, e.g. on SIGINT: a record of many passes over a large
	 * RAM takes a while. */
	bool (*stop)(void *ctx);
	void *stop_ctx;
};

#define RDMIG_QREC_STOP_EVERY 65536

/* Write the record to f; failure (NULL on success) goes into its last
 * line.  0, or -1 when r->stop asked to stop: the record then ends there
 * with "end failed the record was interrupted".  The caller checks f for
 * write errors (ferror, fclose). */
int rdmig_qrec_write(FILE *f, const struct rdmig_qrec *r, const char *failure);

#ifdef __cplusplus
}
#endif

#endif /* RDMIG_QEMU_H */
