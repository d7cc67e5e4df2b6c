/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * error.c - the one table behind rdmig_strerror() and rdmig_err_name(), and
 * the C library's descriptions and names for every other -errno.
 */
#include <string.h>
#include "rdmig.h"

struct error_entry {
	int code;
	const char *name;
	const char *text;
};

#define E(code, text) {code, #code, text}
static const struct error_entry error_table[] = {
	E(RDMIG_OK, "success"),
	E(RDMIG_EINVAL, "invalid argument"),
	E(RDMIG_ENOMEM, "out of memory"),
	E(RDMIG_ENODEV, "no such RDMA device"),
	E(RDMIG_ETIMEDOUT, "timed out waiting for the peer"),
	E(RDMIG_ECANCELED, "cancelled by the caller"),
	E(RDMIG_EDISCONNECTED, "the peer disconnected"),
	E(RDMIG_EPEER, "the peer reported an error and is aborting"),
	E(RDMIG_EREJECTED, "the destination rejected the connection"),
	E(RDMIG_EVERSION, "unsupported capability version"),
	E(RDMIG_EMSG_SHORT, "message shorter than its header"),
	E(RDMIG_EMSG_LEN, "message length above the protocol limit"),
	E(RDMIG_EMSG_SIZE, "received size differs from header + len"),
	E(RDMIG_EMSG_REPEAT, "repeat count above the protocol limit"),
	E(RDMIG_EMSG_REPEAT_LEN, "repeat count does not match the payload length"),
	E(RDMIG_EMSG_TYPE, "unknown message type"),
	E(RDMIG_EMSG_UNEXPECTED, "unexpected message type"),
	E(RDMIG_ECOMPLETION, "a work request completed with an error"),
	E(RDMIG_ERANGE, "index, offset or length out of range"),
	E(RDMIG_EADDR, "address could not be resolved or bound"),
	E(RDMIG_ESTATE, "operation not valid in this state"),
	E(RDMIG_ETOOBIG, "message larger than a control buffer"),
	E(RDMIG_EPROTO, "protocol violation"),
	E(RDMIG_EAGAIN, "nothing yet: call again once the fd is readable"),
};
#undef E

static const struct error_entry *find_error(int code)
{
	for (size_t i = 0; i < sizeof(error_table) / sizeof(error_table[0]); i++)
		if (error_table[i].code == code)
			return &error_table[i];
	return NULL;
}

/* glibc's strerrordesc_np/strerrorname_np: static strings (thread-safe, no
 * buffer), NULL for an unknown errno. */
const char *rdmig_strerror(int code)
{
	const struct error_entry *e = find_error(code);
	const char *text = NULL;

	if (e)
		return e->text;
	if (RDMIG_IS_ERRNO(code))
		text = strerrordesc_np(-code);
	return text ? text : "unknown error";
}

const char *rdmig_err_name(int code)
{
	const struct error_entry *e = find_error(code);
	const char *name = NULL;

	if (e)
		return e->name;
	if (RDMIG_IS_ERRNO(code))
		name = strerrorname_np(-code);
	return name ? name : "RDMIG_E?";
}
