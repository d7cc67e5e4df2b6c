/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * conn_engine.c - the connection's small answers to the engines' seam
 * (conn_engine.h): its protection domain, capabilities, cancel flag,
 * state and counts.
 */
#include "conn.h"
#include "conn_engine.h"

struct ibv_pd *rdmig__conn_pd(const struct rdmig_conn *c)
{
	return rdmig__vres_pd(c->res);
}

const struct rdmig_caps *rdmig__conn_caps(const struct rdmig_conn *c)
{
	return &c->caps;
}

const atomic_bool *rdmig__conn_cancel_flag(const struct rdmig_conn *c)
{
	return &c->cancelled;
}

bool rdmig__conn_established(const struct rdmig_conn *c)
{
	return rdmig__cml_established(c->cm);
}

uint64_t rdmig__conn_writes_signaled(const struct rdmig_conn *c)
{
	return c->writes_signaled;
}
