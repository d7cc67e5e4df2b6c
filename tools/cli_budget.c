/* SPDX-License-Identifier: BSD-2-Clause */
/* cli_budget.c - a run's time budget, phase by phase (see cli_budget.h). */
#include "cli_budget.h"

double cli_t_main;

void cli_budget_add(struct cli_budget *b, const char *name, double seconds)
{
	if (b->n >= CLI_BUDGET_MAX - 1) /* the last slot is other's */
		return;
	b->name[b->n] = name;
	b->seconds[b->n++] = seconds;
}

void cli_budget_close(struct cli_budget *b, double end)
{
	double sum = 0;

	for (unsigned i = 0; i < b->n; i++)
		sum += b->seconds[i];
	b->total = end - cli_t_main - b->idle;
	/* the gaps between the measured phases (function calls, the stats
	 * gathered between two steps); negative only by rounding */
	b->name[b->n] = "other";
	b->seconds[b->n++] = b->total - sum;
}

struct json_object *cj_budget(const struct cli_budget *b, bool with_idle)
{
	struct json_object *o = cj_object();

	for (unsigned i = 0; i < b->n; i++)
		cj_fixed(o, b->name[i], b->seconds[i], 6);
	cj_fixed(o, "total", b->total, 6);
	if (with_idle)
		cj_fixed(o, "idle", b->idle, 6);
	return o;
}

void cli_budget_print(FILE *f, const char *cmd, const struct cli_budget *b, bool with_idle)
{
	fprintf(f, "%s: budget %.3f s:", cmd, b->total);
	for (unsigned i = 0; i < b->n; i++)
		fprintf(f, "%s %s %.3f", i ? "," : "", b->name[i], b->seconds[i]);
	if (with_idle)
		fprintf(f, "; idle (waiting for the source) %.3f", b->idle);
	fprintf(f, "\n");
}
