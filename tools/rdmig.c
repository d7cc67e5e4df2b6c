/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmig.c - the command: dispatch to subcommands. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "cli_budget.h"
#include "cli_qemu.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"probe", cmd_probe, "show how each RDMA device settles inline sizes"},
	{"pong", cmd_pong, "answer REGISTER requests (the destination of 'ping')"},
	{"ping", cmd_ping, "time REGISTER_REQUEST -> REGISTER_RESULT round trips"},
	{"send", cmd_send, "migrate files as RAM blocks to a 'recv' (the source side)"},
	{"recv", cmd_recv, "receive one migration into a directory and verify it"},
	{"status", cmd_status, "ask a running 'recv --serve --status PATH' how it stands"},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Modes of the commands above: when a command's arguments (before "--")
 * hold the mode's flag, alone or as FLAG=VALUE, the mode runs instead, with
 * its own options and help.  The dispatch is here so that each mode's file
 * depends on the plain command's helpers, never the other way round. */
struct mode {
	const char *command, *flag;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct mode modes[] = {
	{"recv", "--serve", cmd_recv_serve,
	 "keep receiving: many sources, several at once, each verified"},
	{"recv", "--qemu", cmd_recv_qemu, "be the destination of a real QEMU and record its migration"},
	{"send", "--qemu-replay", cmd_send_replay,
	 "replay a 'recv --qemu' record into a real QEMU destination"},
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmig COMMAND [OPTIONS]   (rdmig COMMAND --help for its options)\n\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-18s %s\n", commands[i].name, commands[i].summary);
	for (size_t i = 0; i < NMODES; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s %s", modes[i].command, modes[i].flag);
		fprintf(f, "  %-18s %s\n", name, modes[i].summary);
	}
	fprintf(f, "  %-18s %s\n", "help [COMMAND]", "this help, or COMMAND's (as COMMAND --help)");
	fprintf(f, "  %-18s %s\n", "version", "print the version (also --version, -V)");
	fprintf(f, "\nman rdmig for every option, exit status and example; man rdmig-json for\n"
		   "the objects --json prints.\n");
}

static bool is_flag(const char *arg, const char *flag)
{
	size_t n = strlen(flag);

	return !strncmp(arg, flag, n) && (arg[n] == '\0' || arg[n] == '=');
}

/* The command's run function, or its mode's when an argument asks for
 * one; NULL (said, a usage error) when the arguments ask for two modes. */
static int (*command_run(const struct command *c, int argc, char **argv))(int, char **)
{
	const struct mode *found = NULL;

	for (size_t m = 0; m < NMODES; m++) {
		if (strcmp(modes[m].command, c->name))
			continue;
		for (int a = 1; a < argc && strcmp(argv[a], "--"); a++) {
			if (!is_flag(argv[a], modes[m].flag))
				continue;
			if (found && found != &modes[m]) {
				fprintf(stderr, "rdmig: %s: %s and %s cannot be combined: they are "
						"different modes (see rdmig %s --help)\n",
					c->name, found->flag, modes[m].flag, c->name);
				return NULL;
			}
			found = &modes[m];
		}
	}
	return found ? found->run : c->run;
}

/* rdmig help [COMMAND [MODE]]: the tool's help, or COMMAND's (MODE's, as
 * "rdmig help recv --serve"), as COMMAND --help shows it. */
static int help(int argc, char **argv)
{
	char help_flag[] = "--help";
	char *args[4];
	int n = 0;

	if (argc < 3) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		int (*run)(int, char **);

		if (strcmp(argv[2], commands[i].name))
			continue;
		if (argc > 4) {
			fprintf(stderr, "rdmig: help: unexpected argument '%s' (see rdmig --help)\n",
				argv[4]);
			return 2;
		}
		args[n++] = argv[2];
		if (argc == 4)
			args[n++] = argv[3];
		args[n++] = help_flag;
		args[n] = NULL;
		run = command_run(&commands[i], n, args);
		if (!run)
			return 2;
		if (argc == 4 && run == commands[i].run) {
			fprintf(stderr, "rdmig: help: '%s' is no mode of %s (see rdmig --help)\n",
				argv[3], argv[2]);
			return 2;
		}
		return run(n, args);
	}
	fprintf(stderr, "rdmig: help: unknown command '%s' (see rdmig --help)\n", argv[2]);
	return 2;
}

int main(int argc, char **argv)
{
	int status;

	cli_t_main = rdmig_monotonic_seconds(); /* the budgets' 0 (cli_budget.h) */
	if (argc < 2) {
		fprintf(stderr, "rdmig: a command is needed: probe, pong, ping, send, recv or "
				"version (see rdmig --help)\n");
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("rdmig %s\n", RDMIG_VERSION_STRING);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		int (*run)(int, char **);

		if (strcmp(argv[1], commands[i].name))
			continue;
		run = command_run(&commands[i], argc - 1, argv + 1);
		if (!run)
			return 2;
		status = run(argc - 1, argv + 1);
		/* a failure that printed no JSON object yet prints it now */
		cli_run_end(status);
		return status;
	}
	fprintf(stderr, "rdmig: unknown %s '%s' (see rdmig --help)\n",
		argv[1][0] == '-' ? "option" : "command", argv[1]);
	return 2;
}
