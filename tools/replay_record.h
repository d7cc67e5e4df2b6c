/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * replay_record.h - read the record `rdmig recv --qemu` writes
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
#ifndef RDMIG_REPLAY_RECORD_H
#define RDMIG_REPLAY_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RR_MAX_BLOCKS 4096u
#define RR_MAX_PHASES 1000000u
#define RR_MAX_BLOCK_BYTES (1ull << 40) /* 1 TiB per block */
#define RR_MAX_RECORD_BYTES (64u << 20)

struct rr_block {
	char *name;          /* QEMU's block name (may contain spaces) */
	char *file;          /* its image in the record's directory */
	uint64_t length;
	uint32_t nchunks;
	uint32_t *send_phase; /* per chunk: the phase that sends it */
};

struct rr_phase {
	bool ram_blocks;     /* RAM_BLOCKS_REQUEST; else a registration pass */
	uint64_t offset;     /* stream bytes sent before it */
};

struct replay_record {
	char machine[128];
	bool pin_all;
	uint32_t nblocks;
	struct rr_block *blocks;
	uint32_t nphases;
	struct rr_phase *phases;
	uint64_t stream_bytes;
	uint64_t ram_bytes;  /* sum of block lengths */
};

/* Parse text (len bytes, need not be NUL-terminated) into r.  Returns 0,
 * or -1 with "line N: ..." in err; r is then empty. */
int rr_parse(const char *text, size_t len, struct replay_record *r, char *err, size_t errlen);
void rr_free(struct replay_record *r);

#endif
