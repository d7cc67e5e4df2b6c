/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_files.h - the state of `rdmig recv` (cli_recv.c) that its report
 * (cli_recv_report.c: the JSON and human summaries, the mismatches) reads.
 */
#ifndef RDMIG_RECV_FILES_H
#define RDMIG_RECV_FILES_H

#include <stdatomic.h>
#include <stdbool.h>
#include "cli.h"
#include <rdmig/imgstream.h>

/* The destination memory of one block and what became of it. */
struct recv_block {
	uint8_t *mem;   /* NULL for an empty block */
	char file[RDMIG_IMGS_FILE_NAME];
	struct out_file img; /* DIR/file while it is written (outdir.h) */
};

struct recv_state {
	struct recv_args a;
	struct rdmig_imgs_parser ps;
	struct recv_block *rb;
	struct rdmig_block *blocks;
	struct out_file stream; /* DIR/stream.bin, from the first valid bytes on */
	struct rdmig_listener *l;
	struct rdmig_conn *conn;
	struct rdmig_dest *dest;
	struct rdmig_engine_stats st;
	struct mig_progress prog;  /* the progress line: spans landed */
	struct rdmig_verify vf;          /* span digests, checked as they arrive */
	struct rdmig_verify_block *res;  /* per block, once verified */
	bool verify_off;           /* --verify off */
	atomic_int write_errno;    /* the first failed image write (pool threads) */
	int blocks_set, verified;
	double t_start, t_end, write_seconds;
	char err[768];
};

/* cli_recv_report.c */
void print_json(const struct recv_state *s);
void print_human(const struct recv_state *s);
/* Each block whose spans did not match: one line on stderr; the count. */
int report_mismatches(const struct recv_state *s);

#endif
