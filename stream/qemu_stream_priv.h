/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_stream_priv.h - what the two halves of the QEMU stream reader share
 * and nothing else uses: the parser's states (qemu_stream.c) and opaque
 * mode, in which only the end is watched for (qemu_stream_end.c).
 */
#ifndef RDMIG_QEMU_STREAM_PRIV_H
#define RDMIG_QEMU_STREAM_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <rdmig/qemu.h>

/* Parser states; each names the field being collected. */
enum {
	S_MAGIC, S_VERSION, S_TOP,
	S_CFG_LEN, S_CFG_NAME, S_CFG_NEXT, S_SUB_NAMELEN, S_SUB_NAME, S_SUB_VERSION,
	S_SUB_PAGE_BITS, S_CAPS_COUNT, S_CAP_LEN, S_CAP_NAME, S_SUB_UUID,
	S_CMD_HEAD, S_CMD_DATA,
	S_SEC_ID, S_SEC_IDLEN, S_SEC_IDSTR, S_SEC_INSTANCE, S_SEC_VERSION,
	S_RAM_SIZE, S_BLK_NAMELEN, S_BLK_NAME, S_BLK_LENGTH, S_RAM_WORD,
	S_AFTER_EOS, S_FOOTER_ID,
	S_AFTER_EOF, S_VMDESC_LEN, S_VMDESC, S_DONE,
};

/* What the field of a state is called, for messages. */
const char *rdmig__qs_field_name(int state);

/* Stop following the structure from stream offset `from`, for the reason
 * the format gives (kept for the message if the end never comes). */
__attribute__((format(printf, 3, 4)))
int rdmig__qs_go_opaque(struct rdmig_qs_parser *p, uint64_t from, const char *fmt, ...);
/* One byte at stream offset pos, in opaque mode. */
void rdmig__qs_opaque_byte(struct rdmig_qs_parser *p, uint8_t b, uint64_t pos);
/* The next len bytes of the stream, in opaque mode. */
void rdmig__qs_watch(struct rdmig_qs_parser *p, const uint8_t *in, size_t len);

#endif
