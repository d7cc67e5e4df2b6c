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
#include "cli_budget.h"
#include <rdmig/images.h>
#include "recv_dir.h"

/* What `recv --serve` (cli_recv_serve.c) changes in one source's run:
 * the run stops on its own flag, not on the process's signals, and a
 * header is admitted only within what the other sources leave. */
/* Where a served source is, for `rdmig status` (serve_status.c). */
enum serve_phase { SERVE_PHASE_HEADER, SERVE_PHASE_RECEIVING, SERVE_PHASE_COMMITTING };

struct recv_serve_hooks {
	atomic_bool stop; /* set by the serving thread: abort this source */
	/* written by the source's thread, read by the status socket's */
	atomic_int phase;                   /* enum serve_phase */
	atomic_uint_least64_t bytes_total;  /* of its blocks, once admitted */
	atomic_uint_least64_t bytes_done;   /* spans landed */
	void *ctx;
	/* the header came and this recv accepts it: bytes of all blocks, the
	 * hashing threads' copies (memory, not disk), the files it makes in
	 * --out (one per block and stream.bin; its directory is counted by
	 * the server), and what they pin; non-zero refuses the source
	 * (message in err) */
	int (*admit)(void *ctx, uint64_t total, uint64_t copies, uint64_t files,
		     const struct rdmig_pin_need *pins, char *err, size_t errlen);
};

struct recv_state {
	struct recv_args a;
	/* the output files in a.dir and the sink that writes them (from
	 * recv_outputs_init on; the tool decides on the header) */
	struct recv_dir out;
	uint64_t total;            /* bytes of all blocks */
	uint32_t span_shift;       /* of the source's span digests */
	struct rdmig_listener *l;
	struct rdmig_conn *conn;
	struct rdmig_images_dest *dest;
	struct rdmig_images_stats ist;
	struct rdmig_engine_stats st;
	struct mig_progress prog;  /* the progress line: spans landed */
	bool verify_off;           /* --verify off */
	struct recv_serve_hooks *serve; /* NULL: plain recv */
	/* the budget's marks (cli_budget.h; the sink's copy time is
	 * recv_dir_copy_ns): accepted, the images destination created, its
	 * run returned (rdmig_monotonic_seconds) */
	double t_accepted, t_run, t_run_end;
	char err[768];
};

/* cli_recv.c: s's outputs go into s->a.dir (its address, opened later),
 * under this tool's rules for a header; before anything can fail. */
void recv_outputs_init(struct recv_state *s);
/* The migration of one source into s->a.dir, through the library's
 * image-set destination (s->conn accepted); 0 or its failure. */
int recv_receive(struct recv_state *s);
/* The one-line message of a failure of recv_receive (ret). */
const char *recv_failure_message(struct recv_state *s, int ret, char *buf, size_t len);

/* cli_recv_report.c */
/* The JSON summary, without its budget (added once the handles are gone). */
struct json_object *recv_json(const struct recv_state *s);
/* The budget of a run whose handles were torn down at t_cleaned. */
void recv_budget(const struct recv_state *s, double t_cleaned, struct cli_budget *b);
void print_human(const struct recv_state *s);
/* Each block whose spans did not match: one line on stderr; the count. */
int report_mismatches(const struct recv_state *s);

#endif
