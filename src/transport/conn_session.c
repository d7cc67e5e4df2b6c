/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * conn_session.c - the connection's small answers to the sessions over it
 * (conn_session.h): its options, whether it was cancelled, its error
 * buffer.
 */
#include "conn.h"
#include "conn_session.h"

const struct rdmig_opts *rdmig__conn_opts(const struct rdmig_conn *c)
{
	return &c->opts;
}

bool rdmig__conn_cancelled(const struct rdmig_conn *c)
{
	return conn_cancelled(c);
}

char *rdmig__conn_errbuf(struct rdmig_conn *c)
{
	return c->errmsg;
}
