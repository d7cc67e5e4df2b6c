/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_qemu_ramblocks.c - `rdmig recv --qemu --ramblocks FILE`: the
 * source's `info ramblock` table, which gives the RAM offsets QEMU's
 * REGISTER_REQUEST and COMPRESS use and its stream does not carry.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "recv_qemu.h"

static int is_hex(const char *t, uint64_t *v)
{
	char *end;

	if (t[0] != '0' || (t[1] != 'x' && t[1] != 'X') || !t[2])
		return 0;
	errno = 0;
	*v = strtoull(t + 2, &end, 16);
	return !errno && !*end;
}

/*
 * One row: NAME PSIZE UNIT 0xOFFSET 0xUSED 0xTOTAL, and since QEMU 8.x
 * also 0xHVA RO.  The offset is the first of three hex columns in a row;
 * everything before PSIZE is the name.  0 = a row, 1 = not a row (blank
 * or the heading), -1 = malformed.
 */
static int ramblock_row(char *line, struct rq_ramblock *row)
{
	char *tok[16];
	size_t n = 0, len = 0;
	uint64_t total;

	for (char *t = strtok(line, " \t\r\n"); t && n < 16; t = strtok(NULL, " \t\r\n"))
		tok[n++] = t;
	if (n == 0 || !strcmp(tok[0], "Block"))
		return 1;
	for (size_t i = 3; i + 2 < n; i++) {
		if (!is_hex(tok[i], &row->offset) || !is_hex(tok[i + 1], &row->used) ||
		    !is_hex(tok[i + 2], &total))
			continue;
		row->name[0] = '\0';
		for (size_t k = 0; k + 2 < i; k++) {
			size_t tl = strlen(tok[k]);
			if (len + tl + 1 > RDMIG_QS_MAX_NAME)
				return -1;
			if (k)
				row->name[len++] = ' ';
			memcpy(row->name + len, tok[k], tl + 1);
			len += tl;
		}
		return 0;
	}
	return -1;
}

int rq_load_ramblocks(struct rq_state *s)
{
	FILE *f = fopen(s->ramblocks, "r");
	char line[1024];
	unsigned lineno = 0;
	size_t cap = 0;

	if (!f) {
		snprintf(s->err, sizeof(s->err), "--ramblocks: cannot open '%.600s': %s",
			 s->ramblocks, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct rq_ramblock row;
		int r;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(s->err, sizeof(s->err), "--ramblocks %.600s: line %u is too long",
				 s->ramblocks, lineno);
			break;
		}
		if ((r = ramblock_row(line, &row)) == 1)
			continue;
		if (r < 0) {
			snprintf(s->err, sizeof(s->err), "--ramblocks %.600s: line %u is not 'NAME "
				 "PSIZE UNIT 0xOFFSET 0xUSED 0xTOTAL' (the output of 'info ramblock')",
				 s->ramblocks, lineno);
			break;
		}
		if (s->nrows == 2 * RDMIG_QS_MAX_BLOCKS) {
			snprintf(s->err, sizeof(s->err), "--ramblocks %.600s: more than %u rows",
				 s->ramblocks, 2 * RDMIG_QS_MAX_BLOCKS);
			break;
		}
		if (s->nrows == cap) {
			struct rq_ramblock *n;
			cap = cap ? cap * 2 : 16;
			if (!(n = realloc(s->rows, cap * sizeof(*n)))) {
				snprintf(s->err, sizeof(s->err), "out of memory");
				break;
			}
			s->rows = n;
		}
		s->rows[s->nrows++] = row;
	}
	fclose(f);
	if (!s->err[0] && s->nrows == 0)
		snprintf(s->err, sizeof(s->err), "--ramblocks %.600s: no RAM blocks in it",
			 s->ramblocks);
	return s->err[0] ? -1 : 0;
}
