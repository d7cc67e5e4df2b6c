/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_qemu_ramblocks.c - the source's `info ramblock` table, which gives
 * the RAM offsets QEMU's REGISTER_REQUEST and COMPRESS use and its stream
 * does not carry: from a file (`rdmig recv --qemu --ramblocks FILE`) or
 * from the source's QMP (--source-qmp, recv_qemu_qmp.c).  A row is parsed
 * by librdmig-stream (rdmig_qs_ramblock_row).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "recv_qemu.h"

int rq_parse_ramblocks(struct rq_state *s, FILE *f, const char *what)
{
	char line[1024];
	unsigned lineno = 0;
	size_t cap = 0;

	while (fgets(line, sizeof(line), f)) {
		struct rdmig_qs_ramblock row;
		int r;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(s->err, sizeof(s->err), "%.600s: line %u is too long", what,
				 lineno);
			break;
		}
		if ((r = rdmig_qs_ramblock_row(line, &row)) == 1)
			continue;
		if (r < 0) {
			snprintf(s->err, sizeof(s->err), "%.600s: line %u is not 'NAME PSIZE UNIT "
				 "0xOFFSET 0xUSED 0xTOTAL' (the output of 'info ramblock')", what,
				 lineno);
			break;
		}
		if (s->nrows == 2 * RDMIG_QS_MAX_BLOCKS) {
			snprintf(s->err, sizeof(s->err), "%.600s: more than %u rows", what,
				 2 * RDMIG_QS_MAX_BLOCKS);
			break;
		}
		if (s->nrows == cap) {
			struct rdmig_qs_ramblock *n;
			cap = cap ? cap * 2 : 16;
			if (!(n = realloc(s->rows, cap * sizeof(*n)))) {
				snprintf(s->err, sizeof(s->err), "out of memory");
				break;
			}
			s->rows = n;
		}
		s->rows[s->nrows++] = row;
	}
	if (!s->err[0] && s->nrows == 0)
		snprintf(s->err, sizeof(s->err), "%.600s: no RAM blocks in it", what);
	return s->err[0] ? -1 : 0;
}

int rq_load_ramblocks(struct rq_state *s)
{
	FILE *f = fopen(s->ramblocks, "r");
	char what[640];
	int ret;

	if (!f) {
		snprintf(s->err, sizeof(s->err), "--ramblocks: cannot open '%.600s': %s",
			 s->ramblocks, strerror(errno));
		return -1;
	}
	snprintf(what, sizeof(what), "--ramblocks %.600s", s->ramblocks);
	ret = rq_parse_ramblocks(s, f, what);
	fclose(f);
	return ret;
}
