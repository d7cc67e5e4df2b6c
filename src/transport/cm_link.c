/* SPDX-License-Identifier: BSD-2-Clause */
/* cm_link.c - a connection's rdma_cm side (cm_link.h), its one owner. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <rdma/rdma_cma.h>
#include "cm_event.h"
#include "cm_link.h"

struct rdmig_cm_link {
	struct rdma_event_channel *ec; /* this connection's own channel */
	struct rdma_cm_id *id;
	bool established;
	bool ended; /* DISCONNECTED (or worse) seen, or a flushed completion */
	char end_reason[128];
};

struct rdmig_cm_link *rdmig__cml_create(void)
{
	return calloc(1, sizeof(struct rdmig_cm_link));
}

void rdmig__cml_destroy(struct rdmig_cm_link *l)
{
	if (!l)
		return;
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ec)
		rdma_destroy_event_channel(l->ec);
	free(l);
}

int rdmig__cml_open_channel(struct rdmig_cm_link *l)
{
	l->ec = rdmig__cm_channel_create();
	return l->ec ? 0 : (errno ? errno : ENOMEM);
}

struct rdma_event_channel *rdmig__cml_channel(const struct rdmig_cm_link *l)
{
	return l->ec;
}

int rdmig__cml_channel_fd(const struct rdmig_cm_link *l)
{
	return l->ec ? l->ec->fd : -1;
}

void rdmig__cml_set_id(struct rdmig_cm_link *l, struct rdma_cm_id *id)
{
	l->id = id;
}

struct rdma_cm_id *rdmig__cml_id(const struct rdmig_cm_link *l)
{
	return l->id;
}

struct ibv_qp *rdmig__cml_qp(const struct rdmig_cm_link *l)
{
	return l->id ? l->id->qp : NULL;
}

const char *rdmig__cml_device(const struct rdmig_cm_link *l)
{
	return l->id && l->id->verbs ? ibv_get_device_name(l->id->verbs->device) : "";
}

void rdmig__cml_establish(struct rdmig_cm_link *l)
{
	l->established = true;
}

bool rdmig__cml_established(const struct rdmig_cm_link *l)
{
	return l->established;
}

void rdmig__cml_end(struct rdmig_cm_link *l, const char *fmt, ...)
{
	va_list ap;

	if (l->ended)
		return;
	va_start(ap, fmt);
	vsnprintf(l->end_reason, sizeof(l->end_reason), fmt, ap);
	va_end(ap);
	l->ended = true;
}

bool rdmig__cml_ended(const struct rdmig_cm_link *l)
{
	return l->ended;
}

const char *rdmig__cml_end_reason(const struct rdmig_cm_link *l)
{
	return l->end_reason;
}

bool rdmig__cml_live(const struct rdmig_cm_link *l)
{
	return l->id && l->established && !l->ended;
}

const char *rdmig__cml_qp_error_hint(const struct rdmig_cm_link *l, int err)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_qp *qp = rdmig__cml_qp(l);

	if (err == ENOTCONN ||
	    (qp && ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) == 0 && attr.qp_state == IBV_QPS_ERR))
		return " (the connection is in error: the peer went away or a transfer failed)";
	return "";
}
