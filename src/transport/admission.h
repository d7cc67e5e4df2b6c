/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * admission.h - what a connection holds of a listener's admission
 * (admission.c, rdmig_admission_create(3)): the slot it took at its
 * request, from then to its destroy, and what it reserved since
 * (rdmig_conn_reserve).  admission.c alone edits it; the connection only
 * carries it.
 */
#ifndef RDMIG_ADMISSION_H
#define RDMIG_ADMISSION_H
#include <stdbool.h>
#include "rdmig.h"

struct rdmig_admission_hold {
	struct rdmig_admission *adm; /* NULL: a connection without one */
	struct rdmig_admission_ask held;
};

/* rdmig_conn_reserve (connect.c: the connection's entry point) on the
 * connection's hold h (NULL: RDMIG_EINVAL). */
int rdmig__admission_reserve(struct rdmig_admission_hold *h, const struct rdmig_admission_ask *ask,
			     char *why, size_t whylen);
/* A connection admitted under a's slot holds it from here. */
void rdmig__admission_hold_slot(struct rdmig_admission_hold *h, struct rdmig_admission *a);
/* Give back what the hold has (its slot, its reservation); on the
 * connection's destroy. */
void rdmig__admission_leave(struct rdmig_admission_hold *h);
/* Take a slot of a (true), or count a busy request (false). */
bool rdmig__admission_take_slot(struct rdmig_admission *a);
void rdmig__admission_give_slot(struct rdmig_admission *a);
unsigned rdmig__admission_slots(const struct rdmig_admission *a);

#endif
