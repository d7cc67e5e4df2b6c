/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_landed.h - the progress line of `rdmig recv` while the source
 * writes.  RDMA writes are invisible to the destination and
 * rdmig_dest_next blocks, so a thread estimates what has landed from the
 * blocks' resident pages (the destination pins a chunk just before the
 * source writes it).  It only reads our own mappings.
 */
#ifndef RDMIG_RECV_LANDED_H
#define RDMIG_RECV_LANDED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "cli.h"

struct landed_watch {
	pthread_t thread;
	int running;
	atomic_int stop;
	const struct rdmig_block *blocks; /* the caller's, while the watch runs */
	uint32_t n;
	uint64_t total; /* bytes of all blocks: the end of the line */
	struct mig_progress prog;
};

/* Start the estimate of the n blocks, unless stderr is no terminal or the
 * connection pins everything up front (then all is resident at once and
 * there is nothing to estimate).  w must be zeroed before the first use. */
void landed_watch_start(struct landed_watch *w, const struct rdmig_conn *conn,
			const struct rdmig_block *blocks, uint32_t n, uint64_t total);
/* Stop the thread (if it runs) and erase the line; may be called again. */
void landed_watch_stop(struct landed_watch *w);

#endif
