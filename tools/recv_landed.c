/* SPDX-License-Identifier: BSD-2-Clause */
/* recv_landed.c - recv's estimate of what has landed (recv_landed.h). */
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "recv_landed.h"

/* Bytes of the blocks' pages that are resident, by mincore(2). */
static uint64_t resident_bytes(const struct landed_watch *w)
{
	static unsigned char vec[4096];
	uint64_t bytes = 0;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t window = sizeof(vec) * (uint64_t)page; /* what one vec covers */

	for (uint32_t b = 0; b < w->n; b++) {
		uint8_t *mem = w->blocks[b].host;
		uint64_t len = w->blocks[b].length;

		for (uint64_t off = 0; off < len; off += window) {
			uint64_t n = len - off < window ? len - off : window;
			size_t pages = (size_t)((n + (uint64_t)page - 1) / (uint64_t)page);
			if (mincore(mem + off, (size_t)n, vec))
				return bytes;
			for (size_t i = 0; i < pages; i++)
				bytes += (vec[i] & 1) ? (uint64_t)page : 0;
		}
	}
	return bytes > w->total ? w->total : bytes;
}

static void *watch_main(void *arg)
{
	struct landed_watch *w = arg;

	while (!atomic_load(&w->stop)) {
		struct timespec ts = {0, 200 * 1000 * 1000};
		mig_progress(&w->prog, resident_bytes(w));
		nanosleep(&ts, NULL);
	}
	return NULL;
}

void landed_watch_start(struct landed_watch *w, const struct rdmig_conn *conn,
			const struct rdmig_block *blocks, uint32_t n, uint64_t total)
{
	struct rdmig_caps caps;
	sigset_t saved;

	/* with PIN_ALL everything is resident at once: nothing to estimate */
	rdmig_conn_caps(conn, &caps);
	if (!isatty(STDERR_FILENO) || (caps.flags & RDMIG_CAP_PIN_ALL))
		return;
	w->blocks = blocks;
	w->n = n;
	w->total = total;
	atomic_store(&w->stop, 0);
	mig_progress_start(&w->prog, "recv (~landed)", total);
	/* the thread starts with SIGINT/SIGTERM blocked: they must interrupt
	 * the main thread's waits, not this one's sleep */
	cli_cancel_mask(SIG_BLOCK, &saved);
	w->running = pthread_create(&w->thread, NULL, watch_main, w) == 0;
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

void landed_watch_stop(struct landed_watch *w)
{
	if (!w->running)
		return;
	atomic_store(&w->stop, 1);
	pthread_join(w->thread, NULL);
	w->running = 0;
	mig_progress_end(&w->prog);
}
