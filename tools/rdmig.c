/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmig.c - the command: dispatch to subcommands. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

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
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Modes of the commands above, listed in the help only. */
static const struct command modes[] = {
	{"recv --serve", NULL, "keep receiving: many sources, several at once, each verified"},
	{"recv --qemu", NULL, "be the destination of a real QEMU and record its migration"},
	{"send --qemu-replay", NULL, "replay a 'recv --qemu' record into a real QEMU destination"},
	{"version", NULL, "print the version (also --version, -V)"},
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmig COMMAND [OPTIONS]   (rdmig COMMAND --help for its options)\n\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-18s %s\n", commands[i].name, commands[i].summary);
	for (size_t i = 0; i < NMODES; i++)
		fprintf(f, "  %-18s %s\n", modes[i].name, modes[i].summary);
	fprintf(f, "\nman rdmig for every option, exit status and example; man rdmig-json for\n"
		   "the objects --json prints.\n");
}

int main(int argc, char **argv)
{
	int status;

	if (argc < 2) {
		fprintf(stderr, "rdmig: a command is needed: probe, pong, ping, send, recv or "
				"version (see rdmig --help)\n");
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("rdmig %s\n", RDMIG_VERSION_STRING);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		status = commands[i].run(argc - 1, argv + 1);
		/* a failure that printed no JSON object yet prints it now */
		cli_run_end(status);
		return status;
	}
	fprintf(stderr, "rdmig: unknown %s '%s' (see rdmig --help)\n",
		argv[1][0] == '-' ? "option" : "command", argv[1]);
	return 2;
}
