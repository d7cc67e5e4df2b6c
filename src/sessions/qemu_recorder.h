/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_recorder.h - the recorder of a real QEMU's RDMA migration, as
 * `rdmig recv --qemu` receives it: what it needs to know of the source
 * beyond the stream, what it saw happen, and DIR/record.txt, which holds
 * it all for a later replay (the format is in docs/qemu-stream.md; the
 * lines themselves are librdmig-stream's, rdmig/qemu.h).
 *
 * A recorder owns:
 *  - the source's `info ramblock` rows, which give the RAM offsets QEMU's
 *    REGISTER_REQUEST and COMPRESS use and its stream does not carry, and
 *    where they came from (qemu_ramblocks.c: a file, a text stream; or
 *    the source's QMP, qemu_source_qmp.c);
 *  - the record's view of each RAM block: its image's name, its source
 *    offset and which pass touched which of its 1 MiB chunks;
 *  - the control phases (RAM_BLOCKS_REQUEST, then one registration pass
 *    per REGISTER_FINISHED) with the connection's counters and the
 *    engine's stats for each, and the RAM covered so far;
 *  - what the source's QMP said after the end (status, downtime, total
 *    time);
 *  - writing record.txt durably into the output directory
 *    (qemu_record_write.c, over outdir.h).
 *
 * It does not own the migration: the command keeps the connection, the
 * destination, the blocks' memory and images, the stream parser (which it
 * feeds; the recorder only reads it) and the clock, and shows them to the
 * recorder when a phase begins and when the record is written (struct
 * qemu_rec_view).  Like every session it never prints: a call fails with
 * -1 and a message in the caller's buffer.
 */
#ifndef RDMIG_QEMU_RECORDER_H
#define RDMIG_QEMU_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <rdmig.h>
#include <rdmig/qemu.h>
#include "outdir.h"

#define QEMU_REC_FILE "record.txt"
/* QEMU sends one REGISTER_FINISHED per iteration: a few with rdma-pin-all,
 * tens for a live guest that dirties memory (the interop tests' live and
 * killed modes).  Far more is a source that only wants the record to grow. */
#define QEMU_REC_MAX_PHASES 100000u

struct qemu_recorder {
	/* the command's stream parser: the blocks the stream listed, its
	 * HOOK words, its end (read only; it must outlive the recorder) */
	const struct rdmig_qs_parser *qs;

	/* the source's `info ramblock`, when it was given */
	struct rdmig_qs_ramblock *rows;
	size_t nrows;
	const char *rows_from; /* where they came from, for messages */

	/* the record's view of each block, qs->count of them once the
	 * stream listed them (NULL before): the command names each file
	 * (.file, a name it keeps) and sets .ch.nonzero when it writes the
	 * images, since it has the memory */
	struct rdmig_qrec_block *blocks;

	struct rdmig_qrec_phase *phases;
	size_t nphases, phases_cap;
	int pass_touched;                  /* a chunk was noted since the last pass ended */
	struct rdmig_counters k_prev;      /* the connection's counters ... */
	struct rdmig_engine_stats st_prev; /* ... and the engine's stats at the last phase */
	struct rdmig_engine_stats st;      /* the engine's stats at the end */
	uint64_t bytes_covered;            /* RAM registered or compressed at least once */

	/* what the source's QMP said after the end: its migration status
	 * ("" when unknown) and times (< 0 when unknown) */
	char qemu_status[32];
	double qemu_downtime_s, qemu_total_s;
};

/* The migration as the command sees it, when a phase begins and when the
 * record is written.  All of it stays the command's. */
struct qemu_rec_view {
	struct rdmig_conn *conn;  /* its counters (NULL reads as zeros) */
	struct rdmig_dest *dest;  /* the engine's stats (NULL reads as zeros) */
	double seconds;           /* since the source connected (the record: until the end) */
	uint64_t stream_bytes;    /* stream bytes received */
	int pin_all;              /* the source pins all of its RAM (rdma-pin-all) */
};

/* An empty recorder over the command's stream parser qs. */
void qemu_rec_init(struct qemu_recorder *r, const struct rdmig_qs_parser *qs);
void qemu_rec_free(struct qemu_recorder *r);

/* ---- the source's RAM offsets (qemu_ramblocks.c, qemu_source_qmp.c) -- */

/* The rows of an open `info ramblock` text; WHAT names it in messages
 * (and is where the rows came from until a caller says better: it must
 * outlive r).  0, or -1 with err (nothing parsed, or a bad line). */
int qemu_rec_parse_ramblocks(struct qemu_recorder *r, FILE *f, const char *what, char *err,
			     size_t errlen);
/* The same from the file PATH (--ramblocks; it must outlive r). */
int qemu_rec_load_ramblocks(struct qemu_recorder *r, const char *path, char *err, size_t errlen);
/* The same asked of the source QEMU over its QMP socket (a human-monitor-
 * command), before the migration: once it starts, QEMU may not answer. */
int qemu_rec_qmp_ramblocks(struct qemu_recorder *r, const char *socket, char *err, size_t errlen);

/* The stream listed its blocks: each block's source offset from the rows
 * into blocks[i].offset (have_offset).  Without rows only a source that
 * pins all of its RAM (the offsets go unused) or has a single block (at
 * offset 0) will do.  0, or -1 with err (a block missing from the rows,
 * of another length, or at offset 0 but not first). */
int qemu_rec_resolve_offsets(struct qemu_recorder *r, int pin_all, char *err, size_t errlen);

/* ---- what happened (qemu_recorder.c) ------------------------------- */

/* The stream listed its blocks: their record views, qs->count of them,
 * with no chunks yet.  0, or -1 with err. */
int qemu_rec_open_blocks(struct qemu_recorder *r, char *err, size_t errlen);
/* Block i's memory exists: its chunks, all untouched.  0, or -1 with err. */
int qemu_rec_track_block(struct qemu_recorder *r, uint32_t i, char *err, size_t errlen);

/* A new control phase of KIND (RDMIG_QREC_*) begins: the counters since
 * the last one close it.  -1 with err beyond QEMU_REC_MAX_PHASES. */
int qemu_rec_add_phase(struct qemu_recorder *r, int kind, const struct qemu_rec_view *v,
		       char *err, size_t errlen);
/* A destination event (RDMIG_EV_REGISTERED or RDMIG_EV_COMPRESSED): mark
 * the chunks it covers as touched by the pass under way.  *fresh (may be
 * NULL): the RAM it covered that nothing had before, now counted in
 * bytes_covered.  -1 with err for a block the recorder does not have. */
int qemu_rec_note_range(struct qemu_recorder *r, int type, const struct rdmig_dest_range *range,
			uint64_t *fresh, char *err, size_t errlen);
/* REGISTER_FINISHED: close the pass as a phase.  -1 with err beyond
 * QEMU_REC_MAX_PHASES. */
int qemu_rec_end_pass(struct qemu_recorder *r, const struct qemu_rec_view *v, char *err,
		      size_t errlen);
/* The migration ended: the engine's stats of dest into st. */
void qemu_rec_final_stats(struct qemu_recorder *r, const struct rdmig_dest *dest);

/* After the end, the source's migration status, downtime and total time
 * (query-migrate over its QMP socket), waiting a little for it to settle.
 * What it cannot learn stays unknown: -1 with a note saying why (a run
 * does not fail for it), else 0. */
int qemu_rec_qmp_times(struct qemu_recorder *r, const char *socket, char *note, size_t notelen);

/* ---- the record (qemu_record_write.c) ------------------------------ */

/* DIR/record.txt, written under a temporary name and then named (outdir.h);
 * FAILURE (or NULL for success) goes in its last line.  A long record
 * stops, kept as far as it got and ending with a line that says so, when
 * the library's cancel of opts (its flag or its pipe) is raised: -1 then
 * too.  0, or -1 with err. */
int qemu_rec_write(const struct qemu_recorder *r, const struct qemu_rec_view *v,
		   struct out_dir *dir, struct rdmig_opts *opts, const char *failure, char *err,
		   size_t errlen);

#endif
