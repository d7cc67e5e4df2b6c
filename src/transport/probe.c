/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * probe.c - what each RDMA device does with inline requests.
 *
 * For every device (or one), on its first port: the ladder with the caps a
 * real connection uses (rdmig__conn_qp_base_attr), then one plain creation per
 * request size, recording what the provider wrote back.  Uses plain verbs
 * QPs (no rdma_cm), which behave the same for creation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include "log.h"
#include "inline_ladder.h"
#include "qp_attr.h"
#include "opts.h"

static const uint32_t probe_sizes[RDMIG_PROBE_SIZES] = {0, 16, 32, 40, 64, 80, 128, 256, 512, 1024};

struct probe_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp; /* the ladder's live QP */
};

static int probe_create(void *arg, struct ibv_qp_init_attr *attr)
{
	struct probe_dev *d = arg;
	d->qp = ibv_create_qp(d->pd, attr);
	return d->qp ? 0 : (errno ? errno : EINVAL);
}

static void probe_destroy(void *arg)
{
	struct probe_dev *d = arg;
	if (d->qp)
		ibv_destroy_qp(d->qp);
	d->qp = NULL;
}

/*
 * Bytes of this process's mappings of the uverbs device: software
 * providers (rxe, siw) and most hardware ones map their queues from it, so
 * the difference across a QP creation is the size of that QP's queues.
 * 0 when /proc is not there.
 */
static uint64_t uverbs_mapped_bytes(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t total = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		if (strstr(line, "/dev/infiniband/uverbs") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			total += hi - lo;
	}
	fclose(f);
	return total;
}

static void probe_row(struct probe_dev *d, const struct ibv_qp_init_attr *base, uint32_t size,
		      struct rdmig_probe_row *row)
{
	struct ibv_qp_init_attr attr = *base;
	uint64_t before = uverbs_mapped_bytes();

	attr.cap.max_inline_data = size;
	row->requested = size;
	row->result = -probe_create(d, &attr); /* 0 or -errno, as every code */
	row->written_back = attr.cap.max_inline_data;
	row->send_sge_back = attr.cap.max_send_sge;
	row->queue_bytes = row->result ? 0 : uverbs_mapped_bytes() - before;
	if (!row->result)
		probe_destroy(d);
}

static void probe_close(struct probe_dev *d)
{
	probe_destroy(d);
	if (d->cq)
		ibv_destroy_cq(d->cq);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
}

static int probe_one(struct ibv_device *dev, const struct rdmig_opts *opts,
		     struct rdmig_probe_report *r, char *errbuf, size_t errlen)
{
	struct probe_dev d = {0};
	struct ibv_qp_init_attr base;
	struct ladder_ops ops = {probe_create, probe_destroy, &d};
	struct ladder_result res;

	snprintf(r->device, sizeof(r->device), "%s", ibv_get_device_name(dev));
	d.ctx = ibv_open_device(dev);
	if (d.ctx)
		d.pd = ibv_alloc_pd(d.ctx);
	if (d.pd)
		d.cq = ibv_create_cq(d.ctx, (int)opts->max_send_wr * 2, NULL, NULL, 0);
	if (!d.cq) {
		int err = errno;
		snprintf(errbuf, errlen, "%s: cannot open device, PD or CQ: %s", r->device,
			 strerror(err));
		probe_close(&d);
		return rdmig__syserr(err);
	}
	rdmig__conn_qp_base_attr(&base, opts->max_send_wr, d.cq, d.cq);
	r->max_send_wr = base.cap.max_send_wr;
	r->max_send_sge = base.cap.max_send_sge;
	r->ladder_result = rdmig__inline_ladder_run(opts->inline_request, &base, &ops, opts, &res);
	r->ladder = res.info;
	probe_destroy(&d);
	for (int i = 0; i < RDMIG_PROBE_SIZES; i++)
		probe_row(&d, &base, probe_sizes[i], &r->rows[i]);
	probe_close(&d);
	return 0;
}

int rdmig_probe(const char *device, const struct rdmig_opts *opts_in,
		struct rdmig_probe_report **out, size_t *count, char *errbuf, size_t errlen)
{
	char local[RDMIG_ERRMSG_SIZE];
	struct rdmig_opts opts;
	struct ibv_device **list;
	int n = 0, ret;

	if (!errbuf || !errlen) {
		errbuf = local;
		errlen = sizeof(local);
	}
	if (!out || !count) {
		snprintf(errbuf, errlen, "rdmig_probe needs out and count");
		return RDMIG_EINVAL;
	}
	*out = NULL;
	*count = 0;
	ret = rdmig__opts_copy(&opts, opts_in, local);
	if (ret) {
		snprintf(errbuf, errlen, "%s", local);
		return ret;
	}
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		snprintf(errbuf, errlen, "no RDMA device found%s", list ? "" : " (libibverbs failed)");
		if (list)
			ibv_free_device_list(list);
		return RDMIG_ENODEV;
	}
	*out = calloc((size_t)n, sizeof(**out));
	ret = *out ? 0 : RDMIG_ENOMEM;
	for (int i = 0; i < n && !ret; i++) {
		if (device && strcmp(device, ibv_get_device_name(list[i])))
			continue;
		ret = probe_one(list[i], &opts, &(*out)[*count], errbuf, errlen);
		if (!ret)
			(*count)++;
	}
	ibv_free_device_list(list);
	if (!ret && *count == 0) {
		snprintf(errbuf, errlen, "no RDMA device named %s", device ? device : "?");
		ret = RDMIG_ENODEV;
	}
	if (ret) {
		free(*out);
		*out = NULL;
		*count = 0;
	}
	return ret;
}

void rdmig_probe_free(struct rdmig_probe_report *reports)
{
	free(reports);
}
