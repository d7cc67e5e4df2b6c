/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmig/images.h - the migration of a set of images (memory blocks with
 * names) from one program to another, verified as it lands: what
 * `rdmig send` and `rdmig recv` do, as an API of librdmig.
 *
 * It runs over librdmig's engine (rdmig.h: a connection, its source or
 * destination) and librdmig-stream's image stream (rdmig/imgstream.h: the
 * header that names the blocks, span digest records, the trailer, the
 * hash pool).  Link with `pkg-config --libs rdmig rdmig-stream`.
 *
 * Source (rdmig_images_source_*): give it the blocks (memory and a name).
 * It announces them (the stream header), hands every span to the engine
 * whole, which sends none of its zero pages (rdmig_source_set_skip_zero:
 * the destination's blocks are fresh memory, zero already), hashes every
 * span on a pool of threads ahead of the writes, sends a span's digest
 * record once the span's writes are posted,
 * keeps the destination from timing out while it waits (keep-alives), and
 * ends with the trailer.
 *
 * Destination (rdmig_images_dest_*): it parses the header, refuses a
 * source that says more than the caller allows, adopts the source's chunk
 * size (one the caller gives must agree), allocates the blocks, and checks
 * every span as soon as its record arrives.  What it checked goes to a
 * sink the caller supplies (struct rdmig_images_sink: create an image,
 * write bytes at an offset, set its size, commit or abort), and the bytes
 * the sink gets are the bytes whose digest was checked: each span is copied
 * out of the memory the source can write (registered memory) into a
 * buffer private to the hashing thread, hashed there, and handed to the
 * sink from there.  Whatever the source writes into a span after its
 * record, the image and the digest reported stay what was checked.
 *
 * Conventions (librdmig's, rdmig.h): functions return 0 or a negative
 * rdmig code (rdmig_strerror), with the details in the handle's errmsg;
 * the library never prints, never exits and reads no environment; its
 * only threads are the hashing threads, as many as the options say (0:
 * rdmig_hash_pool_default_threads), which block SIGINT and SIGTERM.  A
 * handle belongs to the thread that drives it; rdmig_images_*_cancel may
 * be called from any thread or a signal handler.  The options and stats
 * structs start with their size, as librdmig's do (set it with *_init or
 * sizeof before the call), and only grow at their end.
 *
 * Event loops: a step does a bounded piece of work and returns an event.
 * The destination's step with .nonblocking returns RDMIG_EAGAIN when the
 * source's next message has not come: sleep on rdmig_conn_fd() and call
 * again.  The source's step writes one chunk (it blocks only on the
 * device's send queue and on the destination's registration replies,
 * bounded by opts.timeout_ms of the connection), or at the end waits for
 * its last digests while sending keep-alives.  *_run loops the steps to
 * the end for a caller without a loop, calling a progress function.
 *
 * Added in 0.2 (RDMIG_0.2).
 */
#ifndef RDMIG_IMAGES_H
#define RDMIG_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdmig.h>
#include <rdmig/imgstream.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a step did (struct rdmig_images_event.type). */
enum rdmig_images_event_type {
	RDMIG_IMAGES_EV_HEADER = 1,   /* source: the header and setup are done;
				       * dest: the header came, the blocks are
				       * allocated and the images created */
	RDMIG_IMAGES_EV_PROGRESS = 2, /* more bytes went (source) or were checked (dest) */
	RDMIG_IMAGES_EV_DONE = 3,     /* source: the trailer went; dest: committed */
};

struct rdmig_images_event {
	int type;
	uint64_t bytes_done;  /* source: handed to the engine; dest: landed (records came) */
	uint64_t bytes_total; /* of all blocks (dest: 0 before the header) */
};

/* Called by *_run after every step; non-zero stops the run (RDMIG_ECANCELED). */
typedef int (*rdmig_images_progress_fn)(void *ctx, const struct rdmig_images_event *ev);

/*
 * Where the time went, in seconds (CLOCK_MONOTONIC, read at phase changes
 * only).  Valid after DONE, or after a failure for the phases reached.
 */
struct rdmig_images_stats {
	size_t size;                /* the caller's sizeof, set before the call */
	uint64_t bytes_total;       /* of all blocks */
	uint64_t bytes_skipped_zero; /* source: zero pages, never sent (handed - written) */
	uint32_t blocks;
	uint32_t blocks_mismatched; /* dest: blocks whose digests differ */
	uint32_t digest;            /* enum rdmig_digest_alg used */
	bool verified;              /* dest: every block checked and equal */
	bool refused_total;         /* dest: the header asked for more than max_total */
	unsigned hash_threads;
	double hash_seconds;        /* busy time of the hashing threads, summed */
	/* the phases, one after the other: */
	double header_seconds;      /* source: header, setup (pinning); dest: from
				     * create to the header, allocation, images created */
	double transfer_seconds;    /* the writes, records and registration, to
				     * the end of the iteration (source) or the
				     * source's disconnect (dest) */
	double hash_wait_seconds;   /* after the data: waiting for the last digests */
	double commit_seconds;      /* source: the trailer; dest: sizes and the sink's commit */
	double teardown_seconds;    /* hashing threads joined, engine handle
				     * destroyed (deregistration), memory freed;
				     * source: and the disconnect, until the
				     * destination answered it */
	/* since 0.3: */
	uint64_t bytes_released;    /* dest: memory of chunks given back once
				     * their spans were in the images (dynamic
				     * registration; 0 with PIN_ALL) */
};

/* ------------------------------------------------------------ source -- */

/* One block to send: its memory stays the caller's and must stay mapped
 * and unchanged until the source is destroyed. */
struct rdmig_images_item {
	const char *name;  /* the rules of rdmig_imgs_check_name; copied */
	const void *mem;   /* may be NULL when length is 0 */
	uint64_t length;
};

struct rdmig_images_source_opts {
	size_t size;             /* set by rdmig_images_source_opts_init */
	uint32_t digest;         /* enum rdmig_digest_alg (default RDMIG_DIGEST_DEFAULT) */
	uint32_t span_shift;     /* bytes one digest covers, log2 (default 22: 4 MiB) */
	unsigned hash_threads;   /* 0: rdmig_hash_pool_default_threads() */
	int keep_alive_ms;       /* while no control message would go (default 500) */
	bool pin_local;          /* rdmig_source_set_pin_local */
	unsigned register_threads; /* rdmig_source_set_register_threads (0: per CPU) */
	/* With RDMIG_CAP_VERDICT: how long the end waits for the destination's
	 * verdict after the trailer, in ms: its last digests, its comparison
	 * and its durable commit (default 0: 60 s, or the connection's
	 * timeout when that is longer; < 0: no bound).  Added in 0.3. */
	int verdict_timeout_ms;
};

/*
 * The destination's verdict (RDMIG_CAP_VERDICT, rdmig.h): an rdmig
 * destination that both sides let give one answers the trailer, after it
 * compared every digest and made its outputs durable, with what it
 * committed or why it did not.  The source checks that what was committed
 * is what it sent (every length and digest).
 */
enum rdmig_images_verdict_state {
	RDMIG_VERDICT_NONE = 0,      /* not negotiated: the destination (QEMU, an
				      * older rdmig, a caller that did not set
				      * rdmig_opts.verdict) cannot say */
	RDMIG_VERDICT_COMMITTED = 1, /* committed, durably, exactly what was sent */
	RDMIG_VERDICT_FAILED = 2,    /* the destination did not commit: reason says why */
	RDMIG_VERDICT_UNKNOWN = 3,   /* asked, but no verdict came (the destination
				      * went away, or the wait timed out): it may
				      * or may not have committed */
	RDMIG_VERDICT_PENDING = 4,   /* the migration has not reached its end */
};

struct rdmig_images_verdict {
	size_t size;      /* the caller's sizeof, set before the call */
	int state;        /* enum rdmig_images_verdict_state */
	uint32_t images;  /* COMMITTED: images committed */
	uint64_t bytes;   /* COMMITTED: their bytes */
	char reason[1025]; /* FAILED, UNKNOWN: the destination's words, or what happened */
};

struct rdmig_images_source;

void rdmig_images_source_opts_init_sized(struct rdmig_images_source_opts *o, size_t size);
static inline void rdmig_images_source_opts_init(struct rdmig_images_source_opts *o)
{
	rdmig_images_source_opts_init_sized(o, sizeof(*o));
}
/* A source of n blocks (1..RDMIG_IMGS_MAX_BLOCKS) over a connected
 * connection, which must outlive it; the chunk size is the connection's
 * (rdmig_opts.chunk_size), announced in the header.  Nothing goes on the
 * wire before the first step.  RDMIG_EINVAL for bad blocks or options
 * (the message names which). */
int rdmig_images_source_create(struct rdmig_conn *c, const struct rdmig_images_item *items,
			       uint32_t n, const struct rdmig_images_source_opts *o,
			       struct rdmig_images_source **out);
/* One step: the first sends the header and sets the engine up (HEADER),
 * the next ones one chunk each (PROGRESS), the last the end of the
 * iteration, the last records and the trailer; then, with
 * RDMIG_CAP_VERDICT, the wait for the destination's verdict (at most
 * opts.verdict_timeout_ms), and the disconnect: it waits (at most the
 * connection's timeout, or 10 s without one) for the destination to
 * answer it (DONE).  After DONE or a failure, RDMIG_ESTATE / the
 * failure's code again. */
int rdmig_images_source_step(struct rdmig_images_source *s, struct rdmig_images_event *ev);
/* Steps to DONE; progress (may be NULL) after each. */
int rdmig_images_source_run(struct rdmig_images_source *s, rdmig_images_progress_fn progress,
			    void *ctx);
/* Ask the source to stop: the next step (or the wait for the last
 * digests) returns RDMIG_ECANCELED.  Async-signal-safe. */
void rdmig_images_source_cancel(struct rdmig_images_source *s);
/* The verdict as far as the source knows it (rdmig_images_verdict).  A
 * source that asked for one steps to DONE only on RDMIG_VERDICT_COMMITTED;
 * FAILED ends the step with RDMIG_EPEER, UNKNOWN with the failure that
 * ended the wait.  Added in 0.3 (RDMIG_0.3). */
void rdmig_images_source_verdict(const struct rdmig_images_source *s,
				 struct rdmig_images_verdict *out);
/* The blocks as announced: names, lengths, and after DONE their digests. */
const struct rdmig_imgs_block *rdmig_images_source_blocks(const struct rdmig_images_source *s);
void rdmig_images_source_stats(const struct rdmig_images_source *s,
			       struct rdmig_images_stats *out);
/* The engine's figures (rdmig_source_stats), kept past the teardown. */
void rdmig_images_source_engine_stats(const struct rdmig_images_source *s,
				      struct rdmig_engine_stats *out);
const char *rdmig_images_source_errmsg(const struct rdmig_images_source *s);
void rdmig_images_source_destroy(struct rdmig_images_source *s);

/* ------------------------------------------------------- destination -- */

/*
 * What the destination commits through.  The callbacks return 0, or a
 * negative errno (-1 or any other non-errno value counts as -EIO); those
 * with err may put a message there, which becomes the handle's errmsg.
 * All but write run on the thread that calls the steps.
 */
struct rdmig_images_sink {
	void *ctx;
	/* optional: the header came (nothing is allocated yet); non-zero refuses it */
	int (*header)(void *ctx, const struct rdmig_imgs_block *blocks, uint32_t n,
		      const struct rdmig_imgs_params *prm, char *err, size_t errlen);
	/* create image `index` (before any data moves) */
	int (*create)(void *ctx, uint32_t index, const struct rdmig_imgs_block *block, char *err,
		      size_t errlen);
	/* bytes of a checked span, on a hashing thread: concurrently with other
	 * spans (never the same bytes twice), in any order */
	int (*write)(void *ctx, uint32_t index, uint64_t offset, const void *data, size_t len);
	/* every span is written: the image's final length */
	int (*set_size)(void *ctx, uint32_t index, uint64_t length, char *err, size_t errlen);
	/* optional: the image stream's bytes as they pass, once parsed as valid */
	int (*stream)(void *ctx, const void *data, size_t len, char *err, size_t errlen);
	/* every image verified (or verification off) and sized: make them the result */
	int (*commit)(void *ctx, char *err, size_t errlen);
	/* anything failed, or the destination was destroyed before commit */
	void (*abort)(void *ctx);
};

struct rdmig_images_dest_opts {
	size_t size;           /* set by rdmig_images_dest_opts_init */
	uint64_t max_total;    /* most bytes of all blocks (required, > 0) */
	uint64_t chunk_size;   /* 0: the source's; else it must be the source's */
	bool verify;           /* default true: a source without digests is refused */
	unsigned hash_threads; /* 0: rdmig_hash_pool_default_threads() */
	bool nonblocking;      /* steps use rdmig_dest_try_next (RDMIG_EAGAIN) */
};

struct rdmig_images_dest;

void rdmig_images_dest_opts_init_sized(struct rdmig_images_dest_opts *o, size_t size);
static inline void rdmig_images_dest_opts_init(struct rdmig_images_dest_opts *o)
{
	rdmig_images_dest_opts_init_sized(o, sizeof(*o));
}
/* A destination over an accepted connection, which must outlive it.  The
 * sink (copied) must have create, write, set_size, commit and abort. */
int rdmig_images_dest_create(struct rdmig_conn *c, const struct rdmig_images_dest_opts *o,
			     const struct rdmig_images_sink *sink, struct rdmig_images_dest **out);
/*
 * One step: serve the source until something happened (HEADER, PROGRESS),
 * or, once it disconnected, wait for the last digests, compare, set the
 * sizes, commit and tear down (DONE).  A failure calls the sink's abort
 * and tells the source; a mismatch of digests is RDMIG_EPROTO with
 * stats.blocks_mismatched > 0 and rdmig_images_dest_result per block.
 */
int rdmig_images_dest_step(struct rdmig_images_dest *d, struct rdmig_images_event *ev);
int rdmig_images_dest_run(struct rdmig_images_dest *d, rdmig_images_progress_fn progress,
			  void *ctx);
/* As rdmig_images_source_cancel. */
void rdmig_images_dest_cancel(struct rdmig_images_dest *d);
/* (0.3) The memory a destination with options o allocates beyond the
 * blocks for the header prm, blocks[0..n): each hashing thread's private
 * copy of a span (the span size is the source's, up to 1 GiB), at most the
 * largest block; 0 when it does not verify.  A server admits a source
 * against this plus its blocks' bytes. */
uint64_t rdmig_images_dest_copy_bytes(const struct rdmig_images_dest_opts *o,
				      const struct rdmig_imgs_params *prm,
				      const struct rdmig_imgs_block *blocks, uint32_t n);
/* The blocks of the header (NULL and *n = 0 before it). */
const struct rdmig_imgs_block *rdmig_images_dest_blocks(const struct rdmig_images_dest *d,
							uint32_t *n);
/* Block i's outcome, after the digests were compared: RDMIG_ESTATE before,
 * RDMIG_ERANGE for an index outside the header. */
int rdmig_images_dest_result(const struct rdmig_images_dest *d, uint32_t i,
			     struct rdmig_verify_block *out);
void rdmig_images_dest_stats(const struct rdmig_images_dest *d, struct rdmig_images_stats *out);
void rdmig_images_dest_engine_stats(const struct rdmig_images_dest *d,
				    struct rdmig_engine_stats *out);
const char *rdmig_images_dest_errmsg(const struct rdmig_images_dest *d);
/* Aborts through the sink when it was not committed; frees the blocks. */
void rdmig_images_dest_destroy(struct rdmig_images_dest *d);

#ifdef __cplusplus
}
#endif

#endif /* RDMIG_IMAGES_H */
