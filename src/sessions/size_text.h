/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * size_text.h - a size as people read it ("12.3 MiB"): the one way the
 * receiver's refusals and the tool's reports write bytes, so a limit in a
 * message and the same limit in a summary read alike.
 */
#ifndef RDMIG_SIZE_TEXT_H
#define RDMIG_SIZE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* bytes in binary units (B, KiB, MiB, GiB) into buf; returns buf. */
const char *size_text(uint64_t bytes, char *buf, size_t len);

#endif
