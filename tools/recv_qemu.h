/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_qemu.h - the state of `rdmig recv --qemu` (cli_recv_qemu.c), shared
 * with the parts that live in files of their own: reading the source's
 * `info ramblock` (recv_qemu_ramblocks.c), asking the source's QMP
 * (recv_qemu_qmp.c) and writing record.txt (recv_qemu_record.c).  Internal
 * to the tool.
 */
#ifndef RDMIG_RECV_QEMU_H
#define RDMIG_RECV_QEMU_H

#include <stdint.h>
#include <string.h>
#include "cli.h"
#include "cli_qemu.h"
#include <rdmig/imgstream.h>
#include <rdmig/qemu.h>


/* QEMU's RDMA stream holds device state only (pages travel as writes);
 * anything this large is not a migration we understand. */
#define RQ_MAX_STREAM (1ull << 30)
#define RQ_RECORD "record.txt"
/* QEMU sends one REGISTER_FINISHED per iteration: a few with rdma-pin-all,
 * tens for a live guest that dirties memory (the interop tests' live and
 * killed modes).  Far more is a source that only wants the record to grow. */
#define RQ_MAX_PHASES 100000u

/* A destination block: its memory and image file.  What became of its
 * chunks is in the recorder's block (rq_state.rec, rdmig/qemu.h). */
struct rq_block {
	uint8_t *mem;
	char file[RDMIG_IMGS_FILE_NAME];
	struct out_file img;   /* DIR/file while it is written (outdir.h) */
};

struct rq_state {
	struct recv_args a;
	const char *ramblocks; /* --ramblocks: the source's `info ramblock`, or NULL */
	const char *source_qmp; /* --source-qmp: the source QEMU's QMP socket, or NULL */
	const char *rows_from;  /* where rows came from, for messages */
	struct rdmig_qs_parser qs;
	struct rdmig_qs_ramblock *rows; /* --ramblocks */
	size_t nrows;
	struct rq_block *rb;
	struct rdmig_qrec_block *rec; /* the record's view of each block (rb[i]) */
	struct rdmig_block *blocks;
	struct out_file stream; /* DIR/stream.bin, from the first valid bytes on */
	uint64_t stream_bytes;
	struct rdmig_listener *l;
	struct rdmig_conn *conn;
	struct rdmig_dest *dest;
	int pin_all, blocks_set;
	struct rdmig_qrec_phase *ph; /* control phases (RDMIG_QREC_*) */
	size_t nph, phcap;
	struct rdmig_counters k_prev;
	struct rdmig_engine_stats st_prev, st;
	int pass_touched;  /* a chunk was reported since the last pass ended */
	double t_start, t_end;
	/* what the source's QMP said after the end (--source-qmp): its
	 * migration status ("" when unknown) and times (< 0 when unknown) */
	char qemu_status[32];
	double qemu_downtime_s, qemu_total_s;
	struct mig_progress prog; /* --progress, from the block list on */
	uint64_t bytes_covered;   /* RAM registered or compressed at least once */
	char err[768];
};

/* recv_qemu_ramblocks.c: --ramblocks FILE into s->rows; 0, or -1 with s->err */
int rq_load_ramblocks(struct rq_state *s);
/* The same from an open `info ramblock` text; WHAT names it in messages. */
int rq_parse_ramblocks(struct rq_state *s, FILE *f, const char *what);

/* recv_qemu_qmp.c (--source-qmp): the rows from the source's `info
 * ramblock`, asked before the migration; 0, or -1 with s->err. */
int rq_qmp_ramblocks(struct rq_state *s);
/* After the end: the source's migration status, downtime and total time
 * (query-migrate), waiting a little for it to complete.  Never fails the
 * run: what it cannot learn stays unknown, with a note on stderr. */
void rq_qmp_times(struct rq_state *s);

/* recv_qemu_record.c */
/* A new control phase of KIND begins (the counters so far close the last). */
int rq_add_phase(struct rq_state *s, int kind);
/* A destination event (RDMIG_EV_REGISTERED or RDMIG_EV_COMPRESSED): mark
 * the chunks it covers as touched by the pass under way; -1 with s->err
 * for a block the tool does not have. */
int rq_note_range(struct rq_state *s, int type, const struct rdmig_dest_range *r);
/* REGISTER_FINISHED: close the pass as a phase; -1 with s->err beyond
 * RQ_MAX_PHASES. */
int rq_end_pass(struct rq_state *s);
/* DIR/record.txt, written under a temporary name and then named (outdir.h);
 * FAILURE (or NULL for success) goes in its last line.  -1 with s->err. */
int rq_write_record(struct rq_state *s, const char *failure);

/* cli_recv_qemu_report.c: the end's summary, as JSON or for people. */
void rq_print_json(const struct rq_state *s);
void rq_print_human(const struct rq_state *s);

#endif
