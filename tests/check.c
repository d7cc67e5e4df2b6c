/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * check.c - the runner behind check.h.
 *
 * Every case runs in its own child process with a time limit, so a crash
 * or a hang fails that case only, and no case inherits another's state.
 * That matters for device tests: verbs contexts opened before a fork are
 * unusable in the child.  RDMIG_TEST_NOFORK=1 runs cases in-process (gdb).
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

#define CASE_TIMEOUT_S 300

/* A case's outcome: 0 passed, 1 failed, CHECK_SKIP_STATUS skipped. */
static int run_in_process(const struct check_case *c)
{
	check_failed = 0;
	check_skipped = 0;
	c->fn();
	fflush(NULL);
	return check_failed ? 1 : check_skipped ? CHECK_SKIP_STATUS : 0;
}

static int run_forked(const struct check_case *c)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		alarm(CASE_TIMEOUT_S);
		_exit(run_in_process(c));
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "%s: killed by signal %d%s\n", c->name, WTERMSIG(status),
			WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
		return 1;
	}
	if (WEXITSTATUS(status) == CHECK_SKIP_STATUS)
		return CHECK_SKIP_STATUS;
	return WEXITSTATUS(status) != 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* No arguments: every case.  NAME...: those cases.  --suffix S: every case
 * whose name ends in S (a device's share of DEVICE_TEST cases, in one
 * process: a start of the sanitizer build costs a good part of a second
 * in the emulated test guest, many of these cases take about as long). */
static int is_wanted(const struct check_case *c, int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--suffix") == 0)
		return ends_with(c->name, argv[2]);
	for (int a = 1; a < argc; a++)
		if (strcmp(argv[a], c->name) == 0)
			return 1;
	return argc <= 1;
}

int check_run(int argc, char **argv)
{
	int failed = 0, skipped = 0, ran = 0;
	int nofork = getenv("RDMIG_TEST_NOFORK") != NULL;

	if (check_cases_dropped) {
		fprintf(stderr, "%d test cases registered, more than CHECK_MAX_CASES (%d): raise it "
				"in tests/check.h or split the file\n",
			check_case_count + check_cases_dropped, CHECK_MAX_CASES);
		return 2;
	}
	for (int i = 0; i < check_case_count; i++) {
		const struct check_case *c = &check_cases[i];
		int f;

		if (!is_wanted(c, argc, argv))
			continue;
		f = nofork ? run_in_process(c) : run_forked(c);
		printf("%s %s\n", f == CHECK_SKIP_STATUS ? "skip" : f ? "FAIL" : "ok  ", c->name);
		fflush(stdout);
		failed += f == 1;
		skipped += f == CHECK_SKIP_STATUS;
		ran++;
	}
	if (ran == 0) {
		fprintf(stderr, "no test case matched\n");
		return 2;
	}
	printf("%d passed, %d failed, %d skipped\n", ran - failed - skipped, failed, skipped);
	return failed ? 1 : skipped == ran ? CHECK_SKIP_STATUS : 0;
}
