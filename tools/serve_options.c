/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * serve_options.c - the options of `rdmig recv --serve` (cli_recv_serve.c
 * runs the server): plain recv's, and the server's own limits, deadline
 * and status socket, with their defaults and bounds.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "recv_serve.h"

#define SERVE_DEFAULT_SOURCES 4
/* The longest one source may hold its slot, whatever it moves (one
 * stream byte per idle period keeps --idle-timeout away): a day, far
 * beyond any real migration's, and a week at most (an int of ms). */
#define SERVE_DEFAULT_DEADLINE_S 86400
#define SERVE_MAX_DEADLINE_S (7 * 86400)
#define SERVE_MAX_SOURCES 64
#define SERVE_MAX_FILES 2000000000L

/* ------------------------------------------------------------ options -- */

static void serve_usage(FILE *f)
{
	fprintf(f, "usage: rdmig recv --serve --listen ADDR:PORT --out DIR [--max-sources N]\n"
		   "                  [--serve-max-total SIZE] [--serve-max-pinned SIZE]\n"
		   "                  [--serve-max-files N] [--source-deadline S] [--status PATH]\n"
		   "                  [--pin-all] [--inline auto|0|N] [--json] [--timeout S]\n"
		   "                  [--max-total SIZE] [--allow ADDR[/N]] [--force] [--no-sync]\n"
		   "                  [--verify on|off] [--chunk-size SIZE] [-v]\n"
		   "Keeps listening: each source goes into DIR/<seq>-<UTC time>-<address>/ (its\n"
		   "images and stream.bin, as plain recv writes them); a failed one leaves nothing.\n"
		   "  --serve         serve source after source, several at once\n"
		   "  --max-sources N at most N sources at once (1..%d, default %d); a source\n"
		   "                  beyond them is rejected when it connects\n"
		   "  --serve-max-total SIZE  most bytes of blocks the running sources may hold\n"
		   "                  together (in memory while they run, then in DIR); default:\n"
		   "                  the smaller of MemAvailable and DIR's free space at start\n"
		   "  --serve-max-pinned SIZE  most bytes the running sources may pin together\n"
		   "                  (default: RLIMIT_MEMLOCK, none when unlimited)\n"
		   "  --serve-max-files N  most files the running sources may make together in\n"
		   "                  DIR (each: its images, stream.bin, its directory);\n"
		   "                  default: DIR's free inodes at start\n"
		   "  --max-total N   most bytes one source may ask for (as plain recv)\n"
		   "  --timeout S     give up on a source that stays silent this long (default %d)\n"
		   "  --idle-timeout S  end a source that moves no data this long (as plain recv)\n"
		   "  --source-deadline S  end a source served this long, whatever it moves\n"
		   "                  (0: never; default %d, a day)\n"
		   "  --status PATH   answer 'rdmig status --socket PATH' on this UNIX socket\n"
		   "                  (made with mode 0600; a stale one is replaced; default:\n"
		   "                  $RDMIG_STATUS_SOCKET, none when unset)\n"
		   "  --pin-all, --inline, --chunk-size, --allow A[/N], --force, --no-sync,\n"
		   "  --verify on|off:\n"
		   "                  per source, as plain recv (rdmig recv --help)\n"
		   "  --progress M    accepted (auto|human|json|none), shows nothing: each\n"
		   "                  source gets its line when it ends\n"
		   "  --json          a JSON line per source as it ends, and a summary at the end\n"
		   "  -v, --verbose   the library's notes on stderr; -vv adds its debug log\n"
		   "  -h, --help      this help\n"
		   "SIGINT or SIGTERM drains: no new source, the running ones finish; a second\n"
		   "signal aborts them.  Exit status: 0 when every accepted source succeeded, 1\n"
		   "when one failed or was refused, 128 + the signal after a second signal.\n",
		SERVE_MAX_SOURCES, SERVE_DEFAULT_SOURCES, MIG_DEFAULT_TIMEOUT_S,
		SERVE_DEFAULT_DEADLINE_S);
}

enum { OPT_SERVE = 0x100, OPT_MAX_SOURCES, OPT_SERVE_TOTAL, OPT_SERVE_PINNED, OPT_DEADLINE,
       OPT_SERVE_FILES, OPT_STATUS };

static int serve_option(struct serve *sv, int c, const char *arg)
{
	long n;

	switch (c) {
	case OPT_SERVE:
		return 0;
	case OPT_MAX_SOURCES:
		if (cli_parse_long(arg, 1, SERVE_MAX_SOURCES, &n))
			return cli_usage("--max-sources '%s': takes a number from 1 to %d", arg,
					 SERVE_MAX_SOURCES);
		sv->given.slots = (unsigned)n;
		return 0;
	case OPT_STATUS:
		if (!arg[0])
			return cli_usage("--status: takes the path of a socket to make");
		sv->status_path = arg;
		return 0;
	case OPT_SERVE_FILES:
		if (cli_parse_long(arg, 1, SERVE_MAX_FILES, &n))
			return cli_usage("--serve-max-files '%s': takes a number from 1 to %ld", arg,
					 SERVE_MAX_FILES);
		sv->given.files = (uint64_t)n;
		return 0;
	case OPT_DEADLINE:
		if (cli_parse_long(arg, 0, SERVE_MAX_DEADLINE_S, &n))
			return cli_usage("--source-deadline '%s': takes whole seconds from 0 (never) "
					 "to %d", arg, SERVE_MAX_DEADLINE_S);
		sv->a.m.opts.deadline_ms = (int)n * 1000;
		return 0;
	case OPT_SERVE_TOTAL:
	case OPT_SERVE_PINNED: {
		uint64_t v;

		if (cli_parse_size(arg, &v) || v == 0)
			return cli_usage("--serve-max-%s '%s': takes bytes, optionally with K, M, G "
					 "or T, not 0", c == OPT_SERVE_TOTAL ? "total" : "pinned",
					 arg);
		/* never 0, which would ask for the default */
		if (c == OPT_SERVE_TOTAL)
			sv->given.bytes = v;
		else
			sv->given.pinned = v;
		return 0;
	}
	}
	return -1;
}

int serve_parse_args(int argc, char **argv, struct serve *sv)
{
	static const struct option longopts[] = {
		RECV_OPTIONS,
		{"verify", required_argument, NULL, 'V'},
		{"serve", no_argument, NULL, OPT_SERVE},
		{"max-sources", required_argument, NULL, OPT_MAX_SOURCES},
		{"serve-max-total", required_argument, NULL, OPT_SERVE_TOTAL},
		{"serve-max-pinned", required_argument, NULL, OPT_SERVE_PINNED},
		{"source-deadline", required_argument, NULL, OPT_DEADLINE},
		{"serve-max-files", required_argument, NULL, OPT_SERVE_FILES},
		{"status", required_argument, NULL, OPT_STATUS},
		MIG_PROGRESS_OPTION,
		{NULL, 0, NULL, 0}};
	int c, r = 0;

	sv->given.slots = SERVE_DEFAULT_SOURCES;
	recv_args_init(&sv->a);
	sv->a.m.opts.verdict = true; /* each source hears whether we committed */
	sv->a.m.opts.deadline_ms = SERVE_DEFAULT_DEADLINE_S * 1000;
	if (cli_wants_help(argc, argv)) {
		serve_usage(stdout);
		return 1;
	}
	while ((c = getopt_long(argc, argv, ":" RECV_SHORT "V:", longopts, NULL)) != -1) {
		if (c == 'V' && strcmp(optarg, "off") && strcmp(optarg, "on"))
			return cli_usage("--verify '%s': takes on or off", optarg);
		if (c == 'V')
			sv->verify_off = !strcmp(optarg, "off");
		else if (c >= OPT_SERVE)
			r = serve_option(sv, c, optarg);
		else
			r = recv_args_option(&sv->a, c, optarg, argv, serve_usage);
		if (c != 'V' && r)
			return r;
	}
	if ((r = recv_args_finish(&sv->a, argc, argv)))
		return r;
	/* the systemd unit's way to give the socket: --status wins */
	if (!sv->status_path && getenv("RDMIG_STATUS_SOCKET") && getenv("RDMIG_STATUS_SOCKET")[0])
		sv->status_path = getenv("RDMIG_STATUS_SOCKET");
	/* accepted, so that one set of options (the systemd unit's) serves
	 * both modes, but said: it would be a surprise that it shows nothing */
	if (sv->a.m.progress == MIG_PROGRESS_HUMAN || sv->a.m.progress == MIG_PROGRESS_JSON)
		fprintf(stderr, "rdmig: recv --serve: note: --progress %s shows nothing in serve "
				"mode; each source gets its line when it ends\n",
			sv->a.m.progress == MIG_PROGRESS_JSON ? "json" : "human");
	return 0;
}

