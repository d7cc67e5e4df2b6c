/* SPDX-License-Identifier: BSD-2-Clause */
/* cli.h - shared pieces of the rdmig command (the installed headers, and
 * rdmig/private.h for the helpers it shares with the library). */
#ifndef RDMIG_CLI_H
#define RDMIG_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <getopt.h>
#include <signal.h>
#include <rdmig.h>
#include <rdmig/private.h>
#include "allow_list.h"
#include "outdir.h"
#include "size_text.h"

/* The project's version (CMake's project version, a compile definition of
 * the rdmig target): `rdmig --version` and the JSON summaries print it. */
#ifndef RDMIG_VERSION_STRING
#define RDMIG_VERSION_STRING "unknown"
#endif

/* Split "HOST:PORT", "[V6]:PORT" or ":PORT" into host and port (both
 * NUL-terminated copies in the buffers).  Returns 0, or -1 with a message
 * in err. */
int cli_split_addr(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
		   char *err, size_t errlen);

/* "123", "512M", "2G": bytes, with binary suffixes; -1 if malformed. */
int cli_parse_size(const char *s, uint64_t *out);
/* --chunk-size: a size (as above) that is a power of two from 1M to 1G;
 * -1 if malformed or out of range. */
int cli_parse_chunk_size(const char *s, uint64_t *out);
/* The hashing threads RDMIG_HASH_THREADS asks for, 1 to 8; 0 when it is
 * unset, for librdmig-stream's default (one per online CPU, at most 8). */
unsigned cli_hash_threads(void);

/* Parse --inline's value: "auto", "0" or N bytes. */
int cli_parse_inline(const char *s, int *out);

/* Print "rdmig: <what>: <msg>" to stderr and return exit status 1.  The
 * first failure of a run is also kept (cli_run) for its JSON object. */
int cli_fail(const char *what, const char *msg);
/* The same with the failure's code (rdmig-json(7)): one of the tool's own
 * (lower case), or the library's symbolic name of ret (cli_fail_lib;
 * "failed" for -1, the tool's own steps' failure). */
int cli_fail_code(const char *what, const char *code, const char *msg);
int cli_fail_lib(const char *what, int ret, const char *msg);

/* ---- the run: its command, phase and outcome (cli_outcome.c; cli_run
 * and the cli_fail functions that fill it are in addr.c) ---- */

/* What the JSON object of a run says about it (rdmig-json(7)).  One run
 * per process; the main thread alone touches it. */
struct cli_run {
	const char *command; /* "send", "recv", "probe", "ping", "pong" */
	const char *mode;    /* "files", "qemu", "qemu-replay"; NULL: none */
	const char *help;    /* what --help to point at: "send --qemu-replay" */
	const char *phase;   /* what the run is doing; after a failure, the
			      * phase it happened in */
	bool json;           /* --json: one object on stdout, whatever happens */
	bool printed;        /* that object went out */
	bool failed;         /* code and message hold the first failure */
	char code[48];
	char message[1536];
};
extern struct cli_run cli_run;

/* A command starts: what it is, and whether --json appears among its
 * arguments (looked for before parsing, so that usage errors come as JSON
 * too).  Resets cli_run. */
void cli_run_begin(const char *command, const char *mode, const char *help, int argc,
		   char **argv);
void cli_phase(const char *phase);
/* Is --help or -h among the arguments (anywhere before "--")?  --help
 * wins over everything else on the line, even where it would be taken
 * as an option's value. */
bool cli_wants_help(int argc, char **argv);
/* A usage error: "rdmig: CMD: <msg> (see rdmig CMD --help)" on stderr,
 * code "usage", phase "options"; returns 2, the exit status. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What getopt_long returned for an option it did not accept ('?', or ':'
 * with a leading ':' in the option string): a usage error (2). */
int cli_bad_option(int c, char **argv);
/* A whole decimal number from lo (0 or more) to hi, nothing before or
 * after it: 0, or -1 when s is anything else ("5x", "", " 5", "+5", "0x10",
 * "-1") (addr.c, with the other parsers). */
int cli_parse_long(const char *s, long lo, long hi, long *out);
/* RDMIG_HASH_THREADS or RDMIG_REGISTER_THREADS: 0 (the default) when
 * unset or empty, else a number from 1 to 8; -1 for anything else. */
int cli_env_threads(const char *name, unsigned *out);
/* Both of them, before a migration starts: 0, or a usage error (2). */
int cli_env_check(void);
/* After the command returned status: the JSON object of a failed run that
 * has not printed one yet (usage errors, failures before a summary). */
void cli_run_end(int status);

/* ---- SIGINT / SIGTERM (cli_cancel.c) ---- */

/* Catch SIGINT and SIGTERM, and set opts->cancel_fd to a self-pipe they
 * write to (opts->cancel to the flag they raise if no pipe can be made):
 * the library's waits then return RDMIG_ECANCELED.  -1 if sigaction fails. */
int cli_cancel_install(struct rdmig_opts *opts);
bool cli_cancelled(void);          /* a signal came */
void cli_cancel_rearm(void);       /* let waits work again (to tell the peer) */
/* After a signal: tell the peer (ERROR) if there is one, with the waits
 * working again so that the courtesy can wait a little for a credit (a
 * second signal cuts it short).  True when the peer was told. */
bool cli_cancel_tell_peer(struct rdmig_conn *conn);
int cli_cancel_status(void);       /* the exit status: 128 + signal */
const char *cli_cancel_name(void); /* "SIGINT", "SIGTERM" */
/* pthread_sigmask of the two signals, e.g. to keep them off helper threads. */
int cli_cancel_mask(int how, sigset_t *old);

/* ---- the locked-memory limit (cli_memlock.c) ---- */

/* What a migration of these blocks pins on this side, and the limit on
 * device (NULL: not known yet), as the library says (rdmig_pin_need(3));
 * chunk_size 0: the default.  -1 with a message in err. */
int cli_memlock_need(const char *device, bool pin_all, uint64_t chunk_size,
		     const struct rdmig_block *blocks, size_t n, struct rdmig_pin_need *need,
		     char *err, size_t errlen);
/* Refuse (-1, message in err) when the limit is below need->least; warn
 * on stderr when it is below need->most (0); 1 when no limit applies. */
int cli_memlock_check(const char *cmd, const struct rdmig_pin_need *need, char *err, size_t errlen);

/* Log callback printing to stderr with a level prefix (-v/-vv). */
void cli_log(void *ctx, int level, const char *msg);

int cmd_probe(int argc, char **argv);
int cmd_ping(int argc, char **argv);
int cmd_status(int argc, char **argv);

/* sd_notify(3)'s message MSG to $NOTIFY_SOCKET, if set (cli_notify.c). */
void cli_notify(const char *msg);
int cmd_pong(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_recv(int argc, char **argv);
/* cli_recv_serve.c: `rdmig recv --serve` (the arguments are recv's). */
int cmd_recv_serve(int argc, char **argv);

/* ---- shared by send and recv: the options (cli_mig_options.c), the
 * progress and summary lines (cli_mig_report.c) ---- */

/* The default of --timeout: how long a peer may stay silent before the
 * migration is given up (a dead peer that the kernel reports ends it at once). */
#define MIG_DEFAULT_TIMEOUT_S 10

/* --progress: what the migration shows while it runs (mig_progress). */
enum mig_progress_mode {
	MIG_PROGRESS_AUTO,  /* human on a terminal, none otherwise */
	MIG_PROGRESS_HUMAN, /* one line on stderr, redrawn */
	MIG_PROGRESS_JSON,  /* JSON lines on stderr (rdmig-json(7)) */
	MIG_PROGRESS_NONE,
};
/* The long option of the commands that show progress (send, send
 * --qemu-replay, recv), which mig_common_opt applies. */
#define MIG_PROGRESS_OPTION {"progress", required_argument, NULL, 'G'}

/* The options both migration commands take. */
struct mig_common {
	struct rdmig_opts opts;
	int progress; /* enum mig_progress_mode */
	int json;
	int verbose;       /* -v count */
	int timeout_given; /* --timeout also bounds recv's wait for a source */
	int chunk_given;   /* --chunk-size was given (opts.chunk_size) */
};
#define MIG_COMMON_OPTIONS                                                                         \
	{"pin-all", no_argument, NULL, 'P'}, {"inline", required_argument, NULL, 'i'},             \
	{"json", no_argument, NULL, 'j'},    {"timeout", required_argument, NULL, 'T'},            \
	{"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'},                     \
	{"chunk-size", required_argument, NULL, 'C'}
/* Option strings start with ':' (a missing value is then told apart from
 * an unknown option: cli_bad_option); these go after it. */
#define MIG_COMMON_SHORT "Pi:jT:vh"
void mig_common_init(struct mig_common *m);
/* Apply option c (one of MIG_COMMON_OPTIONS except help): 1 when it was
 * one of them, 0 when not, -1 after a usage error about its value. */
int mig_common_opt(struct mig_common *m, int c, const char *arg);
/* An option the command does not handle itself: one of MIG_COMMON_OPTIONS
 * (0), --help (usage on stdout; 1: exit 0), or a bad or unknown one (2,
 * after the usage error's one line). */
int mig_other_option(struct mig_common *m, int c, const char *arg, char **argv,
		     void (*usage)(FILE *f));
/* --to ADDR:PORT of send and send --qemu-replay into host and port: 0, or
 * 2 (a usage error) after printing why it names no destination. */
int mig_parse_to(const char *to, char *host, size_t hostlen, char *port, size_t portlen);

/* Progress on stderr at most 5 times a second and once at the end: a
 * line redrawn on a terminal ("what: done/total MiB  rate MB/s  ETA m:ss")
 * or one JSON object per line (bytes done and total, rate, ETA, phase). */
struct mig_progress {
	int on; /* enum mig_progress_mode, AUTO resolved; NONE: off */
	const char *what;
	uint64_t total;
	double start, last;
};
void mig_progress_start(struct mig_progress *p, int mode, const char *what, uint64_t total);
void mig_progress(struct mig_progress *p, uint64_t done);
void mig_progress_end(struct mig_progress *p); /* erase the line */

/* The messages of all types in one of rdmig_counters' per-type arrays:
 * the human line and the JSON summary count them the same way. */
static inline uint64_t mig_msg_sum(const uint64_t counts[RDMIG_MSG_TYPE_COUNT])
{
	uint64_t n = 0;

	for (int t = 0; t < RDMIG_MSG_TYPE_COUNT; t++)
		n += counts[t];
	return n;
}

/* One human line about the connection (device, inline, messages). */
void mig_print_conn(const char *cmd, const struct rdmig_conn *c);

/* ---- shared by recv and recv --qemu (cli_recv_common.c) ---- */

struct recv_args {
	struct mig_common m;
	const char *listen; /* --listen as given; split into host and port */
	char host[256], port[16];
	const char *out;
	struct out_dir dir;  /* --out, once recv_open_out opened it */
	bool force;          /* --force: accept any --out, replace outputs */
	bool no_sync;        /* --no-sync: outputs not flushed to stable storage */
	uint64_t max_total;
	bool max_total_given;
	bool max_total_nonzero; /* recv --qemu: a QEMU source always has RAM */
	/* what the default --max-total was chosen from (recv_open_out) */
	uint64_t mem_available, disk_free;
	struct allow_list allow; /* --allow */
	/* recv_accept's marks (rdmig_monotonic_seconds), for the budget:
	 * listening, and the last connection request that came */
	double t_listening, t_request;
};
#define RECV_OPTIONS                                                                               \
	{"listen", required_argument, NULL, 'l'},    {"out", required_argument, NULL, 'o'},       \
	{"max-total", required_argument, NULL, 'M'}, {"allow", required_argument, NULL, 'A'},     \
	{"force", no_argument, NULL, 'F'},           {"idle-timeout", required_argument, NULL, 'I'}, \
	{"no-sync", no_argument, NULL, 'Y'},         MIG_COMMON_OPTIONS
/* recv's default --idle-timeout: long enough for any real source between
 * two spans or two of QEMU's iterations, short against one that stalls. */
#define RECV_DEFAULT_IDLE_TIMEOUT_S 60
#define RECV_SHORT "l:o:M:A:F" MIG_COMMON_SHORT
void recv_args_init(struct recv_args *a);
/* Apply option c, one of RECV_OPTIONS or not (see mig_other_option): 0,
 * or 1 (help shown) or 2 (a usage error, printed) for the parser to return. */
int recv_args_option(struct recv_args *a, int c, const char *arg, char **argv,
		     void (*usage)(FILE *f));
/* After the options: no operands, --listen and --out given; 0 or 2. */
int recv_args_finish(struct recv_args *a, int argc, char **argv);

/* The controls that apply before anything else: signals and the locked
 * memory every connection needs for its control buffers.  -1: see err. */
int recv_prepare(struct rdmig_opts *opts, char *err, size_t errlen);
/* Listen where a says (announcing it on a terminal or with -v) and accept
 * one source; the handles are the caller's to destroy, even on failure. */
int recv_accept(struct recv_args *a, struct rdmig_listener **l, struct rdmig_conn **conn);
/* The message of whatever failed: ours (err), else the library's, from the
 * most specific handle that exists (any may be NULL). */
const char *recv_errmsg(const char *err, const struct rdmig_dest *dest,
			const struct rdmig_conn *conn, const struct rdmig_listener *l, int ret);

/* Open --out (outdir.h) and, unless --max-total was given, choose the
 * default limit: the smaller of MemAvailable and the free space of --out's
 * file system.  Then NAMES (NULL-terminated: the outputs of fixed names)
 * must be free.  -1 with err. */
int recv_open_out(struct recv_args *a, const char *const *names, char *err, size_t errlen);
/* After a parser refused a total above the limit: what the limit was, to
 * append to its message (empty when --max-total was given). */
const char *recv_limit_note(const struct recv_args *a, char *buf, size_t len);
/* The receiver decides verification (tools/recv_policy.c): a source
 * whose stream header says "digest off" is refused (-1 with err naming
 * both sides' settings) unless here_off (recv --verify off). */
int recv_verify_policy(bool here_off, bool source_off, char *err, size_t errlen);
/* Whether `more` stream bytes, after stream_bytes of them and a RAM total
 * of ram_total (0 while unknown), stay within max_total: what the source
 * sends is written to DIR/stream.bin, so it counts with the images. */
bool recv_stream_fits(uint64_t max_total, uint64_t ram_total, uint64_t stream_bytes,
		      uint64_t more);

#endif
