/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_int.h - the image-set destination over an engine handle the
 * caller made (tests make one over the fake engine_io of
 * tests/fuzz/fake_io.h); rdmig_images_dest_create wraps the connection's.
 */
#ifndef RDMIG_IMAGES_INT_H
#define RDMIG_IMAGES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rdmig/images.h"

/* Takes engine (destroyed with the handle, or now on failure); c may be
 * NULL (nothing then tells a source of our failures).  A failure's
 * message goes to err. */
int rdmig__images_dest_wrap(struct rdmig_dest *engine, struct rdmig_conn *c,
			    const struct rdmig_images_dest_opts *o,
			    const struct rdmig_images_sink *sink, struct rdmig_images_dest **out,
			    char *err, size_t errlen);

/* What the source sent, for its verdict to be judged against. */
struct verdict_sent {
	uint32_t digest; /* enum rdmig_digest_alg */
	const struct rdmig_imgs_block *blocks;
	uint32_t n;
	uint64_t bytes;
};

/* images_source_verdict.c: after the trailer, take the destination's
 * verdict from c (at most wait_ms; <= 0: no bound) and judge it: 0 only
 * when it committed exactly what was sent.  Fills v's state, counts and
 * reason and err; *peer_knows says whether the destination needs no
 * ERROR from us (it failed, went away, or answered). */
int rdmig__images_await_verdict(struct rdmig_conn *c, int wait_ms, const struct verdict_sent *sent,
				struct rdmig_images_verdict *v, bool *peer_knows, char *err,
				size_t errlen);

#endif
