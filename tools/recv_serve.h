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
#include "source_admission.h"

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
	int ret;
	char msg[1600];    /* the message of its failure */
	bool done;         /* its thread ended: the main thread joins it */
};

/* A source that ended, as `rdmig status` lists the last few. */
struct serve_ended {
	unsigned seq;
	char peer[64];
	char dir[300];
	bool ok;
	uint64_t bytes;
	double seconds;
	char msg[256];
};
#define SERVE_ENDED_KEPT 8

struct serve {
	struct recv_args a;
	bool verify_off;
	/* --max-sources and --serve-max-*, as given (0: the default) */
	struct source_limits given;
	/* what the sources may hold together, and hold: made once --out is
	 * open, destroyed after the last connection; its own lock */
	struct source_admission *adm;
	struct rdmig_listener *l; /* NULL once draining */
	uint16_t port;
	int wake[2];        /* a source's thread ended */
	pthread_mutex_t lock; /* everything below, and all printing */
	struct source *sources;
	unsigned running, seq;
	uint64_t peak_pinned, peak_rss;
	unsigned ok, failed, rejected;
	unsigned peak_running;
	double t_start;     /* rdmig_monotonic_seconds() at listen */
	const char *status_path; /* --status: the status socket, or NULL */
	int status_fd;      /* its listening socket, or -1 */
	struct serve_ended ended[SERVE_ENDED_KEPT]; /* a ring: the last that ended */
	unsigned nended;    /* ever */
};

struct json_object;
/* cli_recv_serve_report.c: the head of each JSON line of recv --serve
 * (schema, command, mode, this event, the version) */
void serve_json_head(struct json_object *o, const char *event);
/* the server's address, directory, outcomes so far and limits, which its
 * summary and its status both carry */
void serve_json_server(struct json_object *o, const struct serve *sv);
/* cli_recv_serve_report.c; called with sv->lock held */
void sample_memory(struct serve *sv);
void failure_text(struct source *src, char *msg, size_t len);
void report_source(struct source *src);
int print_summary(struct serve *sv, int status);
/* Keep src among the last that ended (sv->lock held). */
void remember_ended(struct source *src);

/* serve_status.c: the status socket (--status PATH) and sd_notify */
/* Listen on sv->status_path (a UNIX stream socket, mode 0600; a stale one
 * is replaced, a live one refused); 0, or -1 with a message in err. */
int status_open(struct serve *sv, char *err, size_t errlen);
/* Answer every client waiting on sv->status_fd: one JSON object each. */
void status_answer(struct serve *sv);
void status_close(struct serve *sv);
/* Tell systemd (NOTIFY_SOCKET) how the server stands: READY=1 once,
 * then STATUS= lines; STOPPING=1 when draining.  Nothing without it. */
void serve_notify(struct serve *sv, const char *state);

/* serve_options.c: parse recv --serve's command line into sv (its
 * defaults first); 1 after --help, a usage error's status, or 0. */
int serve_parse_args(int argc, char **argv, struct serve *sv);

#endif
