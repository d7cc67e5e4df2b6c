/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmig/imgstream.h - librdmig-stream, part 2 of 2: rdmig's own image
 * stream, what `rdmig send` puts into the protocol's opaque byte stream
 * (QEMU_FILE messages) and `rdmig recv` parses: the stream format v2 with
 * its span digest records, the digests (XXH3-128 from libxxhash, SHA-256
 * from libcrypto), a pool of hashing threads, and span verification on
 * both ends.  Part 1 is rdmig/qemu.h.  Link with `pkg-config --libs
 * rdmig-stream` (librdmig-stream, which needs neither librdmig nor verbs).
 *
 * Conventions of the library:
 *   - Errors are returned, never printed: 0 or -1 with a message in the
 *     caller's err buffer (or the parser's, *_errmsg()), everywhere.  The
 *     library never prints, never exits, opens no file and reads no
 *     environment: the caller reads and writes its files, and passes its
 *     settings in.  Not librdmig's negative codes, on purpose: this
 *     library stands alone, so it cannot share librdmig's codes and
 *     rdmig_strerror(); and what fails here is a byte stream's format or
 *     an allocation, where a caller acts the same on every failure and
 *     needs the message (which field, which byte, which block), not a
 *     class of error to branch on.
 *   - Lifecycles: a struct of the caller's memory is filled by *_init (or
 *     by the call that produces it: rdmig_rr_parse, rdmig_verify_start)
 *     and emptied by *_free; the one object the library allocates, the
 *     hash pool, has rdmig_hash_pool_create and rdmig_hash_pool_destroy,
 *     as librdmig's handles have.
 *   - Names are rdmig_<module>_* and RDMIG_<MODULE>_*; the structs are
 *     the caller's memory (declared here to be embedded) and their fields
 *     marked internal are not to be touched.  Unlike librdmig's, these
 *     structs are not extensible: a change of one is a new soname.
 *   - Threads: a parser, a struct rdmig_verify and a hash pool belong to
 *     the thread that started them; the pool's own threads run only the
 *     jobs released to them (and the after() callback, on a pool thread:
 *     it must be safe to run there, concurrently with the caller).  The
 *     pool's threads block SIGINT and SIGTERM.  Everything else is pure
 *     and reentrant.
 */
#ifndef RDMIG_IMGSTREAM_H
#define RDMIG_IMGSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdmig/digest.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The image stream - what `rdmig send` puts into the protocol's opaque byte
 * stream (QEMU_FILE messages), and an incremental parser for `rdmig recv`.
 *
 * The RAM blocks themselves travel as RDMA WRITEs; the stream only
 * describes them (header, before the writes) and carries their checksums
 * (trailer, after the last iteration).  All integers are big-endian.
 *
 *   header:   u32 magic    0x524d4948 "RMIH"
 *             u32 version  2
 *             u32 count    number of blocks, 1..4096
 *             u8  digest   the checksum: 0 off, 1 XXH3-128, 2 SHA-256, 3 XXH64
 *             u8  span     log2 of the bytes one span digest covers, 20..30
 *             u8  chunk    log2 of the source's registration chunk, 20..30
 *             u8  0        reserved
 *             count times:
 *               u16 name_len   1..255
 *               name_len bytes  the block name: printable ASCII 0x20..0x7e,
 *                               unique within the stream
 *               u64 length     bytes in the block (0 allowed)
 *   then any number of digest records:
 *             u32 magic    0x524d4944 "RMID"
 *             u32 block    the block the spans belong to
 *             u32 first    the first span of the record
 *             u32 n        spans in the record, 1..IMGS_MAX_RECORD_SPANS
 *             n times:     the digest of the span (16 or 32 bytes; none when
 *                          the digest is off: the record then only says
 *                          that the spans have landed)
 *   trailer:  u32 magic    0x524d4954 "RMIT"
 *             count times:
 *               the block's digest: the digest of its span digests, one
 *               after the other (0 bytes when the digest is off)
 *
 * Span i of a block covers bytes [i << span, (i + 1) << span), the last one
 * what is left.  The records cover every span of every block exactly once,
 * in order: block by block, span by span, each record going on where the
 * previous one stopped; the trailer comes after the last span.  A record
 * is sent after the RDMA WRITEs of its spans were posted, on the same queue
 * pair, so the spans it names are in the receiver's memory when it
 * arrives: the receiver checks them while the rest is still on its way.
 *
 * Nothing may follow the trailer.  The sum of the lengths must stay at or
 * below a limit the receiver chooses (it has to allocate that much).
 *
 * Version 2 replaced version 1 (one SHA-256 per block in the trailer,
 * computed and checked only after the whole transfer); each version
 * refuses the other with a message naming both.
 *
 * A u16 name length with a 1..255 rule (rather than a u8) keeps "zero"
 * and "too long" two separate, checkable rules.  Names are restricted to
 * printable ASCII so that they can be printed and put into JSON without
 * surprises; the receiver still maps them to safe file names itself.
 *
 * The parser is fed the stream in arbitrary pieces; it never reads past
 * what it is given, checks every field as soon as it is complete, and
 * reports the first violation with the field, its value and its offset.
 */

#define RDMIG_IMGS_HEADER_MAGIC 0x524d4948u  /* "RMIH" */
#define RDMIG_IMGS_TRAILER_MAGIC 0x524d4954u /* "RMIT" */
#define RDMIG_IMGS_DIGEST_MAGIC 0x524d4944u  /* "RMID" */
#define RDMIG_IMGS_VERSION 2u
#define RDMIG_IMGS_MIN_SHIFT 20u             /* span and chunk: 1 MiB .. */
#define RDMIG_IMGS_MAX_SHIFT 30u             /* .. 1 GiB */
#define RDMIG_IMGS_MAX_RECORD_SPANS 1024u
#define RDMIG_IMGS_MAX_BLOCKS 4096u
#define RDMIG_IMGS_MAX_NAME 255u

struct rdmig_imgs_block {
	char name[RDMIG_IMGS_MAX_NAME + 1]; /* NUL-terminated */
	uint64_t length;
	uint8_t digest[RDMIG_DIGEST_MAX];   /* the block's digest (trailer) */
	uint64_t first_span;          /* its first span in the stream's numbering */
	uint32_t nspans;              /* spans of the block */
};

/* What the header says besides the blocks. */
struct rdmig_imgs_params {
	uint32_t digest;       /* enum rdmig_digest_alg */
	uint32_t span_shift;   /* RDMIG_IMGS_MIN_SHIFT..IMGS_MAX_SHIFT */
	uint32_t chunk_shift;  /* RDMIG_IMGS_MIN_SHIFT..IMGS_MAX_SHIFT */
};

/* Spans of a block of `length` bytes. */
uint64_t rdmig_imgs_spans(uint64_t length, uint32_t span_shift);

/* Check a block name against the format's rules; 0, or -1 with a message
 * (naming the block by position `index`). */
int rdmig_imgs_check_name(const char *name, size_t len, uint32_t index, char *err, size_t errlen);

/*
 * Encode the header, a digest record or the trailer into a malloc'd
 * buffer (*out, *outlen; free() it).  The header checks the parameters,
 * the names (rules above), the count and that the total length does not
 * overflow; it also sets every block's first_span and nspans.  A record
 * carries n digests of rdmig_digest_size(alg) bytes each, packed.  Returns 0,
 * or -1 with a message in err.
 */
int rdmig_imgs_encode_header(const struct rdmig_imgs_params *prm, struct rdmig_imgs_block *blocks,
			     uint32_t n, uint8_t **out, size_t *outlen, char *err, size_t errlen);
int rdmig_imgs_encode_record(uint32_t alg, uint32_t block, uint32_t first, uint32_t n,
			     const uint8_t *digests, uint8_t **out, size_t *outlen, char *err,
			     size_t errlen);
int rdmig_imgs_encode_trailer(uint32_t alg, const struct rdmig_imgs_block *blocks, uint32_t n,
			      uint8_t **out, size_t *outlen, char *err, size_t errlen);

/* The digest of a block from its span digests (n of them, packed). */
void rdmig_imgs_block_digest(uint32_t alg, const uint8_t *span_digests, uint32_t n,
			     uint8_t out[RDMIG_DIGEST_MAX]);

/* What a call to rdmig_imgs_feed completed (a bit set; both can happen at once). */
#define RDMIG_IMGS_EV_HEADER 0x1  /* the header is complete: blocks/count are valid */
#define RDMIG_IMGS_EV_TRAILER 0x2 /* the trailer is complete: digest fields are valid */
#define RDMIG_IMGS_EV_SPANS 0x4   /* more span digests arrived: spans_known grew */

struct rdmig_imgs_parser {
	/* results, valid once the matching event was reported */
	struct rdmig_imgs_block *blocks; /* count entries */
	uint32_t count;
	uint64_t total;            /* sum of the lengths */
	struct rdmig_imgs_params prm;
	uint32_t chunk_size;       /* 1 << prm.chunk_shift, for the engine */
	uint64_t spans_total;      /* spans of all blocks */
	uint64_t spans_known;      /* spans whose digests arrived, in order */
	uint8_t *span_digests;     /* spans_total digests of rdmig_digest_size() bytes */
	int over_limit;            /* it failed because the total passed the limit */
	/* internal */
	uint64_t limit;
	uint64_t offset;           /* stream bytes consumed */
	int state;
	int seen;                  /* RDMIG_IMGS_EV_* reported so far */
	uint32_t index;            /* block being parsed */
	uint32_t rec_left;         /* digests still due in the current record */
	size_t dsize;              /* rdmig_digest_size(prm.digest) */
	size_t need, have;         /* bytes of the current field */
	uint8_t acc[RDMIG_IMGS_MAX_NAME + 1];
	char err[320];
};

/* Bytes of the spans whose records arrived (spans_known): the source
 * sends a span's record after its RDMA writes, so this much has landed. */
uint64_t rdmig_imgs_landed_bytes(const struct rdmig_imgs_parser *p);

/* Start a parser; the total length of all blocks must be <= max_total. */
void rdmig_imgs_parser_init(struct rdmig_imgs_parser *p, uint64_t max_total);
/*
 * Consume len bytes.  Returns a set of RDMIG_IMGS_EV_* completed by these bytes
 * (0 when more are needed), or -1 on a violation (message in p->err; the
 * parser then stays failed).
 */
int rdmig_imgs_feed(struct rdmig_imgs_parser *p, const void *data, size_t len);
/* The stream has ended: 0 if the trailer was complete, else -1 with a
 * message saying where the stream stopped. */
int rdmig_imgs_finish(struct rdmig_imgs_parser *p);
/* True once the header / the trailer has been parsed. */
int rdmig_imgs_header_done(const struct rdmig_imgs_parser *p);
int rdmig_imgs_trailer_done(const struct rdmig_imgs_parser *p);
const char *rdmig_imgs_errmsg(const struct rdmig_imgs_parser *p);
void rdmig_imgs_parser_free(struct rdmig_imgs_parser *p);

/*
 * File names - the names under which recv and recv --qemu write the
 * blocks they received.  A block's name comes from the source, so it is
 * never used as a path as it is: it is turned into one file name, safe and
 * distinct from the others'.
 */

/*
 * File names for the blocks, safe on any file system and distinct:
 * bytes outside [A-Za-z0-9._-] become '_', "." and ".." become "_" and
 * "__", long names are cut to RDMIG_IMGS_FILE_STEM bytes, and a stem already
 * taken gets "-2", "-3"... appended.  out[i] receives "<stem><suffix>".
 * Returns 0, or -1 when out of memory.
 */
#define RDMIG_IMGS_FILE_STEM 200
#define RDMIG_IMGS_FILE_NAME (RDMIG_IMGS_FILE_STEM + 32)
int rdmig_imgs_file_names(const struct rdmig_imgs_block *blocks, uint32_t n, const char *suffix,
			  char (*out)[RDMIG_IMGS_FILE_NAME]);

/*
 * The hash pool - digests of memory spans on a pool of threads, so that
 * `rdmig send` hashes while it migrates and `rdmig recv` checks data while
 * the rest is still arriving.
 *
 *   struct rdmig_hash_job jobs[n] = {{p0, len0, out0}, ...};   (outlive the pool)
 *   rdmig_hash_pool_create(RDMIG_DIGEST_XXH3_128, 0, jobs, n, &pool, err, sizeof(err));
 *   rdmig_hash_pool_release(pool, k);      jobs [0, k) may run now (k only grows)
 *   rdmig_hash_pool_done(pool);            how many jobs, from the first, are done
 *   rdmig_hash_pool_wait(pool, k, 0.01);   wait up to 10 ms for the first k
 *   rdmig_hash_pool_destroy(pool, false);  join, free; the seconds the threads hashed
 *
 * Jobs run in order of their index, each on one thread.  The threads
 * block SIGINT and SIGTERM: the caller's thread takes them.
 */

struct rdmig_hash_job {
	const uint8_t *p;
	uint64_t len;
	uint8_t *out;     /* RDMIG_DIGEST_MAX bytes of room */
	uint32_t block;   /* where p is, for rdmig_hash_after_fn: block and offset */
	uint64_t offset;
};

/* Called on the pool's thread after a job was hashed, with the data still
 * in its caches (rdmig recv writes the span to its image file there). */
typedef void (*rdmig_hash_after_fn)(void *ctx, const struct rdmig_hash_job *job);

struct rdmig_hash_pool;

/* The threads to use when the caller says 0: one per online CPU, 1 to 8.
 * The library reads no environment: a caller with its own knob (rdmig's
 * RDMIG_HASH_THREADS) passes the number it wants. */
unsigned rdmig_hash_pool_default_threads(void);
/* The most threads a pool runs (more asked for are this many). */
#define RDMIG_HASH_POOL_MAX_THREADS 8u

/* 0, or -1 with a message in err (out of memory, or no thread could be
 * started; none runs then, and *out is NULL). */
int rdmig_hash_pool_create(enum rdmig_digest_alg alg, unsigned threads, struct rdmig_hash_job *jobs,
			  size_t njobs, struct rdmig_hash_pool **out, char *err, size_t errlen);
unsigned rdmig_hash_pool_threads(const struct rdmig_hash_pool *p);
/* Run after() for every job from now on: call before the first release. */
void rdmig_hash_pool_set_after(struct rdmig_hash_pool *p, rdmig_hash_after_fn after, void *ctx);
/* Hash every job from a private copy (0.2): each thread copies the job's
 * bytes into a buffer of its own (max_len bytes, allocated here), hashes
 * the copy and hands the copy to after() (job->p then points into it):
 * the digest and what after() gets are the same bytes, whatever writes
 * the job's memory meanwhile.  A job longer than max_len is hashed in
 * place.  Call before the first release; 0, or -1 with a message in err
 * (out of memory, or jobs were released already). */
int rdmig_hash_pool_set_copy(struct rdmig_hash_pool *p, size_t max_len, char *err, size_t errlen);
void rdmig_hash_pool_release(struct rdmig_hash_pool *p, size_t upto);
size_t rdmig_hash_pool_done(struct rdmig_hash_pool *p);
/* Whether the first `upto` jobs are done, waiting at most timeout_s. */
bool rdmig_hash_pool_wait(struct rdmig_hash_pool *p, size_t upto, double timeout_s);
/* Join the threads (after their current job when STOP, else after all the
 * released ones) and free the pool; the seconds spent hashing, summed over
 * the threads.  NULL: 0. */
double rdmig_hash_pool_destroy(struct rdmig_hash_pool *p, bool stop);

/*
 * Verification - span digests of `rdmig send` and their checks in `rdmig recv`
 * (format: imgstream.h), both on a rdmig_hash_pool.
 *
 * Send: every span of every block is hashed as soon as the migration
 * starts, ahead of the writes; once a span has been handed to the library
 * and hashed, a record with its digest joins the stream (the library posts
 * the span's writes before it).  At the end each block's digest is the
 * digest of its span digests.
 *
 * Receive: a span is hashed as soon as its record has arrived (its data
 * has then landed) and compared at the end, when the last spans are done.
 *
 * With the digest off the records carry no digests and still go out as
 * the spans are handed over: the receiver writes each span to its image
 * as it lands all the same.
 */

/* Writes encoded stream bytes; 0 or non-zero (the caller's error). */
typedef int (*rdmig_verify_write_fn)(void *ctx, const void *buf, size_t len);
/* Called every 10 ms while the end waits for the threads; non-zero stops. */
typedef int (*rdmig_verify_tick_fn)(void *ctx);

struct rdmig_verify {
	enum rdmig_digest_alg alg;
	size_t dsize;
	uint64_t spans;           /* jobs: every span of every block */
	struct rdmig_hash_job *jobs;
	uint8_t *digests;         /* spans * RDMIG_DIGEST_MAX (one slot per job) */
	struct rdmig_hash_pool *pool;
	uint64_t released;        /* recv: jobs handed to the pool */
	uint64_t sent;            /* send: spans whose record went out */
	double hash_seconds;      /* busy time of the threads */
	double exposed_seconds;   /* how long the end waited for them */
	unsigned threads;
};

/* Start hashing the spans of blocks (whose first_span/nspans are set) in
 * mems[i] (NULL for an empty block).  Send: all spans at once; recv: none
 * until rdmig_verify_release.  With after (may be NULL), a pool runs even for
 * RDMIG_DIGEST_OFF, to call it for every span.  0, or -1 with a message. */
int rdmig_verify_start(struct rdmig_verify *v, enum rdmig_digest_alg alg, unsigned threads,
		       const struct rdmig_imgs_block *blocks, uint32_t n, uint32_t span_shift,
		       const uint8_t *const *mems, bool release_all, rdmig_hash_after_fn after,
		       void *ctx, char *err, size_t errlen);

/* send: records for every span that is both hashed and below `handed`
 * (the spans handed to the library so far, in stream numbering). */
int rdmig_verify_send_ready(struct rdmig_verify *v, const struct rdmig_imgs_block *blocks,
			    uint32_t n, uint64_t handed, rdmig_verify_write_fn write, void *ctx,
			    char *err, size_t errlen);
/* send: wait for every span (calling tick), send the last records and set
 * every block's digest. */
int rdmig_verify_send_finish(struct rdmig_verify *v, struct rdmig_imgs_block *blocks, uint32_t n,
			     rdmig_verify_write_fn write, rdmig_verify_tick_fn tick, void *ctx,
			     char *err, size_t errlen);

/* recv: spans [0, known) have their records: hash them. */
void rdmig_verify_release(struct rdmig_verify *v, uint64_t known);

/* recv: the result of one block. */
struct rdmig_verify_block {
	bool ok;
	int64_t bad_span;   /* the first span that differs, or -1 */
	uint8_t digest[RDMIG_DIGEST_MAX]; /* the block's digest as received */
};

/* recv: release every span (all data has landed), wait for them (calling
 * tick), then compare with what the parser received.  0 (out[i] filled),
 * or -1 when tick stopped it.  Under RDMIG_DIGEST_OFF no block is ok. */
int rdmig_verify_recv_finish(struct rdmig_verify *v, const struct rdmig_imgs_parser *ps,
			     struct rdmig_verify_block *out, rdmig_verify_tick_fn tick, void *ctx);

/* Stop the threads after their current span (a failed or cancelled run),
 * keeping the figures. */
void rdmig_verify_stop(struct rdmig_verify *v);
/* Stop the threads and free everything. */
void rdmig_verify_free(struct rdmig_verify *v);

#ifdef __cplusplus
}
#endif

#endif /* RDMIG_IMGSTREAM_H */
