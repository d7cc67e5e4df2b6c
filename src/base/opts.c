/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * opts.c - defaults of struct rdmig_opts, and reading a caller's options
 * of any size (older, smaller headers and newer, larger ones), the way the
 * kernel's copy_struct_from_user reads a struct whose first field is its
 * size.
 */
#include <poll.h>
#include <string.h>
#include "rdmig.h"
#include "log.h"
#include "opts.h"

static void opts_defaults(struct rdmig_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->inline_request = RDMIG_INLINE_AUTO;
	o->pin_all = false;
	o->backlog = 128; /* QEMU's 5 refuses concurrent incoming migrations */
	o->timeout_ms = 60000;
	o->max_send_wr = 512;
	o->spin_us = 50;
	o->log_level = RDMIG_LOG_INFO;
	o->chunk_size = RDMIG_CHUNK_SIZE;
	o->cancel_fd = -1; /* 0 would be stdin */
	o->repin_budget = RDMIG_REPIN_BUDGET;
}

void rdmig_opts_init_sized(struct rdmig_opts *opts, size_t size)
{
	struct rdmig_opts d;
	size_t caller_size = size;

	if (!opts || size < sizeof(opts->size))
		return;
	opts_defaults(&d);
	if (size > sizeof(d)) {
		/* a newer caller: the fields this library does not know are 0 */
		memset((char *)opts + sizeof(d), 0, size - sizeof(d));
		size = sizeof(d);
	}
	memcpy(opts, &d, size);
	opts->size = caller_size;
}

int rdmig__opts_copy(struct rdmig_opts *dst, const struct rdmig_opts *src, char *errmsg)
{
	struct rdmig_opts defaults, o;
	size_t size;

	opts_defaults(&defaults);
	if (!src) {
		*dst = defaults;
		return 0;
	}
	/* Only src->size is read before we know how much may be read. */
	size = src->size;
	if (size < sizeof(src->size))
		return rdmig__fail(&defaults, errmsg, RDMIG_EINVAL,
				   "options size %zu: call rdmig_opts_init first", size);
	/* The caller's fields over the defaults: fields past an older
	 * caller's struct keep their defaults. */
	o = defaults;
	memcpy(&o, src, size < sizeof(o) ? size : sizeof(o));
	o.size = sizeof(o);
	if (size > sizeof(o)) {
		/* A newer caller: what this library does not know must be 0. */
		const unsigned char *tail = (const unsigned char *)src + sizeof(o);
		for (size_t i = 0; i < size - sizeof(o); i++)
			if (tail[i])
				return rdmig__fail(&o, errmsg, RDMIG_EINVAL,
						   "options size %zu: byte %zu is set, but this "
						   "librdmig knows only %zu bytes of options",
						   size, sizeof(o) + i, sizeof(o));
	}
	if (o.inline_request < RDMIG_INLINE_AUTO || o.inline_request > RDMIG_INLINE_REQUEST_MAX)
		return rdmig__fail(&o, errmsg, RDMIG_EINVAL,
				   "inline request %d out of range (auto, or 0..%d bytes)",
				   o.inline_request, RDMIG_INLINE_REQUEST_MAX);
	if (o.max_send_wr < 2 || o.max_send_wr > 16384)
		return rdmig__fail(&o, errmsg, RDMIG_EINVAL,
				   "max_send_wr %u out of range (2..16384)", o.max_send_wr);
	if (o.spin_us < 0 || o.spin_us > 1000000)
		return rdmig__fail(&o, errmsg, RDMIG_EINVAL,
				   "spin_us %d out of range (0..1000000)", o.spin_us);
	if (o.backlog < 1)
		return rdmig__fail(&o, errmsg, RDMIG_EINVAL, "backlog %d must be >= 1", o.backlog);
	if (!o.chunk_size) /* a caller that zeroed the field itself: the default */
		o.chunk_size = RDMIG_CHUNK_SIZE;
	if (!RDMIG_CHUNK_SIZE_VALID(o.chunk_size))
		return rdmig__fail(&o, errmsg, RDMIG_EINVAL,
				   "chunk size %llu bytes: a power of two from 1 MiB to 1 GiB",
				   (unsigned long long)o.chunk_size);
	if (o.idle_timeout_ms < 0)
		return rdmig__fail(&o, errmsg, RDMIG_EINVAL,
				   "idle timeout %d ms: 0 (none) or more", o.idle_timeout_ms);
	if (o.deadline_ms < 0)
		return rdmig__fail(&o, errmsg, RDMIG_EINVAL,
				   "deadline %d ms: 0 (none) or more", o.deadline_ms);
	if (o.repin_budget < -1)
		return rdmig__fail(&o, errmsg, RDMIG_EINVAL,
				   "re-registration budget %d: -1 (no limit), 0 or more",
				   o.repin_budget);
	if (o.cancel_fd < -1)
		return rdmig__fail(&o, errmsg, RDMIG_EINVAL,
				   "cancel_fd %d: a file descriptor, or -1 for none", o.cancel_fd);
	*dst = o;
	return 0;
}

void rdmig__opts_default(struct rdmig_opts *dst)
{
	opts_defaults(dst);
}

bool rdmig__cancel_fd_ready(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	/* Any event counts: readable, hung up, or even closed too early
	 * (POLLNVAL), which would otherwise wake every poll(2) at once and
	 * turn the wait into a busy loop. */
	return fd >= 0 && poll(&pfd, 1, 0) > 0 && pfd.revents;
}
