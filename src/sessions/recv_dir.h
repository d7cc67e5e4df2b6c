/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_dir.h - the directory side of one image set `rdmig recv` receives
 * (the counterpart of send_files.h): the sink (struct rdmig_images_sink)
 * through which the library's image-set destination hands over the
 * checked bytes, and the output files it writes in a directory the caller
 * opened (outdir.h, whose rules make planted names harmless):
 *
 *  - at the header, every block's file name (rdmig_imgs_file_names), each
 *    checked free in the directory before anything is written;
 *  - DIR/<name>.img per block, under a temporary name, parked between
 *    writes (4096 blocks need no 4096 descriptors), written in 1 MiB
 *    pieces on the hashing threads (a piece of zeros stays a hole), then
 *    sized;
 *  - DIR/stream.bin, the stream's bytes the library found valid;
 *  - the commit: stream.bin, then every image, under its real name, then
 *    the directory flushed (out_commit, out_dir_sync): on stable storage
 *    before the library tells the source that the set is committed;
 *  - the abort (a failure, an interruption): every output this run made
 *    is removed, and the directories out_dir_open made if they are empty.
 *
 * What a header may be (verification, chunk size, locked memory, a share
 * of a server) is the caller's to decide: it says so through hooks, and a
 * refusal there counts as the sink's own failure (recv_dir_failed).
 */
#ifndef RDMIG_RECV_DIR_H
#define RDMIG_RECV_DIR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdmig/images.h>
#include "outdir.h"

/* The caller's say on the set (every hook but committing is required). */
struct recv_dir_hooks {
	void *ctx;
	/* The header came, nothing is named yet: may a stream of these
	 * parameters be received?  0, or non-zero with a message in err. */
	int (*params)(void *ctx, const struct rdmig_imgs_params *prm, char *err, size_t errlen);
	/* The files are named (and their names free): may these blocks be
	 * received (what they need: memory, a share)?  0, or non-zero with err. */
	int (*blocks)(void *ctx, const struct rdmig_imgs_block *blocks, uint32_t n,
		      const struct rdmig_imgs_params *prm, char *err, size_t errlen);
	/* Verified (or unverified by choice): the outputs get their names
	 * next.  May be NULL. */
	void (*committing)(void *ctx);
};

/* One block's image file. */
struct recv_dir_image {
	char file[RDMIG_IMGS_FILE_NAME];
	struct out_file img; /* DIR/file while it is written */
};

/* Its fields are the calls' own: read them through the calls below. */
struct recv_dir {
	struct out_dir *dir;          /* the caller's, open while the set is received */
	struct recv_dir_hooks hooks;
	struct recv_dir_image *im;    /* per block, from the header on */
	uint32_t nblocks;
	struct out_file stream;       /* DIR/stream.bin, from the first valid bytes on */
	/* busy time of the writes into the images, summed over the hashing
	 * threads that make them */
	atomic_uint_least64_t copy_ns;
	bool failed;                  /* a callback (or a hook) failed */
};

/* Receive into dir (opened by the caller, which closes it after
 * recv_dir_free); rd holds nothing yet (new, or freed).  Call it before
 * anything else: recv_dir_discard may come before the set does. */
void recv_dir_init(struct recv_dir *rd, struct out_dir *dir, const struct recv_dir_hooks *hooks);
/* The sink for rdmig_images_dest_create, its context rd. */
void recv_dir_sink(struct recv_dir *rd, struct rdmig_images_sink *sink);

/* The same pieces for a receiver that writes the set itself (recv --qemu
 * writes its images from memory once the migration ended):
 *  - name the n blocks' files (rdmig_imgs_file_names: only .name is
 *    read), each checked free in DIR; the names exist even when the
 *    check fails.  0, or -1 with err;
 *  - append stream bytes to DIR/stream.bin, made on the first call.  0,
 *    or -1 with err;
 *  - block i's image file (out_create it by recv_dir_file's name, write,
 *    size and park it with outdir.h's calls);
 *  - the commit: stream.bin, then every image, under its real name, then
 *    the directory flushed.  0, or -1 with err. */
int recv_dir_name(struct recv_dir *rd, const struct rdmig_imgs_block *blocks, uint32_t n,
		  char *err, size_t errlen);
int recv_dir_append_stream(struct recv_dir *rd, const void *data, size_t len, char *err,
			   size_t errlen);
struct out_file *recv_dir_output(struct recv_dir *rd, uint32_t i);
int recv_dir_commit(struct recv_dir *rd, char *err, size_t errlen);

/* Block i's file name in DIR ("" while the blocks are not named). */
const char *recv_dir_file(const struct recv_dir *rd, uint32_t i);
/* Nanoseconds the hashing threads spent writing the images, summed. */
uint64_t recv_dir_copy_ns(const struct recv_dir *rd);
/* Whether a failure was this sink's own (or a hook's refusal), rather
 * than one the library reports with its own code. */
bool recv_dir_failed(const struct recv_dir *rd);

/* A failed or interrupted run: remove every output rd created (what was
 * in DIR before stays).  The sink's abort; callable again, and before any
 * header came.  No thread may be writing into the images. */
void recv_dir_discard(struct recv_dir *rd);
/* The same without the directories: what else the run keeps in DIR (a
 * record of why it failed) stays, and so do they. */
void recv_dir_discard_files(struct recv_dir *rd);
/* Free what rd holds (after its commit or its discard). */
void recv_dir_free(struct recv_dir *rd);

#endif
