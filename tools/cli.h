/* cli.h - shared pieces of the rdmig command (public API only). */
#ifndef RDMIG_CLI_H
#define RDMIG_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <getopt.h>
#include "rdmig.h"

/* Split "HOST:PORT", "[V6]:PORT" or ":PORT" into host and port (both
 * NUL-terminated copies in the buffers).  Returns 0, or -1 with a message
 * in err. */
int cli_split_addr(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
		   char *err, size_t errlen);

/* "123", "512M", "2G": bytes, with binary suffixes; -1 if malformed. */
int cli_parse_size(const char *s, uint64_t *out);
/* This machine's physical memory (1 GiB when it cannot be read): the
 * default bound on what a source may ask a destination to allocate. */
uint64_t cli_physical_memory(void);

/* mkdir -p DIR; -1 with a message in err on failure. */
int cli_make_dir(const char *dir, char *err, size_t errlen);

/* Parse --inline's value: "auto", "0" or N bytes. */
int cli_parse_inline(const char *s, int *out);

/* Print "rdmig: <what>: <msg>" to stderr and return exit status 1. */
int cli_fail(const char *what, const char *msg);

/* Log callback printing to stderr with a level prefix (-v/-vv). */
void cli_log(void *ctx, int level, const char *msg);

int cmd_probe(int argc, char **argv);
int cmd_ping(int argc, char **argv);
int cmd_pong(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_recv(int argc, char **argv);

/* ---- shared by send and recv (defined in cli_send.c) ---- */

/* The options both migration commands take. */
struct mig_common {
	struct rdmig_opts opts;
	int json;
	int verbose;       /* -v count */
	int timeout_given; /* --timeout also bounds recv's wait for a source */
};
#define MIG_COMMON_OPTIONS                                                                         \
	{"pin-all", no_argument, NULL, 'P'}, {"inline", required_argument, NULL, 'i'},             \
	{"json", no_argument, NULL, 'j'},    {"timeout", required_argument, NULL, 'T'},            \
	{"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'}
#define MIG_COMMON_SHORT "Pi:jT:vh"
void mig_common_init(struct mig_common *m);
/* Apply option c (one of MIG_COMMON_OPTIONS except help): 1 when it was
 * one of them, 0 when not, -1 after printing why its value is bad. */
int mig_common_opt(struct mig_common *m, const char *cmd, int c, const char *arg);

double mig_now(void); /* monotonic seconds */

/* A progress line on stderr, only when stderr is a terminal, redrawn at
 * most 5 times a second: "what: done/total MiB  rate MB/s  ETA m:ss". */
struct mig_progress {
	int on;
	const char *what;
	uint64_t total;
	double start, last;
};
void mig_progress_start(struct mig_progress *p, const char *what, uint64_t total);
void mig_progress(struct mig_progress *p, uint64_t done);
void mig_progress_end(struct mig_progress *p); /* erase the line */

/* JSON output: a string with escapes, and the connection's counters and
 * inline settlement as members (each preceded by ", "). */
void mig_json_str(const char *s);
void mig_json_conn(const struct rdmig_conn *c);
/* One human line about the connection (device, inline, messages). */
void mig_print_conn(const char *cmd, const struct rdmig_conn *c);
/* "12.3 MiB" into buf. */
const char *mig_size(uint64_t bytes, char *buf, size_t len);

#endif
