/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_mig_options.c - the options every migration command takes (send,
 * send --qemu-replay, recv, recv --qemu): --pin-all, --inline, --json,
 * --timeout, --chunk-size, -v and --help, and send's --to.  One parser, so
 * that an option means the same and fails with the same words everywhere;
 * cli.h declares it (MIG_COMMON_OPTIONS).
 */
#include <errno.h>
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

int mig_common_opt(struct mig_common *m, const char *cmd, int c, const char *arg)
{
	char *end;
	long v;

	switch (c) {
	case 'P': m->opts.pin_all = true; return 1;
	case 'j': m->json = 1; return 1;
	case 'v':
		/* -v: the library's notes; -vv: its debug log too */
		m->opts.log = cli_log;
		m->opts.log_level = ++m->verbose > 1 ? RDMIG_LOG_DEBUG : RDMIG_LOG_INFO;
		return 1;
	case 'i':
		if (cli_parse_inline(arg, &m->opts.inline_request)) {
			fprintf(stderr, "rdmig: %s: --inline '%s': takes auto, 0 or a size up to "
					"1024\n", cmd, arg);
			return -1;
		}
		return 1;
	case 'C':
		if (cli_parse_chunk_size(arg, &m->opts.chunk_size)) {
			fprintf(stderr, "rdmig: %s: --chunk-size '%s': takes a power of two from 1M "
					"to 1G (1M, 32M, 1G, 1048576...)\n", cmd, arg);
			return -1;
		}
		m->chunk_given = 1;
		return 1;
	case 'T':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (!*arg || *end || errno || v < 0 || v > 86400) {
			fprintf(stderr, "rdmig: %s: --timeout '%s': takes whole seconds from 0 (no "
					"limit) to 86400\n", cmd, arg);
			return -1;
		}
		m->opts.timeout_ms = (int)v * 1000;
		m->timeout_given = 1;
		return 1;
	}
	return 0;
}

int mig_other_option(struct mig_common *m, const char *cmd, int c, const char *arg,
		     void (*usage)(FILE *f))
{
	int r;

	if (c == 'h') {
		usage(stdout);
		return 1;
	}
	if ((r = mig_common_opt(m, cmd, c, arg)) > 0)
		return 0;
	if (r == 0)
		usage(stderr); /* getopt has said which option it does not know */
	return 2;
}

int mig_parse_to(const char *to, char *host, size_t hostlen, char *port, size_t portlen)
{
	char err[300];

	if (cli_split_addr(to, host, hostlen, port, portlen, err, sizeof(err)))
		return cli_fail("send", err) + 1;
	if (atoi(port) == 0)
		return cli_fail("send", "--to needs a real port, not 0") + 1;
	return 0;
}
