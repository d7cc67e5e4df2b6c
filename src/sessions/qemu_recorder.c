/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_recorder.c - what the recorder (qemu_recorder.h) sees happen: the
 * control phases of the migration (when, at which stream offset, the
 * connection's counters for each pass) and the chunks each pass touched,
 * from the library's destination events.  The chunks are marked as the
 * events come (rdmig_qrec_note), so that the end of a pass costs no look
 * at the RAM, however large.
 */
#include <stdlib.h>
#include <string.h>
#include "qemu_recorder.h"

void qemu_rec_init(struct qemu_recorder *r, const struct rdmig_qs_parser *qs)
{
	memset(r, 0, sizeof(*r));
	r->qs = qs;
	r->qemu_downtime_s = r->qemu_total_s = -1;
}

void qemu_rec_free(struct qemu_recorder *r)
{
	for (uint32_t i = 0; r->blocks && i < r->qs->count; i++)
		rdmig_qrec_chunks_free(&r->blocks[i].ch);
	free(r->blocks);
	free(r->rows);
	free(r->phases);
	r->blocks = NULL;
	r->rows = NULL;
	r->phases = NULL;
	r->nrows = r->nphases = r->phases_cap = 0;
}

int qemu_rec_open_blocks(struct qemu_recorder *r, char *err, size_t errlen)
{
	uint32_t n = r->qs->count;

	if (!(r->blocks = calloc(n, sizeof(*r->blocks)))) {
		snprintf(err, errlen, "out of memory for %u blocks", n);
		return -1;
	}
	return 0;
}

int qemu_rec_track_block(struct qemu_recorder *r, uint32_t i, char *err, size_t errlen)
{
	if (rdmig_qrec_chunks_init(&r->blocks[i].ch, r->qs->blocks[i].length)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int qemu_rec_add_phase(struct qemu_recorder *r, int kind, const struct qemu_rec_view *v,
		       char *err, size_t errlen)
{
	struct rdmig_counters k = {.size = sizeof(k)};
	struct rdmig_engine_stats st = {.size = sizeof(st)};
	struct rdmig_qrec_phase *p;

	if (r->nphases >= QEMU_REC_MAX_PHASES) {
		snprintf(err, errlen, "the source ended more than %u registration passes "
			 "(REGISTER_FINISHED); QEMU sends one per iteration: refused",
			 QEMU_REC_MAX_PHASES);
		return -1;
	}
	if (r->nphases == r->phases_cap) {
		size_t cap = r->phases_cap ? r->phases_cap * 2 : 16;
		struct rdmig_qrec_phase *n = realloc(r->phases, cap * sizeof(*n));
		if (!n) {
			snprintf(err, errlen, "out of memory for the record");
			return -1;
		}
		r->phases = n;
		r->phases_cap = cap;
	}
	rdmig_conn_counters(v->conn, &k);
	rdmig_dest_stats(v->dest, &st);
	p = &r->phases[r->nphases++];
	*p = (struct rdmig_qrec_phase){
		.kind = kind,
		.t = v->seconds,
		.offset = v->stream_bytes,
		.hook = r->qs->hooks ? r->qs->last_hook_end : 0,
		.register_requests = k.received[RDMIG_MSG_REGISTER_REQUEST] -
				     r->k_prev.received[RDMIG_MSG_REGISTER_REQUEST],
		.compress = k.received[RDMIG_MSG_COMPRESS] - r->k_prev.received[RDMIG_MSG_COMPRESS],
		.unregister = k.received[RDMIG_MSG_UNREGISTER_REQUEST] -
			      r->k_prev.received[RDMIG_MSG_UNREGISTER_REQUEST],
		.chunks_registered = st.chunks_registered - r->st_prev.chunks_registered,
		.bytes_compressed = st.bytes_compressed - r->st_prev.bytes_compressed,
	};
	r->k_prev = k;
	r->st_prev = st;
	return 0;
}

/* The RAM of range that no REGISTER or COMPRESS touched before: what a
 * progress counts (the writes themselves are invisible to a destination,
 * and QEMU registers a chunk before it writes into it).  Asked before the
 * range is noted. */
static uint64_t newly_covered(const struct qemu_recorder *r, const struct rdmig_dest_range *range)
{
	const uint64_t csize = 1ull << RDMIG_QREC_CHUNK_SHIFT;
	const struct rdmig_qrec_chunks *ch;
	uint64_t len, end, n = 0;

	if (!r->blocks || range->block >= r->qs->count)
		return 0;
	ch = &r->blocks[range->block].ch;
	len = r->qs->blocks[range->block].length;
	if (!range->len || range->offset >= len)
		return 0;
	end = range->len > len - range->offset ? len : range->offset + range->len;
	for (uint64_t c = range->offset / csize; c <= (end - 1) / csize && c < ch->nchunks; c++)
		if (!ch->data_phase[c] && !ch->zero_phase[c])
			n += rdmig_chunk_len(len, (uint32_t)c, csize);
	return n;
}

int qemu_rec_note_range(struct qemu_recorder *r, int type, const struct rdmig_dest_range *range,
			uint64_t *fresh, char *err, size_t errlen)
{
	uint64_t n = newly_covered(r, range);

	if (!r->blocks || range->block >= r->qs->count) {
		snprintf(err, errlen, "the library reported block %u of %u", range->block,
			 r->blocks ? r->qs->count : 0);
		return -1;
	}
	if (rdmig_qrec_note(&r->blocks[range->block].ch, (uint32_t)r->nphases,
			    type == RDMIG_EV_REGISTERED, range->offset, range->len))
		r->pass_touched = 1;
	r->bytes_covered += n;
	if (fresh)
		*fresh = n;
	return 0;
}

/* REGISTER_FINISHED closes the pass; its touched chunks are in the blocks
 * already (qemu_rec_note_range). */
int qemu_rec_end_pass(struct qemu_recorder *r, const struct qemu_rec_view *v, char *err,
		      size_t errlen)
{
	if (qemu_rec_add_phase(r, RDMIG_QREC_REGISTRATION, v, err, errlen))
		return -1;
	r->phases[r->nphases - 1].touched = r->pass_touched;
	r->pass_touched = 0;
	return 0;
}

void qemu_rec_final_stats(struct qemu_recorder *r, const struct rdmig_dest *dest)
{
	r->st.size = sizeof(r->st);
	rdmig_dest_stats(dest, &r->st);
}
