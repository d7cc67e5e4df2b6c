/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_recv_qemu_report.c - what `rdmig recv --qemu` prints at the end: the
 * JSON summary (man rdmig-json: recv, mode qemu) or the human lines, from
 * the state the migration left (recv_qemu.h) and what its recorder learned
 * (qemu_recorder.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include "cli_json.h"
#include "recv_qemu.h"

static uint32_t nonzero_chunks(const struct rdmig_qrec_chunks *ch)
{
	uint32_t n = 0;
	for (uint32_t c = 0; c < ch->nchunks; c++)
		n += ch->nonzero[c];
	return n;
}

static struct json_object *json_blocks(const struct rq_state *s)
{
	struct json_object *arr = cj_array();

	for (uint32_t i = 0; i < s->qs.count; i++) {
		const struct rdmig_qrec_block *b = &s->record.blocks[i];
		struct json_object *o = cj_object();

		cj_str(o, "name", s->qs.blocks[i].name);
		cj_str(o, "file", b->file);
		cj_u64(o, "length", s->qs.blocks[i].length);
		if (b->have_offset)
			cj_u64(o, "offset", b->offset);
		else
			cj_null(o, "offset");
		cj_u64(o, "chunks", b->ch.nchunks);
		cj_u64(o, "nonzero_chunks", nonzero_chunks(&b->ch));
		cj_push(arr, o);
	}
	return arr;
}

/* QEMU's times, which only its QMP knows: null when not asked or not told. */
static void json_seconds_or_null(struct json_object *o, const char *key, double secs)
{
	if (secs >= 0)
		cj_fixed(o, key, secs, 3);
	else
		cj_null(o, key);
}

void rq_print_json(const struct rq_state *s)
{
	const struct rdmig_engine_stats *st = &s->record.st; /* at the end */
	double secs = s->t_end - s->t_start;
	struct rdmig_counters k = {.size = sizeof(k)};
	struct json_object *o = cj_summary();

	rdmig_conn_counters(s->conn, &k);
	cj_str(o, "listen", s->a.host);
	cj_i64(o, "port", rdmig_listener_port(s->l));
	cj_str(o, "out", s->a.out);
	cj_str(o, "machine", s->qs.machine);
	cj_bool(o, "pin_all", s->pin_all);
	cj_add(o, "blocks", json_blocks(s));
	cj_u64(o, "bytes_total", s->qs.total);
	cj_u64(o, "bytes_compressed", st->bytes_compressed);
	cj_u64(o, "stream_bytes", s->stream_bytes);
	cj_str(o, "stream_end", rdmig_qs_end_name(s->qs.end));
	cj_u64(o, "eof_offset", s->qs.eof_offset);
	cj_u64(o, "ram_sections", s->qs.ram_sections);
	cj_u64(o, "hooks", s->qs.hooks);
	cj_u64(o, "phases", s->record.nphases);
	cj_fixed(o, "seconds", secs, 6);
	cj_fixed(o, "throughput_MBps", secs > 0 ? (double)s->qs.total / secs / 1e6 : 0.0, 2);
	cj_u64(o, "iterations", st->iterations);
	cj_u64(o, "register_requests", st->register_requests);
	cj_u64(o, "chunks_registered", st->chunks_registered);
	cj_fixed(o, "register_seconds", st->register_seconds, 6);
	cj_u64(o, "ready_inline", k.sent_inline[RDMIG_MSG_READY]);
	cj_u64(o, "ready_copied", k.sent_copied[RDMIG_MSG_READY]);
	cj_u64(o, "register_result_inline", k.sent_inline[RDMIG_MSG_REGISTER_RESULT]);
	cj_u64(o, "register_result_copied", k.sent_copied[RDMIG_MSG_REGISTER_RESULT]);
	cj_str(o, "source_qmp", s->source_qmp);
	cj_str(o, "qemu_status", s->record.qemu_status[0] ? s->record.qemu_status : NULL);
	json_seconds_or_null(o, "qemu_downtime_seconds", s->record.qemu_downtime_s);
	json_seconds_or_null(o, "qemu_total_seconds", s->record.qemu_total_s);
	mig_json_conn(o, s->conn);
	cj_summary_print(o);
}

void rq_print_human(const struct rq_state *s)
{
	const struct rdmig_engine_stats *st = &s->record.st; /* at the end */
	double secs = s->t_end - s->t_start;
	struct rdmig_counters k = {.size = sizeof(k)};
	char a[32], b[32], c[32];
	static const uint32_t shown[] = {RDMIG_MSG_READY, RDMIG_MSG_REGISTER_RESULT,
					 RDMIG_MSG_RAM_BLOCKS_RESULT};

	rdmig_conn_counters(s->conn, &k);
	printf("recv: QEMU %s: %u RAM block%s, %s in %.2f s (%.1f MB/s); %" PRIu64 " iteration%s, %"
	       PRIu64 " registrations served, %s compressed%s\n",
	       s->qs.machine[0] ? s->qs.machine : "(no configuration)", s->qs.count,
	       s->qs.count == 1 ? "" : "s", size_text(s->qs.total, a, sizeof(a)), secs,
	       secs > 0 ? (double)s->qs.total / secs / 1e6 : 0.0, st->iterations,
	       st->iterations == 1 ? "" : "s", st->register_requests,
	       size_text(st->bytes_compressed, b, sizeof(b)), s->pin_all ? "; pin-all" : "");
	printf("recv: stream %s, ended with %s at offset %" PRIu64 "\n",
	       size_text(s->stream_bytes, c, sizeof(c)),
	       s->qs.end == RDMIG_QS_END_VMDESC ? "QEMU_VM_EOF + vmdesc" : "QEMU_VM_EOF",
	       s->qs.eof_offset);
	mig_print_conn("recv", s->conn);
	printf("recv: sent inline/copied:");
	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
		printf("%s %s %" PRIu64 "/%" PRIu64, i ? "," : "", rdmig_msg_type_name(shown[i]),
		       k.sent_inline[shown[i]], k.sent_copied[shown[i]]);
	printf("\n");
	if (s->record.qemu_status[0]) {
		printf("recv: the source's QMP: migration %s", s->record.qemu_status);
		if (s->record.qemu_downtime_s >= 0)
			printf(", downtime %.3f s", s->record.qemu_downtime_s);
		if (s->record.qemu_total_s >= 0)
			printf(", total %.3f s", s->record.qemu_total_s);
		printf("\n");
	}
	printf("recv: %u image%s, stream.bin and " QEMU_REC_FILE " in %s/\n", s->qs.count,
	       s->qs.count == 1 ? "" : "s", s->a.out);
}
