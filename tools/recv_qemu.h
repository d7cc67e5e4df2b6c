/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_qemu.h - the state of `rdmig recv --qemu` (cli_recv_qemu.c), shared
 * with its report (cli_recv_qemu_report.c).  What the migration needs
 * recorded, the source's RAM offsets and its times included, is the
 * recorder's (src/sessions/qemu_recorder.h).  Internal to the tool.
 */
#ifndef RDMIG_RECV_QEMU_H
#define RDMIG_RECV_QEMU_H

#include <stdint.h>
#include <string.h>
#include "cli.h"
#include "cli_qemu.h"
#include "qemu_recorder.h"
#include "recv_dir.h"
#include <rdmig/imgstream.h>
#include <rdmig/qemu.h>


/* QEMU's RDMA stream holds device state only (pages travel as writes);
 * anything this large is not a migration we understand. */
#define RQ_MAX_STREAM (1ull << 30)

/* A destination block's memory.  Its image file is the output's
 * (rq_state.out), what became of its chunks the recorder's. */
struct rq_block {
	uint8_t *mem;
};

struct rq_state {
	struct recv_args a;
	const char *ramblocks; /* --ramblocks: the source's `info ramblock`, or NULL */
	const char *source_qmp; /* --source-qmp: the source QEMU's QMP socket, or NULL */
	struct rdmig_qs_parser qs;
	struct rq_block *rb;
	struct rdmig_block *blocks;
	struct recv_dir out;    /* the images and stream.bin in DIR */
	uint64_t stream_bytes;
	struct rdmig_listener *l;
	struct rdmig_conn *conn;
	struct rdmig_dest *dest;
	int pin_all, blocks_set;
	double t_start, t_end;
	struct mig_progress prog; /* --progress, from the block list on */
	struct qemu_recorder record; /* record.txt: over qs, from the start */
	char err[768];
};

/* cli_recv_qemu_report.c: the end's summary, as JSON or for people. */
void rq_print_json(const struct rq_state *s);
void rq_print_human(const struct rq_state *s);

#endif
