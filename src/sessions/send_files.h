/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * send_files.h - the input files of `rdmig send`: each FILE or NAME=FILE
 * of the command line becomes one RAM block, named (and the name checked)
 * before anything is opened, then mapped read-only so that the library can
 * register and write the file's pages as they are.
 */
#ifndef RDMIG_SEND_FILES_H
#define RDMIG_SEND_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <rdmig/images.h>
#include <rdmig.h>

/* One input file, mapped read-only. */
struct src_file {
	const char *path;
	uint8_t *map;     /* NULL for an empty file (mmap of 0 bytes fails) */
	uint64_t length;
};

/* The blocks of one send, four views of the same n files. */
struct send_files {
	int n;
	struct src_file *f;
	struct rdmig_imgs_block *desc;    /* the names (and lengths) */
	struct rdmig_block *blocks; /* for the locked-memory checks */
	struct rdmig_images_item *items; /* what rdmig_images_source_create takes */
	uint64_t total;             /* bytes of all files */
};

/* Name a block after each of the n arguments ("NAME=FILE" or "FILE", by
 * its basename); the arguments must outlive in.  -1 with a message in err
 * when a name is bad or taken twice: a usage error. */
int send_files_name(struct send_files *in, char **args, int n, char *err, size_t errlen);
/* Map every named file and describe its block.  -1 with a message in err. */
int send_files_map(struct send_files *in, char *err, size_t errlen);
/* Unmap and free (after a failure of either of the above too). */
void send_files_free(struct send_files *in);

#endif
