/* SPDX-License-Identifier: BSD-2-Clause */
/* opts.c - defaults of struct rdmig_opts. */
#include <string.h>
#include "rdmig.h"

void rdmig_opts_init(struct rdmig_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->size = sizeof(*opts);
	opts->inline_request = RDMIG_INLINE_AUTO;
	opts->pin_all = false;
	opts->backlog = 128; /* QEMU's 5 refuses concurrent incoming migrations */
	opts->timeout_ms = 60000;
	opts->max_send_wr = 512;
	opts->cap_version = RDMIG_CAP_VERSION;
	opts->spin_us = 50;
	opts->log_level = RDMIG_LOG_INFO;
}

#include "log.h"
#include "opts.h"

/* The largest inline request we pass to a provider (mlx4's ceiling). */
#define RDMIG_INLINE_REQUEST_MAX 1024

int rdmig__opts_copy(struct rdmig_opts *dst, const struct rdmig_opts *src, char *errmsg)
{
	struct rdmig_opts defaults;

	rdmig_opts_init(&defaults);
	if (!src) {
		*dst = defaults;
		return 0;
	}
	if (src->size != sizeof(*src))
		return rdmig__fail(&defaults, errmsg, RDMIG_EINVAL,
				   "options size %zu, expected %zu: call rdmig_opts_init first",
				   src->size, sizeof(*src));
	if (src->inline_request < RDMIG_INLINE_AUTO ||
	    src->inline_request > RDMIG_INLINE_REQUEST_MAX)
		return rdmig__fail(&defaults, errmsg, RDMIG_EINVAL,
				   "inline request %d out of range (auto, or 0..%d bytes)",
				   src->inline_request, RDMIG_INLINE_REQUEST_MAX);
	if (src->max_send_wr < 2 || src->max_send_wr > 16384)
		return rdmig__fail(&defaults, errmsg, RDMIG_EINVAL,
				   "max_send_wr %u out of range (2..16384)", src->max_send_wr);
	if (src->spin_us < 0 || src->spin_us > 1000000)
		return rdmig__fail(&defaults, errmsg, RDMIG_EINVAL,
				   "spin_us %d out of range (0..1000000)", src->spin_us);
	if (src->backlog < 1)
		return rdmig__fail(&defaults, errmsg, RDMIG_EINVAL, "backlog %d must be >= 1",
				   src->backlog);
	*dst = *src;
	return 0;
}
