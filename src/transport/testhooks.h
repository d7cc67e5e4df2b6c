/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * testhooks.h - what the tests may do that the public API does not offer.
 * Not installed; the symbols are hidden in librdmig.so and prefixed
 * rdmig__ in librdmig.a.
 */
#ifndef RDMIG_TESTHOOKS_H
#define RDMIG_TESTHOOKS_H

#include <stdint.h>

struct rdmig_conn;

/* The capability version rdmig_connect sends (1 unless a test lies). */
void rdmig__conn_set_cap_version(struct rdmig_conn *c, uint32_t version);

/* The next count inline posts of c return ret (a positive errno, or a
 * negative one as cxgb4 returns) instead of reaching the provider, as a
 * provider that refuses an inline send would.  count 0 ends it. */
void rdmig__conn_refuse_inline(struct rdmig_conn *c, int ret, uint32_t count);
/* Inline posts refused so far, and the inline size left after them. */
uint32_t rdmig__conn_inline_refusals(const struct rdmig_conn *c);
uint32_t rdmig__conn_inline_max(const struct rdmig_conn *c);

#endif
