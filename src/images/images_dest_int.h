/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_dest_int.h - the state of an image-set destination, shared by
 * its step machine (images_dest.c: the engine's events, failure, the
 * caller's queries) and its blocks (images_dest_blocks.c: the memory the
 * header asks for, the images, the hashing, the comparison, the commit).
 */
#ifndef RDMIG_IMAGES_DEST_INT_H
#define RDMIG_IMAGES_DEST_INT_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include "conn_session.h"
#include "images_dest_release.h"
#include "rdmig/images.h"
#include "rdmig/private.h"

enum dest_state { DST_RUNNING, DST_DONE, DST_FAILED };

struct rdmig_images_dest {
	struct rdmig_conn *conn;        /* NULL over a test's engine */
	struct rdmig_dest *engine;      /* ours */
	struct rdmig_images_dest_opts o;
	struct rdmig_images_sink sink;
	struct rdmig_imgs_parser ps;
	uint8_t **mem;                  /* per block; NULL for an empty one */
	struct rdmig_block *blocks;
	struct rdmig_verify vf;
	struct rdmig_verify_block *res; /* per block, once compared */
	struct chunk_release rel;       /* chunks given back (images_dest_release.c) */
	bool header_done, compared, committed, aborted;
	bool engine_failed;             /* the engine told the source itself */
	bool verdict;                   /* RDMIG_CAP_VERDICT: the trailer ends it,
					 * and the source hears the outcome */
	bool at_verdict, verdict_sent;  /* the trailer came; the verdict went */
	atomic_int write_err;           /* the first failed sink write (-errno) */
	atomic_int cancelled;
	enum dest_state state;
	int failed;
	struct rdmig_images_stats st;
	struct rdmig_engine_stats est;
	double t_phase;
	char err[RDMIG_ERRMSG_SIZE];
};

static inline double phase_end(struct rdmig_images_dest *d)
{
	double now = rdmig_monotonic_seconds(), took = now - d->t_phase;

	d->t_phase = now;
	return took;
}

/* A sink's code: a negative errno; -1 (a bare failure) and anything else
 * -EIO. */
static inline int sink_code(int ret)
{
	return ret != -1 && RDMIG_IS_ERRNO(ret) ? ret : -EIO;
}

/* Cancelled by rdmig_images_dest_cancel, or by the connection's
 * opts.cancel or rdmig_conn_cancel (which the engine's own waits look at). */
static inline bool is_cancelled(struct rdmig_images_dest *d)
{
	return atomic_load(&d->cancelled) || (d->conn && rdmig__conn_cancelled(d->conn));
}

static inline int cancelled(struct rdmig_images_dest *d)
{
	snprintf(d->err, sizeof(d->err), "cancelled");
	return RDMIG_ECANCELED;
}

/* The header is complete: check it, allocate, create the images, give
 * the engine the blocks, start the hashing. */
int rdmig__idest_on_header(struct rdmig_images_dest *d);
/* The first failed write of a hashing thread, as the step's failure. */
int rdmig__idest_sink_write_failed(struct rdmig_images_dest *d);
/* Wait for the last digests and compare: 0, a mismatch (RDMIG_EPROTO)
 * or a cancel. */
int rdmig__idest_compare(struct rdmig_images_dest *d);
/* Every span is in its image: the sizes, then the sink's commit. */
int rdmig__idest_commit(struct rdmig_images_dest *d);
/* The threads joined, the engine's figures kept, the memory deregistered
 * (the engine goes first) and freed. */
void rdmig__idest_teardown(struct rdmig_images_dest *d);

#endif
