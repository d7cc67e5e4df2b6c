/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_outcome.c - what every command does the same way at its edges: the
 * usage errors (one "rdmig: ..." line that points to --help, exit status
 * 2), --help anywhere on the line, strict numbers, and the run's outcome
 * for --json: the phase it was in and its first failure, so that a run
 * prints exactly one JSON object whatever happens (rdmig-json(7)).
 * cli.h declares these; cli_run itself lives next to cli_fail (addr.c).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_json.h"

void cli_run_begin(const char *command, const char *mode, const char *help, int argc,
		   char **argv)
{
	memset(&cli_run, 0, sizeof(cli_run));
	cli_run.command = command;
	cli_run.mode = mode;
	cli_run.help = help ? help : command;
	cli_run.phase = "options";
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			cli_run.json = true;
	/* getopt's own messages would be a second line in another format */
	opterr = 0;
}

void cli_phase(const char *phase)
{
	if (!cli_run.failed) /* a failure keeps the phase it happened in */
		cli_run.phase = phase;
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

int cli_usage(const char *fmt, ...)
{
	char msg[sizeof(cli_run.message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rdmig: %s: %s (see rdmig %s --help)\n", cli_run.command, msg,
		cli_run.help);
	if (!cli_run.failed) {
		cli_run.failed = true;
		cli_run.phase = "options";
		snprintf(cli_run.code, sizeof(cli_run.code), "usage");
		snprintf(cli_run.message, sizeof(cli_run.message), "%s", msg);
	}
	return 2;
}

int cli_bad_option(int c, char **argv)
{
	const char *tok = optind > 0 ? argv[optind - 1] : "";
	bool is_long = !strncmp(tok, "--", 2);
	const char *eq = strchr(tok, '=');

	if (c == ':' && is_long)
		return cli_usage("option '%s' needs a value", tok);
	if (c == ':')
		return cli_usage("option '-%c' needs a value", optopt);
	if (is_long && eq && optopt)
		return cli_usage("option '%.*s' takes no value", (int)(eq - tok), tok);
	if (!is_long && optopt)
		return cli_usage("unknown option '-%c'", optopt);
	return cli_usage("unknown option '%s'", tok);
}

void cli_run_end(int status)
{
	struct json_object *o;

	if (!cli_run.json || cli_run.printed || status == 0)
		return;
	if (!cli_run.failed) {
		/* every failure path names its error; this one did not */
		cli_run.failed = true;
		snprintf(cli_run.code, sizeof(cli_run.code), "failed");
		snprintf(cli_run.message, sizeof(cli_run.message), "failed with exit status %d",
			 status);
	}
	o = cj_summary();
	cj_summary_print(o);
}
