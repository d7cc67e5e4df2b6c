/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_stream_end.c - the end of a QEMU migration stream: past what the
 * parser (qemu_stream.c) understands it stops following the structure
 * and only watches the bytes go by ("opaque mode"), and when the source
 * disconnects this decides whether the stream ended properly
 * (rdmig/qemu.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include "qemu_stream_end.h"
#include "qemu_stream_states.h"

/*
 * Past what we understand, only the end matters.  QEMU ends a precopy
 * stream with QEMU_VM_EOF, then (unless the machine suppresses it) a vmdesc
 * record: 0x06, be32 n, n bytes of JSON.  JSON text holds no NUL, so the
 * genuine record is always the latest "00 06 n '{'" in the stream; one
 * candidate is enough, and a NUL inside its text discards it.
 */
void rdmig__qs_opaque_byte(struct rdmig_qs_parser *p, uint8_t b, uint64_t pos)
{
	p->win = p->win << 8 | b;
	if (p->win_len < 8)
		p->win_len++;
	if (b == 0 && p->cand && pos > p->cand_eof + 6)
		p->cand = 0;
	/* win, newest byte low: 00 06 n n n n '{' */
	if (b == '{' && p->win_len >= 7 && ((p->win >> 40) & 0xffff) == 0x0006) {
		uint32_t n = (uint32_t)(p->win >> 8);
		if (n >= 2 && n <= RDMIG_QS_MAX_VMDESC) {
			p->cand = 1;
			p->cand_eof = pos - 6;
			p->cand_end = pos + n;
		}
	}
	p->last = b;
}

int rdmig__qs_go_opaque(struct rdmig_qs_parser *p, uint64_t from, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->opaque_why, sizeof(p->opaque_why), fmt, ap);
	va_end(ap);
	p->opaque = 1;
	p->opaque_from = from;
	p->win = 0;
	p->win_len = 0;
	return 0;
}

void rdmig__qs_watch(struct rdmig_qs_parser *p, const uint8_t *in, size_t len)
{
	for (size_t i = 0; i < len; i++)
		rdmig__qs_opaque_byte(p, in[i], p->offset + i);
	p->offset += len;
}

static int ended(struct rdmig_qs_parser *p)
{
	if (p->failed)
		return 0;
	if (!p->opaque) {
		if (p->state == S_AFTER_EOF && p->have == 0)
			p->end = RDMIG_QS_END_EOF; /* a stream without vmdesc */
		return p->end != RDMIG_QS_END_NONE;
	}
	if (p->cand && p->cand_end == p->offset && p->last == '}') {
		p->end = RDMIG_QS_END_VMDESC;
		p->eof_offset = p->cand_eof;
		return 1;
	}
	return 0;
}

int rdmig_qs_finish(struct rdmig_qs_parser *p)
{
	if (p->failed)
		return -1;
	if (ended(p))
		return 0;
	if (p->opaque)
		snprintf(p->err, sizeof(p->err), "the stream stopped after %llu bytes without "
			 "QEMU_VM_EOF and its vmdesc record at the end (the bytes from offset %llu "
			 "were only watched: %s)", (unsigned long long)p->offset,
			 (unsigned long long)p->opaque_from, p->opaque_why);
	else if (p->state == S_CMD_DATA || p->state == S_VMDESC)
		snprintf(p->err, sizeof(p->err),
			 "the stream stopped after %llu bytes, inside the "
			 "%s (%llu of %llu bytes)",
			 (unsigned long long)p->offset, rdmig__qs_field_name(p->state),
			 (unsigned long long)(p->skip_total - p->skip),
			 (unsigned long long)p->skip_total);
	else
		snprintf(p->err, sizeof(p->err),
			 "the stream stopped after %llu bytes, %s the %s "
			 "(%zu of %zu bytes), before QEMU_VM_EOF",
			 (unsigned long long)p->offset, p->have ? "inside" : "before",
			 rdmig__qs_field_name(p->state), p->have, p->need);
	p->failed = 1;
	return -1;
}

const char *rdmig_qs_end_name(enum rdmig_qs_end e)
{
	switch (e) {
	case RDMIG_QS_END_VMDESC:
		return "eof+vmdesc";
	case RDMIG_QS_END_EOF:
		return "eof";
	default: return "none";
	}
}
