/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_files.h - the state of `rdmig recv` (cli_recv.c) that its report
 * (cli_recv_report.c: the JSON and human summaries, the mismatches) reads.
 */
#ifndef RDMIG_RECV_FILES_H
#define RDMIG_RECV_FILES_H

#include <stdbool.h>
#include "cli.h"
#include <rdmig/images.h>

/* One block's image file. */
struct recv_block {
	char file[RDMIG_IMGS_FILE_NAME];
	struct out_file img; /* DIR/file while it is written (outdir.h) */
};

struct recv_state {
	struct recv_args a;
	struct recv_block *rb;     /* per block, from the header on */
	uint32_t nblocks;
	uint64_t total;            /* bytes of all blocks */
	uint32_t span_shift;       /* of the source's span digests */
	struct out_file stream;    /* DIR/stream.bin, from the first valid bytes on */
	struct rdmig_listener *l;
	struct rdmig_conn *conn;
	struct rdmig_images_dest *dest;
	struct rdmig_images_stats ist;
	struct rdmig_engine_stats st;
	struct mig_progress prog;  /* the progress line: spans landed */
	bool verify_off;           /* --verify off */
	bool sink_failed;          /* the failure was our sink's (cli_recv.c) */
	char err[768];
};

/* cli_recv_report.c */
void print_json(const struct recv_state *s);
void print_human(const struct recv_state *s);
/* Each block whose spans did not match: one line on stderr; the count. */
int report_mismatches(const struct recv_state *s);

#endif
