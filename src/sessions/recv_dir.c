/* SPDX-License-Identifier: BSD-2-Clause */
/* recv_dir.c - the output files of one received image set and the sink
 * that writes them (recv_dir.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdmig/private.h>
#include "recv_dir.h"

/* Images are written 1 MiB at a time: a MiB of zeros stays a hole. */
#define IMAGE_PIECE (1u << 20)

void recv_dir_init(struct recv_dir *rd, struct out_dir *dir, const struct recv_dir_hooks *hooks)
{
	memset(rd, 0, sizeof(*rd));
	rd->dir = dir;
	rd->hooks = *hooks;
	atomic_init(&rd->copy_ns, 0);
}

/* A refusal or failure of ours (the hooks' included): the caller reports
 * it as its own, not as one of the library's codes. */
static int failed(struct recv_dir *rd)
{
	rd->failed = true;
	return -1;
}

int recv_dir_name(struct recv_dir *rd, const struct rdmig_imgs_block *blocks, uint32_t n,
		  char *err, size_t errlen)
{
	char (*names)[RDMIG_IMGS_FILE_NAME] = calloc(n, sizeof(*names));

	rd->im = calloc(n, sizeof(*rd->im));
	if (!rd->im || !names || rdmig_imgs_file_names(blocks, n, ".img", names)) {
		free(names);
		snprintf(err, errlen, "out of memory for %u file names", n);
		return -1;
	}
	rd->nblocks = n;
	for (uint32_t i = 0; i < n; i++)
		memcpy(rd->im[i].file, names[i], sizeof(names[i]));
	free(names);
	/* a name taken in DIR fails now, before any data moves */
	for (uint32_t i = 0; i < n; i++)
		if (out_check_new(rd->dir, rd->im[i].file, err, errlen))
			return -1;
	return 0;
}

/* The header came: the caller's say on the stream, the names, then the
 * caller's say on the blocks (a name taken fails before anything is
 * reserved for them). */
static int sink_header(void *ctx, const struct rdmig_imgs_block *blocks, uint32_t n,
		       const struct rdmig_imgs_params *prm, char *err, size_t errlen)
{
	struct recv_dir *rd = ctx;

	if (rd->hooks.params(rd->hooks.ctx, prm, err, errlen) ||
	    recv_dir_name(rd, blocks, n, err, errlen) ||
	    rd->hooks.blocks(rd->hooks.ctx, blocks, n, prm, err, errlen))
		return failed(rd);
	return 0;
}

/* An image, parked: written through a descriptor of its own per span, so
 * that 4096 blocks need no 4096 descriptors. */
static int sink_create(void *ctx, uint32_t i, const struct rdmig_imgs_block *b, char *err,
		       size_t errlen)
{
	struct recv_dir *rd = ctx;

	(void)b;
	if (out_create(rd->dir, &rd->im[i].img, rd->im[i].file, err, errlen))
		return failed(rd);
	if (out_park(&rd->im[i].img)) {
		snprintf(err, errlen, "cannot close %s/%s: %s", rd->dir->path, rd->im[i].file,
			 strerror(errno));
		return failed(rd);
	}
	return 0;
}

/* On a hashing thread: the bytes of a checked span, into its image.  A
 * failure here is the library's to report (its errno, negated). */
static int sink_write(void *ctx, uint32_t i, uint64_t offset, const void *data, size_t len)
{
	struct recv_dir *rd = ctx;
	const uint8_t *p = data;
	double t0 = rdmig_monotonic_seconds();

	for (size_t off = 0; off < len; off += IMAGE_PIECE) {
		size_t n = len - off < IMAGE_PIECE ? len - off : IMAGE_PIECE;

		if (out_write_chunk(&rd->im[i].img, offset + off, p + off, n))
			return errno ? -errno : -EIO;
	}
	atomic_fetch_add(&rd->copy_ns,
			 (uint_least64_t)((rdmig_monotonic_seconds() - t0) * 1e9));
	return 0;
}

static int sink_set_size(void *ctx, uint32_t i, uint64_t length, char *err, size_t errlen)
{
	struct recv_dir *rd = ctx;

	if (!out_set_size(&rd->im[i].img, length))
		return 0;
	snprintf(err, errlen, "cannot write the images into %s: %s", rd->dir->path,
		 strerror(errno));
	return failed(rd);
}

int recv_dir_append_stream(struct recv_dir *rd, const void *data, size_t len, char *err,
			   size_t errlen)
{
	if (rd->stream.state == OUT_NONE &&
	    out_create(rd->dir, &rd->stream, "stream.bin", err, errlen))
		return -1;
	if (!out_append(&rd->stream, data, len))
		return 0;
	snprintf(err, errlen, "cannot write %s/stream.bin: %s", rd->dir->path, strerror(errno));
	return -1;
}

/* Stream bytes the library found valid: into DIR/stream.bin. */
static int sink_stream(void *ctx, const void *data, size_t len, char *err, size_t errlen)
{
	struct recv_dir *rd = ctx;

	return recv_dir_append_stream(rd, data, len, err, errlen) ? failed(rd) : 0;
}

int recv_dir_commit(struct recv_dir *rd, char *err, size_t errlen)
{
	if (out_commit(rd->dir, &rd->stream, err, errlen))
		return -1;
	for (uint32_t i = 0; i < rd->nblocks; i++)
		if (out_commit(rd->dir, &rd->im[i].img, err, errlen))
			return -1;
	return out_dir_sync(rd->dir, err, errlen);
}

/* Verified (or --verify off): the caller hears of it, then the commit. */
static int sink_commit(void *ctx, char *err, size_t errlen)
{
	struct recv_dir *rd = ctx;

	if (rd->hooks.committing)
		rd->hooks.committing(rd->hooks.ctx);
	return recv_dir_commit(rd, err, errlen) ? failed(rd) : 0;
}

static void sink_abort(void *ctx)
{
	recv_dir_discard(ctx);
}

void recv_dir_sink(struct recv_dir *rd, struct rdmig_images_sink *sink)
{
	memset(sink, 0, sizeof(*sink));
	sink->ctx = rd;
	sink->header = sink_header;
	sink->create = sink_create;
	sink->write = sink_write;
	sink->set_size = sink_set_size;
	sink->stream = sink_stream;
	sink->commit = sink_commit;
	sink->abort = sink_abort;
}

const char *recv_dir_file(const struct recv_dir *rd, uint32_t i)
{
	return i < rd->nblocks ? rd->im[i].file : "";
}

uint64_t recv_dir_copy_ns(const struct recv_dir *rd)
{
	return atomic_load(&rd->copy_ns);
}

bool recv_dir_failed(const struct recv_dir *rd)
{
	return rd->failed;
}

struct out_file *recv_dir_output(struct recv_dir *rd, uint32_t i)
{
	return &rd->im[i].img;
}

void recv_dir_discard_files(struct recv_dir *rd)
{
	out_discard(rd->dir, &rd->stream);
	for (uint32_t i = 0; rd->im && i < rd->nblocks; i++)
		out_discard(rd->dir, &rd->im[i].img);
}

void recv_dir_discard(struct recv_dir *rd)
{
	recv_dir_discard_files(rd);
	out_dir_remove_made(rd->dir);
}

void recv_dir_free(struct recv_dir *rd)
{
	free(rd->im);
	rd->im = NULL;
	rd->nblocks = 0;
}
