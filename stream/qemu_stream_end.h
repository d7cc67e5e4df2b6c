/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_stream_end.h - the QEMU stream reader's opaque mode
 * (qemu_stream_end.c), in which only the stream's end is watched for:
 * what qemu_stream.c hands over to it when the structure is no longer
 * followed.  Internal.
 */
#ifndef RDMIG_QEMU_STREAM_END_H
#define RDMIG_QEMU_STREAM_END_H

#include <stddef.h>
#include <stdint.h>
#include <rdmig/qemu.h>

/* Stop following the structure from stream offset `from`, for the reason
 * the format gives (kept for the message if the end never comes). */
__attribute__((format(printf, 3, 4)))
int rdmig__qs_go_opaque(struct rdmig_qs_parser *p, uint64_t from, const char *fmt, ...);
/* One byte at stream offset pos, in opaque mode. */
void rdmig__qs_opaque_byte(struct rdmig_qs_parser *p, uint8_t b, uint64_t pos);
/* The next len bytes of the stream, in opaque mode. */
void rdmig__qs_watch(struct rdmig_qs_parser *p, const uint8_t *in, size_t len);

#endif
