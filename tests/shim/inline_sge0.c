/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * inline_sge0.c - an LD_PRELOAD shim (tests only) that makes rxe and siw
 * behave like irdma before rdma-core v44: of an inline send with several
 * SGEs only sg_list[0] is sent, and the post succeeds.
 *
 * ibv_post_send is a static inline function that calls
 * qp->context->ops.post_send, so wrapping the symbol would see nothing.
 * Instead the shim wraps the QP constructors an application calls through
 * the dynamic linker (rdma_create_qp, rdma_create_qp_ex, ibv_create_qp),
 * and after a successful creation replaces ops.post_send of the QP's
 * context with its own function, remembering the provider's.  Every QP of
 * that context then posts through the shim.
 *
 *   LD_PRELOAD=.../libinline_sge0.so rdmig send ...      (or QEMU)
 *   INLINE_SGE0_REPORT=FILE   append "inline_sends=N cut=M" at exit (a
 *                             process that made a QP), so that a test can
 *                             tell the shim was active (N > 0) and whether
 *                             it cut anything (M).
 *
 * An ASan-built program wants its runtime first: run it with
 * ASAN_OPTIONS=verify_asan_link_order=0 under this shim.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

typedef int (*post_send_fn)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);

/* One entry per context whose post_send was replaced (a process has one
 * context per device it uses: a handful at most). */
#define MAX_CONTEXTS 32
static struct {
	struct ibv_context *ctx;
	post_send_fn real;
} patched[MAX_CONTEXTS];
static atomic_int n_patched;
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;

static atomic_ulong inline_sends, cut_sends;

static post_send_fn real_post_send(const struct ibv_context *ctx)
{
	int n = atomic_load(&n_patched);

	for (int i = 0; i < n; i++)
		if (patched[i].ctx == ctx)
			return patched[i].real;
	return NULL;
}

/* What the broken provider does: each WR is posted on its own (RC keeps
 * their order), an inline one with its first SGE only. */
static int shim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	post_send_fn real = real_post_send(qp->context);

	if (!real) /* cannot happen: only patched contexts lead here */
		abort();
	for (; wr; wr = wr->next) {
		struct ibv_send_wr one = *wr;
		int ret;

		one.next = NULL;
		if (one.send_flags & IBV_SEND_INLINE) {
			atomic_fetch_add(&inline_sends, 1);
			if (one.num_sge > 1) {
				one.num_sge = 1;
				atomic_fetch_add(&cut_sends, 1);
			}
		}
		ret = real(qp, &one, bad);
		if (ret) {
			*bad = wr;
			return ret;
		}
	}
	return 0;
}

static void patch_context(struct ibv_context *ctx)
{
	pthread_mutex_lock(&patch_lock);
	if (ctx->ops.post_send != shim_post_send && atomic_load(&n_patched) < MAX_CONTEXTS) {
		int n = atomic_load(&n_patched);

		patched[n].ctx = ctx;
		patched[n].real = ctx->ops.post_send;
		atomic_store(&n_patched, n + 1); /* the entry first, then the count */
		ctx->ops.post_send = shim_post_send;
	}
	pthread_mutex_unlock(&patch_lock);
}

static void *next_symbol(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		fprintf(stderr, "inline_sge0: no %s to wrap\n", name);
		abort();
	}
	return f;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	static struct ibv_qp *(*real)(struct ibv_pd *, struct ibv_qp_init_attr *);
	struct ibv_qp *qp;

	if (!real)
		real = (struct ibv_qp * (*)(struct ibv_pd *, struct ibv_qp_init_attr *))
			next_symbol("ibv_create_qp");
	qp = real(pd, attr);
	if (qp)
		patch_context(qp->context);
	return qp;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	static int (*real)(struct rdma_cm_id *, struct ibv_pd *, struct ibv_qp_init_attr *);
	int ret;

	if (!real)
		real = (int (*)(struct rdma_cm_id *, struct ibv_pd *, struct ibv_qp_init_attr *))
			next_symbol("rdma_create_qp");
	ret = real(id, pd, attr);
	if (!ret && id->qp)
		patch_context(id->qp->context);
	return ret;
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	static int (*real)(struct rdma_cm_id *, struct ibv_qp_init_attr_ex *);
	int ret;

	if (!real)
		real = (int (*)(struct rdma_cm_id *, struct ibv_qp_init_attr_ex *))
			next_symbol("rdma_create_qp_ex");
	ret = real(id, attr);
	if (!ret && id->qp)
		patch_context(id->qp->context);
	return ret;
}

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("INLINE_SGE0_REPORT");
	FILE *f;

	/* only processes that made a QP: timeout(1) and the like load the
	 * shim too */
	if (!path || !*path || !atomic_load(&n_patched))
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "inline_sends=%lu cut=%lu\n", atomic_load(&inline_sends), atomic_load(&cut_sends));
	fclose(f);
}
