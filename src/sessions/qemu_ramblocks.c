/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_ramblocks.c - the source's `info ramblock` table in the recorder
 * (qemu_recorder.h), which gives the RAM offsets QEMU's REGISTER_REQUEST
 * and COMPRESS use and its stream does not carry: read from a file or a
 * text stream (the QMP's answer, qemu_source_qmp.c), then matched with
 * the blocks the stream lists.  A row is parsed by librdmig-stream
 * (rdmig_qs_ramblock_row).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "qemu_recorder.h"

/* One more row, within the table's bound; 0, or -1 with err. */
static int add_row(struct qemu_recorder *r, const struct rdmig_qs_ramblock *row, size_t *cap,
		   const char *what, char *err, size_t errlen)
{
	if (r->nrows == 2 * RDMIG_QS_MAX_BLOCKS) {
		snprintf(err, errlen, "%.600s: more than %u rows", what, 2 * RDMIG_QS_MAX_BLOCKS);
		return -1;
	}
	if (r->nrows == *cap) {
		size_t n = *cap ? *cap * 2 : 16;
		struct rdmig_qs_ramblock *rows = realloc(r->rows, n * sizeof(*rows));

		if (!rows) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		r->rows = rows;
		*cap = n;
	}
	r->rows[r->nrows++] = *row;
	return 0;
}

int qemu_rec_parse_ramblocks(struct qemu_recorder *r, FILE *f, const char *what, char *err,
			     size_t errlen)
{
	char line[1024];
	unsigned lineno = 0;
	size_t cap = r->nrows;

	r->rows_from = what;
	while (fgets(line, sizeof(line), f)) {
		struct rdmig_qs_ramblock row;
		int ret;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%.600s: line %u is too long", what, lineno);
			return -1;
		}
		if ((ret = rdmig_qs_ramblock_row(line, &row)) == 1)
			continue;
		if (ret < 0) {
			snprintf(err, errlen, "%.600s: line %u is not 'NAME PSIZE UNIT 0xOFFSET "
				 "0xUSED 0xTOTAL' (the output of 'info ramblock')", what, lineno);
			return -1;
		}
		if (add_row(r, &row, &cap, what, err, errlen))
			return -1;
	}
	if (r->nrows == 0) {
		snprintf(err, errlen, "%.600s: no RAM blocks in it", what);
		return -1;
	}
	return 0;
}

int qemu_rec_load_ramblocks(struct qemu_recorder *r, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char what[640];
	int ret;

	if (!f) {
		snprintf(err, errlen, "--ramblocks: cannot open '%.600s': %s", path,
			 strerror(errno));
		return -1;
	}
	snprintf(what, sizeof(what), "--ramblocks %.600s", path);
	ret = qemu_rec_parse_ramblocks(r, f, what, err, errlen);
	fclose(f);
	r->rows_from = path; /* what, a local name, is gone */
	return ret;
}

/* The row of the block named name, or NULL. */
static const struct rdmig_qs_ramblock *find_row(const struct qemu_recorder *r, const char *name)
{
	for (size_t k = 0; k < r->nrows; k++)
		if (!strcmp(r->rows[k].name, name))
			return &r->rows[k];
	return NULL;
}

/*
 * The library checks REGISTER_REQUEST addresses and COMPRESS ranges
 * against these offsets, and QEMU sends them in its own: they must be
 * QEMU's exactly.
 */
int qemu_rec_resolve_offsets(struct qemu_recorder *r, int pin_all, char *err, size_t errlen)
{
	const struct rdmig_qs_parser *qs = r->qs;
	const char *from = r->rows_from; /* set with the rows */

	if (!r->rows) {
		if (pin_all || qs->count == 1)
			return 0; /* unused with PIN_ALL; a lone block is at offset 0 */
		snprintf(err, errlen, "the source registers memory dynamically, by its own RAM "
			 "offsets, which its stream does not carry: give --source-qmp SOCKET (its "
			 "QMP) or --ramblocks FILE (its 'info ramblock'), or turn on rdma-pin-all "
			 "at the source and --pin-all here");
		return -1;
	}
	for (uint32_t i = 0; i < qs->count; i++) {
		const struct rdmig_qs_block *q = &qs->blocks[i];
		const struct rdmig_qs_ramblock *row = find_row(r, q->name);

		if (!row) {
			snprintf(err, errlen, "RAM block '%s' is not in %.200s (is it the source's "
				 "'info ramblock', taken before the migration?)", q->name, from);
			return -1;
		}
		if (row->used != q->length) {
			snprintf(err, errlen, "RAM block '%s': the stream says %" PRIu64 " bytes, "
				 "%.200s says 0x%" PRIx64 " (is it from this source?)", q->name,
				 q->length, from, row->used);
			return -1;
		}
		/* offset 0 tells the library to lay the block out itself; that
		 * is right only for the first block (it starts at 0) */
		if (row->offset == 0 && i > 0) {
			snprintf(err, errlen, "RAM block '%s' is at the source's offset 0 but not "
				 "first in its order: the library cannot express that", q->name);
			return -1;
		}
		r->blocks[i].offset = row->offset;
		r->blocks[i].have_offset = 1;
	}
	return 0;
}
