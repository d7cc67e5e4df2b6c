/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_ramblock.c - a row of QEMU's `info ramblock` (rdmig/qemu.h): the
 * source's RAM offsets, which QEMU's REGISTER_REQUEST and COMPRESS use and
 * its stream does not carry.  `rdmig recv --qemu --ramblocks FILE` reads
 * the file and feeds it here line by line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rdmig/qemu.h>

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
int rdmig_qs_ramblock_row(char *line, struct rdmig_qs_ramblock *row)
{
	char *tok[16], *save = NULL;
	size_t n = 0, len = 0;
	uint64_t total;

	for (char *t = strtok_r(line, " \t\r\n", &save); t && n < 16;
	     t = strtok_r(NULL, " \t\r\n", &save))
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
