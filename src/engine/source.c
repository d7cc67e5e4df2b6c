/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * source.c - the sending side of a migration: its lifecycle, its setup,
 * its settings, the stream, the end of an iteration and the statistics.
 *
 * Setup asks the destination for its blocks (RAM_BLOCKS_REQUEST) and checks
 * them against ours.  What is written then goes through the layers below,
 * each calling only down:
 *   source_write.c     the write queue: rdmig_source_write, the zero test,
 *                      merging, COMPRESS, posting the RDMA WRITEs;
 *   source_register.c  control messages, keep-alives, REGISTER_REQUEST and
 *                      our own registration of a chunk;
 *   source_pin.c       blocks registered whole (PIN_ALL, pin-local);
 *   engine.c           what the source shares with the destination.
 *
 * Everything goes through the engine's seam (engine_io.h).  Writes are
 * signaled selectively (the transport signals the last of an iteration and
 * enough others to keep its queue moving); the end of an iteration waits
 * until every posted write and send completed (flush_sends).
 */
#include <stdlib.h>
#include <string.h>
#include "source_int.h"

static void free_block(const struct engine_io *io, struct src_block *b)
{
	for (uint32_t i = 0; b->local_mr && i < b->nchunks; i++)
		if (b->local_mr[i])
			io->ops->dereg(io->ctx, b->local_mr[i]);
	rdmig__src_release_pieces(io, b);
	free(b->local_mr);
	free(b->remote_rkey);
	free(b->remote_ok);
	free(b->name);
}

void rdmig_source_destroy(struct rdmig_source *s)
{
	if (!s)
		return;
	rdmig__src_stop_pinning(s); /* its threads register into the blocks */
	for (size_t i = 0; s->blocks && i < s->nblocks; i++)
		free_block(&s->io, &s->blocks[i]);
	free(s->blocks);
	rdmig__latency_log_free(&s->rtt);
	free(s);
}

static int init_block(struct src_block *b, const struct rdmig_block *in, unsigned shift)
{
	b->name = strdup(in->name ? in->name : "");
	b->host = in->host;
	b->length = in->length;
	b->nchunks = engine_chunk_count(in->length, shift);
	b->local_mr = calloc(b->nchunks ? b->nchunks : 1, sizeof(*b->local_mr));
	b->remote_rkey = calloc(b->nchunks ? b->nchunks : 1, sizeof(*b->remote_rkey));
	b->remote_ok = calloc(b->nchunks ? b->nchunks : 1, 1);
	return b->name && b->local_mr && b->remote_rkey && b->remote_ok ? 0 : RDMIG_ENOMEM;
}

/* rdmig_source_create over a connection is in engine_io_conn.c. */
int rdmig__source_create(const struct engine_io *io, const struct rdmig_block *blocks,
			 size_t nblocks, struct rdmig_source **out)
{
	unsigned shift = engine_chunk_shift(io->opts->chunk_size);
	struct rdmig_source *s;
	int ret;

	*out = NULL;
	ret = rdmig__engine_check_blocks(io, blocks, nblocks, shift);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->blocks = calloc(nblocks ? nblocks : 1, sizeof(*s->blocks)))) {
		free(s);
		return engine_fail(io, RDMIG_ENOMEM, "cannot allocate the source");
	}
	s->io = *io;
	s->nblocks = nblocks;
	s->pin_all = io->caps->flags & RDMIG_CAP_PIN_ALL;
	s->shift = shift;
	s->register_threads = 1;
	for (size_t i = 0; i < nblocks; i++) {
		if (init_block(&s->blocks[i], &blocks[i], s->shift)) {
			rdmig_source_destroy(s);
			return engine_fail(io, RDMIG_ENOMEM, "cannot allocate block %zu", i);
		}
	}
	*out = s;
	return 0;
}

const char *rdmig_source_errmsg(const struct rdmig_source *s)
{
	return s ? s->io.errmsg : "no source";
}


int rdmig_source_write_stream(struct rdmig_source *s, const void *buf, size_t len)
{
	if (!s)
		return RDMIG_EINVAL;
	const uint8_t *p = buf;
	int ret;

	/* Stream bytes go after the data handed over before them, as QEMU's
	 * stream does (it flushes its queued writes first): on one queue pair
	 * the receiver then has that data once the bytes arrive, and may take
	 * what the stream says about it (rdmig send's span digests) as final. */
	if (s->set_up && (ret = rdmig__src_flush_pending(s, false)))
		return rdmig__src_answer_violation(s, ret);
	while (len) {
		uint32_t n = len > RDMIG_MAX_STREAM_CHUNK ? RDMIG_MAX_STREAM_CHUNK : (uint32_t)len;
		ret = rdmig__src_control_send(s, &(struct rdmig_msg){RDMIG_MSG_QEMU_FILE, 1, n, p});
		if (ret)
			return rdmig__src_answer_violation(s, ret);
		s->st.stream_bytes += n;
		p += n;
		len -= n;
	}
	return 0;
}

/* ----------------------------------------------------------------- setup -- */

static int take_dest_blocks(struct rdmig_source *s, const struct rdmig_msg *reply)
{
	size_t count = reply->len / RDMIG_DEST_BLOCK_SIZE; /* QEMU sends repeat 1: count by len */
	const uint8_t *p = reply->payload;

	if (count != s->nblocks)
		return rdmig__engine_abort(&s->io, RDMIG_ERANGE,
				    "the destination has %zu RAM blocks, the source %zu", count,
				    s->nblocks);
	for (size_t i = 0; i < count; i++) {
		struct rdmig_dest_block db;
		struct src_block *b = &s->blocks[i];

		rdmig_decode_dest_block(p + i * RDMIG_DEST_BLOCK_SIZE, &db);
		if (db.length != b->length)
			return rdmig__engine_abort(&s->io, RDMIG_ERANGE,
					    "RAM block %zu (%s): the destination's is %llu bytes, "
					    "the source's %llu", i, b->name,
					    (unsigned long long)db.length,
					    (unsigned long long)b->length);
		/* our writes go to remote_host + offset, our requests name
		 * remote_offset + offset: neither may wrap */
		if (db.remote_host_addr > UINT64_MAX - db.length)
			return rdmig__engine_abort(&s->io, RDMIG_ERANGE,
					    "RAM block %zu (%s): address 0x%llx + %llu bytes wraps "
					    "around", i, b->name,
					    (unsigned long long)db.remote_host_addr,
					    (unsigned long long)db.length);
		if (db.offset > UINT64_MAX - db.length)
			return rdmig__engine_abort(&s->io, RDMIG_ERANGE,
					    "RAM block %zu (%s): offset 0x%llx + %llu bytes wraps "
					    "around", i, b->name, (unsigned long long)db.offset,
					    (unsigned long long)db.length);
		b->remote_host = db.remote_host_addr;
		b->remote_offset = db.offset;
		b->remote_block_rkey = db.remote_rkey;
	}
	return 0;
}

int rdmig_source_setup(struct rdmig_source *s)
{
	if (!s)
		return RDMIG_EINVAL;
	struct rdmig_msg reply;
	int ret;

	if (s->set_up)
		return engine_fail(&s->io, RDMIG_ESTATE, "rdmig_source_setup was already called");
	ret = rdmig__src_control_request(s, &(struct rdmig_msg){RDMIG_MSG_RAM_BLOCKS_REQUEST, 1, 0, NULL});
	/* Pin our own memory while the destination pins its (or, with
	 * dynamic registration, builds its answer), and on while the first
	 * pieces are written. */
	if (!ret && (s->pin_all || s->pin_local))
		ret = rdmig__src_start_pinning(s);
	if (!ret)
		ret = s->io.ops->request_reply(s->io.ctx, RDMIG_MSG_RAM_BLOCKS_RESULT, &reply);
	if (!ret)
		ret = take_dest_blocks(s, &reply);
	s->set_up = !ret;
	return rdmig__src_answer_violation(s, ret);
}

/* -------------------------------------------------------------- settings -- */

int rdmig_source_set_pin_local(struct rdmig_source *s, int on)
{
	if (!s)
		return RDMIG_EINVAL;
	if (s->set_up)
		return engine_fail(&s->io, RDMIG_ESTATE,
				   "rdmig_source_set_pin_local after rdmig_source_setup");
	s->pin_local = on != 0;
	return 0;
}

int rdmig_source_set_lookahead(struct rdmig_source *s, int on)
{
	if (!s)
		return RDMIG_EINVAL;
	s->lookahead = on != 0;
	return 0;
}

int rdmig_source_set_skip_zero(struct rdmig_source *s, int on)
{
	if (!s)
		return RDMIG_EINVAL;
	s->skip_zero = on != 0;
	return 0;
}

int rdmig_source_end_iteration(struct rdmig_source *s)
{
	if (!s)
		return RDMIG_EINVAL;
	int ret;

	if (!s->set_up)
		return engine_fail(&s->io, RDMIG_ESTATE,
				   "rdmig_source_end_iteration before rdmig_source_setup");
	ret = rdmig__src_flush_pending(s, true);
	if (!ret) /* every write (and unsignaled control send) completed */
		ret = s->io.ops->flush_sends(s->io.ctx, 0);
	if (!ret)
		ret = rdmig__src_control_send(s,
				      &(struct rdmig_msg){RDMIG_MSG_REGISTER_FINISHED, 1, 0, NULL});
	if (!ret)
		s->st.iterations++;
	return rdmig__src_answer_violation(s, ret);
}

void rdmig_source_stats(const struct rdmig_source *s, struct rdmig_engine_stats *out)
{
	struct rdmig_engine_stats st;

	if (!s) {
		rdmig__put_sized(out, NULL, sizeof(st));
		return;
	}
	st = s->st;
	st.size = sizeof(st);
	rdmig__src_pin_stats(s, &st);
	st.writes_signaled = s->io.ops->writes_signaled(s->io.ctx);
	rdmig__latency_log_percentiles(&s->rtt, &st.register_rtt_p50_us, &st.register_rtt_p99_us);
	rdmig__put_sized(out, &st, sizeof(st));
}
