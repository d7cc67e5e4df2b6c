/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * recv_serve.h - the state of `rdmig recv --serve` (cli_recv_serve.c) that
 * its report (cli_recv_serve_report.c: a JSON line or a human line per
 * source, the summary, the memory sampled for it) reads.
 */
#ifndef RDMIG_RECV_SERVE_H
#define RDMIG_RECV_SERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "recv_files.h"

/* One source, from its accept to its thread's end. */
struct source {
	struct serve *sv;
	struct source *next;
	pthread_t thread;
	unsigned seq;
	char peer[64];     /* its address, as the filter saw it */
	char dir[300];     /* its directory's name in --out */
	char path[4400];   /* --out/dir */
	struct recv_state s;
	struct recv_serve_hooks hooks;
	uint64_t mem, pins, files; /* what it reserved at its header */
	int ret;
	char msg[1600];    /* the message of its failure */
	bool done;         /* its thread ended: the main thread joins it */
};

struct serve {
	struct recv_args a;
	bool verify_off;
	unsigned max_sources;
	/* across running sources (UINT64_MAX: none) */
	uint64_t max_total, max_pinned, max_files;
	bool max_total_given, max_pinned_given, max_files_given;
	struct rdmig_listener *l; /* NULL once draining */
	uint16_t port;
	int wake[2];        /* a source's thread ended */
	pthread_mutex_t lock; /* everything below, and all printing */
	struct source *sources;
	unsigned running, seq;
	uint64_t mem_reserved, pins_reserved, files_reserved;
	uint64_t peak_mem_reserved, peak_pins_reserved, peak_files_reserved, peak_pinned, peak_rss;
	unsigned ok, failed, rejected;
	unsigned peak_running;
};

/* cli_recv_serve_report.c; called with sv->lock held */
void sample_memory(struct serve *sv);
void failure_text(struct source *src, char *msg, size_t len);
void report_source(struct source *src);
int print_summary(struct serve *sv, int status);

#endif
