/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli_env.c - the environment the rdmig command reads on behalf of the
 * libraries, which read none: it passes the numbers in through their API.
 */
#include <stdlib.h>
#include "cli.h"

int cli_env_threads(const char *name, unsigned *out)
{
	const char *env = getenv(name);
	long n;

	*out = 0;
	if (!env || !*env)
		return 0;
	if (cli_parse_long(env, 1, 8, &n))
		return -1;
	*out = (unsigned)n;
	return 0;
}

int cli_env_check(void)
{
	static const char *const names[] = {"RDMIG_HASH_THREADS", "RDMIG_REGISTER_THREADS"};
	unsigned n;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (cli_env_threads(names[i], &n))
			return cli_usage("%s='%s': takes a number from 1 to 8", names[i],
					 getenv(names[i]));
	return 0;
}

unsigned cli_hash_threads(void)
{
	unsigned n;

	/* checked by cli_env_check before the run: 0 (unset) or 1 to 8 */
	return cli_env_threads("RDMIG_HASH_THREADS", &n) ? 0 : n;
}
