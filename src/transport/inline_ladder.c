/* SPDX-License-Identifier: BSD-2-Clause */
/* inline_ladder.c - create the real QP, retrying with smaller inline requests. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "inline_ladder.h"
#include "log.h"

/* Rungs of the auto ladder, and the floor of an explicit request. */
static const uint32_t auto_rungs[] = {RDMIG_INLINE_WANTED, 32, RDMIG_HEADER_SIZE, 0};
#define AUTO_RUNGS (sizeof(auto_rungs) / sizeof(auto_rungs[0]))

struct ladder {
	const struct ibv_qp_init_attr *base;
	const struct ladder_ops *ops;
	const struct rdmig_opts *log_opts;
	struct ladder_result *res;
	bool have_qp;
	uint32_t qp_request; /* request of the live QP */
	uint32_t qp_written; /* what its create wrote back */
};

int rdmig__inline_ladder_errno_is_inline(int err)
{
	/* EINVAL: mlx5, rxe, siw, irdma...; ENOMEM: a WQE that no longer fits. */
	return err == EINVAL || err == ENOMEM || err == EOPNOTSUPP;
}

/*
 * What providers return for an inline send they will not take: EINVAL
 * (rxe, siw, erdma, cxgb4 as -EINVAL: too long, or inline unsupported),
 * ENOMEM (mlx5: the WQE would not fit; the caller only posts with room in
 * the queue, so not a full one), EMSGSIZE, E2BIG, EOPNOTSUPP.  Anything
 * else (EIO, ENOTCONN, EFAULT...) is not about inline and stays an error.
 * A QP in the error state also answers EINVAL on some providers: then the
 * copied post fails too, and that failure is reported.
 */
int rdmig__inline_post_refused(int err)
{
	switch (err) {
	case EINVAL:
	case ENOMEM:
	case EMSGSIZE:
	case E2BIG:
	case EOPNOTSUPP:
		return 1;
	default:
		return 0;
	}
}

/* One creation attempt.  Attributes are rebuilt from base every time
 * because rdma_create_qp writes them back even when it fails. */
static int ladder_try(struct ladder *l, uint32_t request)
{
	struct ibv_qp_init_attr attr = *l->base;
	int err;

	if (l->have_qp) {
		l->ops->destroy(l->ops->ctx);
		l->have_qp = false;
	}
	attr.cap.max_inline_data = request;
	l->res->asked = attr.cap;
	l->res->info.tries++;
	err = l->ops->create(l->ops->ctx, &attr);
	rdmig__log(l->log_opts, RDMIG_LOG_DEBUG,
		   "inline ladder try %u: max_inline_data=%u max_send_wr=%u max_send_sge=%u -> %s, "
		   "written back %u",
		   l->res->info.tries, request, l->base->cap.max_send_wr, l->base->cap.max_send_sge,
		   err ? strerror(err) : "ok", attr.cap.max_inline_data);
	if (err) {
		l->res->last_errno = err;
		return err;
	}
	l->have_qp = true;
	l->qp_request = request;
	l->qp_written = attr.cap.max_inline_data;
	return 0;
}

/* Walk rungs in order until one succeeds.  *failed_above is the smallest
 * request known to fail (unchanged if none did). */
static int ladder_walk(struct ladder *l, const uint32_t *rungs, size_t n, uint32_t *failed_above)
{
	for (size_t i = 0; i < n; i++) {
		int err;

		if (rungs[i] >= *failed_above)
			continue;
		err = ladder_try(l, rungs[i]);
		if (!err)
			return 0;
		if (!rdmig__inline_ladder_errno_is_inline(err))
			return err;
		*failed_above = rungs[i];
	}
	return l->res->last_errno ? l->res->last_errno : EINVAL;
}

/* Find the largest request in (lo, hi) that works; lo works, hi fails. */
static int ladder_bisect(struct ladder *l, uint32_t lo, uint32_t hi)
{
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		int err = ladder_try(l, mid);

		if (!err)
			lo = mid;
		else if (rdmig__inline_ladder_errno_is_inline(err))
			hi = mid;
		else
			return err;
	}
	if (!l->have_qp || l->qp_request != lo)
		return ladder_try(l, lo);
	return 0;
}

/* Explicit N: N, N/2, N/4... down to the auto rungs, then bisect. */
static int ladder_explicit(struct ladder *l, uint32_t request)
{
	uint32_t rungs[32 + AUTO_RUNGS];
	size_t n = 0;
	uint32_t failed_above = UINT32_MAX;
	int err;

	for (uint32_t r = request; r > RDMIG_INLINE_WANTED && n < 32; r /= 2)
		rungs[n++] = r;
	for (size_t i = 0; i < AUTO_RUNGS; i++)
		if (auto_rungs[i] <= request)
			rungs[n++] = auto_rungs[i];
	err = ladder_walk(l, rungs, n, &failed_above);
	if (err)
		return err;
	/* Below a header nothing is useful: do not spend tries there. */
	if (failed_above == UINT32_MAX || l->qp_request < RDMIG_HEADER_SIZE)
		return 0;
	return ladder_bisect(l, l->qp_request, failed_above);
}

int rdmig__inline_ladder_run(int request, const struct ibv_qp_init_attr *base,
		      const struct ladder_ops *ops, const struct rdmig_opts *log_opts,
		      struct ladder_result *result)
{
	struct ladder l = {.base = base, .ops = ops, .log_opts = log_opts, .res = result};
	uint32_t failed_above = UINT32_MAX;
	int err;

	memset(result, 0, sizeof(*result));
	if (request == RDMIG_INLINE_AUTO) {
		result->info.asked = auto_rungs[0];
		err = ladder_walk(&l, auto_rungs, AUTO_RUNGS, &failed_above);
	} else {
		result->info.asked = (uint32_t)request;
		err = ladder_explicit(&l, (uint32_t)request);
	}
	if (err) {
		if (l.have_qp)
			ops->destroy(ops->ctx);
		result->last_errno = err;
		return rdmig__syserr(err);
	}
	result->info.written_back = l.qp_written;
	/* Trust neither direction: some providers over-report, some clamp. */
	result->info.granted = l.qp_written < l.qp_request ? l.qp_written : l.qp_request;
	return 0;
}
