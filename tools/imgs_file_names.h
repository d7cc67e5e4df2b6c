/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * imgs_file_names.h - the names under which recv and recv --qemu write the
 * blocks they received.  A block's name comes from the source, so it is
 * never used as a path as it is: it is turned into one file name, safe and
 * distinct from the others'.
 */
#ifndef RDMIG_IMGS_FILE_NAMES_H
#define RDMIG_IMGS_FILE_NAMES_H

#include <stdint.h>
#include "imgstream.h"

/*
 * File names for the blocks, safe on any file system and distinct:
 * bytes outside [A-Za-z0-9._-] become '_', "." and ".." become "_" and
 * "__", long names are cut to IMGS_FILE_STEM bytes, and a stem already
 * taken gets "-2", "-3"... appended.  out[i] receives "<stem><suffix>".
 * Returns 0, or -1 when out of memory.
 */
#define IMGS_FILE_STEM 200
#define IMGS_FILE_NAME (IMGS_FILE_STEM + 32)
int imgs_file_names(const struct imgs_block *blocks, uint32_t n, const char *suffix,
		    char (*out)[IMGS_FILE_NAME]);

#endif
