/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * images_records.h - when the image-set source sends its span records
 * (src/images/images_source.c): a rule of its own so that unit_images_source
 * can hold it to account without a device.
 *
 * A record is a control message.  With dynamic registration one sent
 * while the next chunk's registration is out (the engine's lookahead)
 * waits for that reply with the wire idle, so inside a chunk the records
 * go every IMGS_RECORD_SHIFT bytes of the block, and at the chunk's end.
 * Nothing is out during a block's last chunk (the lookahead asks within a
 * block only; the next block's first chunk is registered when its first
 * write comes), nor ever with PIN_ALL: there they go after every span, so
 * that the destination checks the last spans while the rest arrives, not
 * after the data (with 32 MiB chunks, 8 spans of 4 MiB were left to check
 * at the end).
 */
#ifndef RDMIG_IMAGES_RECORDS_H
#define RDMIG_IMAGES_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#define IMGS_RECORD_SHIFT 25 /* 32 MiB */

/* Whether the records go once the span ending at byte END of its block is
 * handed over (the chunk's end sends them anyway). */
static inline bool imgs_records_after_span(bool pin_all, bool blocks_last_chunk, uint64_t end)
{
	return pin_all || blocks_last_chunk || !(end & ((1ull << IMGS_RECORD_SHIFT) - 1));
}

#endif
