/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_qemu_record.c - record.txt of `rdmig recv --qemu`: the control
 * phases of the migration (when, at which stream offset, what each pass
 * registered and compressed, which chunks it touched), enough for
 * `rdmig send --qemu-replay` to play it back.  The format is in
 * docs/qemu-stream.md; tools/replay_record.c reads it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
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
		.t = mono_now() - s->t_start,
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
 * The library does not say which chunks it registered or zeroed, but both
 * make our fresh memory resident (registration pins the whole chunk,
 * COMPRESS writes zeros into its range), and nothing else touches it.  So
 * after each phase, a chunk with newly resident pages was compressed in it
 * (they are all zero) or registered and written (they hold data; QEMU
 * registers only for data).  A chunk may be compressed in one pass and
 * registered in a later one.  Only resident pages are read, and only when
 * their number grew, so that looking makes nothing resident.  With PIN_ALL
 * every chunk is registered at RAM_BLOCKS_REQUEST and nothing is tracked.
 */
static void scan_touched(struct rq_state *s, uint32_t phase)
{
	size_t ppc = (size_t)(RDMIG_CHUNK_SIZE / (uint64_t)s->page);
	unsigned char *vec = malloc(ppc);

	for (uint32_t i = 0; vec && s->rb && i < s->qs.count; i++) {
		struct rq_block *b = &s->rb[i];
		uint64_t len = s->qs.blocks[i].length;

		for (uint32_t c = 0; c < b->nchunks; c++) {
			uint64_t n = rq_chunk_len(len, c);
			uint8_t *base = b->mem + ((uint64_t)c << RDMIG_CHUNK_SHIFT);
			size_t pages = (size_t)((n + (uint64_t)s->page - 1) / (uint64_t)s->page);
			uint32_t resident = 0;
			int data = 0;

			/* known to hold data, or wholly resident: nothing can change */
			if (b->data_phase[c] || b->resident[c] == pages ||
			    mincore(base, (size_t)n, vec))
				continue;
			for (size_t pg = 0; pg < pages; pg++)
				resident += vec[pg] & 1;
			if (resident == b->resident[c])
				continue;
			b->resident[c] = resident;
			for (size_t pg = 0; pg < pages && !data; pg++) {
				size_t off = pg * (size_t)s->page;
				if (vec[pg] & 1)
					data = !rq_is_zero(base + off, n - off < (uint64_t)s->page ?
								  (size_t)(n - off) : (size_t)s->page);
			}
			if (data)
				b->data_phase[c] = phase;
			else if (!b->zero_phase[c])
				b->zero_phase[c] = phase;
		}
	}
	free(vec);
}

/*
 * Only a pass that registered or compressed something can have made memory
 * resident (a registration inside a registered region pins nothing new, and
 * RDMA writes land in pinned pages): the others are not scanned, so that a
 * source sending bare REGISTER_FINISHED costs no pass over all of RAM.
 */
int rq_end_pass(struct rq_state *s)
{
	struct rq_phase *p;

	if (rq_add_phase(s, PH_REGISTRATION))
		return -1;
	p = &s->ph[s->nph - 1];
	if (!s->pin_all && (p->register_requests || p->compress)) {
		scan_touched(s, (uint32_t)(s->nph - 1));
		p->scanned = 1;
	}
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
	for (uint32_t b = 0; p->scanned && b < s->qs.count; b++) {
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
		fprintf(f, "end ok how=%s eof=%" PRIu64 " t=%.6f\n", qs_end_name(s->qs.end),
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

