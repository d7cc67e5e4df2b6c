/* check.c - the runner behind check.h. */
#include "check.h"

static int run_case(const struct check_case *c)
{
	check_failed = 0;
	c->fn();
	printf("%s %s\n", check_failed ? "FAIL" : "ok  ", c->name);
	fflush(stdout);
	return check_failed;
}

int check_run(int argc, char **argv)
{
	int failed = 0, ran = 0;

	for (int i = 0; i < check_case_count; i++) {
		if (argc > 1) {
			int wanted = 0;
			for (int a = 1; a < argc; a++)
				wanted |= strcmp(argv[a], check_cases[i].name) == 0;
			if (!wanted)
				continue;
		}
		failed += run_case(&check_cases[i]);
		ran++;
	}
	if (ran == 0) {
		fprintf(stderr, "no test case matched\n");
		return 2;
	}
	printf("%d passed, %d failed\n", ran - failed, failed);
	return failed ? 1 : 0;
}
