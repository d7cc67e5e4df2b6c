/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * admission.c - what the connections of one server may hold together: slots
 * (a connection from its request to its destroy) and reservations (memory,
 * pinned memory, files), under one mutex, since each connection may run on
 * a thread of its own.  The listener takes the slots (listen.c); a
 * connection reserves what its source asks for and gives both back when it
 * is destroyed (connect.c).  The library only counts: what a source costs
 * is for the caller to say (rdmig_images_dest_copy_bytes and the blocks'
 * bytes, what it may pin, the files it will make).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "admission.h"

struct rdmig_admission {
	pthread_mutex_t lock;
	struct rdmig_admission_limits lim;
	struct rdmig_admission_usage use;
};

/* What part of a caller's struct of this version it may be given: the
 * caller's size says which fields it has (the size pattern of
 * rdmig_opts). */
static bool sized(size_t given, size_t ours)
{
	return given >= sizeof(size_t) && given <= ours;
}

int rdmig_admission_create(const struct rdmig_admission_limits *limits,
			   struct rdmig_admission **out)
{
	struct rdmig_admission *a;

	if (!out)
		return RDMIG_EINVAL;
	*out = NULL;
	/* the size must reach past slots, the one limit without a default */
	if (!limits || !sized(limits->size, sizeof(*limits)) ||
	    limits->size < offsetof(struct rdmig_admission_limits, bytes) || limits->slots == 0)
		return RDMIG_EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return RDMIG_ENOMEM;
	a->lim.bytes = a->lim.pinned = a->lim.files = UINT64_MAX;
	memcpy(&a->lim, limits, limits->size);
	a->lim.size = sizeof(a->lim);
	a->use.size = sizeof(a->use);
	pthread_mutex_init(&a->lock, NULL);
	*out = a;
	return 0;
}

void rdmig_admission_destroy(struct rdmig_admission *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void rdmig_admission_usage(struct rdmig_admission *a, struct rdmig_admission_usage *u)
{
	size_t n;

	if (!a || !u || !sized(u->size, sizeof(*u)))
		return;
	n = u->size;
	pthread_mutex_lock(&a->lock);
	memcpy(u, &a->use, n);
	pthread_mutex_unlock(&a->lock);
	u->size = n;
}

bool rdmig__admission_take_slot(struct rdmig_admission *a)
{
	bool got;

	pthread_mutex_lock(&a->lock);
	got = a->use.slots < a->lim.slots;
	if (got && ++a->use.slots > a->use.peak_slots)
		a->use.peak_slots = a->use.slots;
	if (!got)
		a->use.busy++;
	pthread_mutex_unlock(&a->lock);
	return got;
}

unsigned rdmig__admission_slots(const struct rdmig_admission *a)
{
	return a->lim.slots; /* set once, at create */
}

void rdmig__admission_give_slot(struct rdmig_admission *a)
{
	pthread_mutex_lock(&a->lock);
	if (a->use.slots)
		a->use.slots--;
	pthread_mutex_unlock(&a->lock);
}

static uint64_t left(uint64_t limit, uint64_t used)
{
	return limit == UINT64_MAX ? UINT64_MAX : limit > used ? limit - used : 0;
}

static void raise_peak(uint64_t *peak, uint64_t now)
{
	if (now > *peak)
		*peak = now;
}

/* Does ask fit in what is left (a->lock held)?  0, or RDMIG_EAGAIN with
 * which limit says no in why. */
static int fits(const struct rdmig_admission *a, const struct rdmig_admission_ask *ask,
		char *why, size_t whylen)
{
	static const char *const names[] = {"memory", "pinned memory", "files"};
	const uint64_t want[] = {ask->bytes, ask->pinned, ask->files};
	const uint64_t limit[] = {a->lim.bytes, a->lim.pinned, a->lim.files};
	const uint64_t used[] = {a->use.bytes, a->use.pinned, a->use.files};

	for (int i = 0; i < 3; i++) {
		uint64_t room = left(limit[i], used[i]);

		if (want[i] <= room)
			continue;
		if (why && whylen)
			snprintf(why, whylen, "%s: %llu asked, %llu left of %llu", names[i],
				 (unsigned long long)want[i], (unsigned long long)room,
				 (unsigned long long)limit[i]);
		return RDMIG_EAGAIN;
	}
	return 0;
}

int rdmig__admission_reserve(struct rdmig_admission_hold *h, const struct rdmig_admission_ask *ask,
			     char *why, size_t whylen)
{
	struct rdmig_admission_ask one = {0};
	struct rdmig_admission *a;
	int ret;

	if (why && whylen)
		why[0] = '\0';
	if (!h || !ask || !sized(ask->size, sizeof(*ask)))
		return RDMIG_EINVAL;
	if (!(a = h->adm)) {
		if (why && whylen)
			snprintf(why, whylen, "the connection has no admission");
		return RDMIG_ESTATE;
	}
	memcpy(&one, ask, ask->size);
	pthread_mutex_lock(&a->lock);
	ret = fits(a, &one, why, whylen);
	if (!ret) {
		a->use.bytes += one.bytes;
		a->use.pinned += one.pinned;
		a->use.files += one.files;
		raise_peak(&a->use.peak_bytes, a->use.bytes);
		raise_peak(&a->use.peak_pinned, a->use.pinned);
		raise_peak(&a->use.peak_files, a->use.files);
		h->held.bytes += one.bytes;
		h->held.pinned += one.pinned;
		h->held.files += one.files;
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

void rdmig__admission_hold_slot(struct rdmig_admission_hold *h, struct rdmig_admission *a)
{
	h->adm = a;
}

void rdmig__admission_leave(struct rdmig_admission_hold *h)
{
	struct rdmig_admission *a = h->adm;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->use.bytes -= h->held.bytes;
	a->use.pinned -= h->held.pinned;
	a->use.files -= h->held.files;
	if (a->use.slots)
		a->use.slots--;
	pthread_mutex_unlock(&a->lock);
	memset(&h->held, 0, sizeof(h->held));
	h->adm = NULL;
}
