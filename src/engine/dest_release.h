/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dest_release.h - what the layer above the destination engine (the
 * image-set destination) may ask of it beyond rdmig.h: a chunk whose bytes
 * it has taken, given back (dest_serve.c owns the registrations).
 * Internal.
 */
#ifndef RDMIG_DEST_RELEASE_H
#define RDMIG_DEST_RELEASE_H

#include <stdint.h>
#include "rdmig.h"

/* Deregister chunk `chunk` of block `block` when it was registered on its
 * own (dynamic registration: never under PIN_ALL, nor a region shared with
 * other chunks), so that its memory may be dropped: 1 when it was, 0 when
 * it stays registered, RDMIG_EINVAL for a chunk that does not exist.  The
 * source's key for it is dead from here: a write with it fails on the
 * source's side, and a new REGISTER of the chunk re-pins it. */
int rdmig__dest_release_chunk(struct rdmig_dest *d, uint32_t block, uint32_t chunk);

#endif
