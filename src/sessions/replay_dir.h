/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * replay_dir.h - the record directory of `rdmig send --qemu-replay DIR`,
 * read as untrusted input (docs/security.md): whoever wrote DIR may have
 * planted links, FIFOs, devices, files of other sizes, or may change the
 * files while the replay reads them.
 *
 * Every file is opened relative to one O_DIRECTORY descriptor of DIR, with
 * O_NOFOLLOW (a link is refused, never followed), O_NONBLOCK and O_NOCTTY
 * (a FIFO or a terminal cannot hold the open), and taken only when fstat
 * says it is a regular file.  Messages name the file and what the record
 * says, never the size of a file that was refused.
 *
 * The images are copied into the replay's own memory (anonymous, holes
 * left untouched) before the replay connects, one descriptor at a time:
 * the bytes sent are the bytes read, a file truncated or rewritten later
 * changes nothing (a mapping of it would raise SIGBUS in the sender, or
 * send what another writer put there), and 4096 blocks need no more
 * descriptors than one.
 */
#ifndef RDMIG_REPLAY_DIR_H
#define RDMIG_REPLAY_DIR_H

#include <stddef.h>
#include <stdint.h>
#include <rdmig/qemu.h>

struct rd_ident;

struct replay_dir {
	int fd; /* DIR, O_DIRECTORY; -1 when closed */
	const char *path;
	/* the images rd_image_size took, by identity: a hard link to one of
	 * them is the same image, read (and held) once more */
	struct rd_ident *seen;
	size_t nseen;
};

/* Open path as the record's directory: 0, or -1 with err. */
int rd_open(struct replay_dir *d, const char *path, char *err, size_t errlen);
void rd_close(struct replay_dir *d);

/* Open name in d as a regular file: its descriptor and size, or -1 with
 * err ("is a symbolic link", "is not a regular file", ...). */
int rd_open_file(const struct replay_dir *d, const char *name, uint64_t *size, char *err,
		 size_t errlen);

/* record.txt, whole, into *text (malloc'ed, *len bytes): refused above
 * RDMIG_RR_MAX_RECORD_BYTES before anything is allocated. */
int rd_read_record(const struct replay_dir *d, char **text, size_t *len, char *err,
		   size_t errlen);

/* rdmig_rr_image_fn over a struct replay_dir: the size of a regular file,
 * from fstatat without following a link (nothing is opened); a file it
 * took before, under this name or another (a hard link), is refused. */
int rd_image_size(void *dir, const char *file, uint64_t *size, char *err, size_t errlen);

/* The image of block b, read into new anonymous memory of b->length bytes
 * (*mem, NULL for an empty block; free with rd_free_image).  The file must
 * still have the record's length before and after it is read.  cancelled
 * (may be NULL) is asked between pieces; a true answer gives -2. */
int rd_read_image(const struct replay_dir *d, const struct rdmig_rr_block *b, uint8_t **mem,
		  bool (*cancelled)(void), char *err, size_t errlen);
void rd_free_image(uint8_t *mem, uint64_t length);

/* Read exactly len bytes at offset of fd into buf: 0, or -1 with errno
 * (0 when the file ended first). */
int rd_pread_all(int fd, void *buf, size_t len, uint64_t offset);

#endif
