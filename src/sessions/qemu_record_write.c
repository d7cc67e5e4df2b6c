/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_record_write.c - the recorder's (qemu_recorder.h) DIR/record.txt:
 * librdmig-stream's lines (rdmig_qrec_write) into an output of DIR
 * (outdir.h), so that the record gets its name only once it is whole and
 * flushed.  It is written on failure too, as far as the migration got.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include "qemu_recorder.h"

/* Whether the library's cancel of opts is raised: its flag, or a byte in
 * its cancel_fd (a pipe a signal handler writes to).  A record of many
 * passes over a large RAM takes a while; it stops then. */
static bool cancel_raised(void *ctx)
{
	const struct rdmig_opts *o = ctx;
	struct pollfd pfd = {.fd = o->cancel_fd, .events = POLLIN};

	return (o->cancel && *o->cancel) ||
	       (o->cancel_fd >= 0 && poll(&pfd, 1, 0) > 0 && pfd.revents);
}

/* The record into out, just created in DIR; 0, or -1 with err (out is then
 * discarded).  *stopped: the cancel stopped it. */
static int write_into(const struct qemu_recorder *r, const struct qemu_rec_view *v,
		      struct out_dir *dir, struct out_file *out, struct rdmig_opts *opts,
		      const char *failure, int *stopped, char *err, size_t errlen)
{
	struct rdmig_qrec rec = {
		.qs = r->qs,
		.pin_all = v->pin_all,
		.blocks = r->blocks,
		.phases = r->phases,
		.nphases = (uint32_t)r->nphases,
		.stream_bytes = v->stream_bytes,
		.seconds = v->seconds,
		.stop = cancel_raised,
		.stop_ctx = opts,
	};
	FILE *f = fdopen(out->fd, "w");
	int bad;

	if (!f) {
		snprintf(err, errlen, "cannot write %.600s/" QEMU_REC_FILE ": %s", dir->path,
			 strerror(errno));
		out_discard(dir, out);
		return -1;
	}
	*stopped = rdmig_qrec_write(f, &rec, failure);
	bad = ferror(f);
	out->fd = -1; /* fclose closes it */
	if (fclose(f) || bad) {
		snprintf(err, errlen, "cannot write %.600s/" QEMU_REC_FILE ": %s", dir->path,
			 strerror(errno));
		out_discard(dir, out);
		return -1;
	}
	return 0;
}

int qemu_rec_write(const struct qemu_recorder *r, const struct qemu_rec_view *v,
		   struct out_dir *dir, struct rdmig_opts *opts, const char *failure, char *err,
		   size_t errlen)
{
	struct out_file out;
	int stopped = 0;

	if (out_create(dir, &out, QEMU_REC_FILE, err, errlen) ||
	    write_into(r, v, dir, &out, opts, failure, &stopped, err, errlen))
		return -1;
	if (out_commit(dir, &out, err, errlen) || out_dir_sync(dir, err, errlen)) {
		out_discard(dir, &out);
		return -1;
	}
	if (stopped) {
		snprintf(err, errlen, "writing %.600s/" QEMU_REC_FILE " was interrupted (it ends "
			 "there)", dir->path);
		return -1;
	}
	return 0;
}
