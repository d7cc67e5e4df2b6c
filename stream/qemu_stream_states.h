/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_stream_states.h - the QEMU stream parser's states, which both
 * halves of the reader share (qemu_stream.c follows the structure,
 * qemu_stream_end.c watches for the end), and their fields' names for
 * messages (qemu_stream_states.c).  Internal.
 */
#ifndef RDMIG_QEMU_STREAM_STATES_H
#define RDMIG_QEMU_STREAM_STATES_H

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

#endif
