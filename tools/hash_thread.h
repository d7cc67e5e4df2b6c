/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hash_thread.h - SHA-256 of a list of memory regions on a thread of its
 * own, so that `rdmig send` hashes while it migrates instead of between
 * its writes (with SHA-256 in line the tool took 1.5-2x the engine's time).
 *
 *   struct hash_region r[] = {{p0, len0}, {p1, len1}};
 *   struct hash_thread *t;
 *   hash_thread_start(r, 2, &t);       (r must outlive the thread)
 *   ...
 *   hash_thread_finish(t, false);      (waits; r[i].digest are set)
 *
 * The thread blocks SIGINT and SIGTERM: the caller's thread takes them.
 */
#ifndef RDMIG_HASH_THREAD_H
#define RDMIG_HASH_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sha256.h"

struct hash_region {
	const uint8_t *p;
	uint64_t len;
	uint8_t digest[SHA256_DIGEST_SIZE];
};

struct hash_thread;

/* 0, or -1 with errno (the thread could not be started). */
int hash_thread_start(struct hash_region *regions, size_t n, struct hash_thread **out);

/* Whether the thread has finished (or stopped): finishing it will not wait. */
bool hash_thread_done(struct hash_thread *t);

/* Wait for the thread (told to stop at its next 1 MiB when STOP) and free
 * it; the seconds it spent hashing.  NULL: 0. */
double hash_thread_finish(struct hash_thread *t, bool stop);

#endif
