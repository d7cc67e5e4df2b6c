/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dest_int.h - the destination's state, shared by its loop (dest.c) and
 * the services it dispatches to (dest_serve.c).  Internal.
 */
#ifndef RDMIG_DEST_INT_H
#define RDMIG_DEST_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "dest_events.h"
#include "dest_idle.h"
#include "engine.h"

struct dst_block {
	char *name;
	uint8_t *host;
	uint64_t length;
	uint64_t offset; /* in this side's RAM offset space */
	uint32_t nchunks;
	struct engine_mr **chunk_mr; /* per chunk; may share one MR (multi-chunk requests) */
	struct engine_mr *block_mr;  /* PIN_ALL */
	uint8_t *released;           /* per chunk: unregistered, so registering it re-pins */
};

struct rdmig_dest {
	struct engine_io io;
	struct dst_block *blocks;
	size_t nblocks;
	bool have_blocks;
	bool blocks_sent;     /* RAM_BLOCKS_RESULT went out */
	bool blocks_pending;  /* RAM_BLOCKS_REQUEST waits for set_blocks */
	unsigned shift;       /* chunks of 2^shift bytes (opts.chunk_size) */
	struct engine_mr **mrs; /* every chunk MR we own */
	size_t nmrs, mrs_cap;
	uint8_t *scratch;     /* replies: up to 4096 records */
	struct zrange *zr;    /* the COMPRESS ranges of the message at hand, sorted */
	struct rdmig_engine_stats st;
	struct dest_events events; /* what the caller asked to hear of, queued */
	int failed;           /* the code rdmig_dest_next failed with (sticky) */
	struct dest_idle idle; /* the progress deadline */
	double deadline_us;   /* the source's overall deadline (engine clock); 0: none */
	bool progress;        /* the message at hand moved data */
	unsigned idle_msgs;   /* messages since the last progress */
	uint64_t repins;      /* chunks registered again after UNREGISTER */
};

/* Register [addr, addr + len) for the peer's writes (never its reads),
 * counting the time in the stats. */
static inline struct engine_mr *rdmig__dest_register_remote(struct rdmig_dest *d, void *addr,
							    uint64_t len)
{
	return rdmig__engine_reg_timed(&d->io, addr, len, ENGINE_ACCESS_REMOTE_WRITE,
				       &d->st.register_seconds);
}

/* The services of dest_serve.c, one per message type; 0 or the error the
 * migration ended with (ERROR already sent where the protocol allows). */
int rdmig__dest_serve_register(struct rdmig_dest *d, const struct rdmig_msg *m);
int rdmig__dest_serve_unregister(struct rdmig_dest *d, const struct rdmig_msg *m);
int rdmig__dest_serve_compress(struct rdmig_dest *d, const struct rdmig_msg *m);

#endif
