/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_qemu_record.c - record.txt of `rdmig recv --qemu`: the control
 * phases of the migration (when, at which stream offset, what each pass
 * registered and compressed, which chunks it touched), enough for
 * `rdmig send --qemu-replay` to play it back.  The format is in
 * docs/qemu-stream.md; stream/replay_record.c reads it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "recv_qemu.h"

int rq_add_phase(struct rq_state *s, int kind)
{
	struct rdmig_counters k = {.size = sizeof(k)};
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct rq_phase *p;

	if (s->nph >= RQ_MAX_PHASES) {
		snprintf(s->err, sizeof(s->err), "the source ended more than %u registration passes "
			 "(REGISTER_FINISHED); QEMU sends one per iteration: refused", RQ_MAX_PHASES);
		return -1;
	}
	if (s->nph == s->phcap) {
		size_t cap = s->phcap ? s->phcap * 2 : 16;
		struct rq_phase *n = realloc(s->ph, cap * sizeof(*n));
		if (!n) {
			snprintf(s->err, sizeof(s->err), "out of memory for the record");
			return -1;
		}
		s->ph = n;
		s->phcap = cap;
	}
	rdmig_conn_counters(s->conn, &k);
	rdmig_dest_stats(s->dest, &st);
	p = &s->ph[s->nph++];
	*p = (struct rq_phase){
	    .kind = kind,
	    .t = rdmig_monotonic_seconds() - s->t_start,
	    .offset = s->stream_bytes,
	    .hook = s->qs.hooks ? s->qs.last_hook_end : 0,
	    .register_requests = k.received[RDMIG_MSG_REGISTER_REQUEST] -
				 s->k_prev.received[RDMIG_MSG_REGISTER_REQUEST],
	    .compress = k.received[RDMIG_MSG_COMPRESS] - s->k_prev.received[RDMIG_MSG_COMPRESS],
	    .unregister = k.received[RDMIG_MSG_UNREGISTER_REQUEST] -
			  s->k_prev.received[RDMIG_MSG_UNREGISTER_REQUEST],
	    .chunks_registered = st.chunks_registered - s->st_prev.chunks_registered,
	    .bytes_compressed = st.bytes_compressed - s->st_prev.bytes_compressed,
	};
	s->k_prev = k;
	s->st_prev = st;
	return 0;
}

/*
 * The chunks a pass touched, from the library's destination events
 * (rdmig_dest_set_events): a registered chunk holds data from this pass on
 * (QEMU registers only chunks it writes), and a chunk a COMPRESS range
 * covers, if it holds no data yet, was zero in it.  A chunk may be
 * compressed in one pass and registered in a later one; registered in the
 * pass that compressed it, it counts as data there, as what it ends up
 * holding.  The record's chunks are 1 MiB whatever the migration's chunk
 * size, so a range marks every record chunk it overlaps.
 */
int rq_note_range(struct rq_state *s, int type, const struct rdmig_dest_range *r)
{
	uint32_t phase = (uint32_t)s->nph;
	uint64_t span, end;
	struct rq_block *b;

	if (!s->rb || r->block >= s->qs.count) {
		snprintf(s->err, sizeof(s->err), "the library reported block %u of %u", r->block,
			 s->rb ? s->qs.count : 0);
		return -1;
	}
	b = &s->rb[r->block];
	span = (uint64_t)b->nchunks << RDMIG_CHUNK_SHIFT;
	if (!r->len || r->offset >= span)
		return 0;
	end = r->len > span - r->offset ? span : r->offset + r->len;
	for (uint32_t c = (uint32_t)(r->offset >> RDMIG_CHUNK_SHIFT);
	     c <= (uint32_t)((end - 1) >> RDMIG_CHUNK_SHIFT); c++) {
		if (b->data_phase[c])
			continue; /* first held data earlier: nothing can change */
		if (type == RDMIG_EV_REGISTERED) {
			b->data_phase[c] = phase;
			if (b->zero_phase[c] == phase)
				b->zero_phase[c] = 0;
		} else if (!b->zero_phase[c]) {
			b->zero_phase[c] = phase;
		}
	}
	s->pass_touched = 1;
	return 0;
}

/* REGISTER_FINISHED closes the pass; its touched chunks are in the record
 * already (rq_note_range), so the end of a pass costs no look at RAM. */
int rq_end_pass(struct rq_state *s)
{
	if (rq_add_phase(s, PH_REGISTRATION))
		return -1;
	s->ph[s->nph - 1].touched = s->pass_touched;
	s->pass_touched = 0;
	return 0;
}

/* "0-15,24,30-31" of the chunks where pick(b, c) holds, or "-". */
static void print_ranges(FILE *f, const struct rq_block *b,
			 int (*pick)(const struct rq_block *, uint32_t, uint32_t), uint32_t arg)
{
	int any = 0;

	for (uint32_t c = 0; c < b->nchunks; c++) {
		uint32_t e = c;
		if (!pick(b, c, arg))
			continue;
		while (e + 1 < b->nchunks && pick(b, e + 1, arg))
			e++;
		fprintf(f, "%s%u", any ? "," : "", c);
		if (e > c)
			fprintf(f, "-%u", e);
		any = 1;
		c = e;
	}
	if (!any)
		fputc('-', f);
}

static int pick_data(const struct rq_block *b, uint32_t c, uint32_t phase)
{
	return b->data_phase[c] == phase;
}

static int pick_zero(const struct rq_block *b, uint32_t c, uint32_t phase)
{
	return b->zero_phase[c] == phase;
}

static int pick_nonzero(const struct rq_block *b, uint32_t c, uint32_t unused)
{
	return b->nonzero[c];
}

static void record_phase(FILE *f, const struct rq_state *s, uint32_t i)
{
	const struct rq_phase *p = &s->ph[i];

	if (p->kind == PH_RAM_BLOCKS) {
		fprintf(f, "phase %u ram_blocks_request offset=%" PRIu64 " hook=%" PRIu64 " t=%.6f\n",
			i, p->offset, p->hook, p->t);
		return;
	}
	fprintf(f, "phase %u registration offset=%" PRIu64 " hook=%" PRIu64 " register_requests=%"
		PRIu64 " compress=%" PRIu64 " unregister=%" PRIu64 " chunks_registered=%" PRIu64
		" bytes_compressed=%" PRIu64 " t=%.6f\n", i, p->offset, p->hook, p->register_requests,
		p->compress, p->unregister, p->chunks_registered, p->bytes_compressed, p->t);
	for (uint32_t b = 0; p->touched && b < s->qs.count; b++) {
		int any = 0;
		for (uint32_t c = 0; c < s->rb[b].nchunks && !any; c++)
			any = s->rb[b].data_phase[c] == i || s->rb[b].zero_phase[c] == i;
		if (!any)
			continue;
		fprintf(f, "touched %u block=%u data=", i, b);
		print_ranges(f, &s->rb[b], pick_data, i);
		fprintf(f, " zero=");
		print_ranges(f, &s->rb[b], pick_zero, i);
		fputc('\n', f);
	}
}

/* DIR/record.txt: see docs/qemu-stream.md.  Written on failure too, as far
 * as the migration got. */
static void record_body(FILE *f, struct rq_state *s, const char *failure)
{
	fprintf(f, "rdmig-qemu-record 1\n");
	fprintf(f, "machine %s\n", s->qs.machine[0] ? s->qs.machine : "-");
	fprintf(f, "pin_all %d\n", s->pin_all);
	fprintf(f, "blocks %u total=%" PRIu64 "\n", s->rb ? s->qs.count : 0, s->qs.total);
	for (uint32_t i = 0; s->rb && i < s->qs.count; i++) {
		const struct rq_block *b = &s->rb[i];
		fprintf(f, "block %u offset=", i);
		if (b->have_offset)
			fprintf(f, "0x%" PRIx64, b->offset);
		else
			fputc('-', f);
		fprintf(f, " length=%" PRIu64 " chunks=%u file=%s name=%s\n", s->qs.blocks[i].length,
			b->nchunks, b->file, s->qs.blocks[i].name);
	}
	for (uint32_t i = 0; i < s->nph; i++)
		record_phase(f, s, i);
	fprintf(f, "stream bytes=%" PRIu64 " hooks=%u ram_sections=%u ram_end=%d", s->stream_bytes,
		s->qs.hooks, s->qs.ram_sections, s->qs.ram_ended);
	if (s->qs.opaque)
		fprintf(f, " watched_from=%" PRIu64, s->qs.opaque_from);
	fputc('\n', f);
	if (failure) {
		fprintf(f, "end failed %s\n", failure);
	} else {
		fprintf(f, "end ok how=%s eof=%" PRIu64 " t=%.6f\n", rdmig_qs_end_name(s->qs.end),
			s->qs.eof_offset, s->t_end - s->t_start);
		for (uint32_t i = 0; i < s->qs.count; i++) {
			fprintf(f, "nonzero %u chunks=", i);
			print_ranges(f, &s->rb[i], pick_nonzero, 0);
			fputc('\n', f);
		}
	}
}

int rq_write_record(struct rq_state *s, const char *failure)
{
	struct out_file out;
	char err[sizeof(s->err)];
	FILE *f;
	int bad;

	if (out_create(&s->a.dir, &out, RQ_RECORD, err, sizeof(err)))
		goto fail;
	if (!(f = fdopen(out.fd, "w"))) {
		snprintf(err, sizeof(err), "cannot write %.600s/" RQ_RECORD ": %s", s->a.out,
			 strerror(errno));
		out_discard(&s->a.dir, &out);
		goto fail;
	}
	record_body(f, s, failure);
	bad = ferror(f);
	out.fd = -1; /* fclose closes it */
	if (fclose(f) || bad) {
		snprintf(err, sizeof(err), "cannot write %.600s/" RQ_RECORD ": %s", s->a.out,
			 strerror(errno));
		out_discard(&s->a.dir, &out);
		goto fail;
	}
	if (out_commit(&s->a.dir, &out, err, sizeof(err))) {
		out_discard(&s->a.dir, &out);
		goto fail;
	}
	return 0;
fail:
	/* a failure's own message is already in s->err: keep it */
	if (!failure)
		snprintf(s->err, sizeof(s->err), "%s", err);
	else
		fprintf(stderr, "recv: %s\n", err);
	return -1;
}

