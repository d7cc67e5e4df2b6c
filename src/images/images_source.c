/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_source.c - the source of an image-set migration (rdmig/images.h):
 *
 *   first step:  stream header (names, lengths, digest, span, chunk) ->
 *                engine setup (RAM_BLOCKS) -> every span released to the
 *                hash pool, hashed ahead of the writes
 *   each step:   one chunk, a span at a time: one write per span (the
 *                engine skips its zero pages: rdmig_source_set_skip_zero),
 *                and the records of the spans handed over and hashed
 *                (send_spans says when)
 *   last step:   end of iteration -> wait for the last digests (keep-alives)
 *                -> the last records -> trailer -> teardown
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conn_session.h"
#include "images_records.h"
#include "images_int.h"
#include "log.h"
#include "rdmig/images.h"
#include "rdmig/private.h"

#define DEFAULT_SPAN_SHIFT 22
#define DEFAULT_KEEP_ALIVE_MS 500
#define DEFAULT_VERDICT_WAIT_MS 60000

enum src_state { SRC_NEW, SRC_SENDING, SRC_ENDING, SRC_DONE, SRC_FAILED };

struct rdmig_images_source {
	struct rdmig_conn *conn;
	struct rdmig_source *src;
	struct rdmig_images_source_opts o;
	uint32_t n;
	struct rdmig_imgs_block *desc;  /* names, lengths, then digests */
	struct rdmig_block *blocks;     /* what the engine registers and writes */
	uint64_t chunk;                 /* the connection's, as the header says */
	bool pin_all;
	struct rdmig_verify vf;
	uint64_t handed;                /* spans handed to the engine */
	uint32_t block;                 /* the cursor: next chunk */
	uint64_t off;
	enum src_state state;
	int failed;                     /* the code of the failure, once failed */
	int io_ret;                     /* the engine's code when a stream write failed */
	bool engine_failed;             /* the engine told the destination itself */
	atomic_int cancelled;
	struct rdmig_images_stats st;
	struct rdmig_engine_stats est;
	double t_phase;                 /* when the current phase began */
	struct rdmig_images_verdict verdict;
	char err[RDMIG_ERRMSG_SIZE];
};

void rdmig_images_source_opts_init_sized(struct rdmig_images_source_opts *o, size_t size)
{
	memset(o, 0, size);
	o->size = size;
	o->digest = RDMIG_DIGEST_DEFAULT;
	o->span_shift = DEFAULT_SPAN_SHIFT;
	o->keep_alive_ms = DEFAULT_KEEP_ALIVE_MS;
}

/* The caller's options, as far as its struct goes; defaults for the rest. */
static int copy_opts(struct rdmig_images_source *s, const struct rdmig_images_source_opts *o)
{
	rdmig_images_source_opts_init(&s->o);
	if (!o)
		return 0;
	if (o->size < offsetof(struct rdmig_images_source_opts, digest) + sizeof(o->digest) ||
	    o->size > sizeof(s->o)) {
		snprintf(s->err, sizeof(s->err), "images source options of %zu bytes: not "
			 "initialised with rdmig_images_source_opts_init", o->size);
		return RDMIG_EINVAL;
	}
	memcpy(&s->o, o, o->size);
	s->o.size = sizeof(s->o);
	if (!rdmig_digest_name(s->o.digest) || s->o.span_shift < RDMIG_IMGS_MIN_SHIFT ||
	    s->o.span_shift > RDMIG_IMGS_MAX_SHIFT) {
		snprintf(s->err, sizeof(s->err), "images source: digest %u or span shift %u out of "
			 "range", s->o.digest, s->o.span_shift);
		return RDMIG_EINVAL;
	}
	return 0;
}

/* The blocks in the header's and the engine's form; the header's encoder
 * checks the names and sets every block's spans. */
static int describe(struct rdmig_images_source *s, const struct rdmig_images_item *items)
{
	static uint8_t empty_block; /* a valid address for length-0 blocks */

	s->desc = calloc(s->n, sizeof(*s->desc));
	s->blocks = calloc(s->n, sizeof(*s->blocks));
	if (!s->desc || !s->blocks) {
		snprintf(s->err, sizeof(s->err), "out of memory for %u blocks", s->n);
		return RDMIG_ENOMEM;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		size_t len = items[i].name ? strlen(items[i].name) : 0;

		if (rdmig_imgs_check_name(items[i].name ? items[i].name : "", len, i, s->err,
					  sizeof(s->err)))
			return RDMIG_EINVAL;
		if (items[i].length && !items[i].mem) {
			snprintf(s->err, sizeof(s->err), "block '%s': no memory for %llu bytes",
				 items[i].name, (unsigned long long)items[i].length);
			return RDMIG_EINVAL;
		}
		memcpy(s->desc[i].name, items[i].name, len + 1);
		s->desc[i].length = items[i].length;
		s->blocks[i] = (struct rdmig_block){
			.name = s->desc[i].name,
			.host = items[i].mem ? (void *)(uintptr_t)items[i].mem : (void *)&empty_block,
			.length = items[i].length,
		};
		s->st.bytes_total += items[i].length;
	}
	return 0;
}

int rdmig_images_source_create(struct rdmig_conn *c, const struct rdmig_images_item *items,
			       uint32_t n, const struct rdmig_images_source_opts *o,
			       struct rdmig_images_source **out)
{
	struct rdmig_images_source *s;
	struct rdmig_caps caps;
	int ret;

	if (!out)
		return RDMIG_EINVAL;
	*out = NULL;
	if (!c || !items || !n || n > RDMIG_IMGS_MAX_BLOCKS)
		return RDMIG_EINVAL;
	if (!(s = calloc(1, sizeof(*s))))
		return RDMIG_ENOMEM;
	s->conn = c;
	s->n = n;
	s->chunk = rdmig__conn_opts(c)->chunk_size;
	s->st.size = sizeof(s->st);
	s->est.size = sizeof(s->est);
	s->st.blocks = n;
	if ((ret = copy_opts(s, o)) || (ret = describe(s, items))) {
		/* the caller learns why from the code; the message is lost
		 * with the handle, so it goes to the connection's */
		snprintf(rdmig__conn_errbuf(c), RDMIG_ERRMSG_SIZE, "%s", s->err);
		rdmig_images_source_destroy(s);
		return ret;
	}
	s->st.digest = s->o.digest;
	s->verdict.size = sizeof(s->verdict);
	rdmig_conn_caps(c, &caps);
	s->verdict.state = caps.flags & RDMIG_CAP_VERDICT ? RDMIG_VERDICT_PENDING
							  : RDMIG_VERDICT_NONE;
	*out = s;
	return 0;
}

/* Cancelled by rdmig_images_source_cancel, or by the connection's
 * opts.cancel (which the engine's own waits look at). */
static bool is_cancelled(struct rdmig_images_source *s)
{
	return atomic_load(&s->cancelled) || rdmig__conn_cancelled(s->conn);
}

/* The engine failed: its code, its message. */
static int engine_failed(struct rdmig_images_source *s, int ret)
{
	s->engine_failed = true;
	snprintf(s->err, sizeof(s->err), "%s",
		 s->src ? rdmig_source_errmsg(s->src) : rdmig_conn_errmsg(s->conn));
	return ret;
}

static int write_stream_bytes(void *ctx, const void *buf, size_t len)
{
	struct rdmig_images_source *s = ctx;

	return s->io_ret = rdmig_source_write_stream(s->src, buf, len);
}

/* A failure of rdmig_verify_*: the engine's, when a stream write failed. */
static int verify_failed(struct rdmig_images_source *s)
{
	return s->io_ret ? engine_failed(s, s->io_ret) : RDMIG_ENOMEM;
}

static int write_header_or_trailer(struct rdmig_images_source *s, bool trailer)
{
	struct rdmig_imgs_params prm = {s->o.digest, s->o.span_shift,
					(uint32_t)__builtin_ctzll(s->chunk)};
	uint8_t *buf;
	size_t len;
	int ret = trailer ? rdmig_imgs_encode_trailer(s->o.digest, s->desc, s->n, &buf, &len,
						      s->err, sizeof(s->err))
			  : rdmig_imgs_encode_header(&prm, s->desc, s->n, &buf, &len, s->err,
						     sizeof(s->err));

	if (ret)
		return RDMIG_EINVAL;
	ret = rdmig_source_write_stream(s->src, buf, len);
	free(buf);
	return ret ? engine_failed(s, ret) : 0;
}

/* Hash every span of every block on the pool, ahead of the writes: on one
 * thread hashing took turns with the writes and set the pace. */
static int start_hashing(struct rdmig_images_source *s)
{
	const uint8_t **mems = calloc(s->n, sizeof(*mems));
	int ret;

	if (!mems) {
		snprintf(s->err, sizeof(s->err), "out of memory");
		return RDMIG_ENOMEM;
	}
	for (uint32_t i = 0; i < s->n; i++)
		mems[i] = s->desc[i].length ? s->blocks[i].host : NULL;
	ret = rdmig_verify_start(&s->vf, s->o.digest, s->o.hash_threads, s->desc, s->n,
				 s->o.span_shift, mems, true, NULL, NULL, s->err, sizeof(s->err));
	free(mems);
	s->st.hash_threads = s->vf.threads;
	return ret ? RDMIG_ENOMEM : 0;
}

/* Header, engine setup, hashing: what precedes the first write. */
static int start(struct rdmig_images_source *s)
{
	struct rdmig_caps caps;
	int ret;

	rdmig_conn_caps(s->conn, &caps);
	s->pin_all = caps.flags & RDMIG_CAP_PIN_ALL;
	if ((ret = rdmig_source_create(s->conn, s->blocks, s->n, &s->src)))
		return engine_failed(s, ret);
	/* the destination's blocks are fresh anonymous memory (the image
	 * stream's rule): the engine tests every page for zeros once and
	 * sends none of the zero ones, neither written nor COMPRESSed */
	if ((ret = rdmig_source_set_skip_zero(s->src, 1)))
		return engine_failed(s, ret);
	if ((s->o.pin_local && (ret = rdmig_source_set_pin_local(s->src, 1))) ||
	    (ret = rdmig_source_set_register_threads(s->src, s->o.register_threads)))
		return engine_failed(s, ret);
	/* the header goes first, as QEMU's block list does: the destination
	 * needs it to allocate its blocks before RAM_BLOCKS_REQUEST */
	if ((ret = write_header_or_trailer(s, false)))
		return ret;
	if ((ret = rdmig_source_setup(s->src)))
		return engine_failed(s, ret);
	/* hashing overlaps the data, not the connection's setup */
	if ((ret = start_hashing(s)))
		return ret;
	/* with PIN_ALL no control message travels while the data is written:
	 * keep-alives keep the destination from giving up, and make us notice
	 * a dead one */
	if (s->pin_all && (ret = rdmig_source_set_keep_alive(s->src, s->o.keep_alive_ms)))
		return engine_failed(s, ret);
	/* the next chunk's registration can overlap this one's writes */
	if ((ret = rdmig_source_set_lookahead(s->src, 1)))
		return engine_failed(s, ret);
	return 0;
}

/* Spans [0, handed) are in the engine's hands: their records may go. */
static int spans_handed(struct rdmig_images_source *s, uint64_t handed)
{
	s->handed = handed;
	if (rdmig_verify_send_ready(&s->vf, s->desc, s->n, handed, write_stream_bytes, s, s->err,
				    sizeof(s->err)))
		return verify_failed(s);
	return 0;
}

/* A chunk, a span at a time, each handed over whole; the records go as
 * images_records.h says. */
static int send_spans(struct rdmig_images_source *s, uint32_t b, uint64_t off, uint64_t n)
{
	uint32_t shift = s->o.span_shift;
	bool last_chunk = off + n == s->desc[b].length;

	for (uint64_t at = off; at < off + n;) {
		uint64_t end = ((at >> shift) + 1) << shift;
		int ret;

		if (end > off + n)
			end = off + n;
		if ((ret = rdmig_source_write(s->src, b, at, end - at)))
			return engine_failed(s, ret);
		if (imgs_records_after_span(s->pin_all, last_chunk, end) &&
		    (ret = spans_handed(s, s->desc[b].first_span + (end >> shift))))
			return ret;
		at = end;
	}
	return 0;
}

/* The chunk at the cursor, and the cursor on to the next one. */
static int send_chunk(struct rdmig_images_source *s, struct rdmig_images_event *ev)
{
	uint32_t b = s->block;
	uint64_t len = s->desc[b].length, off = s->off;
	uint64_t n = len - off < s->chunk ? len - off : s->chunk;
	int ret;

	if (n && (ret = send_spans(s, b, off, n)))
		return ret;
	s->off += n;
	if (s->off < len)
		return spans_handed(s, s->desc[b].first_span + (s->off >> s->o.span_shift));
	s->block++;
	s->off = 0;
	if (s->block == s->n)
		s->state = SRC_ENDING;
	return spans_handed(s, s->desc[b].first_span + s->desc[b].nspans);
}

/* While the end waits for the last digests: keep the destination from
 * giving up, notice if it went away, and give way to a cancel. */
static int hashing_tick(void *ctx)
{
	struct rdmig_images_source *s = ctx;

	return is_cancelled(s) || rdmig_source_keep_alive(s->src);
}

static double phase_end(struct rdmig_images_source *s)
{
	double now = rdmig_monotonic_seconds(), took = now - s->t_phase;

	s->t_phase = now;
	return took;
}

/* The threads joined, the engine's figures kept, its memory deregistered. */
static void teardown(struct rdmig_images_source *s)
{
	rdmig_verify_stop(&s->vf);
	s->st.hash_seconds = s->vf.hash_seconds;
	if (s->src)
		rdmig_source_stats(s->src, &s->est);
	rdmig_verify_free(&s->vf);
	rdmig_source_destroy(s->src);
	s->src = NULL;
}

/* How long the end waits for the verdict (opts.verdict_timeout_ms). */
static int verdict_wait_ms(const struct rdmig_images_source *s)
{
	int conn_ms = rdmig__conn_opts(s->conn)->timeout_ms;

	if (s->o.verdict_timeout_ms)
		return s->o.verdict_timeout_ms < 0 ? 0 : s->o.verdict_timeout_ms;
	return conn_ms > DEFAULT_VERDICT_WAIT_MS ? conn_ms : DEFAULT_VERDICT_WAIT_MS;
}

/* After the trailer: the destination compares, commits durably and then
 * answers (images_source_verdict.c). */
static int await_verdict(struct rdmig_images_source *s)
{
	const struct verdict_sent sent = {s->o.digest, s->desc, s->n, s->st.bytes_total};
	bool peer_knows;
	int ret = rdmig__images_await_verdict(s->conn, verdict_wait_ms(s), &sent, &s->verdict,
					      &peer_knows, s->err, sizeof(s->err));

	s->engine_failed = ret && peer_knows;
	return ret;
}

/* End of iteration, the last digests, the trailer. */
static int finish(struct rdmig_images_source *s)
{
	int ret;

	if ((ret = rdmig_source_end_iteration(s->src)))
		return engine_failed(s, ret);
	s->st.transfer_seconds = phase_end(s);
	if ((ret = rdmig_source_set_keep_alive(s->src, s->o.keep_alive_ms)))
		return engine_failed(s, ret);
	if (rdmig_verify_send_finish(&s->vf, s->desc, s->n, write_stream_bytes, hashing_tick, s,
				     s->err, sizeof(s->err))) {
		if (is_cancelled(s)) {
			snprintf(s->err, sizeof(s->err), "cancelled");
			return RDMIG_ECANCELED;
		}
		return s->io_ret ? verify_failed(s) : engine_failed(s, RDMIG_EDISCONNECTED);
	}
	s->st.hash_wait_seconds = phase_end(s);
	if ((ret = write_header_or_trailer(s, true)))
		return ret;
	teardown(s);
	if (s->verdict.state == RDMIG_VERDICT_PENDING && (ret = await_verdict(s)))
		return ret;
	s->st.commit_seconds = phase_end(s);
	/* without a verdict the destination commits once we are gone: go,
	 * and see it answer; with one, it answered every send already */
	ret = s->verdict.state == RDMIG_VERDICT_COMMITTED ? rdmig__conn_disconnect_and_wait(s->conn)
							   : rdmig__conn_close_after_end(s->conn);
	if (ret)
		return engine_failed(s, ret);
	s->st.teardown_seconds = phase_end(s);
	return 0;
}

static int step(struct rdmig_images_source *s, struct rdmig_images_event *ev)
{
	int ret;

	if (is_cancelled(s)) {
		snprintf(s->err, sizeof(s->err), "cancelled");
		return RDMIG_ECANCELED;
	}
	switch (s->state) {
	case SRC_NEW:
		s->t_phase = rdmig_monotonic_seconds();
		if ((ret = start(s)))
			return ret;
		s->st.header_seconds = phase_end(s);
		s->state = s->n ? SRC_SENDING : SRC_ENDING;
		ev->type = RDMIG_IMAGES_EV_HEADER;
		return 0;
	case SRC_SENDING:
		ev->type = RDMIG_IMAGES_EV_PROGRESS;
		return send_chunk(s, ev);
	case SRC_ENDING:
		if ((ret = finish(s)))
			return ret;
		s->state = SRC_DONE;
		ev->type = RDMIG_IMAGES_EV_DONE;
		return 0;
	default:
		snprintf(s->err, sizeof(s->err), "the migration is over");
		return RDMIG_ESTATE;
	}
}

/* Bytes handed to the engine so far: the blocks before the cursor and
 * the cursor's offset. */
static uint64_t bytes_handed(const struct rdmig_images_source *s)
{
	uint64_t done = s->off;

	for (uint32_t b = 0; b < s->block && b < s->n; b++)
		done += s->desc[b].length;
	return done;
}

int rdmig_images_source_step(struct rdmig_images_source *s, struct rdmig_images_event *ev)
{
	int ret;

	if (!s || !ev)
		return RDMIG_EINVAL;
	if (s->state == SRC_FAILED)
		return s->failed;
	ev->type = 0;
	ev->bytes_total = s->st.bytes_total;
	if ((ret = step(s, ev))) {
		s->failed = ret;
		s->state = SRC_FAILED;
		rdmig_verify_stop(&s->vf);
		/* our own failures reach the destination as ERROR, as the
		 * engine's do (a cancel is the caller's to tell) */
		if (!s->engine_failed && ret != RDMIG_ECANCELED)
			rdmig_send_error(s->conn);
	}
	ev->bytes_done = bytes_handed(s);
	return ret;
}

int rdmig_images_source_run(struct rdmig_images_source *s, rdmig_images_progress_fn progress,
			    void *ctx)
{
	struct rdmig_images_event ev;
	int ret;

	do {
		if ((ret = rdmig_images_source_step(s, &ev)))
			return ret;
		if (progress && progress(ctx, &ev)) {
			rdmig_images_source_cancel(s);
			return rdmig_images_source_step(s, &ev);
		}
	} while (ev.type != RDMIG_IMAGES_EV_DONE);
	return 0;
}

void rdmig_images_source_cancel(struct rdmig_images_source *s)
{
	if (s)
		atomic_store(&s->cancelled, 1);
}

const struct rdmig_imgs_block *rdmig_images_source_blocks(const struct rdmig_images_source *s)
{
	return s ? s->desc : NULL;
}

/* Copy a stats struct to a caller's of `size` bytes (older, smaller ones too). */
static void copy_sized(void *out, const void *in, size_t have)
{
	size_t size = *(const size_t *)out;

	memcpy((char *)out + sizeof(size_t), (const char *)in + sizeof(size_t),
	       (size < have ? size : have) - sizeof(size_t));
}

void rdmig_images_source_stats(const struct rdmig_images_source *s,
			       struct rdmig_images_stats *out)
{
	struct rdmig_images_stats st;
	struct rdmig_engine_stats est = {.size = sizeof(est)};

	if (!s || !out || out->size < sizeof(size_t))
		return;
	st = s->st;
	/* what was handed over and not written: the zero pages skipped */
	rdmig_images_source_engine_stats(s, &est);
	st.bytes_skipped_zero = bytes_handed(s) > est.bytes_written ?
				bytes_handed(s) - est.bytes_written : 0;
	if (s->vf.pool)
		st.hash_seconds = s->vf.hash_seconds;
	copy_sized(out, &st, sizeof(st));
}

void rdmig_images_source_engine_stats(const struct rdmig_images_source *s,
				      struct rdmig_engine_stats *out)
{
	if (!s || !out || out->size < sizeof(size_t))
		return;
	if (s->src)
		rdmig_source_stats(s->src, out);
	else
		copy_sized(out, &s->est, sizeof(s->est));
}

void rdmig_images_source_verdict(const struct rdmig_images_source *s,
				 struct rdmig_images_verdict *out)
{
	struct rdmig_images_verdict v;

	if (!out || out->size < sizeof(size_t))
		return;
	if (s)
		v = s->verdict;
	else
		memset(&v, 0, sizeof(v));
	copy_sized(out, &v, sizeof(v));
}

const char *rdmig_images_source_errmsg(const struct rdmig_images_source *s)
{
	return s ? s->err : "no images source";
}

void rdmig_images_source_destroy(struct rdmig_images_source *s)
{
	if (!s)
		return;
	rdmig_verify_free(&s->vf); /* stops the threads: before the memory goes */
	rdmig_source_destroy(s->src);
	free(s->desc);
	free(s->blocks);
	free(s);
}
