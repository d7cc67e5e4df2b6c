/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_budget.h - where a run's time went: seconds per phase on
 * CLOCK_MONOTONIC, counted from main()'s entry (rdmig-json(7), "budget").
 *
 * The phases follow one another and add up to "total"; what no phase
 * covers is "other".  A receiver's wait for its source ("idle") is the
 * source's doing, not the run's cost: it is kept beside the phases, out
 * of the total.  What happens before main() (exec, the loader) and after
 * the summary is printed (exit) is for whoever started the process to
 * measure: its wall time minus total and idle.
 */
#ifndef RDMIG_CLI_BUDGET_H
#define RDMIG_CLI_BUDGET_H

#include <stdio.h>
#include "cli_json.h"

#define CLI_BUDGET_MAX 12

struct cli_budget {
	unsigned n;
	const char *name[CLI_BUDGET_MAX];
	double seconds[CLI_BUDGET_MAX];
	double idle;   /* waiting for a peer: outside the phases and the total */
	double total;  /* main()'s entry .. the end, minus idle */
};

/* rdmig_monotonic_seconds() at main()'s entry (rdmig.c): every budget's 0. */
extern double cli_t_main;

/* Append a phase (the order is the order they ran in). */
void cli_budget_add(struct cli_budget *b, const char *name, double seconds);
/* The end: total is end - cli_t_main - idle, and the phases' shortfall
 * becomes the last phase, "other". */
void cli_budget_close(struct cli_budget *b, double end);
/* {"start": s, ..., "other": s, "total": s[, "idle": s]} */
struct json_object *cj_budget(const struct cli_budget *b, bool with_idle);
/* One line: "CMD: budget T s: start s, connect s, ..." */
void cli_budget_print(FILE *f, const char *cmd, const struct cli_budget *b, bool with_idle);

#endif
