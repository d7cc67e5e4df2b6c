/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_dest.c - the destination of an image-set migration
 * (rdmig/images.h): the stream header says which blocks to allocate, the
 * source writes into them with RDMA, and digest records say which spans
 * have landed and what they hold.  Each span is checked on the hash pool
 * while the rest arrives, and handed to the caller's sink from the same
 * private copy that was hashed.
 *
 * Verified equals committed.  A span's record says its bytes have landed,
 * but the memory stays registered and the source may still write into it
 * (RDMA WRITE, or a COMPRESS that zeroes it) until the connection is
 * gone.  Reading the span once to hash it and again to write it would let
 * such a write slip in between, and the image would differ from what was
 * checked and reported.  So every hashing thread copies the span out of
 * registered memory into a buffer of its own, hashes the copy and hands
 * the copy to the sink (rdmig_hash_pool_set_copy).  Deregistering each
 * span before hashing it was the other way: it costs a deregistration per
 * span on the engine's thread (the pool's threads may not touch the
 * engine), and with dynamic registration a chunk holds several spans that
 * land at different times.  The copy costs a memcpy per byte, on the
 * hashing threads, off the data path (docs/design.md gives the figure).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine_io.h"
#include "images_dest_int.h"
#include "images_int.h"
#include "images_verdict.h"
#include "log.h"
#include "rdmig/images.h"
#include "rdmig/private.h"

void rdmig_images_dest_opts_init_sized(struct rdmig_images_dest_opts *o, size_t size)
{
	memset(o, 0, size);
	o->size = size;
	if (size >= offsetof(struct rdmig_images_dest_opts, verify) + sizeof(o->verify))
		o->verify = true;
}

static int check_opts(struct rdmig_images_dest *d, const struct rdmig_images_dest_opts *o,
		      const struct rdmig_images_sink *sink)
{
	rdmig_images_dest_opts_init(&d->o);
	if (o) {
		if (o->size < offsetof(struct rdmig_images_dest_opts, chunk_size) ||
		    o->size > sizeof(d->o)) {
			snprintf(d->err, sizeof(d->err), "images destination options of %zu bytes: "
				 "not initialised with rdmig_images_dest_opts_init", o->size);
			return RDMIG_EINVAL;
		}
		memcpy(&d->o, o, o->size);
		d->o.size = sizeof(d->o);
	}
	if (!d->o.max_total) {
		snprintf(d->err, sizeof(d->err), "images destination: max_total is required");
		return RDMIG_EINVAL;
	}
	if (!sink || !sink->create || !sink->write || !sink->set_size || !sink->commit ||
	    !sink->abort) {
		snprintf(d->err, sizeof(d->err), "images destination: the sink needs create, write, "
			 "set_size, commit and abort");
		return RDMIG_EINVAL;
	}
	d->sink = *sink;
	return 0;
}

int rdmig__images_dest_wrap(struct rdmig_dest *engine, struct rdmig_conn *c,
			    const struct rdmig_images_dest_opts *o,
			    const struct rdmig_images_sink *sink, struct rdmig_images_dest **out,
			    char *err, size_t errlen)
{
	struct rdmig_images_dest *d = calloc(1, sizeof(*d));
	int ret;

	*out = NULL;
	if (!d) {
		rdmig_dest_destroy(engine);
		snprintf(err, errlen, "out of memory");
		return RDMIG_ENOMEM;
	}
	d->engine = engine;
	d->conn = c;
	d->st.size = sizeof(d->st);
	d->est.size = sizeof(d->est);
	d->aborted = true; /* nothing to abort until something reached the sink */
	if ((ret = check_opts(d, o, sink))) {
		snprintf(err, errlen, "%s", d->err);
		rdmig_images_dest_destroy(d);
		return ret;
	}
	rdmig_imgs_parser_init(&d->ps, d->o.max_total);
	if (c) {
		struct rdmig_caps caps;

		rdmig_conn_caps(c, &caps);
		d->verdict = caps.flags & RDMIG_CAP_VERDICT;
	}
	d->t_phase = rdmig_monotonic_seconds();
	*out = d;
	return 0;
}

int rdmig_images_dest_create(struct rdmig_conn *c, const struct rdmig_images_dest_opts *o,
			     const struct rdmig_images_sink *sink, struct rdmig_images_dest **out)
{
	struct rdmig_dest *engine;
	int ret;

	if (!out)
		return RDMIG_EINVAL;
	*out = NULL;
	if (!c)
		return RDMIG_EINVAL;
	if ((ret = rdmig_dest_create(c, &engine)))
		return ret;
	return rdmig__images_dest_wrap(engine, c, o, sink, out, rdmig__conn_errbuf(c),
				       RDMIG_ERRMSG_SIZE);
}

/* ------------------------------------------------------ while it runs -- */

/* ------------------------------------------------------- the verdict -- */

/* Tell the source the outcome: a reply into the receive it posted with
 * its last stream message, then wait until the source's device has it
 * (the send completed), so that the verdict is not lost with us. */
static int send_verdict(struct rdmig_images_dest *d, uint32_t outcome, const char *reason)
{
	uint8_t *buf;
	size_t len;
	int ret;

	d->verdict_sent = true; /* once, whatever happens */
	if (verdict_encode(outcome, d->ps.prm.digest, d->ps.blocks, NULL, d->ps.count, reason,
			   &buf, &len))
		return RDMIG_ENOMEM;
	/* signaled: its own completion says the source has it, with no
	 * flush WRITE after it that a source already gone would fail */
	ret = rdmig__conn_reply_signaled(d->conn, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1,
								   (uint32_t)len, buf});
	free(buf);
	if (!ret)
		ret = rdmig__conn_flush_sends(d->conn, 0);
	return ret;
}

/* The source may write no more into the blocks: the engine goes, and
 * with it every registration, so a late RDMA WRITE or COMPRESS finds
 * nothing (its connection fails) and what is compared is what stays. */
static void revoke_source(struct rdmig_images_dest *d)
{
	if (d->engine)
		rdmig_dest_stats(d->engine, &d->est);
	rdmig_dest_destroy(d->engine);
	d->engine = NULL;
}

static int on_trailer(struct rdmig_images_dest *d);

/* Stream bytes: parsed first, so that only valid ones reach the sink.  The
 * event to report, or 0. */
static int on_stream(struct rdmig_images_dest *d, const struct rdmig_event *ev, int *report)
{
	int got, ret;

	d->aborted = false; /* the sink may hold something from here on */
	if ((got = rdmig_imgs_feed(&d->ps, ev->data, ev->len)) < 0) {
		d->st.refused_total = d->ps.over_limit;
		snprintf(d->err, sizeof(d->err), "the source's stream is not an rdmig image stream: "
			 "%s", rdmig_imgs_errmsg(&d->ps));
		return RDMIG_EPROTO;
	}
	if (d->sink.stream && (ret = d->sink.stream(d->sink.ctx, ev->data, ev->len, d->err,
						     sizeof(d->err))))
		return sink_code(ret);
	if ((got & RDMIG_IMGS_EV_HEADER) && (ret = rdmig__idest_on_header(d)))
		return ret;
	if (got & RDMIG_IMGS_EV_SPANS) /* their data has landed: check it now */
		rdmig_verify_release(&d->vf, d->ps.spans_known);
	if ((got & RDMIG_IMGS_EV_TRAILER) && d->verdict) {
		ret = on_trailer(d);
		*report = ret ? 0 : RDMIG_IMAGES_EV_DONE;
		return ret;
	}
	*report = got & RDMIG_IMGS_EV_HEADER ? RDMIG_IMAGES_EV_HEADER
		  : got & RDMIG_IMGS_EV_SPANS ? RDMIG_IMAGES_EV_PROGRESS : 0;
	return 0;
}

/* ----------------------------------------------------------- the end -- */

/* The source disconnected: was its stream complete?  Then compare, commit
 * and tear down. */
static int on_end(struct rdmig_images_dest *d)
{
	int ret;

	if (rdmig_imgs_finish(&d->ps)) {
		snprintf(d->err, sizeof(d->err), "the source disconnected before the end of its "
			 "stream (%s)", rdmig_imgs_errmsg(&d->ps));
		return RDMIG_EDISCONNECTED;
	}
	d->st.transfer_seconds = phase_end(d);
	if ((ret = rdmig__idest_compare(d)) || (ret = rdmig__idest_commit(d)))
		return ret;
	rdmig__idest_teardown(d);
	d->st.teardown_seconds = phase_end(d);
	return 0;
}

/* With the verdict the trailer is the end: no READY goes out for another
 * message, the source's access is revoked, and the outcome answers it. */
static int on_trailer(struct rdmig_images_dest *d)
{
	int ret;

	d->at_verdict = true;
	d->st.transfer_seconds = phase_end(d);
	revoke_source(d);
	if ((ret = rdmig__idest_compare(d)) || (ret = rdmig__idest_commit(d)))
		return ret;
	if ((ret = send_verdict(d, VERDICT_COMMITTED, NULL))) {
		snprintf(d->err, sizeof(d->err), "the images are committed, but the verdict did "
			 "not reach the source: %s", rdmig_conn_errmsg(d->conn));
		return ret;
	}
	rdmig__idest_teardown(d);
	d->st.teardown_seconds = phase_end(d);
	return 0;
}

/* ------------------------------------------------------------ a step -- */

/* One engine event: the event to report (0: none), or a failure. */
static int on_event(struct rdmig_images_dest *d, const struct rdmig_event *ev, int *report)
{
	*report = 0;
	switch (ev->type) {
	case RDMIG_EV_STREAM:
		return on_stream(d, ev, report);
	case RDMIG_EV_BLOCKS_NEEDED:
		if (d->header_done)
			return 0; /* given when the header completed */
		snprintf(d->err, sizeof(d->err), "the source asked for RAM blocks before describing "
			 "them");
		return RDMIG_EPROTO;
	case RDMIG_EV_END: {
		int ret = on_end(d);

		*report = ret ? 0 : RDMIG_IMAGES_EV_DONE;
		return ret;
	}
	default:
		return 0; /* ITERATION_DONE: counted by the engine (stats.iterations) */
	}
}

static int step(struct rdmig_images_dest *d, struct rdmig_images_event *out)
{
	struct rdmig_event ev;
	int report = 0, ret;

	while (!report) {
		if (is_cancelled(d))
			return cancelled(d);
		if (atomic_load(&d->write_err))
			return rdmig__idest_sink_write_failed(d);
		rdmig__release_queued(&d->rel, d->engine); /* before the wait: it may be long */
		ret = d->o.nonblocking ? rdmig_dest_try_next(d->engine, &ev)
				       : rdmig_dest_next(d->engine, &ev);
		if (ret == RDMIG_EAGAIN)
			return ret;
		if (ret) {
			snprintf(d->err, sizeof(d->err), "%s", rdmig_dest_errmsg(d->engine));
			d->engine_failed = true; /* and told the source */
			return ret;
		}
		if ((ret = on_event(d, &ev, &report)))
			return ret;
	}
	out->type = report;
	return 0;
}

/* A failure: no thread writes into the sink any more, the sink drops what
 * it holds, and the source hears of a failure that is ours (the engine
 * tells it of its own; a cancel is the caller's to tell). */
static void fail(struct rdmig_images_dest *d, int ret)
{
	d->state = DST_FAILED;
	d->failed = ret;
	rdmig_verify_stop(&d->vf);
	if (!d->aborted && !d->committed) {
		d->sink.abort(d->sink.ctx);
		d->aborted = true;
	}
	if (d->at_verdict && !d->verdict_sent)
		send_verdict(d, VERDICT_FAILED, d->err); /* best effort: it may be gone */
	else if (d->conn && ret != RDMIG_ECANCELED && !d->engine_failed && d->engine)
		rdmig_send_error(d->conn);
}

int rdmig_images_dest_step(struct rdmig_images_dest *d, struct rdmig_images_event *ev)
{
	int ret;

	if (!d || !ev)
		return RDMIG_EINVAL;
	if (d->state == DST_FAILED)
		return d->failed;
	if (d->state == DST_DONE) {
		snprintf(d->err, sizeof(d->err), "the migration is over");
		return RDMIG_ESTATE;
	}
	ev->type = 0;
	ret = step(d, ev);
	if (ret && ret != RDMIG_EAGAIN)
		fail(d, ret);
	else if (!ret && ev->type == RDMIG_IMAGES_EV_DONE)
		d->state = DST_DONE;
	ev->bytes_total = d->ps.total;
	ev->bytes_done = d->header_done ? rdmig_imgs_landed_bytes(&d->ps) : 0;
	return ret;
}

int rdmig_images_dest_run(struct rdmig_images_dest *d, rdmig_images_progress_fn progress,
			  void *ctx)
{
	struct rdmig_images_event ev;
	int ret;

	if (!d)
		return RDMIG_EINVAL;
	do {
		d->o.nonblocking = false; /* a run waits for the source */
		if ((ret = rdmig_images_dest_step(d, &ev)))
			return ret;
		if (progress && progress(ctx, &ev)) {
			rdmig_images_dest_cancel(d);
			return rdmig_images_dest_step(d, &ev);
		}
	} while (ev.type != RDMIG_IMAGES_EV_DONE);
	return 0;
}

void rdmig_images_dest_cancel(struct rdmig_images_dest *d)
{
	if (d)
		atomic_store(&d->cancelled, 1);
}

const struct rdmig_imgs_block *rdmig_images_dest_blocks(const struct rdmig_images_dest *d,
							uint32_t *n)
{
	bool known = d && rdmig_imgs_header_done(&d->ps);

	if (n)
		*n = known ? d->ps.count : 0;
	return known ? d->ps.blocks : NULL;
}

int rdmig_images_dest_result(const struct rdmig_images_dest *d, uint32_t i,
			     struct rdmig_verify_block *out)
{
	if (!d || !out)
		return RDMIG_EINVAL;
	if (!d->compared)
		return RDMIG_ESTATE;
	if (i >= d->ps.count)
		return RDMIG_ERANGE;
	*out = d->res[i];
	return 0;
}

/* Copy a stats struct to a caller's of `size` bytes (older, smaller ones too). */
static void copy_sized(void *out, const void *in, size_t have)
{
	size_t size = *(const size_t *)out;

	memcpy((char *)out + sizeof(size_t), (const char *)in + sizeof(size_t),
	       (size < have ? size : have) - sizeof(size_t));
}

void rdmig_images_dest_stats(const struct rdmig_images_dest *d, struct rdmig_images_stats *out)
{
	struct rdmig_images_stats st;

	if (!d || !out || out->size < sizeof(size_t))
		return;
	st = d->st;
	st.bytes_released = d->rel.bytes;
	if (d->vf.pool || d->vf.threads)
		st.hash_seconds = d->vf.hash_seconds;
	copy_sized(out, &st, sizeof(st));
}

void rdmig_images_dest_engine_stats(const struct rdmig_images_dest *d,
				    struct rdmig_engine_stats *out)
{
	if (!d || !out || out->size < sizeof(size_t))
		return;
	if (d->engine)
		rdmig_dest_stats(d->engine, out);
	else
		copy_sized(out, &d->est, sizeof(d->est));
}

const char *rdmig_images_dest_errmsg(const struct rdmig_images_dest *d)
{
	return d ? d->err : "no images destination";
}

void rdmig_images_dest_destroy(struct rdmig_images_dest *d)
{
	if (!d)
		return;
	rdmig_verify_stop(&d->vf); /* its threads write into the sink */
	if (!d->aborted && !d->committed)
		d->sink.abort(d->sink.ctx);
	rdmig__idest_teardown(d);
	free(d->blocks);
	free(d->res);
	rdmig_imgs_parser_free(&d->ps);
	free(d);
}
