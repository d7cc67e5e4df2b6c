/* SPDX-License-Identifier: BSD-2-Clause */
/* bench.h - what the parts of rdmig-bench share (the installed headers,
 * and rdmig/private.h for the library's clock and zero test). */
#ifndef RDMIG_BENCH_H
#define RDMIG_BENCH_H

#include <stddef.h>
#include <stdio.h>
#include <json-c/json.h>
#include <rdmig.h>
#include <rdmig/private.h>

/* The command line of every subcommand (unused fields keep defaults). */
struct bench_args {
	const char *addr;  /* --to / --listen ADDR:PORT */
	const char *json;  /* --json FILE */
	const char *file;  /* --file FILE (bulk) */
	long iters, warmup, rounds, conns, bytes, count;
	int inline_request;
	int pin_all;
	int hash;          /* bulk-send --hash: BENCH_HASH_* */
	int spin_us;       /* --spin: the library's busy-poll; < 0 = its default */
	uint64_t chunk_size; /* bulk --chunk-size; 0: rdmig send's 32 MiB */
	int send_settings; /* bulk-send --as-send: lookahead and pin-local, as rdmig send */
};

enum { BENCH_HASH_NONE, BENCH_HASH_INLINE, BENCH_HASH_THREAD };

/* Split "HOST:PORT" or "[V6]:PORT"; -1 when malformed. */
int bench_split_addr(const char *s, char *host, size_t hl, char *port, size_t pl);
/* Options with the benchmark's --spin and --inline applied. */
void bench_opts(const struct bench_args *a, struct rdmig_opts *o);
/* Connect to a->addr with o, retrying for 10 s while the server starts. */
int bench_connect(const struct bench_args *a, const struct rdmig_opts *o, struct rdmig_conn **c);
/* Create a listener on a->addr and accept one connection; the times it
 * listened and the connection request came go to bench_t_listening and
 * bench_t_request (rdmig_monotonic_seconds), for the budget. */
int bench_accept(const struct bench_args *a, const struct rdmig_opts *o, struct rdmig_listener **l,
		 struct rdmig_conn **c);
double bench_now_us(void);
/* rdmig_monotonic_seconds() at main()'s entry: a budget's 0; and the
 * marks of bench_accept. */
extern double bench_t_main, bench_t_listening, bench_t_request;
/* Print "rdmig-bench: what: msg" and return exit status 1. */
int bench_die(const char *what, const char *msg);

/* bench_json.c: the JSON outputs, through json-c.  A number with this
 * many decimals ("%.*f"; NULL, i.e. null, when not finite): */
struct json_object *bj_fixed(double v, int decimals);
/* Members added at the end of o (json-c keeps the order); a NULL string
 * is null. */
void bj_add_fixed(struct json_object *o, const char *key, double v, int decimals);
void bj_add_str(struct json_object *o, const char *key, const char *s);
void bj_add_int(struct json_object *o, const char *key, int64_t v);
/* A time budget, as rdmig send's and recv's (rdmig-json(7), "budget"):
 * phases that follow one another, from main()'s entry; "other" is what
 * they leave of end - bench_t_main - idle, the total.  A negative idle is
 * left out (a sender has none). */
struct bench_budget {
	unsigned n;
	const char *name[12];
	double seconds[12];
};
void bb_add(struct bench_budget *b, const char *name, double seconds);
struct json_object *bj_budget(const struct bench_budget *b, double end, double idle);
/* o on one line and a newline into f; frees o.  0, or -1 after a note. */
int bj_write(FILE *f, struct json_object *o);

/* bench_bulk.c: one RAM block, sent by the image-set source of rdmig send
 * (rdmig/images.h) into the bare destination engine. */
int bench_bulk_send(const struct bench_args *a);
int bench_bulk_recv(const struct bench_args *a);

/* bench_regmr.c: ibv_reg_mr of a large region, one MR against several and
 * one thread against several (its own command line: argv[0] is "regmr"). */
int bench_regmr(int argc, char **argv);

#endif
