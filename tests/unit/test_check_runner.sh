#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# test_check_runner.sh SKIPS OVERFLOW - the test runner (tests/check.c):
# a skipped case exits 77 alone and is counted as a skip, not a pass; a run
# with a failure fails; more than CHECK_MAX_CASES cases fail the run.
# Prints "N passed, N failed"; exits non-zero on a failure.
set -u
SKIPS=${1:?usage: test_check_runner.sh SKIPS OVERFLOW}
OVERFLOW=${2:?usage: test_check_runner.sh SKIPS OVERFLOW}
PASSED=0
FAILED=0
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
ok() { PASSED=$((PASSED + 1)); echo "ok: $*"; }
bad() { FAILED=$((FAILED + 1)); echo "FAILED: $*"; sed 's/^/  | /' "$OUT"; }

"$SKIPS" skips >"$OUT" 2>&1
rc=$?
[ $rc = 77 ] && grep -q '^skip skips$' "$OUT" && grep -q 'skip: nothing to run on (on purpose)' "$OUT" &&
	grep -q '^0 passed, 0 failed, 1 skipped$' "$OUT" && ok "a skipped case alone: exit 77, counted" ||
	bad "a skipped case alone: exit $rc"
"$SKIPS" passes skips >"$OUT" 2>&1
rc=$?
[ $rc = 0 ] && grep -q '^1 passed, 0 failed, 1 skipped$' "$OUT" &&
	ok "a pass and a skip: exit 0, the skip counted apart" || bad "a pass and a skip: exit $rc"
"$SKIPS" >"$OUT" 2>&1
rc=$?
[ $rc = 1 ] && grep -q '^1 passed, 1 failed, 1 skipped$' "$OUT" &&
	ok "a failure among them: exit 1" || bad "a failure among them: exit $rc"
"$OVERFLOW" >"$OUT" 2>&1
rc=$?
[ $rc = 2 ] && grep -q '257 test cases registered, more than CHECK_MAX_CASES (256)' "$OUT" &&
	! grep -q passed "$OUT" && ok "257 cases: the run fails, none runs" || bad "257 cases: exit $rc"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
