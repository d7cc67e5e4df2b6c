/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * outdir.h - the output files of `rdmig recv` and `recv --qemu` in --out DIR.
 * Whoever else can write into DIR may have planted a
 * symlink, a FIFO or a file under an output's name; the rules below make
 * that harmless:
 *
 *  - DIR is opened once (O_DIRECTORY) and every output is created relative
 *    to that descriptor, under a temporary name (".rdmig-PID-N.NAME") with
 *    O_CREAT | O_EXCL | O_NOFOLLOW: always a new regular file, never a link
 *    followed, a FIFO opened or a file truncated;
 *  - only a verified result gets its real name: linkat(2), which fails if
 *    the name exists, or with --force renameat(2), which replaces the name
 *    (a planted symlink is replaced, not followed);
 *  - durable (unless --no-sync): the data of every output is written back
 *    as it comes (sync_file_range) and flushed to stable storage (fsync)
 *    before the output gets its name, and DIR (with every directory
 *    out_dir_open created, and their parent) is flushed after the last
 *    name, so that after a power cut a name is either absent or names
 *    complete data;
 *  - a failed run unlinks its temporary files, nothing else; the next run
 *    removes those an earlier run left when it was killed (out_dir_sweep);
 *  - DIR must be owned by the running user or root and not writable by
 *    group or others unless sticky (--force accepts it anyway).
 */
#ifndef RDMIG_OUTDIR_H
#define RDMIG_OUTDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define OUT_NAME 256 /* NAME_MAX + 1: the longest output name */

struct out_dir {
	const char *path; /* as given, for messages */
	int fd;           /* O_DIRECTORY descriptor of DIR, -1 when closed */
	bool force;       /* existing outputs are replaced (by rename) */
	size_t made;      /* path's leading part out_dir_open created (0: none) */
	bool sync;        /* durable outputs (the default; --no-sync clears it) */
	int parent_fd;    /* -1, or a directory whose new entry names DIR and is
			   * to be flushed with it (recv --serve's --out) */
};

enum { OUT_NONE, OUT_TEMP, OUT_LINKED, OUT_RENAMED };
struct out_file {
	char name[OUT_NAME];      /* the final name in DIR */
	char tmp[OUT_NAME + 40];  /* the temporary name while OUT_TEMP */
	int fd;                   /* open while OUT_TEMP, -1 once parked */
	int state;                /* OUT_*; a zeroed out_file is OUT_NONE */
	int dir_fd;               /* DIR, to open a parked file again */
	dev_t dev;                /* the file created, to know it again */
	ino_t ino;
	bool sync;                /* the directory's sync, when it was created */
};

/* mkdir -p DIR; -1 with a message in err on failure.  *made: the length
 * of DIR's leading part that did not exist before (0: none). */
int out_make_dir(const char *dir, size_t *made, char *err, size_t errlen);
/* Remove, deepest first, the directories out_make_dir made (made as it
 * said), as long as they are empty. */
void out_remove_made(const char *dir, size_t made);

/* mkdir -p DIR, open it and check who may write into it; -1 with err. */
int out_dir_open(struct out_dir *d, const char *path, bool force, char *err, size_t errlen);
void out_dir_close(struct out_dir *d);
/* A run that failed: remove the directories out_dir_open created, if
 * they are empty (what it found stays). */
void out_dir_remove_made(struct out_dir *d);
/* The bytes DIR's file system has free for the unprivileged (UINT64_MAX
 * when it cannot say). */
uint64_t out_dir_free(const struct out_dir *d);
/* The files (inodes) DIR's file system has free for the unprivileged
 * (UINT64_MAX when it does not count them, as btrfs, or cannot say). */
uint64_t out_dir_free_files(const struct out_dir *d);

/* Is NAME free in DIR (or may --force replace it)?  -1 with err if not. */
int out_check_new(const struct out_dir *d, const char *name, char *err, size_t errlen);
/* Create the temporary file of output NAME; f->fd is open for writing. */
int out_create(struct out_dir *d, struct out_file *f, const char *name, char *err, size_t errlen);
/* Flush f and give it its real name; -1 with err (the temporary stays
 * until out_discard).  Durable once out_dir_sync has run. */
int out_commit(struct out_dir *d, struct out_file *f, char *err, size_t errlen);
/* After the last out_commit: flush DIR, and the directories out_dir_open
 * created with their parent, so that the names are durable.  0 without
 * d->sync; -1 with err. */
int out_dir_sync(struct out_dir *d, char *err, size_t errlen);
/* Remove what an earlier run that was killed left in DIR: its temporary
 * files (".rdmig-PID-N.NAME", regular files of ours whose PID is no
 * longer a process), nothing else.  How many went in *removed; the first
 * name in first (may be NULL).  0, or -1 with err. */
int out_dir_sweep(struct out_dir *d, unsigned *removed, char *first, size_t firstlen, char *err,
		  size_t errlen);
/* A failed run: close f and remove what this run created under its names
 * (the temporary file; a committed file that replaced nothing). */
void out_discard(struct out_dir *d, struct out_file *f);

/* Close f's descriptor, keeping the file under its temporary name: a
 * receiver of 4096 blocks need not hold 4096 descriptors.  A parked file
 * is opened again for each write (by its temporary name, never following
 * a link) and must be the file out_create created (device and inode; else
 * -1 with errno ESTALE).  0, or -1 with errno (the close failed). */
int out_park(struct out_file *f);

/* Write N bytes of a chunk at offset OFF of f, unless they are all zero:
 * images are sparse, the holes read as zeros.  0, or -1 with errno.
 * Threads may write different ranges of one parked file at once. */
int out_write_chunk(struct out_file *f, uint64_t off, const void *p, size_t n);
/* The file's final size (the holes at its end included); 0 or -1, errno. */
int out_set_size(struct out_file *f, uint64_t size);
/* Append n bytes to f, open (never parked), all of them; 0, or -1 with
 * errno (a write that took nothing leaves errno as it was). */
int out_append(struct out_file *f, const void *p, size_t n);

#endif
