/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_record.c - the recorder of `rdmig recv --qemu`: the touched chunks
 * of each registration pass and record.txt (rdmig/qemu.h; the format is in
 * docs/qemu-stream.md, replay_record.c reads it back).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdmig/qemu.h>

int rdmig_qrec_chunks_init(struct rdmig_qrec_chunks *c, uint64_t length)
{
	uint64_t n = (length + (1ull << RDMIG_QREC_CHUNK_SHIFT) - 1) >> RDMIG_QREC_CHUNK_SHIFT;

	*c = (struct rdmig_qrec_chunks){0};
	if (n > UINT32_MAX)
		return -1;
	c->nchunks = (uint32_t)n;
	c->data_phase = calloc(n ? n : 1, sizeof(*c->data_phase));
	c->zero_phase = calloc(n ? n : 1, sizeof(*c->zero_phase));
	c->nonzero = calloc(n ? n : 1, 1);
	if (!c->data_phase || !c->zero_phase || !c->nonzero) {
		rdmig_qrec_chunks_free(c);
		return -1;
	}
	return 0;
}

void rdmig_qrec_chunks_free(struct rdmig_qrec_chunks *c)
{
	free(c->data_phase);
	free(c->zero_phase);
	free(c->nonzero);
	*c = (struct rdmig_qrec_chunks){0};
}

/*
 * The chunks a pass touched, from the library's destination events: a
 * registered chunk holds data from this pass on (QEMU registers only
 * chunks it writes), and a chunk a COMPRESS range covers, if it holds no
 * data yet, was zero in it.  The record's chunks are 1 MiB whatever the
 * migration's chunk size, so a range marks every record chunk it overlaps.
 */
bool rdmig_qrec_note(struct rdmig_qrec_chunks *ch, uint32_t phase, bool registered,
		     uint64_t offset, uint64_t len)
{
	uint64_t span = (uint64_t)ch->nchunks << RDMIG_QREC_CHUNK_SHIFT, end;

	if (!len || offset >= span)
		return false;
	end = len > span - offset ? span : offset + len;
	for (uint32_t c = (uint32_t)(offset >> RDMIG_QREC_CHUNK_SHIFT);
	     c <= (uint32_t)((end - 1) >> RDMIG_QREC_CHUNK_SHIFT); c++) {
		if (ch->data_phase[c])
			continue; /* first held data earlier: nothing can change */
		if (registered) {
			ch->data_phase[c] = phase;
			if (ch->zero_phase[c] == phase)
				ch->zero_phase[c] = 0;
		} else if (!ch->zero_phase[c]) {
			ch->zero_phase[c] = phase;
		}
	}
	return true;
}

/* "0-15,24,30-31" of the chunks where pick(ch, c) holds, or "-". */
static void print_ranges(FILE *f, const struct rdmig_qrec_chunks *ch,
			 int (*pick)(const struct rdmig_qrec_chunks *, uint32_t, uint32_t),
			 uint32_t arg)
{
	int any = 0;

	for (uint32_t c = 0; c < ch->nchunks; c++) {
		uint32_t e = c;
		if (!pick(ch, c, arg))
			continue;
		while (e + 1 < ch->nchunks && pick(ch, e + 1, arg))
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

static int pick_data(const struct rdmig_qrec_chunks *ch, uint32_t c, uint32_t phase)
{
	return ch->data_phase[c] == phase;
}

static int pick_zero(const struct rdmig_qrec_chunks *ch, uint32_t c, uint32_t phase)
{
	return ch->zero_phase[c] == phase;
}

static int pick_nonzero(const struct rdmig_qrec_chunks *ch, uint32_t c, uint32_t unused)
{
	return ch->nonzero[c];
}

/*
 * The touched chunks of every pass, in pass, block and chunk order, from
 * one sweep over the chunks (a counting sort by pass): writing the record
 * then costs the chunks once, not once per pass and block (a record of
 * many passes over a large RAM took passes x chunks).  A chunk appears
 * under the pass it first held data in and under the one it was zero in.
 */
struct touched {
	uint32_t *first; /* pass i's entries: at[first[i] .. first[i + 1]) */
	struct touched_at {
		uint32_t block, chunk;
	} *at;
};

/* Whether the caller asked the writer to stop. */
static bool stop_asked(const struct rdmig_qrec *r)
{
	return r->stop && r->stop(r->stop_ctx);
}

static void touched_free(struct touched *t)
{
	free(t->first);
	free(t->at);
}

/* 0; -1 out of memory; 1 when asked to stop. */
static int touched_index(const struct rdmig_qrec *r, struct touched *t)
{
	size_t n = 0;

	*t = (struct touched){0};
	if (!(t->first = calloc((size_t)r->nphases + 1, sizeof(*t->first))))
		return -1;
	for (uint32_t b = 0; b < r->qs->count; b++) {
		const struct rdmig_qrec_chunks *ch = &r->blocks[b].ch;
		for (uint32_t c = 0; c < ch->nchunks; c++) {
			if (!(c % RDMIG_QREC_STOP_EVERY) && stop_asked(r)) {
				touched_free(t);
				return 1;
			}
			if (ch->data_phase[c] && ch->data_phase[c] < r->nphases)
				t->first[ch->data_phase[c] + 1]++, n++;
			if (ch->zero_phase[c] && ch->zero_phase[c] < r->nphases)
				t->first[ch->zero_phase[c] + 1]++, n++;
		}
	}
	if (n > UINT32_MAX || !(t->at = malloc((n ? n : 1) * sizeof(*t->at)))) {
		touched_free(t);
		return -1;
	}
	for (uint32_t i = 0; i < r->nphases; i++)
		t->first[i + 1] += t->first[i];
	{
		uint32_t *next = malloc(((size_t)r->nphases + 1) * sizeof(*next));
		if (!next) {
			touched_free(t);
			return -1;
		}
		memcpy(next, t->first, ((size_t)r->nphases + 1) * sizeof(*next));
		for (uint32_t b = 0; b < r->qs->count; b++) {
			const struct rdmig_qrec_chunks *ch = &r->blocks[b].ch;
			for (uint32_t c = 0; c < ch->nchunks; c++) {
				uint32_t d = ch->data_phase[c], z = ch->zero_phase[c];
				if (d && d < r->nphases)
					t->at[next[d]++] = (struct touched_at){b, c};
				if (z && z < r->nphases)
					t->at[next[z]++] = (struct touched_at){b, c};
			}
		}
		free(next);
	}
	return 0;
}

/* The ranges of at[0 .. n) (one block's, ascending) whose chunk first
 * held data in pass i (data) or was zero in it (!data), or "-". */
static void print_touched(FILE *f, const struct rdmig_qrec_chunks *ch,
			  const struct touched_at *at, uint32_t n, uint32_t i, bool data)
{
	int any = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t c = at[k].chunk, e = c;
		if ((data ? ch->data_phase[c] : ch->zero_phase[c]) != i)
			continue;
		/* the same chunk cannot be both, so a run's next chunk is next
		 * in the list, or the run ends */
		while (k + 1 < n && at[k + 1].chunk == e + 1 &&
		       (data ? ch->data_phase[e + 1] : ch->zero_phase[e + 1]) == i)
			e++, k++;
		fprintf(f, "%s%u", any ? "," : "", c);
		if (e > c)
			fprintf(f, "-%u", e);
		any = 1;
	}
	if (!any)
		fputc('-', f);
}

static void record_touched(FILE *f, const struct rdmig_qrec *r, const struct touched *t,
			   uint32_t i)
{
	for (uint32_t k = t->first[i]; k < t->first[i + 1];) {
		uint32_t b = t->at[k].block, end = k;
		const struct rdmig_qrec_chunks *ch = &r->blocks[b].ch;
		while (end < t->first[i + 1] && t->at[end].block == b)
			end++;
		fprintf(f, "touched %u block=%u data=", i, b);
		print_touched(f, ch, t->at + k, end - k, i, true);
		fprintf(f, " zero=");
		print_touched(f, ch, t->at + k, end - k, i, false);
		fputc('\n', f);
		k = end;
	}
}

static void record_phase(FILE *f, const struct rdmig_qrec *r, const struct touched *t, uint32_t i)
{
	const struct rdmig_qrec_phase *p = &r->phases[i];

	if (p->kind == RDMIG_QREC_RAM_BLOCKS) {
		fprintf(f, "phase %u ram_blocks_request offset=%" PRIu64 " hook=%" PRIu64 " t=%.6f\n",
			i, p->offset, p->hook, p->t);
		return;
	}
	fprintf(f, "phase %u registration offset=%" PRIu64 " hook=%" PRIu64 " register_requests=%"
		PRIu64 " compress=%" PRIu64 " unregister=%" PRIu64 " chunks_registered=%" PRIu64
		" bytes_compressed=%" PRIu64 " t=%.6f\n", i, p->offset, p->hook, p->register_requests,
		p->compress, p->unregister, p->chunks_registered, p->bytes_compressed, p->t);
	if (t && p->touched) {
		record_touched(f, r, t, i);
		return;
	}
	/* without the index (out of memory): a walk of every chunk per pass */
	for (uint32_t b = 0; p->touched && r->blocks && b < r->qs->count; b++) {
		const struct rdmig_qrec_chunks *ch = &r->blocks[b].ch;
		int any = 0;
		for (uint32_t c = 0; c < ch->nchunks && !any; c++)
			any = ch->data_phase[c] == i || ch->zero_phase[c] == i;
		if (!any)
			continue;
		fprintf(f, "touched %u block=%u data=", i, b);
		print_ranges(f, ch, pick_data, i);
		fprintf(f, " zero=");
		print_ranges(f, ch, pick_zero, i);
		fputc('\n', f);
	}
}

/* The end of a record the caller stopped. */
static int interrupted(FILE *f)
{
	fprintf(f, "end failed the record was interrupted\n");
	return -1;
}

/* Written on failure too, as far as the migration got. */
int rdmig_qrec_write(FILE *f, const struct rdmig_qrec *r, const char *failure)
{
	const struct rdmig_qs_parser *qs = r->qs;

	fprintf(f, "rdmig-qemu-record 1\n");
	fprintf(f, "machine %s\n", qs->machine[0] ? qs->machine : "-");
	fprintf(f, "pin_all %d\n", r->pin_all);
	fprintf(f, "blocks %u total=%" PRIu64 "\n", r->blocks ? qs->count : 0, qs->total);
	for (uint32_t i = 0; r->blocks && i < qs->count; i++) {
		const struct rdmig_qrec_block *b = &r->blocks[i];
		fprintf(f, "block %u offset=", i);
		if (b->have_offset)
			fprintf(f, "0x%" PRIx64, b->offset);
		else
			fputc('-', f);
		fprintf(f, " length=%" PRIu64 " chunks=%u file=%s name=%s\n", qs->blocks[i].length,
			b->ch.nchunks, b->file, qs->blocks[i].name);
	}
	{
		struct touched t;
		int index = r->blocks ? touched_index(r, &t) : -1;
		bool stopped = index == 1;
		for (uint32_t i = 0; i < r->nphases && !stopped; i++) {
			stopped = stop_asked(r);
			if (!stopped)
				record_phase(f, r, index ? NULL : &t, i);
		}
		if (!index)
			touched_free(&t);
		if (stopped)
			return interrupted(f);
	}
	fprintf(f, "stream bytes=%" PRIu64 " hooks=%u ram_sections=%u ram_end=%d", r->stream_bytes,
		qs->hooks, qs->ram_sections, qs->ram_ended);
	if (qs->opaque)
		fprintf(f, " watched_from=%" PRIu64, qs->opaque_from);
	fputc('\n', f);
	if (failure) {
		fprintf(f, "end failed %s\n", failure);
		return 0;
	}
	fprintf(f, "end ok how=%s eof=%" PRIu64 " t=%.6f\n", rdmig_qs_end_name(qs->end),
		qs->eof_offset, r->seconds);
	for (uint32_t i = 0; r->blocks && i < qs->count; i++) {
		if (stop_asked(r))
			return interrupted(f);
		fprintf(f, "nonzero %u chunks=", i);
		print_ranges(f, &r->blocks[i].ch, pick_nonzero, 0);
		fputc('\n', f);
	}
	return 0;
}
