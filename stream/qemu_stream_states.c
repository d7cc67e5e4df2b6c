/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * qemu_stream_states.c - what the field of each parser state is called,
 * for the messages of both halves of the reader (qemu_stream.c follows the
 * structure, qemu_stream_end.c watches for the end); below both, so neither
 * half calls back into the other for it.
 */
#include "qemu_stream_states.h"

/* What each state of qemu_stream_states.h collects, in its order. */
static const char *const field_names[] = {
	"file magic", "file version", "section type",
	"configuration: machine name length", "configuration: machine name",
	"configuration: next byte", "subsection name length", "subsection name",
	"subsection version", "target page bits", "capability count", "capability name length",
	"capability name", "uuid",
	"command header", "command data",
	"section id", "section name length", "section name", "section instance", "section version",
	"RAM total size word", "RAM block name length", "RAM block name", "RAM block length",
	"RAM data word",
	"byte after RAM_SAVE_FLAG_EOS", "section footer id",
	"byte after QEMU_VM_EOF", "vmdesc length", "vmdesc", "end",
};
_Static_assert(sizeof(field_names) / sizeof(field_names[0]) == S_DONE + 1,
	       "a name for every parser state");

const char *rdmig__qs_field_name(int state)
{
	return field_names[state];
}
