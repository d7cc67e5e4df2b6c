/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source_int.h - what the source engine's files share: the source's
 * state and the functions each layer offers the one above it.  The layers,
 * from the top (each calls only down): source.c (lifecycle, setup, stream,
 * iterations), source_write.c (the write queue), source_register.c
 * (control messages, REGISTER_REQUEST and its reply), source_pin.c (our
 * own memory registered: chunks, or blocks whole in pieces ahead of the
 * writes).  Not installed.
 */
#ifndef RDMIG_SOURCE_INT_H
#define RDMIG_SOURCE_INT_H

#include "engine.h"

struct src_block {
	char *name;
	uint8_t *host;
	uint64_t length;
	uint32_t nchunks;
	struct engine_mr **local_mr; /* per chunk (dynamic registration) */
	/* the whole block (PIN_ALL, or pin_local): npieces MRs of piece_chunks
	 * chunks each (the last may be shorter); NULL when not whole */
	struct engine_mr **piece_mr;
	uint32_t npieces, piece_chunks;
	size_t first_job;         /* its first piece's in the pinner's list */
	bool piece_failed_told;   /* pin-local: the fallback was logged */
	uint32_t *remote_rkey;    /* per chunk, valid where remote_ok */
	uint8_t *remote_ok;       /* per chunk: the destination registered it */
	uint64_t remote_host;     /* destination address of the block start */
	uint64_t remote_offset;   /* destination RAM offset of the block */
	uint32_t remote_block_rkey;
};

struct pending_write {
	bool active;
	uint32_t block;
	uint64_t offset, len;
	/* all zero, as far as the zero test looked: it looks only where a
	 * range may go as COMPRESS (source_write.c), so false may be unknown */
	bool zero;
};

/* A REGISTER_REQUEST sent before its chunk is written, whose reply is
 * taken later (collect_ahead): the round trip and the destination's
 * registration overlap the writes already queued. */
struct request_ahead {
	bool out;
	uint32_t block;
	uint64_t offset;
	/* the chunk last considered: looked at once, however many writes */
	bool seen;
	uint32_t seen_block, seen_chunk;
};

struct rdmig_source {
	struct engine_io io;
	struct src_block *blocks;
	size_t nblocks;
	bool pin_all;
	bool set_up;
	unsigned shift; /* chunks of 2^shift bytes (opts.chunk_size) */
	struct pending_write pending;
	bool lookahead;             /* rdmig_source_set_lookahead */
	bool pin_local;             /* rdmig_source_set_pin_local */
	bool skip_zero;             /* rdmig_source_set_skip_zero */
	unsigned register_threads;  /* rdmig_source_set_register_threads (1) */
	struct request_ahead ahead; /* the one request whose reply is not taken */
	struct pinner *pinner;      /* source_pin.c: pieces pinned ahead of the writes */
	struct rdmig_engine_stats st;
	struct latency_log rtt;
	double register_t0; /* when the REGISTER_REQUEST awaiting its reply left */
	int keep_alive_ms;     /* rdmig_source_set_keep_alive; 0: off */
	double last_control_us; /* when the last control message left */
};

/* A message from the destination that breaks the wire rules is answered
 * with ERROR, as the destination answers ours (our own refusals go through
 * rdmig__engine_abort, which already sends it). */
static inline int rdmig__src_answer_violation(struct rdmig_source *s, int ret)
{
	return engine_msg_violation(ret) ? rdmig__engine_abort_keep(&s->io, ret) : ret;
}

/* source_write.c: settle and post the pending write (LAST: signal it, as
 * the last of an iteration). */
int rdmig__src_flush_pending(struct rdmig_source *s, bool last);

/* source_register.c */
int rdmig__src_control_send(struct rdmig_source *s, const struct rdmig_msg *msg);
int rdmig__src_control_request(struct rdmig_source *s, const struct rdmig_msg *msg);
int rdmig__src_ask_register(struct rdmig_source *s, uint32_t bi, uint64_t offset);
int rdmig__src_take_register_result(struct rdmig_source *s, uint32_t bi, uint64_t offset,
				    bool ahead);
int rdmig__src_collect_ahead(struct rdmig_source *s);

/* source_pin.c: start pinning every block whole, in pieces, on threads
 * that go on while the writes start. */
int rdmig__src_start_pinning(struct rdmig_source *s);
/* The local key for a write into chunk of b: its own MR's, or its
 * piece's once pinned (waiting for it); a piece that failed is an error
 * under PIN_ALL and, with pin-local, the chunk registered on its own. */
int rdmig__src_local_key(struct rdmig_source *s, struct src_block *b, uint32_t chunk,
			 uint32_t *lkey);
/* Our own chunk registered on its own (dynamic registration), unless a
 * piece covers it. */
int rdmig__src_register_local_chunk(struct rdmig_source *s, struct src_block *b, uint32_t chunk);
/* The pinner's registration time and chunks, added to st. */
void rdmig__src_pin_stats(const struct rdmig_source *s, struct rdmig_engine_stats *st);
/* Stop and join the pinning threads (before the pieces are released). */
void rdmig__src_stop_pinning(struct rdmig_source *s);
void rdmig__src_release_pieces(const struct engine_io *io, struct src_block *b);

#endif
