/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_mig_options.c - the options every migration command takes (send,
 * send --qemu-replay, recv, recv --qemu): --pin-all, --inline, --json,
 * --timeout, --chunk-size, -v and --help, and send's --to.  One parser, so
 * that an option means the same and fails with the same words everywhere;
 * cli.h declares it (MIG_COMMON_OPTIONS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

void mig_common_init(struct mig_common *m)
{
	memset(m, 0, sizeof(*m));
	rdmig_opts_init(&m->opts);
	m->opts.timeout_ms = MIG_DEFAULT_TIMEOUT_S * 1000;
}

int mig_common_opt(struct mig_common *m, int c, const char *arg)
{
	long v;

	switch (c) {
	case 'P': m->opts.pin_all = true; return 1;
	case 'G':
		if (!strcmp(arg, "auto"))
			m->progress = MIG_PROGRESS_AUTO;
		else if (!strcmp(arg, "human"))
			m->progress = MIG_PROGRESS_HUMAN;
		else if (!strcmp(arg, "json"))
			m->progress = MIG_PROGRESS_JSON;
		else if (!strcmp(arg, "none"))
			m->progress = MIG_PROGRESS_NONE;
		else {
			cli_usage("--progress '%s': takes auto, human, json or none", arg);
			return -1;
		}
		return 1;
	case 'j': m->json = 1; cli_run.json = true; return 1;
	case 'v':
		/* -v: the library's notes; -vv: its debug log too */
		m->opts.log = cli_log;
		m->opts.log_level = ++m->verbose > 1 ? RDMIG_LOG_DEBUG : RDMIG_LOG_INFO;
		return 1;
	case 'i':
		if (cli_parse_inline(arg, &m->opts.inline_request)) {
			cli_usage("--inline '%s': takes auto, 0 or a size up to 1024", arg);
			return -1;
		}
		return 1;
	case 'C':
		if (cli_parse_chunk_size(arg, &m->opts.chunk_size)) {
			cli_usage("--chunk-size '%s': takes a power of two from 1M to 1G (1M, 32M, "
				  "1G, 1048576...)", arg);
			return -1;
		}
		m->chunk_given = 1;
		return 1;
	case 'T':
		if (cli_parse_long(arg, 0, 86400, &v)) {
			cli_usage("--timeout '%s': takes whole seconds from 0 (no limit) to 86400",
				  arg);
			return -1;
		}
		m->opts.timeout_ms = (int)v * 1000;
		m->timeout_given = 1;
		return 1;
	}
	return 0;
}

int mig_other_option(struct mig_common *m, int c, const char *arg, char **argv,
		     void (*usage)(FILE *f))
{
	int r;

	if (c == 'h') {
		usage(stdout);
		return 1;
	}
	if ((r = mig_common_opt(m, c, arg)) > 0)
		return 0;
	return r < 0 ? 2 : cli_bad_option(c, argv);
}

int mig_parse_to(const char *to, char *host, size_t hostlen, char *port, size_t portlen)
{
	char err[300];

	if (cli_split_addr(to, host, hostlen, port, portlen, err, sizeof(err)))
		return cli_usage("--to %s", err);
	if (atoi(port) == 0)
		return cli_usage("--to needs a real port, not 0");
	return 0;
}
