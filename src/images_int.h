/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_int.h - the image-set destination over an engine handle the
 * caller made (tests make one over the fake engine_io of
 * tests/fuzz/fake_io.h); rdmig_images_dest_create wraps the connection's.
 */
#ifndef RDMIG_IMAGES_INT_H
#define RDMIG_IMAGES_INT_H

#include <stddef.h>
#include "rdmig/images.h"

/* Takes engine (destroyed with the handle, or now on failure); c may be
 * NULL (nothing then tells a source of our failures).  A failure's
 * message goes to err. */
int rdmig__images_dest_wrap(struct rdmig_dest *engine, struct rdmig_conn *c,
			    const struct rdmig_images_dest_opts *o,
			    const struct rdmig_images_sink *sink, struct rdmig_images_dest **out,
			    char *err, size_t errlen);

#endif
