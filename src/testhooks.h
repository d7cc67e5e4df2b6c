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

#endif
