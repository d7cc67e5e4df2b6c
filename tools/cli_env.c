/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_env.c - the environment the rdmig command reads on behalf of the
 * libraries, which read none: it passes the numbers in through their API.
 */
#include <stdlib.h>
#include "cli.h"

unsigned cli_hash_threads(void)
{
	const char *env = getenv("RDMIG_HASH_THREADS");
	long n;

	if (!env || !*env)
		return 0;
	n = strtol(env, NULL, 10);
	return n < 1 ? 1 : n > 8 ? 8 : (unsigned)n;
}
