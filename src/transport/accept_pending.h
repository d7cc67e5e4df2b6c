/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * accept_pending.h - the handshakes a listener has in flight: connection
 * requests it accepted (rdma_accept went out) whose ESTABLISHED has not
 * come yet.
 *
 * Each waits on the listener's own event channel, so a single fd drives
 * them all: the listener takes whatever event is queued, and a handshake
 * moves on when its event comes (ESTABLISHED: handed out; a sign that the
 * requester went away: dropped), never by a wait for it.  A handshake that
 * hears nothing is dropped at its deadline.  The table is small and
 * bounded: when it is full, the oldest handshake is dropped for the new
 * request, so requesters that vanish cannot keep a later real source out
 * for longer than they keep sending requests.
 *
 * Pure bookkeeping over opaque entries and caller-given times, so that
 * unit_accept_pending tests it without a device.
 */
#ifndef RDMIG_ACCEPT_PENDING_H
#define RDMIG_ACCEPT_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <rdma/rdma_cma.h>

/* Handshakes in flight per listener. */
#define ACCEPT_PENDING_MAX 8

struct accept_pending {
	const void *key[ACCEPT_PENDING_MAX]; /* what the events name (the cm_id) */
	void *entry[ACCEPT_PENDING_MAX];     /* the caller's (the connection) */
	long long deadline_ms[ACCEPT_PENDING_MAX];
	int n;                               /* oldest first */
};

/* What an event on a handshake's cm_id means for it. */
enum pending_verdict {
	PENDING_IGNORE,      /* nothing (e.g. a late address change) */
	PENDING_ESTABLISHED, /* the connection is up: hand it out */
	PENDING_GONE,        /* the requester went away, or the device did */
};

static inline enum pending_verdict accept_pending_verdict(enum rdma_cm_event_type ev)
{
	switch (ev) {
	case RDMA_CM_EVENT_ESTABLISHED:
		return PENDING_ESTABLISHED;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return PENDING_GONE;
	default:
		return PENDING_IGNORE;
	}
}

/* The index of key's handshake, or -1. */
static inline int accept_pending_find(const struct accept_pending *p, const void *key)
{
	for (int i = 0; i < p->n; i++)
		if (p->key[i] == key)
			return i;
	return -1;
}

/* Take handshake i out of the table: its entry. */
static inline void *accept_pending_take(struct accept_pending *p, int i)
{
	void *entry = p->entry[i];

	for (int j = i + 1; j < p->n; j++) {
		p->key[j - 1] = p->key[j];
		p->entry[j - 1] = p->entry[j];
		p->deadline_ms[j - 1] = p->deadline_ms[j];
	}
	p->n--;
	return entry;
}

/* Add a handshake; when the table is full the oldest makes room, and its
 * entry is returned for the caller to drop (else NULL). */
static inline void *accept_pending_add(struct accept_pending *p, const void *key, void *entry,
				       long long deadline_ms)
{
	void *evicted = p->n == ACCEPT_PENDING_MAX ? accept_pending_take(p, 0) : NULL;

	p->key[p->n] = key;
	p->entry[p->n] = entry;
	p->deadline_ms[p->n] = deadline_ms;
	p->n++;
	return evicted;
}

/* One handshake whose deadline passed at now_ms, taken out; NULL if none. */
static inline void *accept_pending_expired(struct accept_pending *p, long long now_ms)
{
	for (int i = 0; i < p->n; i++)
		if (p->deadline_ms[i] <= now_ms)
			return accept_pending_take(p, i);
	return NULL;
}

/* The earliest deadline of the handshakes in flight; 0 when none. */
static inline long long accept_pending_next_deadline(const struct accept_pending *p)
{
	long long next = 0;

	for (int i = 0; i < p->n; i++)
		if (!next || p->deadline_ms[i] < next)
			next = p->deadline_ms[i];
	return next;
}

#endif
